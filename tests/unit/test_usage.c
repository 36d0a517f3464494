// SPDX-License-Identifier: GPL-2.0
/*
 * Per-key CPU time counters (userspace/daemon/usage.c), which the fallback
 * uses for ONLINE and SYSTEM's rate: a member that leaves between two
 * readings must not make the rate fall (it handed BE the whole line for a
 * second each time a root task exited: soak.sh, CI), a new one adds what it
 * ran, a name reused counts from zero, a new one never adds more than the
 * interval allows. And the BE cgroups the fallback limits: those inside no
 * other, found in O(n log n) (a scan of every pair was 1,000,000 strncmp
 * every 100 ms at 1,000 BE cgroups).
 */
#include <stdint.h>
#include <stdio.h>
#include "kselftest_harness.h"
#include "actuate.h"
#include "usage.h"

static int fill(struct tm_usetab *t, const char *const *k, const uint64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		if (tm_use_add(t, k[i], v[i]))
			return -1;
	tm_use_done(t);
	return 0;
}

TEST(growth_per_counter)
{
	static const char *const k0[] = {"/online", "/be", "proc/1/task/1", "proc/9/task/9"};
	static const uint64_t v0[] = {1000, 5000, 700, 900000};
	/* the loader (proc/9) exited; its 900 ms must not come off the sum */
	static const char *const k1[] = {"proc/1/task/1", "/be", "/online"};
	static const uint64_t v1[] = {750, 5600, 1300};
	struct tm_usetab a = {}, b = {};

	ASSERT_EQ(0, fill(&a, k0, v0, 4));
	ASSERT_EQ(0, fill(&b, k1, v1, 3));
	EXPECT_EQ((uint64_t)(300 + 600), tm_use_growth(&a, &b, "/", 1000000));
	EXPECT_EQ((uint64_t)(50), tm_use_growth(&a, &b, "proc/", 1000000));
	EXPECT_EQ((uint64_t)(950), tm_use_growth(&a, &b, "", 1000000));
	tm_use_free(&a);
	tm_use_free(&b);
	EXPECT_EQ(0, b.n);
}

TEST(new_reused_and_capped)
{
	static const char *const k0[] = {"be:/be/a", "be:/be/c1"};
	static const uint64_t v0[] = {100, 800};
	/* c1 removed and made again (its counter went back), c2 new, old
	 * cgroup x newly read with a long history */
	static const char *const k1[] = {"be:/be/a", "be:/be/c1", "be:/be/c2", "be:/be/x"};
	static const uint64_t v1[] = {150, 30, 40, 99000000};
	struct tm_usetab a = {}, b = {};

	ASSERT_EQ(0, fill(&a, k0, v0, 2));
	ASSERT_EQ(0, fill(&b, k1, v1, 4));
	EXPECT_EQ((uint64_t)(50 + 30 + 40 + 2000), tm_use_growth(&a, &b, "be:", 2000));
	tm_use_free(&a);
	tm_use_free(&b);
}

TEST(empty_tables)
{
	struct tm_usetab a = {}, b = {};

	tm_use_done(&a);
	ASSERT_EQ(0, tm_use_add(&b, "/x", 10));
	tm_use_done(&b);
	EXPECT_EQ((uint64_t)(10), tm_use_growth(&a, &b, "", 100));
	EXPECT_EQ((uint64_t)(0), tm_use_growth(&b, &a, "", 100));
	tm_use_free(&a);
	tm_use_free(&b);
}

TEST(top_level_cgroups)
{
	static const char *const in[] = {"/be/a-x", "/be/a/b/c", "/batch", "/be/a",
					 "/be/ab",  "/be/a/b",	 "/be",	   "/x/y"};
	static const char *const want[] = {"/batch", "/be", "/x/y"};
	static const char *const in2[] = {"/k/p2", "/k/p1/c", "/k/p10", "/k/p1"};
	static const char *const want2[] = {"/k/p1", "/k/p10", "/k/p2"};
	struct tm_be_cg be[8];
	int n;

	for (int i = 0; i < 8; i++)
		snprintf(be[i].path, sizeof(be[i].path), "%s", in[i]);
	n = tm_be_top_level(be, 8);
	ASSERT_EQ(3, n);
	for (int i = 0; i < n; i++)
		EXPECT_STREQ(want[i], be[i].path);
	/* a name that only starts like another is not inside it */
	for (int i = 0; i < 4; i++)
		snprintf(be[i].path, sizeof(be[i].path), "%s", in2[i]);
	n = tm_be_top_level(be, 4);
	ASSERT_EQ(3, n);
	for (int i = 0; i < n; i++)
		EXPECT_STREQ(want2[i], be[i].path);
	EXPECT_EQ(0, tm_be_top_level(be, 0));
}

/* The one rule, as the sampler applies it to a single cgroup's counter. */
TEST(one_counter_s_growth)
{
	EXPECT_EQ(300ULL, tm_use_grown(1, 700, 1000, 50)); /* read before: its growth */
	EXPECT_EQ(0ULL, tm_use_grown(1, 1000, 1000, 50));  /* ran nothing */
	EXPECT_EQ(40ULL, tm_use_grown(0, 0, 40, 50));	   /* new: all it has */
	EXPECT_EQ(50ULL, tm_use_grown(0, 0, 90000, 50));   /* new with a history: capped */
	EXPECT_EQ(30ULL, tm_use_grown(1, 90000, 30, 50));  /* name reused: from zero */
	EXPECT_EQ(50ULL, tm_use_grown(1, 90000, 800, 50)); /* ... capped too */
}

TEST_HARNESS_MAIN
