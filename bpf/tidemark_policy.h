/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scheduler's pure decision logic, in static inline functions that the
 * BPF program and the host unit tests both compile, so the tests exercise
 * exactly the code the scheduler runs.
 */
#ifndef __TIDEMARK_POLICY_H
#define __TIDEMARK_POLICY_H

#include "tidemark_abi.h"

/* The defaults of every tunable (class_gen 0). */
static inline void tm_tunables_default(struct tm_tunables *t)
{
#define TM_TUN_DFL(f, N, u, d, lo, hi, w, e) t->f = d;
	TM_TUNABLES(TM_TUN_DFL)
#undef TM_TUN_DFL
	t->class_gen = 0;
}

static inline __u64 tm_dom_dsq(__u32 dom, bool soft)
{
	return TM_DSQ_DOM_BASE + dom * 2 + (soft ? 1 : 0);
}

/*
 * CPU bandwidth (cpu.max and caps), as CFS does it.
 *
 * The runtime one period gives a cgroup: its cpu.max quota, or its cap
 * (@cap_mcpu milli-CPUs over the period) when that is less; 0: unlimited.
 */
static inline __u64 tm_bw_eff(__u64 quota_ns, __u64 period_ns, __u32 cap_mcpu)
{
	__u64 cap = cap_mcpu ? (__u64)cap_mcpu * period_ns / 1000 : 0;

	if (!quota_ns)
		return cap;
	return cap && cap < quota_ns ? cap : quota_ns;
}

/*
 * Debt a refill carries at least: a run whose grant timer fires late ends at
 * the kernel's tick instead (4 ms at HZ=250, 10 ms at HZ=100). Carrying only
 * one period's worth forgave the rest of such an overrun, which a tiny quota
 * then exceeded by far.
 */
#define TM_BW_DEBT_MIN_NS 10000000ULL

/*
 * Runtime after a refill: what is left plus one period's worth, at most the
 * quota plus the burst (cpu.max.burst keeps unused runtime up to that). A
 * debt (overrun past a grant) is paid from the refill; at most one period's
 * worth or TM_BW_DEBT_MIN_NS, the larger, is carried, so a throttled task
 * waits at most two periods, or 10 ms / quota + 1 periods under a quota
 * below 10 ms (the stall guard bounds that wait too).
 */
static inline __s64 tm_bw_refill(__s64 runtime_ns, __u64 eff_ns, __u64 burst_ns)
{
	__s64 debt = (__s64)(eff_ns > TM_BW_DEBT_MIN_NS ? eff_ns : TM_BW_DEBT_MIN_NS);
	__s64 r = runtime_ns;

	if (r < -debt)
		r = -debt;
	r += (__s64)eff_ns;
	if (r > (__s64)(eff_ns + burst_ns))
		r = (__s64)(eff_ns + burst_ns);
	return r;
}

/*
 * Runtime a period took beyond its quota @eff_ns (cpu.max.burst use): what
 * it consumed (@snap_ns at its start, @runtime_ns left) above @eff_ns, and
 * at most what was carried over into it (@snap_ns above @eff_ns).
 */
static inline __u64 tm_bw_burst_used(__s64 snap_ns, __s64 runtime_ns, __u64 eff_ns)
{
	__s64 over, carried = snap_ns - (__s64)eff_ns;

	if (carried <= 0 || snap_ns <= runtime_ns)
		return 0;
	over = snap_ns - runtime_ns - (__s64)eff_ns;
	if (over <= 0)
		return 0;
	return over < carried ? (__u64)over : (__u64)carried;
}

/* Shortest run a limited task is given once it is on a CPU (its limit ran
 * out between the check and the run): the overrun is a debt. */
#define TM_BW_GRANT_MIN_NS 50000ULL
/* The most a limited run reserves at once, as CFS hands out runtime in
 * sched_cfs_bandwidth_slice_us (5000 by default) whatever the task slice:
 * a lumpier reservation shifts runtime between periods. */
#define TM_BW_SLICE_NS 5000000ULL

/*
 * The runtime a limited task reserves when it starts running: @slice_ns
 * (the task slice, at most TM_BW_SLICE_NS), at most what the tightest of
 * its limited ancestors has left (@left_ns, the smallest), at least the
 * minimum run. Reserved from every ancestor at once, given back unused when
 * the run ends, as CFS hands out its 5 ms slices.
 */
