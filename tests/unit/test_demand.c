// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for placement units and demand (topology/demand.c), on a fake
 * cgroup tree in a temp directory: cpu.max, cpuset.cpus, cpu.stat and
 * cpu.pressure are plain files there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "demand.h"
#include "fakecg.h"

FIXTURE(tree)
{
	char root[64];
};

FIXTURE_SETUP(tree)
{
	ASSERT_EQ(0, fakecg_root(self->root, sizeof(self->root)));
}

FIXTURE_TEARDOWN(tree)
{
	fakecg_remove(self->root);
}

TEST(home_rules_parse_and_refuse_bad_input)
{
	static struct tm_place_cfg c;
	char err[256];

	ASSERT_EQ(0, tm_home_rule_add(&c, "/online/web=soft,2500", err, sizeof(err)));
	EXPECT_STREQ("/online/web", c.r[0].path);
	EXPECT_TRUE(c.r[0].soft);
	EXPECT_EQ(2500U, c.r[0].demand_mcpu);
	ASSERT_EQ(0,
		  tm_home_rule_add(&c, "/sys/fs/cgroup/kubepods.slice/*=strict", err, sizeof(err)));
	EXPECT_STREQ("/kubepods.slice/*", c.r[1].path);
	EXPECT_FALSE(c.r[1].soft);
	EXPECT_EQ(0U, c.r[1].demand_mcpu);

	EXPECT_EQ(-1, tm_home_rule_add(&c, "/online/web", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "PATH=strict|soft"));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "/online/web=loose", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "mode 'loose'"));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "/online/web=soft,", err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "demand ''"));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "/online/web=soft,-5", err, sizeof(err)));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "/online/web=soft,0", err, sizeof(err)));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "/online/web=soft,12x", err, sizeof(err)));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "=soft", err, sizeof(err)));
	EXPECT_EQ(-1, tm_home_rule_add(&c, "/a/../b=soft", err, sizeof(err)));
	EXPECT_EQ(2, c.n); /* nothing half-added */
	for (int i = 0; i < c.n; i++)
		free((char *)c.r[i].path);
}

TEST_F(tree, demand_sources_in_order)
{
	struct tm_home_rule rule = {"/svc", false, 1500};
	struct tm_unit u = {.id = 1, .path = "/svc"};
	enum tm_demand_src src;

	fakecg_put(self->root, "/svc", "cpu.max", "250000 100000\n");
	fakecg_put(self->root, "/svc", "cpuset.cpus", "0-2\n");
	EXPECT_EQ(2500U, tm_unit_demand(&u, self->root, &rule, 60, 1000000, &src));
	EXPECT_EQ(TM_DEMAND_CPU_MAX, (int)src);

	fakecg_put(self->root, "/svc", "cpu.max", "max 100000\n");
	EXPECT_EQ(3000U, tm_unit_demand(&u, self->root, &rule, 60, 2000000, &src));
	EXPECT_EQ(TM_DEMAND_CPUSET, (int)src);

	fakecg_put(self->root, "/svc", "cpuset.cpus", "\n"); /* not set: inherits */
	EXPECT_EQ(1500U, tm_unit_demand(&u, self->root, &rule, 60, 3000000, &src));
	EXPECT_EQ(TM_DEMAND_RULE, (int)src);

	/* nothing measured yet: one CPU */
	EXPECT_EQ((uint32_t)TM_DEMAND_UNKNOWN_MCPU,
		  tm_unit_demand(&u, self->root, NULL, 60, 4000000, &src));
	EXPECT_EQ(TM_DEMAND_UNKNOWN, (int)src);
}

TEST_F(tree, measured_peak_counts_cpu_wait_and_ages_out)
{
	struct tm_unit u = {.id = 1, .path = "/svc"};
	enum tm_demand_src src;

	fakecg_put(self->root, "/svc", "cpu.max", "max 100000\n");
	fakecg_put(self->root, "/svc", "cpu.stat", "usage_usec 0\nuser_usec 0\n");
	fakecg_put(self->root, "/svc", "cpu.pressure",
		   "some avg10=50.00 avg60=10.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 "
		   "avg300=0.00 total=0\n");
	/* first reading: no rate yet */
	EXPECT_EQ((uint32_t)TM_DEMAND_UNKNOWN_MCPU,
		  tm_unit_demand(&u, self->root, NULL, 60, 1000000, &src));
	/* 1.5 CPUs used over 1 s, and tasks waited half of the time: +0.5 CPU */
	fakecg_put(self->root, "/svc", "cpu.stat", "usage_usec 1500000\n");
	EXPECT_EQ(2000U, tm_unit_demand(&u, self->root, NULL, 60, 2000000, &src));
	EXPECT_EQ(TM_DEMAND_PEAK, (int)src);
	/* a quieter second: the peak of the window stays */
	fakecg_put(self->root, "/svc", "cpu.pressure",
		   "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n");
	fakecg_put(self->root, "/svc", "cpu.stat", "usage_usec 2000000\n");
	EXPECT_EQ(2000U, tm_unit_demand(&u, self->root, NULL, 60, 3000000, &src));
	/* 70 s later (window 60 s) the old peak has aged out: 70 ms over 70 s */
	fakecg_put(self->root, "/svc", "cpu.stat", "usage_usec 2070000\n");
	EXPECT_EQ(1U, tm_unit_demand(&u, self->root, NULL, 60, 3000000 + 70000000, &src));
	fakecg_put(self->root, "/svc", "cpu.stat", "usage_usec 2170000\n");
	EXPECT_EQ(100U, tm_unit_demand(&u, self->root, NULL, 60, 3000000 + 71000000, &src));
}

