/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The scheduler's state: settings the loader fixes at load, globals, every
 * map, and the small accessors every part uses.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_STATE_BPF_H
#define __TM_STATE_BPF_H

/* Set by the loader before load; see scx_tidemark --help. */
/* CPU ids to walk (possible CPUs). */
const volatile u32 nr_cpus = 1;
/* CPUs the watermark's capacity counts: those online at load (a hotplug
 * makes the kernel ask for a restart, and the loader counts again). */
const volatile u32 cap_cpus = 1;
/* Cache domains (L3) for placement; 0: placement off. */
const volatile u32 nr_doms = 0;
/* Domain of each CPU, TM_NO_DOM if none. */
const volatile u8 cpu_dom[TM_MAX_CPUS];
/* SMT siblings of each CPU from the topology, as CPU + 1 (0: no more):
 * CPU c's at [c * (TM_MAX_SMT - 1)...]; all 0 without SMT. */
const volatile u16 cpu_sibs[TM_MAX_CPUS * (TM_MAX_SMT - 1)];
/* Some CPU has a sibling: SMT handling has something to do. */
const volatile bool smt_present = false;
/* A task held back by a CPU limit longer than this runs anyway (a minimum
 * run, charged as debt): half the watchdog timeout, so no limit can eject
 * the scheduler, however many tasks share a tiny quota. */
const volatile u64 bw_guard_ns = 15000000000ULL;

UEI_DEFINE(uei);

/* Highest vtime seen running: the HI queue's "now". Races are benign. */
static u64 vtime_now;
/*
 * Vtime of the least advanced queued ONLINE/SYSTEM task as the last dispatch
 * saw it (hi_queues_of; vtime_now when nothing waited), lowered by every
 * enqueue below it: where a sleeper's credit counts from. Cheaper than
 * reading the queue's head at every wakeup, which hackbench felt.
 */
static u64 vtime_min;
/*
 * The ONLINE/SYSTEM task each CPU runs, for wakeup preemption
 * (tm_wake_preempts): its vtime when it started or its slice was renewed,
 * when, and its weight (0: none of them runs there). Written by the CPU
 * itself, read by wakers elsewhere without a lock: a stale read costs one
 * preemption too many or too few, never a wrong queue order. @wkey: the
 * lowest tm_wake_key of the wakeups from other cgroups than the runner's
 * (@cgid) that could not preempt it yet, for its tick (valid while @wpend;
 * cleared when a task starts or a slice renews).
 */
struct cpu_run {
	u64 vt;
	u64 at;
	u64 cgid;
	u64 wkey;
	u32 w;
	u32 wpend;
	u32 floor_kick; /* preempted by the window timer for the BE floor */
};
static struct cpu_run cpu_runs[TM_MAX_CPUS];

/*
 * ONLINE waits of one cgroup not yet added to cg_waits, per CPU: a hash
 * lookup and two atomic adds at every ONLINE run were a fifth of running's
 * cost. A CPU adds
 * here while it runs the same cgroup's tasks, and moves the lot to cg_waits
 * when another cgroup's task waited, after TM_CG_WAIT_BATCH waits, or
 * TM_CG_WAIT_FLUSH_NS after the first (checked when any task starts and at
 * the tick). Touched only under the CPU's rq lock: running, tick. What is
 * pending when the scheduler exits is lost (at most 50 ms of waits).
 */
#define TM_CG_WAIT_BATCH    64
#define TM_CG_WAIT_FLUSH_NS (50 * 1000 * 1000ULL)
struct cg_wait_pend {
	u64 cgid;
	u64 first; /* when the oldest of them was added */
	u64 sum_ns;
	u32 n; /* 0: none pending */
	u32 hist[TM_HIST_BUCKETS];
};
static struct cg_wait_pend cg_wait_pends[TM_MAX_CPUS];

/*
 * &ARR[@cpu] of a per-CPU array, NULL past TM_MAX_CPUS. clang may index
 * with another copy of @cpu than the one it checked, which the verifier
 * does not see bounded: the mask bounds the one used.
 */
#define CPU_SLOT(arr, cpu)                                     \
	({                                                     \
		u64 __c = (u32)(cpu);                          \
		typeof(&(arr)[0]) __r = NULL;                  \
                                                               \
		if (__c < TM_MAX_CPUS) {                       \
			barrier_var(__c);                      \
			__r = &(arr)[__c & (TM_MAX_CPUS - 1)]; \
		}                                              \
		__r;                                           \
	})

