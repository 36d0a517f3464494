/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the tidemark BPF scheduler, its loader and host unit tests.
 * Fixed-width types only; everything the two sides exchange is sized here.
 * Pure decision logic lives in static inline functions so host unit tests
 * exercise exactly the code the scheduler runs.
 */
#ifndef __TIDEMARK_H
#define __TIDEMARK_H

#ifndef __bpf__
#include <linux/types.h>
#include <stdbool.h>
#endif

enum tm_limits {
	TM_MAX_CPUS = 512,
	/* ONLINE cgroups with their own wait histogram (map "cg_waits") */
	TM_MAX_CG_HIST = 4096,
	/* cache domains the scheduler places cgroups in (home masks are u64) */
	TM_MAX_DOMS = 64,
	/* ONLINE cgroups with a home (map "homes") */
	TM_MAX_HOMES = 4096,
	/* BE cgroups with a CPU cap (map "be_caps") */
	TM_MAX_BE_CAPS = 1024,
};

/* User DSQ ids (bit 63 clear). Every CPU drains both, so no task is ever
 * stranded by its affinity. */
enum tm_dsq {
	TM_DSQ_HI = 0, /* ONLINE and SYSTEM: weighted vtime */
	TM_DSQ_BE = 1, /* best-effort: FIFO, so the head is the longest waiter */
	TM_DSQ_BE_PARKED = 2, /* BE of capped cgroups past their cap, until the next window */
	/* per cache domain, ONLINE tasks homed there: strict, then soft */
	TM_DSQ_DOM_BASE = 16,
};

/* Domain of a CPU that is in no cache domain (offline at discovery). */
#define TM_NO_DOM 0xff

static inline __u64 tm_dom_dsq(__u32 dom, bool soft)
{
	return TM_DSQ_DOM_BASE + dom * 2 + (soft ? 1 : 0);
}

/*
 * Home of an ONLINE cgroup (map "homes", cgroup id -> home, written by the
 * loader's placement): the cache domains its tasks run in. Strict: only
 * there. Soft: elsewhere too, once a task has waited home_wait_us.
 */
struct tm_home {
	__u64 doms; /* bit d: domain d */
	__u32 soft;
	__u32 pad;
};
_Static_assert(sizeof(struct tm_home) == 16, "tm_home layout");

/*
 * A per-cgroup BE CPU cap (map "be_caps", cgroup id -> cap; tidemarkd's
 * interference ladder writes it for a culprit and each of its descendants).
 * The cgroup's own BE tasks run at most cap_mcpu per window; past it they
 * wait parked until the next window. cgroup cpu.max is not enforced for
 * sched_ext tasks in 6.12, hence a cap of our own.
 */
enum tm_cap_owner { TM_CAP_OPERATOR = 0, TM_CAP_TIDEMARKD = 1 };

struct tm_be_cap {
	__u32 cap_mcpu;	  /* written by userspace */
	__u32 owner;	  /* enum tm_cap_owner: a restarted tidemarkd clears its own */
	__s64 budget_ns;  /* left in this window (scheduler) */
	__u64 capped;	  /* runs cut short or tasks parked by the cap (scheduler) */
};
_Static_assert(sizeof(struct tm_be_cap) == 24, "tm_be_cap layout");

/* Budget of a capped cgroup for a window of @dt_ns: a debt is carried over,
 * unused budget is not (no burst after a quiet window). */
static inline __s64 tm_be_cap_refill(__s64 left_ns, __u32 cap_mcpu, __u64 dt_ns)
{
	__s64 add = (__s64)((__u64)cap_mcpu * dt_ns / 1000);

	return (left_ns < 0 ? left_ns : 0) + add;
}

/* Is a task with home @home (0: none) at home on domain @dom? */
static inline bool tm_home_has(__u64 home, __u32 dom)
{
	return !home || (dom < TM_MAX_DOMS && (home >> dom & 1));
}

/*
 * Classes. A task's class is that of its nearest classified ancestor cgroup;
 * unclassified means SYSTEM (kthreads, daemons), scheduled like ONLINE but
 * never throttled.
 */
enum tm_class {
	TM_CLASS_SYSTEM = 0,
	TM_CLASS_ONLINE = 1,
	TM_CLASS_BE = 2,
	TM_NR_CLASSES = 3,
	TM_CLASS_NONE = 255, /* per-CPU state: nothing of ours running */
};

/* Deepest cgroup level searched for a classified ancestor. */
#define TM_MAX_CGROUP_DEPTH 16
/* Wait histograms: log2 buckets of microseconds, [0,1), [1,2), [2,4) ... */
#define TM_HIST_BUCKETS 24

/*
 * Runtime tunables: one entry of the pinned "tunables" map, read by the
 * scheduler every window, so changes apply without reloading.
 */
