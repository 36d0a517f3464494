// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for the CPU bandwidth arithmetic (cpu.max and caps) the BPF
 * scheduler runs: the limit per period, refills with debt and burst, grants,
 * and cpu.max validation; plus a simulated cgroup at its limit on several
 * CPUs, run with the scheduler's own functions.
 */
#include "kselftest_harness.h"
#include "tidemark_policy.h"

#define US 1000LL
#define MS 1000000LL

TEST(limit_is_quota_or_cap_whichever_is_less)
{
	/* cpu.max 50000 100000 alone: 50 ms a period */
	EXPECT_EQ((__u64)(50 * MS), tm_bw_eff(50 * MS, 100 * MS, 0));
	/* a cap of 300 mCPU alone: 30 ms of a 100 ms period */
	EXPECT_EQ((__u64)(30 * MS), tm_bw_eff(0, 100 * MS, 300));
	/* both: the tighter holds */
	EXPECT_EQ((__u64)(30 * MS), tm_bw_eff(50 * MS, 100 * MS, 300));
	EXPECT_EQ((__u64)(50 * MS), tm_bw_eff(50 * MS, 100 * MS, 900));
	/* neither: unlimited */
	EXPECT_EQ(0ULL, tm_bw_eff(0, 100 * MS, 0));
	/* a cap scales with the cgroup's own period */
	EXPECT_EQ((__u64)(3 * MS), tm_bw_eff(8 * MS, 10 * MS, 300));
	/* every supported CPU at the largest period: no overflow */
	EXPECT_EQ((__u64)TM_MCPU_MAX * 1000 * MS / 1000, tm_bw_eff(0, 1000 * MS, TM_MCPU_MAX));
}

TEST(refill_adds_a_period_and_keeps_no_burst_by_default)
{
	/* unused runtime is not kept without a burst */
	EXPECT_EQ(50 * MS, tm_bw_refill(20 * MS, 50 * MS, 0));
	EXPECT_EQ(50 * MS, tm_bw_refill(0, 50 * MS, 0));
	/* a debt (overrun past a grant) is paid from the refill */
	EXPECT_EQ(48 * MS, tm_bw_refill(-2 * MS, 50 * MS, 0));
	/* at most one period of debt is carried: two periods' wait at most */
	EXPECT_EQ(0, tm_bw_refill(-500 * MS, 50 * MS, 0));
	/* a tiny quota carries a tick's overrun (10 ms) and pays it over
	 * periods, not one period's worth with the rest forgiven */
	EXPECT_EQ(-2 * MS, tm_bw_refill(-3 * MS, 1 * MS, 0));
	EXPECT_EQ(-9 * MS, tm_bw_refill(-500 * MS, 1 * MS, 0));
	EXPECT_EQ(0, tm_bw_refill(-10 * MS, 10 * MS, 0));
}

TEST(refill_keeps_unused_runtime_up_to_the_burst)
{
	/* cpu.max.burst 20 ms: quota + burst at most */
	EXPECT_EQ(70 * MS, tm_bw_refill(20 * MS, 50 * MS, 20 * MS));
	EXPECT_EQ(70 * MS, tm_bw_refill(50 * MS, 50 * MS, 20 * MS));
	EXPECT_EQ(60 * MS, tm_bw_refill(10 * MS, 50 * MS, 20 * MS));
}

/* a burst is runtime taken beyond the quota out of what was carried over;
 * an overrun paid back as debt is not one */
TEST(burst_is_carried_runtime_spent_beyond_the_quota)
{
	/* 20 ms quota, started with 40 (20 carried), 5 left: 15 beyond */
	EXPECT_EQ((__u64)15 * MS, tm_bw_burst_used(40 * MS, 5 * MS, 20 * MS));
	/* all of it and a 2 ms overrun: at most the 20 carried */
	EXPECT_EQ((__u64)20 * MS, tm_bw_burst_used(40 * MS, -2 * MS, 20 * MS));
	/* nothing carried: an overrun (debt) is no burst */
	EXPECT_EQ((__u64)0, tm_bw_burst_used(20 * MS, -3 * MS, 20 * MS));
	EXPECT_EQ((__u64)0, tm_bw_burst_used(18 * MS, -3 * MS, 20 * MS));
	/* carried but not needed */
	EXPECT_EQ((__u64)0, tm_bw_burst_used(40 * MS, 25 * MS, 20 * MS));
	EXPECT_EQ((__u64)0, tm_bw_burst_used(40 * MS, 40 * MS, 20 * MS));
}

