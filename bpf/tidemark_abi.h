/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI between the tidemark BPF scheduler and its userspace programs
 * (scx_tidemark, tidemarkd, tidemarkctl): the layout of every pinned map's
 * keys and values, enums and limits. Fixed-width types only; every struct is
 * size-checked. Pure decision logic is in tidemark_policy.h.
 */
#ifndef __TIDEMARK_ABI_H
#define __TIDEMARK_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_timer */
#include <stdbool.h>
#endif

/*
 * Version of this ABI. The scheduler publishes the version it was built with
 * in its pinned "abi" map; tidemarkd and tidemarkctl refuse to touch the
 * maps of a scheduler built for another one (the units restart
 * independently, so an upgrade can pair an old reader with a new
 * scheduler). Bump it whenever a pinned map's key or value changes.
 */
#define TM_ABI_VERSION 11

/* Value of the pinned "abi" map (one entry), written by the scheduler. */
struct tm_abi {
	__u32 version;	/* TM_ABI_VERSION the scheduler was built with */
	__u32 nr_stats; /* TM_NR_STATS of that build */
	__u32 cap_cpus; /* CPUs the watermark's capacity counts */
	/* low 32 bits of sched_ext's enable_seq once attached (written by the
	 * loader before it pins this map; 0: not recorded): readers refuse the
	 * maps of an instance that is no longer the one running */
	__u32 enable_seq;
};
_Static_assert(sizeof(struct tm_abi) == 16, "tm_abi layout");

enum tm_limits {
	TM_MAX_CPUS = 512,
	/* ONLINE cgroups with their own wait histogram (map "cg_waits") */
	TM_MAX_CG_HIST = 4096,
	/* cache domains the scheduler places cgroups in (home masks are u64) */
	TM_MAX_DOMS = 64,
	/* ONLINE cgroups with a home (map "homes") */
	TM_MAX_HOMES = 4096,
	/* cgroups with a CPU cap (map "be_caps") */
	TM_MAX_BE_CAPS = 4096,
	/* cgroups with a CPU limit (cpu.max or a cap; map "cg_bw"): two per
	 * pod (pod and container) on a 1,000-pod node, with room */
	TM_MAX_BW = 16384,
	/* limited ancestors a task's cgroup may have (itself included) */
	TM_BW_LEVELS = 8,
	/* the largest milli-CPU value a setting may take: every supported CPU */
	TM_MCPU_MAX = TM_MAX_CPUS * 1000,
	/* hardware threads per core SMT handling knows of (Zen, Intel: 2) */
	TM_MAX_SMT = 4,
};
/* per-CPU arrays are indexed under a mask (CPU_SLOT) */
_Static_assert((TM_MAX_CPUS & (TM_MAX_CPUS - 1)) == 0, "TM_MAX_CPUS a power of 2");

/* User DSQ ids (bit 63 clear). Every CPU drains both, so no task is ever
 * stranded by its affinity. */
enum tm_dsq {
	TM_DSQ_HI = 0, /* ONLINE and SYSTEM: weighted vtime */
	TM_DSQ_BE = 1, /* best-effort: FIFO, so the head is the longest waiter */
	/* per cache domain, ONLINE tasks homed there: strict, then soft */
	TM_DSQ_DOM_BASE = 16,
};

/* Tasks held back by the CPU limit of cgroup X wait in DSQ TM_DSQ_BW_BASE | X
 * (created when X gets a limit, destroyed when X is removed). */
#define TM_DSQ_BW_BASE (1ULL << 62)

/* Domain of a CPU that is in no cache domain (offline at discovery). */
#define TM_NO_DOM 0xff

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
 * A per-cgroup CPU cap (map "be_caps", cgroup id -> cap: the record of who
 * set it; tidemarkd's interference ladder and eviction back-off, and
 * tidemarkctl cap, write it for a cgroup and each of its descendants). A cap
 * is one more source of the cgroup's CPU limit (see struct tm_cg_bw): the
 * limit per period is the smaller of cpu.max and the cap. Written only
 * through the scheduler's bw_update program.
 */
