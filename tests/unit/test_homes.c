// SPDX-License-Identifier: GPL-2.0
/* Unit tests for CCX placement decisions (userspace/policy/homes.h). */
#include "kselftest_harness.h"
#include "homes.h"
#include "topo.h"

static int order[64];

/* domains from a synthetic hwloc layout: capacity = online PUs x 1000 */
static int from_topo(const char *synth, struct tm_pl_domain *d)
{
	static struct tm_topology t;
	char err[256];

	if (tm_topo_load(synth, &t, err, sizeof(err)))
		return -1;
	for (int i = 0; i < t.nr_domains && i < TM_PL_MAX_DOMAINS; i++)
		d[i] = (struct tm_pl_domain){tm_cpuset_count(&t.d[i].online) * 1000, t.d[i].package,
					     0};
	return t.nr_domains;
}

TEST(best_fit_takes_the_tightest_domain_that_holds_it)
{
	struct tm_pl_domain d[3] = {{8000, 0}, {8000, 0}, {8000, 0}};
	struct tm_pl_cgroup c[3] = {
		{.id = 1, .demand_mcpu = 5000}, /* -> leaves 3000 in its domain */
		{.id = 2, .demand_mcpu = 3000}, /* best fit: the 3000 hole */
		{.id = 3, .demand_mcpu = 6000},
	};

	tm_place(d, 3, c, 3, 20, order);
	/* 6000 placed first (biggest), then 5000 in another, then 3000 beside... */
	EXPECT_EQ(1U, tm_pl_popcount(c[0].home));
	EXPECT_EQ(1U, tm_pl_popcount(c[1].home));
	EXPECT_EQ(1U, tm_pl_popcount(c[2].home));
	EXPECT_NE(c[0].home, c[2].home);
	/* the 3000 went where the 5000 left exactly 3000, not into an empty domain */
	EXPECT_EQ(c[0].home, c[1].home);
	EXPECT_EQ(8000U, d[__builtin_ctzll(c[0].home)].used_mcpu);
}

TEST(zen2_large_cgroup_gets_fewest_whole_domains_same_package)
{
	struct tm_pl_domain d[TM_PL_MAX_DOMAINS];
	int nd = from_topo("pack:2 die:4 l3:2 core:4 pu:2", d); /* 16 CCX of 8 PUs */
	struct tm_pl_cgroup c[1] = {{.id = 1, .demand_mcpu = 20000}};

	ASSERT_EQ(16, nd);
	tm_place(d, nd, c, 1, 20, order);
	EXPECT_EQ(3U, tm_pl_popcount(c[0].home));
	for (int i = 0; i < nd; i++)
		if (c[0].home >> i & 1)
			EXPECT_EQ(d[__builtin_ctzll(c[0].home)].package, d[i].package);
}

TEST(zen3_many_small_cgroups_pack_before_spreading)
{
	struct tm_pl_domain d[TM_PL_MAX_DOMAINS];
	int nd = from_topo("pack:1 l3:8 core:8 pu:2", d); /* 8 CCD of 16 PUs */
	struct tm_pl_cgroup c[4] = {
		{.id = 1, .demand_mcpu = 4000},
		{.id = 2, .demand_mcpu = 4000},
		{.id = 3, .demand_mcpu = 4000},
		{.id = 4, .demand_mcpu = 4000},
	};

	ASSERT_EQ(8, nd);
	tm_place(d, nd, c, 4, 20, order);
	/* best fit fills one CCD (4 x 4000 = 16000) before opening another */
	EXPECT_EQ(c[0].home, c[1].home);
	EXPECT_EQ(c[0].home, c[2].home);
	EXPECT_EQ(c[0].home, c[3].home);
}

TEST(hysteresis_keeps_homes_until_demand_moves_past_slack)
{
	struct tm_pl_domain d[2] = {{8000, 0}, {8000, 0}};
	struct tm_pl_cgroup c[2] = {{.id = 1, .demand_mcpu = 4000}, {.id = 2, .demand_mcpu = 3000}};
	uint64_t h0, h1;

	EXPECT_EQ(2, tm_place(d, 2, c, 2, 20, order));
	h0 = c[0].home;
	h1 = c[1].home;
	/* same demands: nothing moves */
	EXPECT_EQ(0, tm_place(d, 2, c, 2, 20, order));
	/* +10%: within slack, kept */
	c[0].demand_mcpu = 4400;
	EXPECT_EQ(0, tm_place(d, 2, c, 2, 20, order));
	EXPECT_EQ(h0, c[0].home);
	EXPECT_EQ(h1, c[1].home);
	/* doubled and no longer fits beside the other: re-placed */
	c[0].demand_mcpu = 8000;
	EXPECT_GE(tm_place(d, 2, c, 2, 20, order), 1);
	EXPECT_NE(c[0].home, c[1].home);
}

