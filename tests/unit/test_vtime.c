// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the vtime and tunable logic shared with the BPF scheduler. */
#include "kselftest_harness.h"
#include "tidemark_policy.h"

TEST(vtime_delta_scales_inversely_with_weight)
{
	EXPECT_EQ(1000000ULL, tm_vtime_delta(1000000, TM_WEIGHT_DFL));
	/* twice the weight, half the vtime: twice the CPU share */
	EXPECT_EQ(500000ULL, tm_vtime_delta(1000000, 200));
	EXPECT_EQ(100000000ULL, tm_vtime_delta(1000000, 1));
	EXPECT_EQ(10000ULL, tm_vtime_delta(1000000, TM_WEIGHT_MAX));
}

TEST(vtime_delta_weight_zero_is_clamped)
{
	/* a zero weight must not divide by zero */
	EXPECT_EQ(tm_vtime_delta(5000, 1), tm_vtime_delta(5000, 0));
}

TEST(vtime_wakeup_caps_sleeper_credit)
{
	__u64 slice = 5000000;

	/* long sleeper: pulled up to one slice behind now */
	EXPECT_EQ(100000000ULL - slice, tm_vtime_wakeup(0, 100000000, slice, 100));
	/* low weight banks more vtime credit (its vtime moves faster) */
	EXPECT_EQ(100000000ULL - 2 * slice, tm_vtime_wakeup(0, 100000000, slice, 50));
	/* a task already ahead keeps its own vtime */
	EXPECT_EQ(100000001ULL, tm_vtime_wakeup(100000001, 100000000, slice, 100));
	/* early in boot (now < credit) the floor is 0, no underflow */
	EXPECT_EQ(7ULL, tm_vtime_wakeup(7, 1000, slice, 100));
}

TEST(vtime_wake_ref_is_the_least_advanced)
{
	__u64 slice = 5000000;

	/* a queued task behind the running ones: credit counts from it */
	EXPECT_EQ(97000000ULL, tm_vtime_wake_ref(100000000, 97000000, slice));
	EXPECT_EQ(97000000ULL - slice,
		  tm_vtime_wakeup(0, tm_vtime_wake_ref(100000000, 97000000, slice), slice, 100));
	/* nothing queued behind: the running one */
	EXPECT_EQ(100000000ULL, tm_vtime_wake_ref(100000000, 100000000, slice));
	EXPECT_EQ(100000000ULL, tm_vtime_wake_ref(100000000, 120000000, slice));
	/* across the wrap of u64 the one behind is still the lower */
	EXPECT_EQ(~0ULL - 10, tm_vtime_wake_ref(5, ~0ULL - 10, slice));
	EXPECT_EQ(~0ULL - 10, tm_vtime_wake_ref(~0ULL - 10, 5, slice));
}

TEST(wake_preempts_only_a_runner_ahead_by_the_granularity)
{
	__u64 g = 1000000, t0 = 5000000000ULL, v = 700000000;

	/* granularity 0 is off: never, however far ahead the runner is */
	EXPECT_FALSE(tm_wake_preempts(0, 100, v, t0, 100, t0 + 10 * g, 0));
	/* nothing of ONLINE/SYSTEM runs there (BE or idle): never */
	EXPECT_FALSE(tm_wake_preempts(0, 100, v, t0, 0, t0 + 10 * g, g));
	/* the runner started under a granularity ago: not yet, however far
	 * ahead it is */
	EXPECT_FALSE(tm_wake_preempts(0, 100, v, t0, 100, t0 + g - 1, g));
	/* equal vtimes, the runner ran 3 ms: 3 ms ahead, more than 1 */
	EXPECT_TRUE(tm_wake_preempts(v, 100, v, t0, 100, t0 + 3 * g, g));
	/* equal vtimes, ran exactly the granularity: 1 ms ahead is not more */
	EXPECT_FALSE(tm_wake_preempts(v, 100, v, t0, 100, t0 + g, g));
	/* the wakee is ahead already (it used more than its share): no */
	EXPECT_FALSE(tm_wake_preempts(v + 5 * g, 100, v, t0, 100, t0 + 3 * g, g));
	/* the runner's weight slows its vtime: at 400, 3 ms of run is 0.75 ms
	 * of vtime, within the granularity */
	EXPECT_FALSE(tm_wake_preempts(v, 100, v, t0, 400, t0 + 3 * g, g));
	EXPECT_TRUE(tm_wake_preempts(v, 100, v, t0, 400, t0 + 9 * g, g));
	/* a heavy wakee's granularity is short in its vtime */
	EXPECT_TRUE(tm_wake_preempts(v + g, 1000, v, t0, 100, t0 + 3 * g / 2, g));
	EXPECT_FALSE(tm_wake_preempts(v + g, 100, v, t0, 100, t0 + 3 * g / 2, g));
	/* across the wrap of the vtimes and of the clock */
	EXPECT_TRUE(tm_wake_preempts(~0ULL - g, 100, ~0ULL - g, ~0ULL - g, 100, 2 * g, g));
	EXPECT_FALSE(tm_wake_preempts(~0ULL - g, 100, ~0ULL - g, ~0ULL - g / 4, 100, g / 2, g));
	/* a start stamped after now (another CPU's clock read): not run yet */
	EXPECT_FALSE(tm_wake_preempts(0, 100, v, t0, 100, t0 - 10, g));
}