enum tm_cap_owner { TM_CAP_OPERATOR = 0, TM_CAP_TIDEMARKD = 1 };

struct tm_be_cap {
	__u32 cap_mcpu;
	__u32 owner; /* enum tm_cap_owner: a restarted tidemarkd clears its own */
};
_Static_assert(sizeof(struct tm_be_cap) == 8, "tm_be_cap layout");

/*
 * CPU bandwidth of one cgroup (map "cg_bw", cgroup id -> state), as CFS
 * gives cpu.max: each period the cgroup may run eff_ns of CPU time across
 * all CPUs, its descendants included; a task runs only while every limited
 * ancestor has runtime left, else it waits in its DSQ (TM_DSQ_BW_BASE | id)
 * until the period's refill. Sources: cpu.max and cpu.max.burst (read by
 * the loader every --rescan-ms) and a cap (be_caps). Counters as cpu.stat's.
 * Userspace reads it; only the bw_update program and the scheduler write it.
 */
struct tm_cg_bw {
	__u64 quota_ns;	     /* cpu.max quota per period; 0: "max" */
	__u64 period_ns;     /* cpu.max period (TM_BW_PERIOD_DFL_US for a cap alone) */
	__u64 burst_ns;	     /* cpu.max.burst: unused runtime kept, at most this */
	__u64 eff_ns;	     /* runtime one period gives: min(quota, cap); 0: unlimited */
	__s64 runtime_ns;    /* left in this period (negative: debt) */
	__u64 period_used;   /* charged in this period */
	__u64 usage_ns;	     /* charged in all */
	__u64 nr_periods;    /* periods elapsed while the cgroup ran or waited */
	__u64 nr_throttled;  /* periods in which it was held back */
	__u64 throttled_ns;  /* time during which tasks of it were held back */
	__u64 nr_bursts;     /* periods in which it used carried-over runtime (burst) */
	__u64 burst_ns_used; /* runtime taken above eff_ns in those */
	__u64 throttled_at;  /* start of the current hold, 0 if none */
	__u64 next_at;	     /* the next refill */
	__s64 snap_ns;	     /* runtime at this period's start (what it could use) */
	__u32 cap_mcpu;	     /* the cap, 0: none */
	__u32 armed;	     /* the refill timer runs (stopped while idle and full) */
	struct bpf_timer timer;
};
_Static_assert(sizeof(struct tm_cg_bw) == 16 * 8 + 16, "tm_cg_bw layout");

/*
 * Changes to "cg_bw" and "be_caps" go through the scheduler's pinned
 * bw_update program (BPF_PROG_TYPE_SYSCALL, this struct as its context): it
 * creates the cgroup's DSQ and timer with the entry, so a cgroup never has a
 * limit without the queue its throttled tasks wait in.
 */
enum tm_bw_set {
	TM_BW_SET_MAX = 1 << 0, /* quota_us, period_us, burst_us from cpu.max */
	TM_BW_SET_CAP = 1 << 1, /* cap_mcpu (0 removes the cap), owner */
};

struct tm_bw_req {
	__u64 cgid;
	__u64 quota_us; /* 0: "max" */
	__u64 period_us;
	__u64 burst_us;
	__u32 set;
	__u32 cap_mcpu;
	__u32 owner;
	__s32 ret; /* out: 0, -EINVAL, -E2BIG (map full), or a DSQ creation error */
};
_Static_assert(sizeof(struct tm_bw_req) == 48, "tm_bw_req layout");

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
 * The one table of tunables, every one changeable at runtime:
 * X(field, NAME, unit, default, min, max, who, effect). Limits are literals
 * so that messages can spell them; be_floor_mcpu is also held to the node's
 * capacity and line (tm_tunables_check). who: "scheduler" (read every
 * window: a change applies from the next one) or "loader" (read by
 * scx_tidemark at its next placement round, every --rescan-ms).
 * Booleans are 0 or 1. Help, checks, tidemarkctl set/show/tunables and the
 * README's table all come from here.
 */
