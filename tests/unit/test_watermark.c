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

TEST(over_counts_be_excess_and_pays_it_back)
{
	/* 2 CPUs x 5 ms, line 65% = 6.5 ms: ONLINE 3 ms, BE overran to 4.5 ms */
	__s64 o = tm_be_over_next(0, 3 * MS, 4500000, 10 * MS, 65, 0, true, 0);

	EXPECT_EQ(1000000LL, o);
	/* the next window's budget is 1 ms short of the allowance */
	EXPECT_EQ(2500000LL, tm_be_budget_next(3500000, o));
	/* ... and, BE held to that, the node is back on its line */
	EXPECT_EQ(0LL, tm_be_over_next(o, 3 * MS, 2500000, 10 * MS, 65, 0, true, 0));
}

TEST(over_not_credited_for_capacity_nobody_wanted)
{
	/* BE idle (not held back): the node under the line gives no credit */
	EXPECT_EQ(0LL, tm_be_over_next(0, 3 * MS, 1 * MS, 10 * MS, 65, 0, false, 0));
	/* held back (queued, budget spent) under the line: credited */
	EXPECT_EQ(-2500000LL, tm_be_over_next(0, 3 * MS, 1 * MS, 10 * MS, 65, 0, true, 0));
}

TEST(over_counts_online_past_the_line_but_not_the_floor)
{
	/* ONLINE 9 ms, past a 6.5 ms line, BE ran 0.5 ms: the node is 3 ms over */
	EXPECT_EQ(3000000LL, tm_be_over_next(0, 9 * MS, 500000, 10 * MS, 65, 0, true, 0));
	/* ... the floor owed (0.5 ms) and BE ran just that: nothing owed */
	EXPECT_EQ(0LL, tm_be_over_next(0, 9 * MS, 500000, 10 * MS, 65, 500000, true, 0));
	/* ... BE ran 1 ms with that floor owed: only what it ran beyond it */
	EXPECT_EQ(500000LL, tm_be_over_next(0, 9 * MS, 1 * MS, 10 * MS, 65, 500000, true, 0));
	/* ... under the line with the floor owed: the plain error */
	EXPECT_EQ(-1500000LL, tm_be_over_next(0, 4 * MS, 1 * MS, 10 * MS, 65, 500000, true, 0));
}

TEST(over_bounded_to_one_window_and_the_slack)
{
	EXPECT_EQ(6500000LL, tm_be_over_next(6 * MS, 3 * MS, 10 * MS, 10 * MS, 65, 0, true, 0));
	EXPECT_EQ(-6500000LL, tm_be_over_next(-6 * MS, 0, 0, 10 * MS, 65, 0, true, 0));
	/* grants straddling windows: 2 CPUs x a 5 ms slice more either way */
	EXPECT_EQ((__s64)(16 * MS + 500000),
		  tm_be_over_next(15 * MS, 3 * MS, 7 * MS, 10 * MS, 65, 0, true, 10 * MS));
	EXPECT_EQ(-(__s64)(16 * MS + 500000),
		  tm_be_over_next(-16 * MS, 0, 0, 10 * MS, 65, 0, true, 10 * MS));
}

/*
 * A node simulated window by window: ONLINE on and off in bursts, BE always
 * wanting both CPUs and taking its budget (at least 0). The mean must sit on
 * the line; with only the excess paid back (the old rule) it sat points under.
 */
static double simulate2(int on_windows, int off_windows, __u64 online_ns, __u64 lull_ns, int pct)
{
	const __u64 cap = 10 * MS;
	__u64 pred = 0, node = 0;
	__s64 over = 0, budget = 0;
	int n = 4000;

	for (int k = 0; k < n; k++) {
		__u64 hi = k % (on_windows + off_windows) < on_windows ? online_ns : lull_ns;
		__u64 room = cap - hi;
		__u64 be = budget > 0 ? ((__u64)budget < room ? (__u64)budget : room) : 0;

		node += hi + be;
		over = tm_be_over_next(over, hi, be, cap, pct, 0, be < room, 0);
		budget = tm_be_budget_next(tm_be_allowance(cap, pct, hi, 0), over);
		pred = hi;
	}
	(void)pred;
	return 100.0 * node / ((double)n * cap);
}

static double simulate(int on_windows, int off_windows, __u64 online_ns, int pct)
{
	return simulate2(on_windows, off_windows, online_ns, 0, pct);
}

TEST(mean_on_the_line_under_bursty_online)
{
	/* ONLINE one CPU for 10 ms in every 25 ms (~20% of the node) */
	double m = simulate(2, 3, 5 * MS, 65);

	EXPECT_LE(64.5, m);
	EXPECT_GE(65.5, m);
	/* one window on, one off, a whole CPU: the hardest case for prediction */
	m = simulate(1, 1, 5 * MS, 65);
	EXPECT_LE(64.5, m);
	EXPECT_GE(65.5, m);
	/* a low line */
	m = simulate(3, 5, 3 * MS, 40);
	EXPECT_LE(39.5, m);
	EXPECT_GE(40.5, m);
	/* steady ONLINE: exactly the line */
	m = simulate(1, 0, 3 * MS, 65);
	EXPECT_LE(64.9, m);
	EXPECT_GE(65.1, m);
}

/*
 * ONLINE's bursts above the line itself, its mean under it (a busy service
 * on 4 vCPUs: 188 of 622 windows above the line, ONLINE+SYSTEM at 55% of the node
 * against a 65% line). Its spikes cost the node as much as its lulls leave:
 * were the spikes forgiven and the lulls credited, BE would take the lulls'
 * room as well as its own and the mean would sit above the line.
 */
