// SPDX-License-Identifier: GPL-2.0
/* Unit tests for eviction and node-load arithmetic (evict.h, nodeload.h). */
#include "kselftest_harness.h"
#include "evict.h"
#include "nodeload.h"

#define MiB (1024ULL * 1024)

TEST(need_is_what_brings_used_down_to_the_lower_line)
{
	/* 10 GiB node, 7.5 GiB used, lower line 68% = 6.8 GiB */
	uint64_t total = 10240 * MiB;

	EXPECT_EQ(7680 * MiB - total * 68 / 100, tm_evict_need(total, 7680 * MiB, 68));
	EXPECT_EQ(0ULL, tm_evict_need(total, 6000 * MiB, 68));
	EXPECT_EQ(75U, tm_mem_used_pct(total, 7680 * MiB));
}

TEST(victims_lowest_priority_first_then_largest)
{
	struct tm_victim v[4] = {
		{1, 0, 100 * MiB, false},
		{2, -1, 50 * MiB, false}, /* lowest priority: first, though small */
		{3, 0, 400 * MiB, false},
		{4, 1, 900 * MiB, false},
	};
	int order[4], k;

	k = tm_evict_pick(v, 4, 420 * MiB, order);
	ASSERT_EQ(2, k);
	EXPECT_EQ(1, order[0]); /* id 2 */
	EXPECT_EQ(2, order[1]); /* id 3: the largest of priority 0 */
	/* everything is not enough: all are chosen, in order */
	k = tm_evict_pick(v, 4, 10000 * MiB, order);
	ASSERT_EQ(4, k);
	EXPECT_EQ(0, order[2]);
	EXPECT_EQ(3, order[3]);
}

TEST(memory_of_dying_victims_counts_as_released)
{
	struct tm_victim v[3] = {
		{1, 0, 300 * MiB, true}, /* killed last round, still freeing */
		{2, 0, 200 * MiB, false},
		{3, 0, 100 * MiB, false},
	};
	int order[3];

	EXPECT_EQ(0, tm_evict_pick(v, 3, 250 * MiB, order));
	EXPECT_EQ(1, tm_evict_pick(v, 3, 450 * MiB, order));
	EXPECT_EQ(1, order[0]);
}

TEST(window_percentiles_nearest_rank)
{
	double v[100], scratch[100];
	struct tm_wstat s;

	for (int i = 0; i < 100; i++)
		v[i] = 100 - i; /* 100 .. 1, unsorted input */
	s = tm_window_stats(v, 100, scratch);
	EXPECT_EQ(100U, s.n);
	EXPECT_EQ(50.5, s.avg);
	EXPECT_EQ(50.0, s.p50);
	EXPECT_EQ(90.0, s.p90);
	EXPECT_EQ(95.0, s.p95);
	EXPECT_EQ(99.0, s.p99);
	EXPECT_EQ(100.0, v[0]); /* input untouched */
	s = tm_window_stats(v, 1, scratch);
	EXPECT_EQ(100.0, s.p99);
	s = tm_window_stats(v, 0, scratch);
	EXPECT_EQ(0U, s.n);
}

TEST(be_allocatable)
{
	/* 16 CPUs, reclaim 90%: 14400 - max(1200 used, 2000 reserved) - 6000 peak */
	EXPECT_EQ(6400.0, tm_be_allocatable(16000, 90, 1200, 2000, 6000));
	/* system above its reservation counts as used */
	EXPECT_EQ(5400.0, tm_be_allocatable(16000, 90, 3000, 2000, 6000));
	/* never negative */
	EXPECT_EQ(0.0, tm_be_allocatable(4000, 100, 1000, 0, 5000));
}

TEST(kubelet_weight_maps_back_to_the_request)
{
	/* kubelet: 1000m -> shares 1024 -> weight 39; 250m -> 256 -> 10 */
	EXPECT_LE(950U, tm_weight_to_mcpu(39));
	EXPECT_GE(1000U, tm_weight_to_mcpu(39));
	EXPECT_LE(230U, tm_weight_to_mcpu(10));
	EXPECT_GE(260U, tm_weight_to_mcpu(10));
	EXPECT_EQ(1U, tm_weight_to_mcpu(1)); /* shares 2: the minimum */
	EXPECT_EQ(1U, tm_weight_to_mcpu(0)); /* an invalid 0 is read as 1 */
}

TEST(satisfaction_counted_only_while_be_uses_what_it_may)
{
	double sat = -1;

	/* BE may use 1200 mCPU, uses 1150 (>= 90%), requested 3000: 40% */
	EXPECT_TRUE(tm_satisfaction(1200, 1150, 3000, 90, &sat));
	EXPECT_EQ(0.4, sat);
	/* BE idle (uses 500 of 1200): not short of CPU, not counted */
	EXPECT_FALSE(tm_satisfaction(1200, 500, 3000, 90, &sat));
	/* no request: nothing to satisfy */
	EXPECT_FALSE(tm_satisfaction(1200, 1200, 0, 90, &sat));
	/* release: request x (upper - satisfaction) */
	EXPECT_EQ(1200.0, tm_sat_release_mcpu(3000, 0.4, 80));
	EXPECT_EQ(0.0, tm_sat_release_mcpu(3000, 0.9, 80));
}

TEST(cpu_evict_watermark_releases_down_to_the_lower_line)
{
	/* 2 CPUs: at 80% against evict 70 / lower 65, 15% of 2000 mCPU goes */
	EXPECT_EQ(300U, tm_cpu_high_need_mcpu(80, 70, 65, 2000));
	/* at or under evict_pct: nothing, even above the lower line */
	EXPECT_EQ(0U, tm_cpu_high_need_mcpu(70, 70, 65, 2000));
	EXPECT_EQ(0U, tm_cpu_high_need_mcpu(68.5, 70, 65, 2000));
	/* just above: the whole way down to the lower line */
	EXPECT_EQ(101U, tm_cpu_high_need_mcpu(70.05, 70, 65, 2000));
	/* 64 CPUs at 100% against 90 / 80 */
	EXPECT_EQ(12800U, tm_cpu_high_need_mcpu(100, 90, 80, 64000));
}

TEST(eviction_backoff_doubles_up_to_the_max)
{
	EXPECT_EQ(60000U, tm_evict_backoff_ms(1, 60000, 1800000));
	EXPECT_EQ(120000U, tm_evict_backoff_ms(2, 60000, 1800000));
	EXPECT_EQ(960000U, tm_evict_backoff_ms(5, 60000, 1800000));
	EXPECT_EQ(1800000U, tm_evict_backoff_ms(6, 60000, 1800000));
	/* no overflow however many kills */
	EXPECT_EQ(1800000U, tm_evict_backoff_ms(4000000000U, 60000, 1800000));
	EXPECT_EQ(5000U, tm_evict_backoff_ms(1, 5000, 5000));
}

TEST_HARNESS_MAIN