#define TM_TUNABLES(X)                                                                            \
	X(suppress_pct, SUPPRESS_PCT, "%", 65, 1, 100, "scheduler",                               \
	  "BE may use this % of the online CPUs minus what ONLINE and SYSTEM used in the last "   \
	  "window")                                                                               \
	X(max_be_wait_ms, MAX_BE_WAIT_MS, "ms", 1000, 10, 10000, "scheduler",                     \
	  "a queued BE task runs at least this often, ahead of ONLINE if need be")                \
	X(be_floor_mcpu, BE_FLOOR_MCPU, "mCPU", 100, 0, 512000, "scheduler",                      \
	  "CPU BE keeps on average (about 8 windows) even when ONLINE wants everything; at most " \
	  "the line")                                                                             \
	X(slice_us, SLICE_US, "us", 20000, 100, 100000, "scheduler",                              \
	  "time an ONLINE/SYSTEM task runs before others queued behind it get the CPU (a BE "     \
	  "grant: at most window_us); shorter = lower wait where wake_gran_us does not preempt, " \
	  "more switches")                                                                        \
	X(wake_gran_us, WAKE_GRAN_US, "us", 2000, 0, 100000, "scheduler",                         \
	  "0 = off; else a waking ONLINE/SYSTEM task with no free CPU preempts the one on its "   \
	  "CPU once that has run this long and is this much further ahead in weighted time (at "  \
	  "the wakeup, else at the runner's next tick); "                                         \
	  "larger = fewer switches, longer waits")                                                \
	X(window_us, WINDOW_US, "us", 5000, 1000, 100000, "scheduler",                            \
	  "BE budget window: shorter follows ONLINE faster, costs more timer work")               \
	X(home_wait_us, HOME_WAIT_US, "us", 2000, 0, 1000000, "scheduler",                        \
	  "soft homes: how long a task waits for a home CPU before another domain's CPU may run " \
	  "it; 1000000 = never")                                                                  \
	X(be_avoid_homes, BE_AVOID_HOMES, "bool", 1, 0, 1, "scheduler",                           \
	  "BE starts on domains hosting no ONLINE home while they have idle CPUs")                \
	X(smt_expel, SMT_EXPEL, "bool", 1, 0, 1, "scheduler",                                     \
	  "while a hardware thread runs ONLINE, BE does not run on its SMT siblings (preempted "  \
	  "at once); ONLINE takes a whole idle core first. No effect without SMT")                \
	X(placement, PLACEMENT, "bool", 1, 0, 1, "loader",                                        \
	  "ONLINE cgroups get a home cache domain (machines with two or more); 0 clears every "   \
	  "home")                                                                                 \
	X(home_slack_pct, HOME_SLACK_PCT, "%", 20, 0, 100, "loader",                              \
	  "placement hysteresis: a cgroup keeps its home while its demand moved less than this "  \
	  "and the home still holds it within this overcommit")

/*
 * Runtime tunables: one entry of the pinned "tunables" map, the fields of
 * TM_TUNABLES in order, then class_gen.
 */
#define TM_TUN_FIELD(f, N, u, d, lo, hi, w, e) __u32 f;
struct tm_tunables {
	TM_TUNABLES(TM_TUN_FIELD)
	__u32 class_gen; /* bumped on every class map change */
};
#undef TM_TUN_FIELD
_Static_assert(sizeof(struct tm_tunables) == 48, "tm_tunables layout");

/* Settings fixed for a scheduler's lifetime, and why a change needs a
 * reload: X(name, unit, default, min, max, why, effect). */
