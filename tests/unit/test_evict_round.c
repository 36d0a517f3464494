// SPDX-License-Identifier: GPL-2.0
/*
 * The eviction round every evicting strategy shares (evictor.h), against a
 * plain directory standing in for the cgroup root (no scheduler, no
 * cluster): which cgroups it kills (cgroup.kill written), in what order,
 * within the per-round cap, the cool-down after a round that killed, and
 * dry-run, which kills nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "actuate.h"
#include "config.h"
#include "standin.h"

static char root[64];
static struct tm_daemon d;

static int setup(void)
{
	const char *cg[] = {"/be", "/be/a", "/be/b", "/be/c", "/be/d"};

	if (standin_daemon(&d, root, sizeof(root), "{\"be\":[\"/be/*\"]}"))
		return -1;
	for (size_t i = 1; i < sizeof(cg) / sizeof(cg[0]); i++)
		if (fakecg_put(root, cg[i], "cgroup.kill", ""))
			return -1;
	return 0;
}

static void cleanup(void)
{
	standin_remove(root);
}

/* Was cgroup @rel killed (its cgroup.kill holds "1")? Empties it again. */
static bool killed(const char *rel)
{
	char p[256], v[8] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s%s/cgroup.kill", root, rel);
	f = fopen(p, "r");
	if (!f)
		return false;
	if (!fgets(v, sizeof(v), f))
		v[0] = 0;
	fclose(f);
	truncate(p, 0);
	return !strcmp(v, "1");
}

static int cands(struct tm_evict_cand *c)
{
	/* a: priority 0, 300; b: -1 (lowest), 100; c: 0, 500; d: 1, 900 */
	static const struct {
		const char *path;
		int prio;
		uint64_t amount;
	} v[] = {{"/be/a", 0, 300}, {"/be/b", -1, 100}, {"/be/c", 0, 500}, {"/be/d", 1, 900}};

	memset(c, 0, sizeof(*c) * 4);
	for (int i = 0; i < 4; i++) {
		snprintf(c[i].path, sizeof(c[i].path), "%s", v[i].path);
		c[i].priority = v[i].prio;
		c[i].amount = v[i].amount;
		snprintf(c[i].detail, sizeof(c[i].detail), "priority=%d", v[i].prio);
	}
	return 4;
}

TEST(lowest_priority_then_largest_until_the_need_is_met)
{
	struct tm_evict_round r = {.strategy = "test"};
	struct tm_evict_cand c[4];
	int n;

	ASSERT_EQ(0, setup());
	n = cands(c);
	/* 550 needed: b (lowest priority, 100), then c (largest of priority 0) */
	EXPECT_EQ(2, tm_evict_round_run(&d, &r, 1000, c, n, 550, 0, 5000, false, "need=%d", 550));
	EXPECT_TRUE(killed("/be/b"));
	EXPECT_TRUE(killed("/be/c"));
	EXPECT_FALSE(killed("/be/a"));
	EXPECT_FALSE(killed("/be/d"));
	EXPECT_TRUE(c[1].picked);
	EXPECT_TRUE(c[2].picked);
	EXPECT_FALSE(c[0].picked);
	cleanup();
}

TEST(the_cap_per_round_and_the_cool_down)
{
	struct tm_evict_round r = {.strategy = "test"};
	struct tm_evict_cand c[4];
	int n;

	ASSERT_EQ(0, setup());
	n = cands(c);
	EXPECT_TRUE(tm_evict_round_ready(&r, 1000));
	/* all four would be needed; one per round */
	EXPECT_EQ(1, tm_evict_round_run(&d, &r, 1000, c, n, 100000, 1, 5000, false, "x=1"));
	EXPECT_TRUE(killed("/be/b"));
	EXPECT_FALSE(killed("/be/c"));
	EXPECT_FALSE(tm_evict_round_ready(&r, 5999));
	EXPECT_TRUE(tm_evict_round_ready(&r, 6000));
	cleanup();
}

TEST(nothing_needed_kills_nothing_and_starts_no_cool_down)
{
	struct tm_evict_round r = {.strategy = "test"};
	struct tm_evict_cand c[4];
	int n;

	ASSERT_EQ(0, setup());
	n = cands(c);
	EXPECT_EQ(0, tm_evict_round_run(&d, &r, 1000, c, n, 0, 0, 5000, false, "x=1"));
	EXPECT_TRUE(tm_evict_round_ready(&r, 1000));
	for (int i = 0; i < n; i++)
		EXPECT_FALSE(killed(c[i].path));
	cleanup();
}

TEST(dying_ones_count_as_released_and_are_not_picked)
{
	struct tm_evict_round r = {.strategy = "test"};
	struct tm_evict_cand c[4];
	int n;

	ASSERT_EQ(0, setup());
	n = cands(c);
	c[3].dying = true; /* d's 900 is on its way out */
	EXPECT_EQ(0, tm_evict_round_run(&d, &r, 1000, c, n, 800, 0, 5000, false, "x=1"));
	EXPECT_EQ(1, tm_evict_round_run(&d, &r, 1000, c, n, 950, 0, 5000, false, "x=1"));
	EXPECT_TRUE(killed("/be/b"));
	EXPECT_FALSE(killed("/be/d"));
	cleanup();
}

TEST(dry_run_picks_but_kills_nothing)
{
	struct tm_evict_round r = {.strategy = "test"};
	struct tm_evict_cand c[4];
	int n;

	ASSERT_EQ(0, setup());
	n = cands(c);
	EXPECT_EQ(2, tm_evict_round_run(&d, &r, 1000, c, n, 550, 0, 5000, true, "x=1"));
	for (int i = 0; i < n; i++)
		EXPECT_FALSE(killed(c[i].path));
	cleanup();
}

TEST_HARNESS_MAIN