static inline __u64 tm_bw_grant(__s64 left_ns, __u64 slice_ns)
{
	__u64 g = left_ns > 0 ? (__u64)left_ns : 0;

	if (g > slice_ns)
		g = slice_ns;
	return g < TM_BW_GRANT_MIN_NS ? TM_BW_GRANT_MIN_NS : g;
}

/* A cpu.max as the kernel takes it: 0 when valid, else what is wrong. */
static inline const char *tm_bw_check(__u64 quota_us, __u64 period_us, __u64 burst_us)
{
	if (period_us < TM_BW_PERIOD_MIN_US || period_us > TM_BW_PERIOD_MAX_US)
		return "period must be within 1000-1000000 us";
	if (quota_us && quota_us < TM_BW_QUOTA_MIN_US)
		return "quota must be at least 1000 us";
	/* the kernel keeps a burst with no quota; it then does nothing */
	if (quota_us && burst_us > quota_us)
		return "burst must be at most the quota";
	return 0;
}

/* Is a task with home @home (0: none) at home on domain @dom? */
static inline bool tm_home_has(__u64 home, __u32 dom)
{
	return !home || (dom < TM_MAX_DOMS && (home >> dom & 1));
}

/* BE grants: shortest run worth a context switch, length of a forced run
 * (bounded wait), and how early a grant timer may end a grant. */
#define TM_BE_GRANT_MIN_NS   100000ULL
#define TM_BE_FORCED_NS	     1000000ULL
#define TM_BE_GRANT_SLACK_NS 20000ULL

/* The bit length of @us, by halves: it runs at every start of a task that
 * waited, and a shift per bit (7 for a 100 us wait) showed. */
static inline __u32 tm_hist_bitlen(__u64 us)
{
	__u32 b = 0;

	for (__u32 s = 32; s; s >>= 1) {
		if (us >> s) {
			b += s;
			us >>= s;
		}
	}
	return b + (__u32)us;
}

/* The wait histogram's bucket of a bit length: the last one takes the rest. */
static inline __u32 tm_hist_clamp(__u32 b)
{
	return b < TM_HIST_BUCKETS - 1 ? b : TM_HIST_BUCKETS - 1;
}

static inline __u32 tm_hist_bucket(__u64 wait_ns)
{
	return tm_hist_clamp(tm_hist_bitlen(wait_ns / 1000));
}

/*
 * The suppress line: BE may use capacity x suppress_pct minus what ONLINE
 * and SYSTEM used, never less than the floor, never more than the line.
 * All in ns of CPU time over one window. ONLINE usage of the last window
 * predicts the next one.
 */
static inline __u64 tm_be_allowance(__u64 cap_ns, __u32 suppress_pct, __u64 hi_used_ns,
				    __u64 floor_ns)
{
	__u64 line = cap_ns / 100 * suppress_pct;
	__u64 allow = line > hi_used_ns ? line - hi_used_ns : 0;

	if (floor_ns > cap_ns)
		floor_ns = cap_ns;
	return allow > floor_ns ? allow : floor_ns;
}

/*
 * BE's recent rate, mCPU: an average of its use per window, each window
 * weighing 1/8 (about 40 ms at the default 5 ms window). @dt_ns is the
 * window's length; a zero one leaves the average as it is.
 */
static inline __u64 tm_be_recent_next(__u64 avg_mcpu, __u64 be_ns, __u64 dt_ns)
{
	__u64 rate;

	if (!dt_ns)
		return avg_mcpu;
	rate = be_ns / dt_ns * 1000 + be_ns % dt_ns * 1000 / dt_ns;
	return avg_mcpu - avg_mcpu / 8 + rate / 8;
}

/*
 * Is the floor owed in the next window? Only while BE's recent rate is under
 * it: the floor is a guarantee over time, not in every window. Owed in each
 * window, it put BE on top of every ONLINE burst (target ONLINE + floor,
 * above the line) although BE had got far more than its floor between them.
 */
static inline bool tm_be_floor_due(__u64 avg_mcpu, __u32 floor_mcpu)
{
	return avg_mcpu < floor_mcpu;
}

/*
 * The floor owed to BE in the next window: all of it when ONLINE+SYSTEM
 * left less than the floor under the line, else nothing. The floor guards BE
 * against ONLINE taking the whole line; it must not undo the payback of BE's
 * own overrun (that would put the node above the line by up to the floor).
 */