TEST(newcomer_does_not_push_out_a_cgroup_that_fits)
{
	struct tm_pl_domain d[2] = {{8000, 0}, {8000, 0}};
	struct tm_pl_cgroup c[2] = {{.id = 1, .demand_mcpu = 3000}};
	uint64_t h;

	tm_place(d, 2, c, 1, 20, order);
	h = c[0].home;
	/* a bigger cgroup arrives: sorted first, but the kept home is charged first */
	c[1] = (struct tm_pl_cgroup){.id = 2, .demand_mcpu = 7000};
	tm_place(d, 2, c, 2, 20, order);
	EXPECT_EQ(h, c[0].home);
	EXPECT_FALSE(c[0].moved);
	EXPECT_NE(c[0].home, c[1].home);
}

TEST(full_domains_overcommit_the_emptiest)
{
	struct tm_pl_domain d[2] = {{4000, 0}, {4000, 0}};
	struct tm_pl_cgroup c[3] = {{.id = 1, .demand_mcpu = 3500},
				    {.id = 2, .demand_mcpu = 3000},
				    {.id = 3, .demand_mcpu = 1000}};

	tm_place(d, 2, c, 3, 20, order);
	/* 3500 and 3000 take a domain each; 1000 fits nowhere: goes to the 3000 one */
	EXPECT_EQ(c[1].home, c[2].home);
}

TEST(asymmetric_domains_and_offline_domain)
{
	/* an 8-PU domain, a 4-PU domain, and one with every CPU offline */
	struct tm_pl_domain d[3] = {{4000, 0}, {0, 0}, {8000, 0}};
	struct tm_pl_cgroup c[2] = {{.id = 1, .demand_mcpu = 6000}, {.id = 2, .demand_mcpu = 3000}};

	tm_place(d, 3, c, 2, 20, order);
	EXPECT_EQ(1ULL << 2, c[0].home); /* only the 8-PU domain holds 6000 */
	EXPECT_EQ(1ULL << 0, c[1].home); /* the 4-PU one is the best fit for 3000 */
	EXPECT_EQ(0U, d[1].used_mcpu);
}

/* Through hwloc: an XML export of a machine with an absent core and CCX
 * (tests/fixtures/README.md), domains of 8, 6 and 8 PUs on two packages. */
TEST(asymmetric_xml_fixture_best_fit_and_fewest_domains)
{
	struct tm_pl_domain d[TM_PL_MAX_DOMAINS];
	struct tm_pl_cgroup c[3] = {{.id = 1, .demand_mcpu = 7000},
				    {.id = 2, .demand_mcpu = 5500},
				    {.id = 3, .demand_mcpu = 12000}};
	int nd = from_topo("tests/fixtures/asym-3l3.xml", d);

	ASSERT_EQ(3, nd);
	EXPECT_EQ(6000U, d[1].cap_mcpu);
	/* 12000 needs two domains: the fewest, in one package (0 and 1) */
	/* 7000 then fits only domain 2; 5500 is left over-committing the emptiest */
	tm_place(d, nd, c, 3, 20, order);
	EXPECT_EQ((1ULL << 0) | (1ULL << 1), c[2].home);
	EXPECT_EQ(1ULL << 2, c[0].home);
	EXPECT_EQ(1U, tm_pl_popcount(c[1].home));

	/* alone, 5500 goes to the 6-PU domain: the tightest that holds it */
	struct tm_pl_cgroup one[1] = {{.id = 2, .demand_mcpu = 5500}};

	tm_place(d, nd, one, 1, 20, order);
	EXPECT_EQ(1ULL << 1, one[0].home);
}

TEST(demand_larger_than_machine_takes_everything_online)
{
	struct tm_pl_domain d[3] = {{4000, 0}, {0, 0}, {4000, 1}};
	struct tm_pl_cgroup c[1] = {{.id = 1, .demand_mcpu = 50000}};

	tm_place(d, 3, c, 1, 20, order);
	EXPECT_EQ((1ULL << 0) | (1ULL << 2), c[0].home);
}

TEST_HARNESS_MAIN
