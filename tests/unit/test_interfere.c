// SPDX-License-Identifier: GPL-2.0
/* Unit tests for interference detection (interfere.h), on synthetic traces. */
#include "kselftest_harness.h"
#include "interfere.h"

static const struct tm_if_params P = {
	.warmup = 10,
	.span = 30,
	.sigma = 3,
	.min_rise_pct = 50,
	.abs_min = 20,
	.need_n = 3,
	.of_m = 5,
};

/* A noisy but steady run-queue wait around 100 us. */
static double steady(int i)
{
	static const double noise[] = {0, 4, -3, 6, -5, 2, -1, 3, -4, 5, -2, 1};

	return 100 + noise[i % 12];
}

TEST(steady_signal_is_never_an_outlier)
{
	struct tm_baseline b = {};
	bool out;

	for (int i = 0; i < 300; i++) {
		ASSERT_FALSE(tm_baseline_feed(&b, &P, steady(i), &out));
		ASSERT_FALSE(out);
	}
	EXPECT_GT(b.mean, 98);
	EXPECT_LT(b.mean, 102);
}

TEST(no_judgement_before_warmup)
{
	struct tm_baseline b = {};
	bool out = true;

	for (int i = 0; i < 9; i++)
		ASSERT_FALSE(tm_baseline_feed(&b, &P, i == 5 ? 5000 : 100, &out));
	EXPECT_FALSE(out);
}

TEST(step_up_is_interference_after_n_of_m)
{
	struct tm_baseline b = {};
	int i, first = -1;

	for (i = 0; i < 60; i++)
		tm_baseline_feed(&b, &P, steady(i), NULL);
	/* the antagonist starts: the wait triples */
	for (i = 0; i < 10 && first < 0; i++)
		if (tm_baseline_feed(&b, &P, 300 + steady(i), NULL))
			first = i;
	EXPECT_EQ(2, first); /* the third outlier sample */
	/* the baseline did not follow the interference */
	EXPECT_LT(b.mean, 110);
}

TEST(single_spikes_are_not_interference)
{
	struct tm_baseline b = {};

	for (int i = 0; i < 60; i++)
		tm_baseline_feed(&b, &P, steady(i), NULL);
	/* one spike every 3 samples: never 3 in 5 */
	for (int i = 0; i < 30; i++)
		ASSERT_FALSE(tm_baseline_feed(&b, &P, i % 3 == 0 ? 900 : steady(i), NULL));
}

TEST(small_absolute_rise_on_a_flat_signal_is_noise)
{
	struct tm_baseline b = {};

	/* perfectly flat at 64 us: spread 0, yet +10 us is below abs_min 20 */
	for (int i = 0; i < 40; i++)
		tm_baseline_feed(&b, &P, 64, NULL);
	for (int i = 0; i < 10; i++)
		ASSERT_FALSE(tm_baseline_feed(&b, &P, 74, NULL));
	for (int i = 0; i < 3; i++)
		tm_baseline_feed(&b, &P, 200, NULL);
	EXPECT_TRUE(tm_baseline_feed(&b, &P, 200, NULL));
}

TEST(interference_ends_when_samples_return)
{
	struct tm_baseline b = {};
	bool on = false;

	for (int i = 0; i < 40; i++)
		tm_baseline_feed(&b, &P, steady(i), NULL);
	for (int i = 0; i < 5; i++)
		on = tm_baseline_feed(&b, &P, 400, NULL);
	ASSERT_TRUE(on);
	for (int i = 0; i < 3; i++)
		on = tm_baseline_feed(&b, &P, steady(i), NULL);
	EXPECT_FALSE(on); /* 2 outliers left in the last 5 */
}

TEST(pearson_basics)
{
	double x[] = {1, 2, 3, 4, 5}, up[] = {2, 4, 6, 8, 10}, down[] = {5, 4, 3, 2, 1},
	       flat[] = {7, 7, 7, 7, 7};

	EXPECT_GT(tm_pearson(x, up, 5), 0.999);
	EXPECT_LT(tm_pearson(x, down, 5), -0.999);
	EXPECT_EQ(0, tm_pearson(x, flat, 5));
	EXPECT_EQ(0, tm_pearson(x, up, 2));
}

/*
 * The sufferer's wait jumps when an antagonist starts at sample 6. The
 * innocent BE cgroup is the biggest all along but flat (it even loses some
 * CPU to the antagonist); a second small one is noise.
 */
TEST(culprit_is_the_one_that_correlates_not_the_biggest)
{
	double sufferer[12], innocent[12], antagonist[12], small[12];
	const double *be[3] = {innocent, antagonist, small};
	double r;

	for (int i = 0; i < 12; i++) {
		bool on = i >= 6;

		sufferer[i] = on ? 700 + (i % 3) * 40 : 100 + (i % 2) * 5;
		innocent[i] = on ? 1100 : 1400;
		antagonist[i] = on ? 500 + (i % 2) * 30 : 0;
		small[i] = 50 + (i % 4) * 10;
	}
	EXPECT_EQ(1, tm_pick_culprit(sufferer, be, 3, 12, 0.5, 50, &r));
	EXPECT_GT(r, 0.9);
}