/* class entries sorted by id, as tm_rules_resolve() gives them */
static const struct tm_class_entry cls[] = {
	{10, TM_CLASS_ONLINE, 0}, /* /online/a, user rule */
	{11, TM_CLASS_ONLINE, 1}, /* /online/b, user rule */
	{20, TM_CLASS_ONLINE, 2}, /* /kubepods, built-in */
	{21, TM_CLASS_BE, 3},	  /* /kubepods/besteffort, built-in */
	{30, TM_CLASS_BE, 4},	  /* /be, user rule */
};

static struct tm_cg_path paths[] = {
	{1, "/"},
	{10, "/online/a"},
	{11, "/online/b"},
	{20, "/kubepods"},
	{21, "/kubepods/besteffort"},
	{22, "/kubepods/pod1"},
	{23, "/kubepods/pod1/ctr"},
	{30, "/be"},
	{40, "/online"},
};

static void ruleset(struct tm_ruleset *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->n = 5;
	rs->r[0] = (struct tm_rule){"/online/a", TM_CLASS_ONLINE, false, false};
	rs->r[1] = (struct tm_rule){"/online/b", TM_CLASS_ONLINE, false, false};
	rs->r[2] = (struct tm_rule){"kubepods", TM_CLASS_ONLINE, true, true};
	rs->r[3] = (struct tm_rule){"kubepods/besteffort", TM_CLASS_BE, true, true};
	rs->r[4] = (struct tm_rule){"/be", TM_CLASS_BE, false, false};
}

static struct tm_unit *unit(struct tm_placer *pl, uint64_t id)
{
	for (size_t i = 0; i < pl->n; i++)
		if (pl->u[i].id == id)
			return &pl->u[i];
	return NULL;
}

TEST_F(tree, units_homes_and_hysteresis)
{
	static struct tm_ruleset rs;
	static struct tm_placer pl;
	char err[128];

	ruleset(&rs);
	pl.nd = 2;
	pl.d[0] = (struct tm_pl_domain){4000, 0};
	pl.d[1] = (struct tm_pl_domain){4000, 0};
	pl.cfg.slack_pct = 20;
	pl.cfg.peak_window_s = 60;
	ASSERT_EQ(0, tm_home_rule_add(&pl.cfg, "/kubepods/*=soft,500", err, sizeof(err)));
	fakecg_put(self->root, "/online", "cgroup.procs", "");
	fakecg_put(self->root, "/online/a", "cpu.max", "300000 100000\n");
	fakecg_put(self->root, "/online/b", "cpu.max", "300000 100000\n");
	fakecg_put(self->root, "/kubepods", "cpu.max", "max 100000\n");
	fakecg_put(self->root, "/kubepods/pod1", "cpu.max", "max 100000\n");

	ASSERT_EQ(3, tm_placer_update(&pl, self->root, &rs, cls, 5, paths, 9, 1000000));
	ASSERT_EQ(3U, pl.n);
	/* user-rule ONLINE cgroups and the pod under kubepods; not kubepods itself,
	 * not its BE QoS child, not the pod's own children */
	ASSERT_NE(NULL, unit(&pl, 10));
	ASSERT_NE(NULL, unit(&pl, 11));
	ASSERT_NE(NULL, unit(&pl, 22));
	EXPECT_EQ(NULL, unit(&pl, 20));
	EXPECT_EQ(NULL, unit(&pl, 23));
	/* 3000 + 3000 cannot share a 4000 domain */
	EXPECT_NE(unit(&pl, 10)->home, unit(&pl, 11)->home);
	EXPECT_EQ(1U, tm_pl_popcount(unit(&pl, 10)->home));
	EXPECT_TRUE(unit(&pl, 22)->soft);
	EXPECT_FALSE(unit(&pl, 10)->soft);
	EXPECT_EQ(500U, unit(&pl, 22)->demand_mcpu);
	EXPECT_EQ(TM_DEMAND_RULE, (int)unit(&pl, 22)->src);
	EXPECT_EQ(3ULL, tm_placer_home_doms(&pl));

	/* a small change of demand moves nothing */
	uint64_t ha = unit(&pl, 10)->home;

	fakecg_put(self->root, "/online/a", "cpu.max", "320000 100000\n");
	EXPECT_EQ(0, tm_placer_update(&pl, self->root, &rs, cls, 5, paths, 9, 2000000));
	EXPECT_EQ(ha, unit(&pl, 10)->home);

	/* b is removed: its unit goes, the others stay where they are */
	struct tm_class_entry cls2[5];
	size_t n2 = 0;

	for (int i = 0; i < 5; i++)
		if (cls[i].id != 11)
			cls2[n2++] = cls[i];
	EXPECT_EQ(1, tm_placer_update(&pl, self->root, &rs, cls2, n2, paths, 9, 3000000));
	EXPECT_EQ(NULL, unit(&pl, 11));
	EXPECT_EQ(ha, unit(&pl, 10)->home);
	EXPECT_EQ(2U, pl.n);

	tm_placer_free(&pl);
	free((char *)pl.cfg.r[0].path);
}

TEST_HARNESS_MAIN