struct tm_tunables {
	__u32 suppress_pct;   /* node CPU line for BE, % of capacity */
	__u32 max_be_wait_ms; /* a queued BE task runs at least this often */
	__u32 be_floor_mcpu;  /* CPU kept for BE whatever ONLINE does, milli-CPUs */
	__u32 class_gen;      /* bumped on every class map change */
};
_Static_assert(sizeof(struct tm_tunables) == 16, "tm_tunables layout");

enum tm_defaults {
	TM_SLICE_US_DFL = 5000,
	TM_SLICE_US_MIN = 100,
	TM_SLICE_US_MAX = 100000,
	/* sched_ext's own ceiling for the watchdog */
	TM_TIMEOUT_MS_MAX = 30000,
	/* cgroup v2 cpu.weight: default and range */
	TM_WEIGHT_DFL = 100,
	TM_WEIGHT_MIN = 1,
	TM_WEIGHT_MAX = 10000,
	TM_SUPPRESS_PCT_DFL = 65,
	TM_MAX_BE_WAIT_MS_DFL = 1000,
	TM_MAX_BE_WAIT_MS_MIN = 10,
	/* must stay well under the watchdog's 30 s */
	TM_MAX_BE_WAIT_MS_MAX = 10000,
	TM_BE_FLOOR_MCPU_DFL = 100,
	TM_WINDOW_US_DFL = 5000,
	TM_WINDOW_US_MIN = 1000,
	TM_WINDOW_US_MAX = 100000,
	/* soft homes: wait before a task may run outside its home */
	TM_HOME_WAIT_US_DFL = 2000,
	TM_HOME_WAIT_US_MIN = 0,
	TM_HOME_WAIT_US_MAX = 1000000,
};

/* BE grants: shortest run worth a context switch, length of a forced run
 * (bounded wait), and how early a grant timer may end a grant. */
#define TM_BE_GRANT_MIN_NS   100000ULL
#define TM_BE_FORCED_NS	     1000000ULL
#define TM_BE_GRANT_SLACK_NS 20000ULL

/* enum scx_exit_kind: values from here on are errors (kernel ABI). */
#define TM_EXIT_KIND_ERROR 1024

/*
 * Counters: X(enum suffix, name shown to users, help text). Per-CPU in BPF,
 * summed by userspace; names are stable (tools parse the JSON form).
 */
#define TM_STATS(X)                                                                                \
	X(RUN_NS_SYSTEM, "run_ns_system", "CPU time of SYSTEM tasks, ns")                          \
	X(RUN_NS_ONLINE, "run_ns_online", "CPU time of ONLINE tasks, ns")                          \
	X(RUN_NS_BE, "run_ns_be", "CPU time of BE tasks, ns")                                      \
	X(ENQ_DIRECT, "enq_direct", "wakeups placed straight on an idle CPU")                      \
	X(ENQ_HI, "enq_hi", "ONLINE/SYSTEM tasks queued")                                          \
	X(ENQ_BE, "enq_be", "BE tasks queued")                                                     \
	X(ENQ_LOCAL_PINNED, "enq_local_pinned",                                                    \
	  "per-CPU kthreads, migration-disabled tasks queued on their CPU")                        \
	X(DISPATCH_HI, "dispatch_hi", "ONLINE/SYSTEM tasks moved to a CPU")                        \
	X(DISPATCH_BE, "dispatch_be", "BE tasks moved to a CPU within the budget")                 \
	X(BE_PREEMPTED, "be_preempted", "BE tasks preempted by a waking ONLINE/SYSTEM task")       \
	X(HI_NO_CPU, "hi_no_cpu", "ONLINE/SYSTEM wakeups with no idle CPU and no BE to preempt")   \
	X(BE_THROTTLED, "be_throttled", "BE runs ended by their grant timer")                      \
	X(BE_THROTTLED_NS, "be_throttled_ns", "time BE waited with its budget spent, ns")          \
	X(BE_FORCED, "be_forced", "BE runs forced by max_be_wait_ms")                              \
	X(BE_FLOOR, "be_floor", "BE runs ahead of ONLINE to keep the BE floor")                    \
	X(BE_FLOOR_IDLE, "be_floor_idle", "BE floor runs on CPUs nothing else wanted, budget spent")   \
	X(BE_CAPPED, "be_capped", "BE runs cut short or parked by a per-cgroup cap")               \
	X(KICK_IDLE, "kick_idle", "idle CPUs woken for queued work")                               \
	X(KEEP_RUNNING, "keep_running", "slices extended because nothing else waited")             \
	X(RECLASSIFY, "reclassify", "class lookups (cgroup move or class change)")                 \
	X(CG_HIST_FULL, "cg_hist_full", "ONLINE waits not kept per cgroup: cg_waits map full")     \
	X(RUN_OUT_HOME, "runs_outside_home",                                                       \
	  "runs of strictly homed ONLINE tasks outside their home (0 expected)")                   \
	X(RUN_OUT_SOFT, "runs_outside_soft_home",                                                  \
	  "runs of soft-homed ONLINE tasks outside their home after home_wait_us")                 \
	X(RUN_OUT_PINNED, "runs_outside_home_pinned",                                              \
	  "runs outside home of tasks the kernel pinned there (migration disabled)")               \
	X(HOME_UNREACHABLE, "home_unreachable",                                                    \
	  "homed tasks whose affinity excludes their home: placed as unhomed")                     \
	X(XDOM_SYSTEM, "xdom_migrations_system",                                                   \
	  "SYSTEM task runs on another cache domain than its last run")                            \
	X(XDOM_ONLINE, "xdom_migrations_online",                                                   \
	  "ONLINE task runs on another cache domain than its last run")                            \
	X(XDOM_BE, "xdom_migrations_be", "BE task runs on another cache domain than its last run") \
	X(BE_AVOIDED, "be_avoided",                                                                \
	  "BE sent from a domain hosting ONLINE homes to an idle CPU elsewhere")