#define TM_LOAD_SETTINGS(X)                                                                      \
	X(timeout_ms, "ms", 30000, 1, 30000,                                                     \
	  "the kernel takes the watchdog timeout when the scheduler attaches",                   \
	  "sched_ext watchdog: a runnable task not run for this long ejects the scheduler")      \
	X(rescan_ms, "ms", 1000, 10, 60000, "the loader's own loop period",                      \
	  "class rules are matched against new cgroups, cpu.max read and homes worked out this " \
	  "often")                                                                               \
	X(peak_window_s, "s", 300, 10, 3600,                                                     \
	  "measured peaks are kept in 30 buckets of peak_window_s / 30: a new width would mix "  \
	  "spans",                                                                               \
	  "measured demand is the peak over this window; longer = steadier homes, slower to "    \
	  "shrink")

/*
 * Tunables are changed only through the scheduler's pinned "tunables_update"
 * program (a BPF_PROG_TYPE_SYSCALL run with BPF_PROG_TEST_RUN, this struct
 * as its context): it applies the fields named in @set and the class_gen
 * bump under one lock and validates the result, so concurrent writers
 * (loader, tidemarkd, tidemarkctl) never lose each other's changes and
 * never combine into an invalid set.
 */
#define TM_TUN_IDX(f, N, u, d, lo, hi, w, e) TM_TUNI_##N,
enum tm_tunable_idx { TM_TUNABLES(TM_TUN_IDX) TM_NR_TUNABLES };
#undef TM_TUN_IDX
#define TM_TUN_BIT(f, N, u, d, lo, hi, w, e) TM_TUN_##N = 1u << TM_TUNI_##N,
enum tm_tunable_bit { TM_TUNABLES(TM_TUN_BIT) };
#undef TM_TUN_BIT
_Static_assert(TM_NR_TUNABLES <= 32, "one bit per tunable in tm_tunables_req.set");

struct tm_tunables_req {
	__u32 set;		 /* TM_TUN_* bits: fields of @val to apply */
	__u32 bump_class_gen;	 /* non-zero: bump class_gen */
	struct tm_tunables val;	 /* in: new values; out: the tunables after (or the rejected set) */
	struct tm_tunables prev; /* out: the tunables before */
	__s32 ret;		 /* out: 0, -EINVAL (result invalid, nothing applied), -ENOENT */
	__u32 cap_cpus;		 /* out: the CPUs the scheduler validated against */
};
_Static_assert(sizeof(struct tm_tunables_req) == 112, "tm_tunables_req layout");

#define TM_TUN_LIMITS(f, N, u, d, lo, hi, w, e) \
	TM_##N##_DFL = d, TM_##N##_MIN = lo, TM_##N##_MAX = hi,