TEST(a_wakeup_too_early_in_a_slice_is_preempted_at_a_later_tick)
{
	__u64 g = 2000000, t0 = 5000000000ULL, v = 700000000, key = tm_wake_key(v, 100, g);

	/* the key is the wakee's vtime plus the granularity in its weight */
	EXPECT_EQ(v + g, key);
	EXPECT_EQ(v + g / 4, tm_wake_key(v, 400, g));
	/* woken 0.5 ms into the runner's slice: not then */
	EXPECT_FALSE(tm_wake_preempts(v, 100, v, t0, 100, t0 + g / 4, g));
	EXPECT_FALSE(tm_wake_key_preempts(key, v, t0, 100, t0 + g / 4, g));
	/* the tick 4 ms in: the runner is 4 ms ahead, more than 2 */
	EXPECT_TRUE(tm_wake_key_preempts(key, v, t0, 100, t0 + 2 * g, g));
	/* the same as deciding at the wakeup, at any time */
	for (__u64 t = 0; t < 10 * g; t += g / 8)
		EXPECT_EQ(tm_wake_preempts(v, 100, v, t0, 100, t0 + t, g),
			  tm_wake_key_preempts(key, v, t0, 100, t0 + t, g));
	/* off, or nothing of ONLINE/SYSTEM runs there: never */
	EXPECT_FALSE(tm_wake_key_preempts(key, v, t0, 100, t0 + 10 * g, 0));
	EXPECT_FALSE(tm_wake_key_preempts(key, v, t0, 0, t0 + 10 * g, g));
	/* a heavy runner gets there later: 8 ms at 400 is 2 ms of vtime */
	EXPECT_FALSE(tm_wake_key_preempts(key, v, t0, 400, t0 + 4 * g, g));
	EXPECT_TRUE(tm_wake_key_preempts(key, v, t0, 400, t0 + 5 * g, g));
}

TEST(vtime_wake_ref_cannot_walk_down)
{
	__u64 slice = 5000000, now = 1000000000, ref = now, v;
	int i;

	/* the least advanced far behind: held to one credit behind now */
	EXPECT_EQ(now - slice, tm_vtime_wake_ref(now, now - 10 * slice, slice));
	/* a chain of long sleepers, each the new least advanced: the
	 * reference stops one slice behind, the sleepers two */
	for (i = 0; i < 100; i++) {
		v = tm_vtime_wakeup(0, tm_vtime_wake_ref(now, ref, slice), slice, 100);
		ASSERT_GE(v, now - 2 * slice);
		if (v < ref)
			ref = v;
	}
	EXPECT_EQ(now - 2 * slice, v);
	/* a low weight's credit is larger in vtime, and so is its bound */
	EXPECT_EQ(now - 2 * slice, tm_vtime_wake_ref(now, 0, tm_vtime_delta(slice, 50)));
	/* early in boot (now below the credit): no underflow past 0 */
	EXPECT_EQ(0ULL, tm_vtime_wake_ref(1000, 0, slice));
}

TEST(eff_weight_scales_task_by_cgroup)
{
	/* default cgroup weight leaves the task weight alone */
	EXPECT_EQ(100U, tm_eff_weight(100, TM_WEIGHT_DFL));
	EXPECT_EQ(300U, tm_eff_weight(100, 300));
	/* nice 19 (weight 1... kernel gives 1.5 -> 1) in a weight-1 cgroup: clamped to 1 */
	EXPECT_EQ(1U, tm_eff_weight(1, 1));
	EXPECT_EQ(1U, tm_eff_weight(0, 100));
	/* both at maximum: bounded, no overflow */
	EXPECT_EQ((__u32)TM_WEIGHT_MAX * TM_WEIGHT_MAX / TM_WEIGHT_DFL,
		  tm_eff_weight(TM_WEIGHT_MAX, TM_WEIGHT_MAX));
	/* a weight-300 cgroup's task advances vtime 3x slower than a weight-100 one */
	EXPECT_EQ(3 * tm_vtime_delta(3000000, tm_eff_weight(100, 300)),
		  tm_vtime_delta(3000000, tm_eff_weight(100, 100)));
}

TEST(slice_us_validation)
{
	EXPECT_FALSE(tm_slice_us_valid(0));
	EXPECT_FALSE(tm_slice_us_valid(TM_SLICE_US_MIN - 1));
	EXPECT_TRUE(tm_slice_us_valid(TM_SLICE_US_MIN));
	EXPECT_TRUE(tm_slice_us_valid(TM_SLICE_US_DFL));
	EXPECT_TRUE(tm_slice_us_valid(TM_SLICE_US_MAX));
	EXPECT_FALSE(tm_slice_us_valid(TM_SLICE_US_MAX + 1));
}

TEST(stat_names_cover_every_counter)
{
	static const char *const names[] = {
#define N(e, n, h) n,
		TM_STATS(N)
#undef N
	};
	ASSERT_EQ((size_t)TM_NR_STATS, sizeof(names) / sizeof(names[0]));
	for (int i = 0; i < TM_NR_STATS; i++)
		for (int j = i + 1; j < TM_NR_STATS; j++)
			EXPECT_NE(0, strcmp(names[i], names[j]));
}

TEST_HARNESS_MAIN