#define TM_STAT_ENUM(e, n, h) TM_STAT_##e,
enum tm_stat_idx { TM_STATS(TM_STAT_ENUM) TM_NR_STATS };
#undef TM_STAT_ENUM

struct tm_cpu_stats {
	__u64 cnt[TM_NR_STATS];
	/* run-queue wait (enqueue -> running) per class, log2 us buckets */
	__u64 wait_hist[TM_NR_CLASSES][TM_HIST_BUCKETS];
};
_Static_assert(sizeof(struct tm_cpu_stats) == (TM_NR_STATS + TM_NR_CLASSES * TM_HIST_BUCKETS) * 8,
	       "tm_cpu_stats layout");

/* What each CPU runs now (map "cpu_ctxs"), read by other CPUs to find BE to
 * preempt, and by the loader for the per-domain load. */
struct tm_cpu_ctx {
	__u64 started;		     /* when the current task started running or was charged */
	__u64 run_ns[TM_NR_CLASSES]; /* cumulative runtime per class */
	__u64 grant_left;	     /* BE: reserved runtime not yet charged, ns */
	__u64 be_until;		     /* BE: when the grant runs out */
	__u64 next_grant;	     /* BE run forced by dispatch (floor, bounded wait), ns */
	__u32 class;		     /* TM_CLASS_NONE when none of ours runs */
	__u8 forced;		     /* BE: this run is beyond the budget (floor, bounded wait) */
	__u8 pad[3];
};
_Static_assert(sizeof(struct tm_cpu_ctx) == 8 * (4 + TM_NR_CLASSES) + 8, "tm_cpu_ctx layout");

/* Run-queue wait of the ONLINE tasks of one cgroup (the task's own cgroup). */
struct tm_cg_wait {
	__u64 hist[TM_HIST_BUCKETS];
};
_Static_assert(sizeof(struct tm_cg_wait) == TM_HIST_BUCKETS * 8, "tm_cg_wait layout");

static inline __u32 tm_hist_bucket(__u64 wait_ns)
{
	__u64 us = wait_ns / 1000;
	__u32 b = 0;

	while (us && b < TM_HIST_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
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
 * Next window's budget: the allowance minus what the last window went over
 * the line. Over means BE ran past its budget (left_ns < 0: ticks, minimum
 * slices) or ONLINE+SYSTEM used more than predicted (hi_miss_ns > 0); BE
 * budget left unspent offsets a rise of ONLINE. Nothing is ever credited
 * (no burst above the line), and the payback is capped at @max_payback_ns
 * so one spike costs BE at most one window.
 */
static inline __s64 tm_be_budget_next(__s64 left_ns, __s64 hi_miss_ns, __u64 allowance_ns,
				      __u64 max_payback_ns)
{
	__s64 over = hi_miss_ns - left_ns;

	if (over < 0)
		over = 0;
	if ((__u64)over > max_payback_ns)
		over = (__s64)max_payback_ns;
	return (__s64)allowance_ns - over;
}

/* Returns NULL when the tunables are valid, else what is wrong. */
static inline const char *tm_tunables_check(const struct tm_tunables *t, __u32 nr_cpus)
{
	if (t->suppress_pct == 0)
		return "suppress_pct must be at least 1 (0 would leave BE only its floor)";
	if (t->suppress_pct > 100)
		return "suppress_pct must be at most 100";
	if (t->max_be_wait_ms < TM_MAX_BE_WAIT_MS_MIN || t->max_be_wait_ms > TM_MAX_BE_WAIT_MS_MAX)
		return "max_be_wait_ms must be within 10-10000";
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
static inline __u64 tm_vtime_wakeup(__u64 task_vtime, __u64 now_vtime, __u64 slice_ns, __u32 weight)
{
	__u64 credit = tm_vtime_delta(slice_ns, weight);
	__u64 floor = now_vtime > credit ? now_vtime - credit : 0;

	return task_vtime < floor ? floor : task_vtime;
}

/* Tunables validated identically by the loader and the unit tests. */
static inline bool tm_slice_us_valid(__u64 slice_us)
{
	return slice_us >= TM_SLICE_US_MIN && slice_us <= TM_SLICE_US_MAX;
}

#endif /* __TIDEMARK_H */
