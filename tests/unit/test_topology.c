// SPDX-License-Identifier: GPL-2.0
/* Unit tests for L3-domain discovery on synthetic AMD Zen layouts. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "topo.h"

static struct tm_topology t;
static char err[512];

static const char *fmt(const struct tm_cpuset *s)
{
	static char buf[2048];

	tm_cpuset_format(s, buf, sizeof(buf));
	return buf;
}

TEST(zen2_ccx_of_4_cores_with_smt)
{
	/* EPYC 7742-like: 8 CCDs x 2 CCX x 4 cores x 2 threads */
	ASSERT_EQ(0, tm_topo_load("pack:1 die:8 l3:2 core:4 pu:2", &t, err, sizeof(err)));
	EXPECT_EQ(TM_DOMAIN_L3, (int)t.kind);
	EXPECT_EQ(16, t.nr_domains);
	EXPECT_EQ(128U, t.nr_cpus);
	EXPECT_TRUE(t.symmetric);
	EXPECT_EQ(4U, t.d[0].nr_cores);
	EXPECT_EQ(8U, tm_cpuset_count(&t.d[0].cpus));
	EXPECT_STREQ("0-7", fmt(&t.d[0].cpus));
	EXPECT_STREQ("120-127", fmt(&t.d[15].cpus));
}

TEST(zen3_ccd_of_8_cores)
{
	ASSERT_EQ(0, tm_topo_load("pack:1 l3:8 core:8 pu:2", &t, err, sizeof(err)));
	EXPECT_EQ(8, t.nr_domains);
	EXPECT_EQ(8U, t.d[3].nr_cores);
	EXPECT_EQ(16U, tm_cpuset_count(&t.d[3].cpus));
	EXPECT_EQ(0, t.d[3].package);
}

TEST(zen4_two_sockets)
{
	ASSERT_EQ(0, tm_topo_load("pack:2 die:12 l3:1 core:8 pu:2", &t, err, sizeof(err)));
	EXPECT_EQ(24, t.nr_domains);
	EXPECT_EQ(384U, t.nr_cpus);
	EXPECT_EQ(0, t.d[11].package);
	EXPECT_EQ(1, t.d[12].package);
}

TEST(linux_smt_numbering_keeps_siblings_in_their_domain)
{
	/* 2 CCX x 4 cores x 2 threads, siblings numbered c and c+8 as Linux does */
	ASSERT_EQ(0,
		  tm_topo_load("pack:1 l3:2 core:4 pu:2(indexes=2*8:1*2)", &t, err, sizeof(err)));
	EXPECT_EQ(2, t.nr_domains);
	EXPECT_STREQ("0-3,8-11", fmt(&t.d[0].cpus));
	EXPECT_STREQ("4-7,12-15", fmt(&t.d[1].cpus));
}

TEST(no_l3_falls_back_to_l2_then_package)
{
	ASSERT_EQ(0, tm_topo_load("pack:2 l2:2 core:2 pu:1", &t, err, sizeof(err)));
	EXPECT_EQ(TM_DOMAIN_L2, (int)t.kind);
	EXPECT_EQ(4, t.nr_domains);
	ASSERT_EQ(0, tm_topo_load("pack:2 core:4 pu:1", &t, err, sizeof(err)));
	EXPECT_EQ(TM_DOMAIN_PACKAGE, (int)t.kind);
	EXPECT_EQ(2, t.nr_domains);
	EXPECT_EQ(0ULL, t.d[0].cache_bytes);
}

TEST(asymmetric_xml_export)
{
	ASSERT_EQ(0, tm_topo_load("tests/fixtures/asym-3l3.xml", &t, err, sizeof(err)));
	EXPECT_EQ(TM_DOMAIN_L3, (int)t.kind);
	ASSERT_EQ(3, t.nr_domains);
	EXPECT_FALSE(t.symmetric);
	EXPECT_STREQ("0-7", fmt(&t.d[0].cpus));
	EXPECT_STREQ("8-11,14-15", fmt(&t.d[1].cpus));
	EXPECT_STREQ("16-23", fmt(&t.d[2].cpus));
	EXPECT_EQ(3U, t.d[1].nr_cores);
	EXPECT_EQ(t.d[0].package, t.d[1].package);
	EXPECT_NE(t.d[0].package, t.d[2].package);
}