TEST(mean_on_the_line_when_online_spikes_past_it)
{
	/* 9 ms then 1 ms of 10: ONLINE at 50%, past the line every other window */
	double m = simulate2(1, 1, 9 * MS, 1 * MS, 65);

	EXPECT_LE(64.5, m);
	EXPECT_GE(65.5, m);
	/* ONLINE at 58%: 8 ms in two windows of three, 1.5 ms in the third */
	m = simulate2(2, 1, 8 * MS, 1500000, 65);
	EXPECT_LE(64.5, m);
	EXPECT_GE(65.5, m);
}

/* Every tunable of the table: its limits pass, one past them is refused by name. */
TEST(tunables_check_table)
{
	struct tm_tunables t;
	const char *why;

	tm_tunables_default(&t);
	EXPECT_EQ(NULL, tm_tunables_check(&t, 2));
#define TM_TUN_EDGES(f, N, u, d, lo, hi, w, e)                                                    \
	do {                                                                                      \
		tm_tunables_default(&t);                                                          \
		t.be_floor_mcpu = 0; /* so be_floor_mcpu's own limits are what is tested */       \
		t.f = hi;                                                                         \
		if (strcmp(#f, "be_floor_mcpu"))                                                  \
			EXPECT_EQ(NULL, tm_tunables_check(&t, 2000)) TH_LOG(#f " at %u", t.f);    \
		t.f = lo;                                                                         \
		EXPECT_EQ(NULL, tm_tunables_check(&t, 2000)) TH_LOG(#f " at %u", t.f);            \
		t.f = (__u64)(hi) + 1;                                                            \
		why = tm_tunables_check(&t, 2000);                                                \
		ASSERT_NE(NULL, why) TH_LOG(#f " above its maximum passed");                      \
		EXPECT_NE(NULL, strstr(why, #f " must be within")) TH_LOG("%s", why);             \
		if ((lo) > 0) {                                                                   \
			t.f = (lo)-1;                                                             \
			EXPECT_NE(NULL, tm_tunables_check(&t, 2000)) TH_LOG(#f " below its min"); \
		}                                                                                 \
	} while (0);
	TM_TUNABLES(TM_TUN_EDGES)
#undef TM_TUN_EDGES
}

TEST(tunables_check_rules)
{
	struct tm_tunables t;

	tm_tunables_default(&t);
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
	/* the definition (a shift per bit, capped), at and around every
	 * power of two */
	for (int k = 0; k < 64; k++) {
		for (int d = -1; d <= 1; d++) {
			__u64 us = (1ULL << k) + (__u64)(__s64)d, v = us;
			__u32 want = 0;

			while (v && want < TM_HIST_BUCKETS - 1) {
				v >>= 1;
				want++;
			}
			if (us > ~0ULL / 1000)
				continue;
			EXPECT_EQ(want, tm_hist_bucket(us * 1000));
			EXPECT_EQ(want, tm_hist_bucket(us * 1000 + 999));
		}
	}
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

TEST(be_recent_rate_averages_windows)
{
	__u64 avg = 0;
	int i;

	/* 2 CPUs x 5 ms: BE ran 2.5 ms of it = 500 mCPU; 1/8 per window */
	EXPECT_EQ(62ULL, tm_be_recent_next(0, 2500000, 5000000));
	for (i = 0; i < 100; i++)
		avg = tm_be_recent_next(avg, 2500000, 5000000);
	EXPECT_GE(avg, 490ULL);
	EXPECT_LE(avg, 500ULL);
	/* a late window: the rate is over the time that elapsed */
	EXPECT_EQ(avg - avg / 8 + 62, tm_be_recent_next(avg, 5000000, 10000000));
	/* no time elapsed: unchanged, no division by zero */
	EXPECT_EQ(avg, tm_be_recent_next(avg, 1000, 0));
	/* 512 CPUs x 100 ms all BE: no overflow */
	EXPECT_EQ(512000ULL / 8, tm_be_recent_next(0, 512ULL * 100 * MS, 100 * MS));
}

TEST(floor_due_only_while_be_is_short_of_it)
{
	/* BE had 500 mCPU lately (between ONLINE bursts): a 100 mCPU floor is not owed */
	EXPECT_FALSE(tm_be_floor_due(500, 100));
	/* ONLINE took everything for a while: BE's rate fell under the floor */
	EXPECT_TRUE(tm_be_floor_due(99, 100));
	EXPECT_FALSE(tm_be_floor_due(100, 100));
	/* no floor: never owed */
	EXPECT_FALSE(tm_be_floor_due(0, 0));
}

/* Holding ONLINE steadily above the line, BE settles at its floor on
 * average: owed while its rate is under it, not owed once it is over. */
TEST(floor_held_on_average_under_saturating_online)
{
	__u64 avg = 0, cap = 10 * MS, ran = 0, floor_ns;
	__u32 floor_mcpu = 100;
	int i;

	for (i = 0; i < 400; i++) {
		floor_ns = tm_be_floor_due(avg, floor_mcpu) ? (__u64)floor_mcpu * 5 * MS / 1000 : 0;
		/* ONLINE wants all: BE gets what the floor owes, a tenth more (a late timer) */
		__u64 be = tm_be_floor_owed(cap, 65, cap, floor_ns) * 11 / 10;

		if (i >= 200)
			ran += be;
		avg = tm_be_recent_next(avg, be, 5 * MS);
	}
	/* 200 windows x 5 ms x 100 mCPU = 100 ms of BE, within 15% */
	EXPECT_GE(ran, 85 * MS);
	EXPECT_LE(ran, 115 * MS);
}

TEST_HARNESS_MAIN