enum tm_defaults {
	/* TM_<NAME>_DFL, _MIN, _MAX of every tunable */
	TM_TUNABLES(TM_TUN_LIMITS)
	/* sched_ext's own ceiling for the watchdog */
	TM_TIMEOUT_MS_MAX = 30000,
	/* cgroup v2 cpu.weight: default and range */
	TM_WEIGHT_DFL = 100,
	TM_WEIGHT_MIN = 1,
	TM_WEIGHT_MAX = 10000,
	/* cpu.max as the kernel accepts it (kernel/sched/core.c) */
	TM_BW_PERIOD_MIN_US = 1000,
	TM_BW_PERIOD_MAX_US = 1000000,
	TM_BW_QUOTA_MIN_US = 1000,
	/* the period of a cgroup limited by a cap alone: cpu.max's default */
	TM_BW_PERIOD_DFL_US = 100000,
};
#undef TM_TUN_LIMITS
/* max_be_wait_ms must stay well under the watchdog's 30 s */
_Static_assert(TM_MAX_BE_WAIT_MS_MAX * 3 <= TM_TIMEOUT_MS_MAX, "max_be_wait_ms vs the watchdog");
_Static_assert((int)TM_BE_FLOOR_MCPU_MAX == (int)TM_MCPU_MAX,
	       "be_floor_mcpu limit: every supported CPU");

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
	X(WAKE_PREEMPT, "wake_preempt",                                                            \
	  "ONLINE/SYSTEM runs preempted by a waking task further behind (wake_gran_us)")           \
	X(BE_THROTTLED, "be_throttled", "BE runs ended by their grant timer")                      \
	X(BE_THROTTLED_NS, "be_throttled_ns", "time BE waited with its budget spent, ns")          \
	X(BE_FORCED, "be_forced", "BE runs forced by max_be_wait_ms")                              \
	X(BE_FLOOR, "be_floor", "BE runs ahead of ONLINE to keep the BE floor")                    \
	X(BE_FLOOR_IDLE, "be_floor_idle",                                                          \
	  "BE floor runs on CPUs nothing else wanted, budget spent")                               \
	X(BW_THROTTLED, "bw_throttled",                                                            \
	  "tasks held back by a cgroup CPU limit (cpu.max or a cap)")                              \
	X(BW_GUARD, "bw_guard",                                                                    \
	  "held-back tasks let run by the stall guard (waited half the watchdog timeout)")         \
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
	  "BE sent from a domain hosting ONLINE homes to an idle CPU elsewhere")                   \
	X(WINDOWS, "windows", "BE budget windows ended (every window_us)")                         \
	X(SMT_EXPELLED, "smt_expelled",                                                            \
	  "BE runs preempted because ONLINE started on an SMT sibling (smt_expel)")                \
	X(SMT_HELD, "smt_held",                                                                    \
	  "times a CPU did not start BE because an SMT sibling ran ONLINE (smt_expel)")            \
	X(TRACE_LOST, "trace_lost", "trace events not written: the trace ring buffer was full")    \
	X(ENQ_LOCAL_WAKE, "enq_local_wake",                                                        \
	  "wakeups of one-CPU tasks queued on their CPU, nothing further behind waiting")          \
	X(FLOOR_KICK, "floor_kick",                                                                \
	  "CPUs running ONLINE/SYSTEM preempted near a window's end for the BE floor")

#define TM_STAT_ENUM(e, n, h) TM_STAT_##e,
enum tm_stat_idx { TM_STATS(TM_STAT_ENUM) TM_NR_STATS };
#undef TM_STAT_ENUM

struct tm_cpu_stats {
	__u64 cnt[TM_NR_STATS];
	/* run-queue wait (enqueue -> running) per class, log2 us buckets */
	__u64 wait_hist[TM_NR_CLASSES][TM_HIST_BUCKETS];
	/* and its total, ns (a Prometheus histogram's _sum; an exact mean) */
	__u64 wait_sum_ns[TM_NR_CLASSES];
};
_Static_assert(sizeof(struct tm_cpu_stats) ==
		       (TM_NR_STATS + TM_NR_CLASSES * TM_HIST_BUCKETS + TM_NR_CLASSES) * 8,
	       "tm_cpu_stats layout");

/* What each CPU runs now (map "cpu_ctxs"), read by other CPUs to find BE to
 * preempt, and by the loader for the per-domain load. */
struct tm_cpu_ctx {
	__u64 started;		     /* when the current task started running or was charged */
	__u64 run_sum;		     /* its se.sum_exec_runtime then */
	__u64 run_ns[TM_NR_CLASSES]; /* cumulative runtime per class */
	__u64 grant_left;	     /* BE: reserved runtime not yet charged, ns */
	__u64 be_until;		     /* BE: when the grant runs out */
	__u64 next_grant;	     /* BE run forced by dispatch (floor, bounded wait), ns */
	__u32 class;		     /* TM_CLASS_NONE when none of ours runs */
	__u8 forced;		     /* BE: this run is beyond the budget (floor, bounded wait) */
	__u8 online_next;	     /* an ONLINE task was sent here and has not started yet */
	__u8 pad[2];
};
_Static_assert(sizeof(struct tm_cpu_ctx) == 8 * (5 + TM_NR_CLASSES) + 8, "tm_cpu_ctx layout");

/* Run-queue wait of the ONLINE tasks of one cgroup (the task's own cgroup). */
struct tm_cg_wait {
	__u64 hist[TM_HIST_BUCKETS];
	__u64 sum_ns;
};
_Static_assert(sizeof(struct tm_cg_wait) == (TM_HIST_BUCKETS + 1) * 8, "tm_cg_wait layout");