TEST(bad_input_is_refused_with_a_message)
{
	EXPECT_EQ(-1, tm_topo_load("pack:1 l3:banana", &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "synthetic"));
	EXPECT_EQ(-1, tm_topo_load("/no/such/file.xml", &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "No such file"));
}

TEST(cpuset_list_round_trip)
{
	struct tm_cpuset s;
	char buf[256];

	ASSERT_EQ(0, tm_cpuset_parse("0-3,8,10-11\n", &s));
	EXPECT_EQ(7U, tm_cpuset_count(&s));
	tm_cpuset_format(&s, buf, sizeof(buf));
	EXPECT_STREQ("0-3,8,10-11", buf);
	EXPECT_EQ(-1, tm_cpuset_parse("3-1", &s));
	EXPECT_EQ(-1, tm_cpuset_parse("a", &s));
	EXPECT_EQ(-1, tm_cpuset_parse("1,,x", &s));
	EXPECT_EQ(-1, tm_cpuset_parse("99999", &s));
}

static void fake_cpu(const char *root, int cpu, const char *shared)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "mkdir -p %s/cpu%d/cache/index3", root, cpu);
	if (system(p))
		return;
	snprintf(p, sizeof(p), "%s/cpu%d/cache/index3/level", root, cpu);
	f = fopen(p, "w");
	fputs("3\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/cpu%d/cache/index3/shared_cpu_list", root, cpu);
	f = fopen(p, "w");
	fprintf(f, "%s\n", shared);
	fclose(f);
}

TEST(sysfs_cross_check_finds_disagreement)
{
	char root[] = "/tmp/tm-sysfs-XXXXXX", report[1024], cmd[64];

	ASSERT_NE(NULL, mkdtemp(root));
	ASSERT_EQ(0, tm_topo_load("pack:1 l3:2 core:2 pu:1", &t, err, sizeof(err)));
	fake_cpu(root, 0, "0-1");
	fake_cpu(root, 1, "0-1");
	fake_cpu(root, 2, "2-3");
	fake_cpu(root, 3, "2-3");
	EXPECT_EQ(0, tm_topo_check_sysfs(&t, root, report, sizeof(report)));
	/* the kernel says CPU 3 shares its L3 with everyone */
	fake_cpu(root, 3, "0-3");
	EXPECT_EQ(1, tm_topo_check_sysfs(&t, root, report, sizeof(report)));
	EXPECT_NE(NULL, strstr(report, "cpu3"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	EXPECT_EQ(0, system(cmd));
	/* no sysfs L3 at all */
	EXPECT_EQ(-1, tm_topo_check_sysfs(&t, "/nonexistent", report, sizeof(report)));
}

/* SMT siblings from the layout, never from numbering: Linux numbers a
 * Zen core's two threads c and c + (number of cores) */
TEST(smt_siblings_are_the_cpus_of_one_core)
{
	struct tm_cpuset s;

	ASSERT_EQ(0,
		  tm_topo_load("pack:1 l3:2 core:4 pu:2(indexes=2*8:1*2)", &t, err, sizeof(err)));
	EXPECT_EQ(8U, t.nr_cores);
	EXPECT_EQ(2U, t.threads_per_core);
	EXPECT_EQ(t.core_of[0], t.core_of[8]);
	EXPECT_NE(t.core_of[0], t.core_of[1]);
	tm_topo_siblings(&t, 11, &s);
	EXPECT_STREQ("3,11", fmt(&s));
	tm_topo_siblings(&t, 4, &s);
	EXPECT_STREQ("4,12", fmt(&s));
	/* siblings numbered next to each other */
	ASSERT_EQ(0, tm_topo_load("pack:1 l3:2 core:4 pu:2", &t, err, sizeof(err)));
	tm_topo_siblings(&t, 5, &s);
	EXPECT_STREQ("4-5", fmt(&s));
	/* no SMT */
	ASSERT_EQ(0, tm_topo_load("pack:2 l3:1 core:4 pu:1", &t, err, sizeof(err)));
	EXPECT_EQ(8U, t.nr_cores);
	EXPECT_EQ(1U, t.threads_per_core);
	tm_topo_siblings(&t, 6, &s);
	EXPECT_STREQ("6", fmt(&s));
	tm_topo_siblings(&t, 9, &s); /* no such CPU */
	EXPECT_EQ(0U, tm_cpuset_count(&s));
}

static void fake_siblings(const char *root, int cpu, const char *list)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "mkdir -p %s/cpu%d/topology", root, cpu);
	if (system(p))
		return;
	snprintf(p, sizeof(p), "%s/cpu%d/topology/thread_siblings_list", root, cpu);
	f = fopen(p, "w");
	fprintf(f, "%s\n", list);
	fclose(f);
}