static __always_inline struct cg_wait_pend *cg_wait_pend_of(s32 cpu)
{
	return CPU_SLOT(cg_wait_pends, cpu);
}

static __always_inline struct cpu_run *cpu_run_of(s32 cpu)
{
	return CPU_SLOT(cpu_runs, cpu);
}

/*
 * BE CPU time left in this window, ns (negative: overspent). A BE run
 * reserves its whole slice from it when it starts (a grant) and gives back
 * what it did not use when it stops, so CPUs starting BE at the same time
 * cannot each spend the same budget.
 */
static s64 be_budget;
/* BE floor of this window and what is still owed of it, ns. */
static u64 be_floor_ns;
static s64 be_floor_left;
/* CPU time forced BE runs (floor, bounded wait) used beyond their grants, ns:
 * paid back from the next floors, then budgets, so that late grant timers
 * cannot add to the floor. */
static s64 forced_debt;
/* This window owes BE its floor (ONLINE left it less than that under the line). */
static bool floor_on;
static __always_inline bool be_budget_left(void)
{
	return be_budget > 0;
}

/* Does this window still owe BE part of its floor? */
static __always_inline bool floor_owed(void)
{
	return floor_on && be_floor_left > 0;
}

/* When the current window ends (the window timer's next expiry). */
static u64 window_end;
/* The oldest queued BE task has waited half of max_be_wait_ms (set by the
 * window timer): wakeups stop skipping dispatch, where the bounded wait is
 * enforced, until it ran. */
static bool be_wait_due;
/*
 * The runtime tunables the scheduler uses, copied from the "tunables" map at
 * init and at every window (tunables_apply): a change applies from the next
 * window on.
 */
static u64 slice_ns = TM_SLICE_US_DFL * 1000ULL;
static u64 wake_gran_ns = TM_WAKE_GRAN_US_DFL * 1000ULL;
static u64 window_ns = TM_WINDOW_US_DFL * 1000ULL;
/*
 * The most a BE grant runs: a slice, but never past a budget window, so
 * that the line is judged again every window however long ONLINE/SYSTEM's
 * slice is (tunables_apply).
 */
static u64 be_grant_ns = TM_WINDOW_US_DFL * 1000ULL;
/* Soft homes: how long a task waits for its home before going elsewhere. */
static u64 home_wait_ns = TM_HOME_WAIT_US_DFL * 1000ULL;
/* Keep BE off domains hosting ONLINE homes while other domains have room. */
static bool be_avoid_homes = true;
/* BE off the SMT siblings of ONLINE (smt.bpf.h); meaningful with smt_present. */
static bool smt_expel = true;
static u64 max_be_wait_ns = TM_MAX_BE_WAIT_MS_DFL * 1000000ULL;
static u32 class_gen;
/* Bumped whenever a cgroup's weight entry changes (never 0). */
static u32 weight_gen = 1;
/* class_gen the BE queue was last checked at */
static u32 be_scan_gen;
/* Domains hosting at least one ONLINE home: written by the loader. */
u64 home_doms;
/* Domains whose strict (soft) queue has ever had a task: only those are
 * looked into. Never cleared, as a task may still be queued there; without
 * homes, dispatch looks into one queue, not three. */
static u64 domq_strict, domq_soft;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, u32);
	__uint(max_entries, 16384);
} classes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct tm_tunables);
	__uint(max_entries, 1);
} tunables SEC(".maps");

/* Serialises the writers of "tunables" (tunables_update). */
struct tunables_lock {
	struct bpf_spin_lock lock;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct tunables_lock);
	__uint(max_entries, 1);
} tunables_lock SEC(".maps");