/*
 * Decision trace (tidemarkctl trace): events into the pinned ring buffer
 * "trace" while the pinned "trace_ctl" asks for them. X(enum suffix, name,
 * what the event's fields mean). pid/comm/cgid/cls: the task concerned (0
 * when the event is about a CPU); cpu: where; arg/aux as listed.
 */
#define TM_TRACE_KINDS(X)                                                                         \
	X(ENQUEUE, "enqueue",                                                                     \
	  "a task queued or placed; queue= idle_cpu, take_be, shared, home, be, pinned, limited") \
	X(RUN, "run", "a task runs; wait_us= its run-queue wait, running_at_start: from before")  \
	X(STOP, "stop", "a task stops running; ran_us= as cpu.stat, still_runnable if not done")  \
	X(PREEMPT, "preempt", "the task shown (ONLINE/SYSTEM) takes this CPU over from BE")       \
	X(THROTTLE, "throttle", "BE on this CPU ended by its grant timer: budget spent")          \
	X(FORCED, "forced", "a BE run forced by max_be_wait_ms; head_wait_us= the oldest's wait") \
	X(FLOOR, "floor", "a BE run ahead of ONLINE to keep the floor; grant_us=")                \
	X(WINDOW, "window",                                                                       \
	  "a budget window ended: what ONLINE+SYSTEM and BE used in it (hi_us=, be_us=), the "    \
	  "node's running error against its line (over_us=, negative: below) and BE's budget "    \
	  "for the next one (be_budget_us=, negative: a debt)")

#define TM_TRACE_ENUM(e, n, h) TM_TR_##e,
enum tm_trace_kind { TM_TRACE_KINDS(TM_TRACE_ENUM) TM_NR_TRACE_KINDS };
#undef TM_TRACE_ENUM
#define TM_TRACE_ALL ((1u << TM_NR_TRACE_KINDS) - 1)

/* aux of an enqueue event: where the task went */
enum tm_trace_q {
	TM_TRQ_IDLE_CPU, /* straight to an idle CPU's local queue (select_cpu) */
	TM_TRQ_TAKE_BE,	 /* straight to the local queue of the CPU it preempts BE on */
	TM_TRQ_SHARED,	 /* the shared ONLINE/SYSTEM queue */
	TM_TRQ_HOME,	 /* its home domain's queue */
	TM_TRQ_BE,	 /* the BE queue */
	TM_TRQ_PINNED,	 /* its CPU's local queue (per-CPU kthread, migration disabled) */
	TM_TRQ_LIMITED,	 /* held by a CPU limit until its refill */
	TM_NR_TRACE_QUEUES,
};

/* One event; arg and aux as the kind's text says: arg in ns (wait, ran,
 * head wait, grant, budget), aux the queue (enqueue) or still runnable (stop). */
struct tm_trace_ev {
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u64 cgid;
	__s64 arg;
	__u32 pid;
	__u32 cpu;
	__u16 kind; /* enum tm_trace_kind */
	__u16 cls;  /* TM_CLASS_* of the task; TM_CLASS_NONE when none */
	__u32 aux;
	char comm[16];
};
_Static_assert(sizeof(struct tm_trace_ev) == 56, "tm_trace_ev layout");

/* Value of the pinned "trace_ctl" map (one entry), written by tidemarkctl:
 * events of the kinds in @mask are written until @until_ns (CLOCK_MONOTONIC),
 * from the next window on; the scheduler stops by itself at @until_ns, so a
 * reader that died leaves no trace running. */
struct tm_trace_ctl {
	__u32 mask; /* 1 << TM_TR_* */
	__u32 pad;
	__u64 until_ns;
};
_Static_assert(sizeof(struct tm_trace_ctl) == 16, "tm_trace_ctl layout");
/* the ring buffer's size: ~75,000 events between two reads */
#define TM_TRACE_RB_BYTES (4u << 20)

#endif /* __TIDEMARK_ABI_H */