TEST(sysfs_cross_check_of_thread_siblings)
{
	char root[] = "/tmp/tm-sysfs-XXXXXX", report[1024], cmd[64];
	/* 1 L3, 2 cores x 2 threads numbered c and c+2 */
	const char *lists[] = {"0,2", "1,3", "0,2", "1,3"};

	ASSERT_NE(NULL, mkdtemp(root));
	ASSERT_EQ(0,
		  tm_topo_load("pack:1 l3:1 core:2 pu:2(indexes=2*2:1*2)", &t, err, sizeof(err)));
	for (int c = 0; c < 4; c++) {
		fake_cpu(root, c, "0-3");
		fake_siblings(root, c, lists[c]);
	}
	EXPECT_EQ(0, tm_topo_check_sysfs(&t, root, report, sizeof(report))) TH_LOG("%s", report);
	/* a kernel that pairs 0 with 1 (numbering assumed, not read) */
	fake_siblings(root, 1, "0-1");
	EXPECT_EQ(1, tm_topo_check_sysfs(&t, root, report, sizeof(report)));
	EXPECT_NE(NULL, strstr(report, "cpu1: hwloc's core has CPUs 1,3, sysfs's thread siblings "
				       "are 0-1"))
	TH_LOG("%s", report);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	EXPECT_EQ(0, system(cmd));
}

/* fuzz_cpuset: hwloc built every object of a huge description before it
 * could be refused (tens of seconds); now refused up front. */
TEST(synthetic_above_the_cpu_limit_refused_before_building)
{
	EXPECT_EQ(-1, tm_topo_load("pack:2 l3:400 pu:2", &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "more than 512 CPUs"));
	EXPECT_EQ(-1, tm_topo_load("31616", &t, err, sizeof(err)));
	EXPECT_EQ(-1, tm_topo_load("pack:2 co:32L3:32L3:44 pu:2", &t, err, sizeof(err)));
	/* hwloc reads arities in base 0: hex and octal too (fuzz_cpuset timed
	 * out on "0x8600", 34,304 PUs) */
	EXPECT_EQ(-1, tm_topo_load("0x8600", &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "more than 512 CPUs"));
	EXPECT_EQ(-1, tm_topo_load("pack:0x2 pu:01000", &t, err, sizeof(err)));
	/* and a sign (fuzz_cpuset: "pu...:+72372") */
	EXPECT_EQ(-1, tm_topo_load("pack:2 pu:+600", &t, err, sizeof(err)));
	EXPECT_EQ(-1, tm_topo_load("0000004848119790", &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "more than 512 CPUs"));
	EXPECT_EQ(0, tm_topo_load("pack:0x2 pu:010", &t, err, sizeof(err)));
	EXPECT_EQ(16U, t.nr_cpus);
	EXPECT_EQ(0,
		  tm_topo_load("pack:1 l3:2 core:4 pu:2(indexes=2*8:1*2)", &t, err, sizeof(err)));
	EXPECT_EQ(16U, t.nr_cpus);
	EXPECT_EQ(0, tm_topo_load("pack:2 die:4 l3:2 core:4 pu:2", &t, err, sizeof(err)));
}

TEST_HARNESS_MAIN