TEST(grant_is_a_slice_at_most_what_is_left)
{
	EXPECT_EQ((__u64)(5 * MS), tm_bw_grant(50 * MS, 5 * MS));
	EXPECT_EQ((__u64)(2 * MS), tm_bw_grant(2 * MS, 5 * MS));
	/* nothing left (taken by another CPU since the check): the minimum */
	EXPECT_EQ(TM_BW_GRANT_MIN_NS, tm_bw_grant(0, 5 * MS));
	EXPECT_EQ(TM_BW_GRANT_MIN_NS, tm_bw_grant(-3 * MS, 5 * MS));
	EXPECT_EQ(TM_BW_GRANT_MIN_NS, tm_bw_grant(10 * US, 5 * MS));
}

TEST(cpu_max_checked_as_the_kernel_does)
{
	EXPECT_EQ(NULL, tm_bw_check(50000, 100000, 0));
	EXPECT_EQ(NULL, tm_bw_check(0, 100000, 0)); /* "max" */
	EXPECT_EQ(NULL, tm_bw_check(1000, 1000, 0));
	EXPECT_EQ(NULL, tm_bw_check(0, 100000, 5000)); /* burst kept, unused */
	EXPECT_EQ(NULL, tm_bw_check(50000, 100000, 50000));
	EXPECT_NE(NULL, tm_bw_check(50000, 999, 0));
	EXPECT_NE(NULL, tm_bw_check(50000, 1000001, 0));
	EXPECT_NE(NULL, tm_bw_check(999, 100000, 0));
	EXPECT_NE(NULL, tm_bw_check(50000, 100000, 50001));
}

/*
 * A cgroup limited to @eff per 100 ms with one busy task per CPU, on N CPUs,
 * run in 50 us steps the way the scheduler runs it: a CPU starting a task
 * reserves tm_bw_grant of what is left (refused when nothing is), runs it to
 * the end of the grant plus @late_us (a grant timer firing late), gives back
 * what it did not use; the refill comes each period. Returns the CPU time
 * used per period over @periods.
 */
static __u64 simulate_quota(int cpus, int periods, __u64 late_us, __s64 eff)
{
	__s64 runtime = eff;
	__u64 used = 0, step = 50 * US, period = 100 * MS;
	__u64 end[8] = {}, grant[8] = {}, start[8] = {};
	bool run[8] = {};

	for (__u64 t = 0; t < (__u64)periods * period; t += step) {
		if (t && t % period == 0)
			runtime = tm_bw_refill(runtime, eff, 0);
		for (int c = 0; c < cpus; c++) {
			if (run[c] && t >= end[c]) {
				__u64 u = t - start[c];

				runtime += (__s64)grant[c] - (__s64)u;
				used += u;
				run[c] = false;
			}
			if (!run[c] && runtime > 0) {
				grant[c] = tm_bw_grant(runtime, 5 * MS);
				runtime -= (__s64)grant[c];
				start[c] = t;
				end[c] = t + grant[c] + late_us * US;
				run[c] = true;
			}
		}
	}
	return used / periods;
}

static __u64 simulate(int cpus, int periods, __u64 late_us)
{
	return simulate_quota(cpus, periods, late_us, 50 * MS);
}

TEST(limit_holds_on_several_cpus)
{
	/* exact timers: exactly the quota, whatever the CPU count */
	EXPECT_EQ((__u64)(50 * MS), simulate(1, 20, 0));
	EXPECT_EQ((__u64)(50 * MS), simulate(2, 20, 0));
	EXPECT_EQ((__u64)(50 * MS), simulate(8, 20, 0));
	/* timers 200 us late: the overrun is a debt, paid next period, so the
	 * mean stays within 1% of the quota */
	EXPECT_LE(simulate(2, 50, 200), (__u64)(50 * MS + 500 * US));
	EXPECT_GE(simulate(2, 50, 200), (__u64)(50 * MS - 500 * US));
	EXPECT_LE(simulate(8, 50, 200), (__u64)(50 * MS + 500 * US));
}

TEST(a_tiny_limit_pays_a_late_timer_back)
{
	/* 1 ms per 100 ms, every grant's timer 3 ms late (the run ends at a
	 * tick): each run takes 4 ms, paid over the next periods. Carrying one
	 * period's debt only, it used 2 ms per period. */
	EXPECT_LE(simulate_quota(2, 200, 3000, 1 * MS), (__u64)(1 * MS + 50 * US));
	EXPECT_GE(simulate_quota(2, 200, 3000, 1 * MS), (__u64)(1 * MS - 50 * US));
	/* 8 ms late, under the 10 ms carried: the mean is still the quota */
	EXPECT_LE(simulate_quota(8, 200, 8000, 1 * MS), (__u64)(1 * MS + 100 * US));
}

TEST_HARNESS_MAIN