TEST(no_culprit_when_nothing_correlates_or_is_active)
{
	double sufferer[8] = {100, 100, 100, 100, 600, 650, 620, 640};
	double flat[8] = {900, 900, 900, 900, 900, 900, 900, 900};
	double stopped[8] = {0, 0, 0, 0, 400, 400, 400, 10}; /* correlates, gone now */
	const double *be[2] = {flat, stopped};
	double r = 1;

	EXPECT_EQ(-1, tm_pick_culprit(sufferer, be, 2, 8, 0.5, 50, &r));
	EXPECT_EQ(0, r);
}

TEST(ladder_escalates_one_step_per_cooldown)
{
	struct tm_ladder l = {};

	/* calm, or a stray outlier: nothing */
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, false, true, true, 1000, 5000, 30000));
	/* interfered: lower the line at once, even with no culprit named */
	ASSERT_EQ(TM_IF_ESCALATE, (int)tm_ladder_decide(&l, true, true, false, 2000, 5000, 30000));
	l.step = TM_IF_SUPPRESS;
	l.step_ms = 2000;
	/* still interfered within the cool-down: hold */
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, true, true, true, 6000, 5000, 30000));
	/* after it, but no culprit: hold (throttling needs one) */
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, true, true, false, 7000, 5000, 30000));
	ASSERT_EQ(TM_IF_ESCALATE, (int)tm_ladder_decide(&l, true, true, true, 7000, 5000, 30000));
	l.step = TM_IF_THROTTLE;
	l.step_ms = 7000;
	/* half a relief: no longer n of m, but an outlier left: next step */
	ASSERT_EQ(TM_IF_ESCALATE, (int)tm_ladder_decide(&l, false, true, true, 12000, 5000, 30000));
	l.step = TM_IF_EVICT;
	l.step_ms = 12000;
	/* nothing beyond eviction */
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, true, true, true, 99000, 5000, 30000));
}

TEST(ladder_holds_a_step_that_helped_and_relaxes_after_recover_time)
{
	struct tm_ladder l = {.step = TM_IF_THROTTLE, .step_ms = 1000};

	/* no outlier left: the step helped, hold it */
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, false, false, true, 10000, 5000, 30000));
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, false, false, true, 39999, 5000, 30000));
	/* an outlier again: the calm period starts over (and, past the
	 * cool-down, the ladder goes on) */
	EXPECT_EQ(TM_IF_ESCALATE, (int)tm_ladder_decide(&l, false, true, true, 40000, 5000, 30000));
	l.step_ms = 40000;
	EXPECT_EQ(TM_IF_HOLD, (int)tm_ladder_decide(&l, false, false, true, 41000, 5000, 30000));
	EXPECT_EQ(TM_IF_RELAX, (int)tm_ladder_decide(&l, false, false, true, 71000, 5000, 30000));
}

/*
 * Against the sufferer's outliers (1/0): the wait's size jumps around while
 * the antagonist runs, and an earlier noise outlier or two do not hide it.
 */
TEST(culprit_from_outlier_indicator)
{
	double out[16] = {0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1};
	double innocent[16], antagonist[16];
	const double *be[2] = {innocent, antagonist};
	double r;

	for (int i = 0; i < 16; i++) {
		innocent[i] = i < 12 ? 640 : 520 + (i % 2) * 40;
		antagonist[i] = i < 12 ? 0 : 150 + (i % 3) * 60;
	}
	EXPECT_EQ(1, tm_pick_culprit(out, be, 2, 16, 0.5, 50, &r));
	EXPECT_GT(r, 0.7);
	/* the first outlier sample alone, the antagonist barely started */
	antagonist[12] = 60;
	EXPECT_EQ(1, tm_pick_culprit(out, be, 2, 13, 0.5, 50, &r));
}

TEST(frozen_baseline_does_not_learn_half_relief)
{
	struct tm_if_params q = P;
	struct tm_baseline b = {};
	bool on = false;

	for (int i = 0; i < 40; i++)
		tm_baseline_feed(&b, &q, steady(i), NULL);
	/* half relieved: 140-145 us, under the 150 us threshold each time */
	q.frozen = true;
	for (int i = 0; i < 50; i++)
		tm_baseline_feed(&b, &q, 140 + i % 6, NULL);
	EXPECT_LT(b.mean, 102);
	/* learning again: the baseline follows */
	q.frozen = false;
	for (int i = 0; i < 50; i++)
		on = tm_baseline_feed(&b, &q, 140 + i % 6, NULL);
	EXPECT_GT(b.mean, 120);
	EXPECT_FALSE(on);
}

TEST(lingering_looks_only_at_the_last_samples)
{
	struct tm_baseline b = {.recent = 0x18}; /* outliers 4 and 5 samples ago */

	EXPECT_TRUE(tm_baseline_lingering(&b, 5));
	EXPECT_TRUE(tm_baseline_lingering(&b, 4));
	EXPECT_FALSE(tm_baseline_lingering(&b, 3));
	EXPECT_FALSE(tm_baseline_lingering(&b, 0));
}

TEST_HARNESS_MAIN