/* The ABI this scheduler was built with, published at init. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct tm_abi);
	__uint(max_entries, 1);
} abi SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct tm_cpu_stats);
	__uint(max_entries, 1);
} stats SEC(".maps");

/*
 * ONLINE run-queue wait per cgroup, keyed by the task's own cgroup id: the
 * daemon's interference detector reads it. Userspace prunes removed cgroups.
 * Up to TM_CG_WAIT_FLUSH_NS behind while a CPU runs (cg_wait_pends, below);
 * an idle CPU's last waits come when it next runs a task.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct tm_cg_wait);
	__uint(max_entries, TM_MAX_CG_HIST);
} cg_waits SEC(".maps");

/* cpu.weight of every cgroup with the cpu controller, by cgroup id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, u32);
	__uint(max_entries, 16384);
} cg_weights SEC(".maps");

/* Per-cgroup CPU caps, by cgroup id: who set them (bw_update writes). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct tm_be_cap);
	__uint(max_entries, TM_MAX_BE_CAPS);
} be_caps SEC(".maps");

/* CPU bandwidth of every limited cgroup, by cgroup id (bandwidth.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct tm_cg_bw);
	__uint(max_entries, TM_MAX_BW);
} cg_bw SEC(".maps");

/* Never written: 0 at run time, and to the verifier a value it cannot
 * know (a loop counted from it converges instead of being walked once per
 * count; the bounds the loop checks still hold). Not static, so that the
 * compiler cannot fold it to 0 either. */
u32 unknown_zero;
/* Entries in cg_bw: 0 keeps every bandwidth path off the hot path. */
static s32 bw_nr;
/* Bumped when cg_bw gains or loses an entry: tasks look up their limited
 * ancestors again. */
static u32 bw_gen = 1;

static __always_inline bool bw_on(void)
{
	return bw_nr > 0;
}

/* The runtime the task on each CPU reserved from its limited ancestors. */
struct bw_cpu {
	u64 ids[TM_BW_LEVELS];
	u64 grant;   /* reserved from each, ns */
	u64 started; /* when the reservation was taken */
	u64 until;   /* when it runs out (the grant timer ends the run then) */
	u32 n;	     /* ids held; 0: the task is not limited */
};
static struct bw_cpu bw_cpus[TM_MAX_CPUS];

/* Home of each placed ONLINE cgroup, by cgroup id; written by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct tm_home);
	__uint(max_entries, TM_MAX_HOMES);
} homes SEC(".maps");

/* The CPUs of each cache domain, built at init from cpu_dom. */
struct dom_ctx {
	struct bpf_cpumask __kptr *cpus;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct dom_ctx);
	__uint(max_entries, TM_MAX_DOMS);
} dom_ctxs SEC(".maps");

/* Per-CPU scratch mask (home CPUs a task may use); never used from timers,
 * which could interrupt a scheduler callback on the same CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct dom_ctx);
	__uint(max_entries, TM_MAX_CPUS);
} tmp_masks SEC(".maps");

struct task_ctx {
	u64 cgid;   /* cgroup the class was resolved for */
	u64 enq_at; /* when it was queued, for wait time and bounded wait */
	u64 ran_at; /* when it started running or was last charged vtime */
	/* se.sum_exec_runtime when it started running: a run's length as the
	 * kernel accounts it (cpu.stat), for the trace's stop events. The
	 * callbacks' own clock starts a run after the pick and ends it at the
	 * callback, which reads short of cpu.stat. */
	u64 run_sum;
	u64 home;   /* ONLINE: home domains it may reach, 0: none */
	u64 q_home; /* the home it was queued for this time, 0: none */
	u32 gen;    /* class_gen the class was resolved at */
	u8 class;
	u8 soft;		  /* home is soft */
	u8 last_dom;		  /* domain of its last run, TM_NO_DOM before the first */
	u8 pinned;		  /* queued on its CPU's local queue (migration disabled) */
	u8 bw_n;		  /* limited ancestors in bw_ids */
	u32 bw_gen;		  /* bw_gen bw_ids were looked up at */
	u64 bw_cgid;		  /* cgroup bw_ids were looked up for */
	u64 thr_since;		  /* held back by a limit since (cleared when it runs) */
	u64 bw_ids[TM_BW_LEVELS]; /* limited cgroups from its own up */
	u32 cw;			  /* cpu.weight of cgid, as of weight_gen cw_gen */
	u32 cw_gen;		  /* 0: not looked up yet */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct tm_cpu_ctx);
	__uint(max_entries, TM_MAX_CPUS);
} cpu_ctxs SEC(".maps");

/*
 * Per-CPU grant timers. sched_ext only notices an expired slice at the
 * next tick (4 ms at HZ=250), far too coarse for a 5 ms window: a timer
 * pinned to the CPU ends a BE grant on time.
 */
struct grant_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct grant_timer);
	__uint(max_entries, TM_MAX_CPUS);
} grant_timers SEC(".maps");