static inline __u64 tm_be_floor_owed(__u64 cap_ns, __u32 suppress_pct, __u64 hi_used_ns,
				     __u64 floor_ns)
{
	__u64 line = cap_ns / 100 * suppress_pct;

	return line > hi_used_ns && line - hi_used_ns >= floor_ns ? 0 : floor_ns;
}

/*
 * What the node used above its line so far (ns; negative: below), the
 * integral the BE budget is corrected by. Each window adds its own error:
 * ONLINE+SYSTEM (@hi_ns) plus BE (@be_ns, forced overruns excluded) minus
 * the line. Counted:
 *  - above the line whoever went past it: ONLINE's spikes too, or BE would
 *    be credited the room of ONLINE's lulls without paying for its spikes
 *    and a busy bursty service would put the node above its line;
 *  - while the floor is owed (@floor_ns), at most what BE used beyond it: the
 *    floor is BE's whatever ONLINE does, and BE short of it owes nothing;
 *  - below the line only while BE was held back (@be_limited: BE queued, budget
 *    spent): capacity nobody wanted is no credit.
 * Bounded either way to one window's line plus @slack_ns (what BE grants can
 * carry from one window into the next), so a long spike or lull costs or
 * gives BE about one window. Paying both ways keeps the mean on the line
 * under any ONLINE shape: predicting ONLINE from the last window errs both
 * ways, and paying back only the excess put a bursty node under its line.
 */
static inline __s64 tm_be_over_next(__s64 over_ns, __u64 hi_ns, __u64 be_ns, __u64 cap_ns,
				    __u32 suppress_pct, __u64 floor_ns, bool be_limited,
				    __u64 slack_ns)
{
	__u64 line = cap_ns / 100 * suppress_pct, bound = line + slack_ns;
	__s64 e = (__s64)(hi_ns + be_ns) - (__s64)line;

	if (floor_ns && e > (__s64)be_ns - (__s64)floor_ns)
		e = (__s64)be_ns - (__s64)floor_ns;
	if (e < 0 && !be_limited)
		e = 0;
	over_ns += e;
	if (over_ns > (__s64)bound)
		over_ns = (__s64)bound;
	if (over_ns < -(__s64)bound)
		over_ns = -(__s64)bound;
	return over_ns;
}

/* Next window's BE budget: the allowance, less what the node is above its
 * line (more when it is below, BE having been held back). */
static inline __s64 tm_be_budget_next(__u64 allowance_ns, __s64 over_ns)
{
	return (__s64)allowance_ns - over_ns;
}

static inline bool tm_outside(__u64 v, __u64 lo, __u64 hi)
{
	return v < lo || v > hi;
}

/* Returns NULL when the tunables are valid, else what is wrong. */
static inline const char *tm_tunables_check(const struct tm_tunables *t, __u32 nr_cpus)
{
#define TM_TUN_RANGE(f, N, u, d, lo, hi, w, e) \
	if (tm_outside(t->f, lo, hi))          \
		return #f " must be within " #lo "-" #hi;
	TM_TUNABLES(TM_TUN_RANGE)
#undef TM_TUN_RANGE
	if ((__u64)t->be_floor_mcpu > (__u64)nr_cpus * 1000)
		return "be_floor_mcpu is above the node's capacity";
	if ((__u64)t->be_floor_mcpu * 100 > (__u64)nr_cpus * 1000 * t->suppress_pct)
		return "be_floor_mcpu is above the suppress line";
	return 0;
}

/*
 * Weighted vtime: a task's virtual time advances by its runtime scaled
 * inversely to its weight, so a weight-200 task gets twice the CPU of a
 * weight-100 one when both are runnable.
 */
static inline __u64 tm_vtime_delta(__u64 runtime_ns, __u32 weight)
{
	if (weight < TM_WEIGHT_MIN)
		weight = TM_WEIGHT_MIN;
	return runtime_ns * TM_WEIGHT_DFL / weight;
}

/*
 * ONLINE/SYSTEM weight: the task's weight (nice) scaled by its cgroup's
 * cpu.weight (100 = default), so a cgroup at cpu.weight 200 gets twice the
 * CPU per runnable task. Flat: a cgroup with more runnable tasks gets more.
 */
