// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler's BE reading (report.h tm_sample_be), which the CPU evict
 * watermark and interference detection share: every configured BE cgroup
 * once, its cpu.stat usage read once a round however many strategies ask,
 * a cgroup that cannot be read marked so, an ONLINE one never listed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "kselftest_harness.h"
#include "actuate.h"
#include "report.h"
#include "standin.h"
#include "fakecg.h"

static char root[64];
static struct tm_daemon d;

static void put(const char *rel, unsigned long long us)
{
	char v[64];

	snprintf(v, sizeof(v), "usage_usec %llu\nuser_usec 0\n", us);
	if (fakecg_put(root, rel, "cpu.stat", v))
		fprintf(stderr, "cannot write %s%s/cpu.stat\n", root, rel);
}

static const struct tm_be_use *find(const struct tm_be_use *v, int n, const char *path)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

TEST(once_a_round_every_be_cgroup)
{
	const struct tm_be_use *v;
	char p[256];
	int n;

	ASSERT_EQ(0, standin_daemon(&d, root, sizeof(root),
				    "{\"be\":[\"/be/*\",{\"path\":\"/batch\",\"priority\":-3}],"
				    "\"online\":[\"/be/web\"]}"));
	snprintf(p, sizeof(p), "%s/be", root);
	mkdir(p, 0755);
	put("/be/a", 1000);
	put("/be/web", 5000);
	put("/batch", 7000);
	snprintf(p, sizeof(p), "%s/be/nocpu", root);
	mkdir(p, 0755); /* no cpu.stat: no cpu controller there */

	tm_sample_round();
	n = tm_sample_be(&d, &v);
	ASSERT_EQ(3, n); /* /be/a, /be/nocpu, /batch: never the ONLINE /be/web */
	ASSERT_NE(NULL, find(v, n, "/be/a"));
	EXPECT_TRUE(find(v, n, "/be/a")->ok);
	EXPECT_EQ(1000ULL, find(v, n, "/be/a")->usage_us);
	EXPECT_EQ(NULL, find(v, n, "/be/web"));
	ASSERT_NE(NULL, find(v, n, "/be/nocpu"));
	EXPECT_FALSE(find(v, n, "/be/nocpu")->ok);
	ASSERT_NE(NULL, find(v, n, "/batch"));
	EXPECT_EQ(-3, find(v, n, "/batch")->priority);

	/* the same round: the reading is shared, not redone */
	put("/be/a", 3000);
	n = tm_sample_be(&d, &v);
	EXPECT_EQ(1000ULL, find(v, n, "/be/a")->usage_us);
	/* the next round reads again */
	tm_sample_round();
	n = tm_sample_be(&d, &v);
	EXPECT_EQ(3000ULL, find(v, n, "/be/a")->usage_us);
	standin_remove(root);
}

TEST_HARNESS_MAIN