/* The window timer, with the per-class usage snapshot of the last window. */
struct window {
	struct bpf_timer timer;
	u64 last_run_ns[TM_NR_CLASSES];
	u64 last_at;
	s64 over_ns;	  /* the node's use above the line so far (tm_be_over_next) */
	u64 be_avg_mcpu;  /* BE's recent rate (tm_be_recent_next) */
	bool floor_check; /* this firing is the floor's deadline, not the window's end */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct window);
	__uint(max_entries, 1);
} windows SEC(".maps");

/* Lookups below cannot fail (arrays, keys in range): a failure is a bug,
 * and the scheduler exits saying so rather than running on without. */
static __always_inline struct tm_cpu_stats *my_stats(void)
{
	u32 zero = 0;

	/* cannot fail either, but counters are not worth an exit path at
	 * every count (it costs enqueue 70% more verifier work) */
	return bpf_map_lookup_elem(&stats, &zero);
}

static __always_inline void stat_add(enum tm_stat_idx idx, u64 v)
{
	struct tm_cpu_stats *s = my_stats();

	if (s && idx < TM_NR_STATS)
		s->cnt[idx] += v;
}

static __always_inline void stat_inc(enum tm_stat_idx idx)
{
	stat_add(idx, 1);
}

static __always_inline bool time_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/* cpu_ctx's failure, out of line: inlined, its error call was walked with
 * every lookup */
__noinline int cpu_ctx_lost(s32 cpu)
{
	scx_bpf_error("cpu_ctxs lookup failed for CPU %d", cpu);
	return 0;
}

static __always_inline struct tm_cpu_ctx *cpu_ctx(s32 cpu)
{
	u32 key = cpu;
	struct tm_cpu_ctx *c = bpf_map_lookup_elem(&cpu_ctxs, &key);

	if (!c)
		cpu_ctx_lost(cpu);
	return c;
}

static __always_inline struct task_ctx *task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

/*
 * @p's cgroup (cgroup v2) and its id, by plain loads: callbacks run under
 * RCU, and the verifier turns loads through these pointers into faulting
 * loads (a fault reads 0). BPF_CORE_READ took a helper call per hop, three
 * or four per wakeup, stop and tick.
 */
static __always_inline struct cgroup *task_cgroup(struct task_struct *p)
{
	struct css_set *cset = p->cgroups;

	return cset ? cset->dfl_cgrp : NULL;
}

static __always_inline u64 cgroup_id_of(struct cgroup *cg)
{
	struct kernfs_node *kn = cg ? cg->kn : NULL;

	return kn ? kn->id : 0;
}

/*
 * The entry of map @map (keyed by cgroup id) of the nearest ancestor of @cg
 * that has one, @cg included; NULL when none has. Inlined, so each caller's
 * map is a constant to the verifier.
 */
static __always_inline void *cg_nearest(struct cgroup *cg, void *map)
{
	int level = BPF_CORE_READ(cg, level);
	u32 i;

	bpf_for (i, 0, TM_MAX_CGROUP_DEPTH) {
		struct cgroup *anc = NULL;
		void *v;
		u64 id;
		int l = level - (int)i;

		if (l < 0)
			break;
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[l]) || !anc)
			break;
		id = BPF_CORE_READ(anc, kn, id);
		v = bpf_map_lookup_elem(map, &id);
		if (v)
			return v;
	}
	return NULL;
}

/*
 * The BPF trampoline running this program disabled migration for the
 * current task; a running task re-enqueued at the end of its slice is the
 * current one, and must not look pinned (it would take the local-queue path
 * and keep its CPU from ever serving the shared queue).
 */
static __always_inline bool migration_disabled(struct task_struct *p)
{
	u32 md = p->migration_disabled;

	if ((u32)bpf_get_current_pid_tgid() == (u32)p->pid)
		return md > 1;
	return md > 0;
}

/* Take the scheduler's tunables from the map's entry @t (see state above). */
static __always_inline void tunables_apply(const struct tm_tunables *t)
{
	slice_ns = (u64)t->slice_us * 1000;
	wake_gran_ns = (u64)t->wake_gran_us * 1000;
	window_ns = (u64)t->window_us * 1000;
	be_grant_ns = slice_ns < window_ns ? slice_ns : window_ns;
	home_wait_ns = (u64)t->home_wait_us * 1000;
	be_avoid_homes = t->be_avoid_homes;
	smt_expel = t->smt_expel;
	max_be_wait_ns = (u64)t->max_be_wait_ms * 1000000;
	class_gen = t->class_gen;
}

#endif /* __TM_STATE_BPF_H */