static inline __u32 tm_eff_weight(__u32 task_weight, __u32 cg_weight)
{
	__u64 w = (__u64)task_weight * cg_weight / TM_WEIGHT_DFL;

	if (w < TM_WEIGHT_MIN)
		w = TM_WEIGHT_MIN;
	if (w > (__u64)TM_WEIGHT_MAX * TM_WEIGHT_MAX / TM_WEIGHT_DFL)
		w = (__u64)TM_WEIGHT_MAX * TM_WEIGHT_MAX / TM_WEIGHT_DFL;
	return (__u32)w;
}

/*
 * A task that slept long must not come back with a vtime so far behind that
 * it monopolises the CPU: cap the credit it can bank at one slice (scaled by
 * weight) behind the queue's current vtime.
 */
static inline __u64 tm_vtime_credit(__u64 task_vtime, __u64 ref_vtime, __u64 credit_vt)
{
	__u64 floor = ref_vtime > credit_vt ? ref_vtime - credit_vt : 0;

	return task_vtime < floor ? floor : task_vtime;
}

static inline __u64 tm_vtime_wakeup(__u64 task_vtime, __u64 now_vtime, __u64 slice_ns, __u32 weight)
{
	return tm_vtime_credit(task_vtime, now_vtime, tm_vtime_delta(slice_ns, weight));
}

/*
 * Where a sleeper's credit (@credit_vt, its slice in its vtime) counts from:
 * the least advanced waiting task (@min_vt) when it is behind the most
 * advanced running one (@now_vt), as CFS counts from min_vruntime, but never
 * more than one credit behind @now_vt. Sleepers placed a credit ahead of the
 * least advanced become the least advanced themselves, so without the bound
 * a chain of wakeups would walk the reference down a slice each, and a
 * running task could wait behind all their banked lag. So a sleeper lands at
 * most two slices behind the most advanced running task. Compared by
 * difference (vtimes may wrap).
 */
static inline __u64 tm_vtime_wake_ref(__u64 now_vt, __u64 min_vt, __u64 credit_vt)
{
	__u64 ref = (__s64)(min_vt - now_vt) < 0 ? min_vt : now_vt;
	__u64 lo = now_vt - credit_vt;

	return (__s64)(ref - lo) < 0 ? lo : ref;
}

/*
 * Wakeup preemption between ONLINE/SYSTEM tasks. A waking task (vtime @vt,
 * weight @w) that found no idle CPU and no BE to take preempts the
 * ONLINE/SYSTEM task running on its CPU (vtime @run_vt when it started or
 * its slice was renewed at @run_at, weight @run_w; 0: none runs there) when
 * that one has run at least @gran_ns since and, charged up to @now, is more
 * than @gran_ns of the wakee's time ahead of it; @gran_ns 0: never. Without
 * this a wakee waits out the runner's whole slice, however far behind it
 * is; the granularity keeps two busy tasks from trading the CPU on every
 * wakeup. Compared by difference (times and vtimes may wrap).
 */
static inline bool tm_wake_key_preempts(__u64 key, __u64 run_vt, __u64 run_at, __u32 run_w,
					__u64 now, __u64 gran_ns)
{
	__u64 ran = now - run_at;

	if (!gran_ns || !run_w || (__s64)ran < (__s64)gran_ns)
		return false;
	return (__s64)(key - (run_vt + tm_vtime_delta(ran, run_w))) < 0;
}

/*
 * A wakee's key: its vtime plus the granularity in its own weighted time.
 * A wakeup that cannot preempt yet (the runner has not run @gran_ns, or is
 * not that far ahead yet) leaves the lowest key on the runner's CPU, and
 * the CPU's tick preempts once tm_wake_key_preempts holds: without that a
 * wakee arriving early in a slice waits all of it.
 */
static inline __u64 tm_wake_key(__u64 vt, __u32 w, __u64 gran_ns)
{
	return vt + tm_vtime_delta(gran_ns, w);
}

static inline bool tm_wake_preempts(__u64 vt, __u32 w, __u64 run_vt, __u64 run_at, __u32 run_w,
				    __u64 now, __u64 gran_ns)
{
	return tm_wake_key_preempts(tm_wake_key(vt, w, gran_ns), run_vt, run_at, run_w, now,
				    gran_ns);
}

/* Tunables validated identically by the loader and the unit tests. */
static inline bool tm_slice_us_valid(__u64 slice_us)
{
	return slice_us >= TM_SLICE_US_MIN && slice_us <= TM_SLICE_US_MAX;
}

#endif /* __TIDEMARK_POLICY_H */
