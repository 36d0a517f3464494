// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the watermark arithmetic the BPF scheduler runs each window. */
#include "kselftest_harness.h"
#include "tidemark_policy.h"

#define MS 1000000ULL

TEST(allowance_is_line_minus_online)
{
	/* 2 CPUs x 5 ms = 10 ms; line 65% = 6.5 ms; ONLINE used 3 ms */
	EXPECT_EQ(3500000ULL, tm_be_allowance(10 * MS, 65, 3 * MS, 0));
	/* ONLINE idle: BE alone gets the whole line */
	EXPECT_EQ(6500000ULL, tm_be_allowance(10 * MS, 65, 0, 0));
	/* line 100%: BE may fill whatever ONLINE leaves */
	EXPECT_EQ(1000000ULL, tm_be_allowance(10 * MS, 100, 9 * MS, 0));
}

TEST(allowance_never_below_floor)
{
	/* ONLINE above the line: only the floor is left */
	EXPECT_EQ(500000ULL, tm_be_allowance(10 * MS, 65, 8 * MS, 500000));
	/* ONLINE at full capacity: still the floor */
	EXPECT_EQ(500000ULL, tm_be_allowance(10 * MS, 65, 10 * MS, 500000));
	/* a floor above capacity is clamped to capacity */
	EXPECT_EQ(10 * MS, tm_be_allowance(10 * MS, 65, 10 * MS, 20 * MS));
	/* the floor does not lift an allowance that is above it */
	EXPECT_EQ(3500000ULL, tm_be_allowance(10 * MS, 65, 3 * MS, 500000));
}

TEST(allowance_large_capacity_no_overflow)
{
	/* 512 CPUs x 100 ms window */
	__u64 cap = 512ULL * 100 * MS;

	EXPECT_EQ(cap / 100 * 65, tm_be_allowance(cap, 65, 0, 0));
}

TEST(budget_pays_back_be_overspend)
{
	/* BE ran 1 ms past its budget: next window gets 1 ms less */
	EXPECT_EQ(2500000LL, tm_be_budget_next(-1 * (__s64)MS, 0, 3500000, 6500000));
}

TEST(budget_never_carries_unspent)
{
	/* unspent budget is not credited: no burst above the line */
	EXPECT_EQ(3500000LL, tm_be_budget_next(2 * MS, 0, 3500000, 6500000));
	/* ONLINE used less than predicted: no credit either */
	EXPECT_EQ(3500000LL, tm_be_budget_next(0, -2 * (__s64)MS, 3500000, 6500000));
}

TEST(budget_pays_back_online_rise)
{
	/* ONLINE rose 2 ms above the prediction while BE spent all: 2 ms over */
	EXPECT_EQ(1500000LL, tm_be_budget_next(0, 2 * MS, 3500000, 6500000));
	/* ... but BE budget left unspent offsets it: 0.5 ms over */
	EXPECT_EQ(3000000LL, tm_be_budget_next(1500000, 2 * MS, 3500000, 6500000));
	/* both: ONLINE rose 1 ms and BE overspent 1 ms */
	EXPECT_EQ(1500000LL, tm_be_budget_next(-1 * (__s64)MS, MS, 3500000, 6500000));
}

TEST(budget_payback_capped_at_one_window)
{
	/* a huge spike costs BE at most one window's line */
	EXPECT_EQ(3500000LL - 6500000LL,
		  tm_be_budget_next(-50 * (__s64)MS, 50 * MS, 3500000, 6500000));
}

TEST(tunables_check_rules)
{
	struct tm_tunables t = {.suppress_pct = 65, .max_be_wait_ms = 1000, .be_floor_mcpu = 100};

	EXPECT_EQ(NULL, tm_tunables_check(&t, 2));
	t.suppress_pct = 0;
	EXPECT_NE(NULL, tm_tunables_check(&t, 2));
	t.suppress_pct = 101;
	EXPECT_NE(NULL, tm_tunables_check(&t, 2));
	t.suppress_pct = 100;
	EXPECT_EQ(NULL, tm_tunables_check(&t, 2));
	t.max_be_wait_ms = TM_MAX_BE_WAIT_MS_MIN - 1;
	EXPECT_NE(NULL, tm_tunables_check(&t, 2));
	t.max_be_wait_ms = TM_MAX_BE_WAIT_MS_MAX + 1;
	EXPECT_NE(NULL, tm_tunables_check(&t, 2));
	t.max_be_wait_ms = 1000;
	/* floor: 2 CPUs = 2000 mCPU of capacity */
	t.be_floor_mcpu = 2001;
	EXPECT_NE(NULL, strstr(tm_tunables_check(&t, 2), "capacity"));
	/* above the line (65% of 2000 = 1300) but within capacity */
	t.suppress_pct = 65;
	t.be_floor_mcpu = 1301;
	EXPECT_NE(NULL, strstr(tm_tunables_check(&t, 2), "suppress line"));
	t.be_floor_mcpu = 1300;
	EXPECT_EQ(NULL, tm_tunables_check(&t, 2));
}

TEST(hist_buckets_log2_us)
{
	EXPECT_EQ(0U, tm_hist_bucket(999));  /* < 1 us */
	EXPECT_EQ(1U, tm_hist_bucket(1000)); /* [1,2) us */
	EXPECT_EQ(2U, tm_hist_bucket(2000)); /* [2,4) */
	EXPECT_EQ(2U, tm_hist_bucket(3999));
	EXPECT_EQ(3U, tm_hist_bucket(4000));
	EXPECT_EQ(11U, tm_hist_bucket(1024000)); /* ~1 ms */
	/* far beyond the last bucket: clamped */
	EXPECT_EQ((__u32)TM_HIST_BUCKETS - 1, tm_hist_bucket(~0ULL));
}

TEST(floor_owed_only_when_online_leaves_less_than_it)
{
	/* 2 CPUs x 5 ms window = 10 ms; line 40% = 4 ms; floor 0.5 ms */
	EXPECT_EQ(0ULL, tm_be_floor_owed(10000000, 40, 0, 500000));	  /* BE alone */
	EXPECT_EQ(0ULL, tm_be_floor_owed(10000000, 40, 3500000, 500000)); /* exactly room */
	EXPECT_EQ(500000ULL, tm_be_floor_owed(10000000, 40, 3600000, 500000));
	EXPECT_EQ(500000ULL, tm_be_floor_owed(10000000, 40, 9000000, 500000)); /* above the line */
	EXPECT_EQ(0ULL, tm_be_floor_owed(10000000, 40, 9000000, 0));	       /* no floor */
}

TEST_HARNESS_MAIN
