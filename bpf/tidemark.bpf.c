/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_tidemark: the tidemark colocation scheduler.
 *
 * Classes: every task is ONLINE, BE (best-effort) or SYSTEM, the class of its
 * nearest classified ancestor cgroup (map "classes", cgroup id -> class,
 * written by userspace); unclassified is SYSTEM. The lookup is cached per
 * task and redone when the task changes cgroup or the class map changes
 * (tunables.class_gen), checked at every enqueue and tick.
 *
 * Policy:
 * - Every task is scheduled by this class (full switch).
 * - ONLINE and SYSTEM share one weighted-vtime queue and always go before
 *   BE. Weight = task weight x cgroup cpu.weight / 100 (flat, not
 *   hierarchical). A waking ONLINE/SYSTEM task takes an idle CPU; if none
 *   is idle, a CPU running BE is taken over at once: the one it is queued
 *   on (local insert with SCX_ENQ_PREEMPT), else the local CPU, else any
 *   (kick with SCX_KICK_PREEMPT). A CPU running ONLINE/SYSTEM is never
 *   preempted for anyone: a waker waits for the end of a slice.
 * - BE waits in a FIFO queue and runs only within its budget: per window
 *   (window_us), BE may use capacity x suppress_pct minus what ONLINE and
 *   SYSTEM used in the previous window, but at least be_floor_mcpu. Each BE
 *   run reserves a grant (a slice, or the budget left) when it starts and
 *   returns the unused part when it stops; a per-CPU timer ends the grant
 *   on time (the tick alone is 4 ms at HZ=250). What the last window went
 *   over the line (BE past its grants, ONLINE above its prediction) is paid
 *   back from the next budget, so node busy holds at the line.
 * - Bounded wait: when the oldest queued BE task has waited max_be_wait_ms,
 *   it runs ahead of everything (a 1 ms grant), so BE never starves and the
 *   sched_ext watchdog never fires. The floor is owed only in windows where
 *   ONLINE+SYSTEM left BE less than it under the line; it runs first on CPUs
 *   nothing else wants, and what is still owed at the end of a window runs
 *   ahead of ONLINE.
 * - Cache-domain homes (CCX placement): the loader gives each ONLINE
 *   cgroup a home, a set of L3 domains (map "homes"), and the nearest homed
 *   ancestor's home applies to a task, cut down to the domains its affinity
 *   reaches (none: it runs unhomed). A homed task waking takes an idle home
 *   CPU, else a home CPU running BE (preempted), else waits in its domain's
 *   queue, which only that domain's CPUs serve (they pick the lowest vtime
 *   among it and the shared queue). Strict homes never run elsewhere; soft
 *   ones may, once they waited home_wait_us (other CPUs look before BE, and
 *   the window timer wakes an idle one). BE starts on domains without homes
 *   while those have idle CPUs (be_avoid_homes).
 * - Per-CPU kthreads and migration-disabled tasks go to their CPU's local
 *   queue; user tasks pinned to one CPU use the shared queues, which only
 *   their CPU takes them from (BE pinned tasks stay throttled). Exiting
 *   tasks are never throttled. After a class change, queued BE tasks that
 *   are no longer BE move to the ONLINE/SYSTEM queue at the next dispatch.
 */
#include <scx/common.bpf.h>
#include "tidemark_policy.h"
#include "compat.bpf.h"

char _license[] SEC("license") = "GPL";

/* Set by the loader before load; see scx_tidemark --help. */
const volatile u64 slice_ns = TM_SLICE_US_DFL * 1000ULL;
const volatile u64 window_ns = TM_WINDOW_US_DFL * 1000ULL;
/* CPU ids to walk (possible CPUs). */
const volatile u32 nr_cpus = 1;
/* CPUs the watermark's capacity counts: those online at load (a hotplug
 * makes the kernel ask for a restart, and the loader counts again). */
const volatile u32 cap_cpus = 1;
/* Cache domains (L3) for placement; 0: placement off. */
const volatile u32 nr_doms = 0;
/* Domain of each CPU, TM_NO_DOM if none. */
const volatile u8 cpu_dom[TM_MAX_CPUS];
/* Soft homes: how long a task waits for its home before going elsewhere. */
const volatile u64 home_wait_ns = TM_HOME_WAIT_US_DFL * 1000ULL;
/* Keep BE off domains hosting ONLINE homes while other domains have room. */
const volatile bool be_avoid_homes = true;

UEI_DEFINE(uei);

/* Highest vtime seen running: the HI queue's "now". Races are benign. */
static u64 vtime_now;
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
/* This window owes BE its floor (ONLINE left it less than that under the line). */
static bool floor_on;
/* When the current window ends (the window timer's next expiry). */
static u64 window_end;
static u64 max_be_wait_ns = TM_MAX_BE_WAIT_MS_DFL * 1000000ULL;
static u32 class_gen;
/* class_gen the BE queue was last checked at */
static u32 be_scan_gen;
/* Domains hosting at least one ONLINE home: written by the loader. */
u64 home_doms;

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

/*
 * The only writer of "tunables" once the scheduler runs: applies the fields
 * @req names and the class_gen bump under one lock, and refuses a result
 * that tm_tunables_check rejects (req->val then holds it, so the caller can
 * name what is wrong).
 */
SEC("syscall")
int tunables_update(struct tm_tunables_req *req)
{
	/* the context read once into locals: the verifier refuses a load
	 * through a ctx pointer the compiler picked with a select */
	u32 set = req->set, bump = req->bump_class_gen, zero = 0;
	struct tm_tunables val = req->val, *t, next;
	struct tunables_lock *l;
	s32 ret = 0;

	barrier();
	t = bpf_map_lookup_elem(&tunables, &zero);
	l = bpf_map_lookup_elem(&tunables_lock, &zero);
	if (!t || !l) {
		req->ret = -ENOENT;
		return 0;
	}
	bpf_spin_lock(&l->lock);
	next = *t;
	if (set & TM_TUN_SUPPRESS_PCT)
		next.suppress_pct = val.suppress_pct;
	if (set & TM_TUN_MAX_BE_WAIT_MS)
		next.max_be_wait_ms = val.max_be_wait_ms;
	if (set & TM_TUN_BE_FLOOR_MCPU)
		next.be_floor_mcpu = val.be_floor_mcpu;
	if (bump)
		next.class_gen++;
	if (tm_tunables_check(&next, cap_cpus))
		ret = -EINVAL;
	else
		*t = next;
	bpf_spin_unlock(&l->lock);
	req->val = next;
	req->ret = ret;
	req->cap_cpus = cap_cpus;
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, struct tm_cpu_stats);
	__uint(max_entries, 1);
} stats SEC(".maps");

/*
 * ONLINE run-queue wait per cgroup, keyed by the task's own cgroup id: the
 * daemon's interference detector reads it. Userspace prunes removed cgroups.
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

/* Per-cgroup BE CPU caps, by cgroup id; written by tidemarkd. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, u64);
	__type(value, struct tm_be_cap);
	__uint(max_entries, TM_MAX_BE_CAPS);
} be_caps SEC(".maps");

/* The capped cgroup of the BE task each CPU runs, 0 if none. */
static u64 cap_cgid[TM_MAX_CPUS];
/* be_caps had entries at the last window: keep refilling while it does */
static bool caps_active;

/* The cap entry of the capped cgroup this CPU's BE task belongs to. */
static __always_inline struct tm_be_cap *cpu_cap(void)
{
	u32 cpu = bpf_get_smp_processor_id();
	u64 id;

	if (cpu >= TM_MAX_CPUS)
		return NULL;
	id = cap_cgid[cpu];
	return id ? bpf_map_lookup_elem(&be_caps, &id) : NULL;
}

static __always_inline void cap_charge(u64 ran)
{
	struct tm_be_cap *cap = cpu_cap();

	if (cap)
		__sync_fetch_and_sub(&cap->budget_ns, ran);
}

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
	u64 home;   /* ONLINE: home domains it may reach, 0: none */
	u64 q_home; /* the home it was queued for this time, 0: none */
	u32 gen;    /* class_gen the class was resolved at */
	u8 class;
	u8 soft;     /* home is soft */
	u8 last_dom; /* domain of its last run, TM_NO_DOM before the first */
	u8 pinned;   /* queued on its CPU's local queue (migration disabled) */
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
	u64 hi_pred; /* ONLINE+SYSTEM use predicted for the period ... */
	u64 pred_dt; /* ... of this length */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct window);
	__uint(max_entries, 1);
} windows SEC(".maps");

static __always_inline struct tm_cpu_stats *my_stats(void)
{
	u32 zero = 0;

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

static __always_inline struct tm_cpu_ctx *cpu_ctx(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &key);
}

static __always_inline struct task_ctx *task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

static __always_inline u32 dom_of(s32 cpu)
{
	u64 c = (u32)cpu;

	/* keep clang from checking one register and indexing with another */
	barrier_var(c);
	if (c >= TM_MAX_CPUS)
		return TM_NO_DOM;
	return cpu_dom[c];
}

/* The CPUs of domain @d (RCU-protected), NULL if none. */
static __always_inline struct bpf_cpumask *dom_cpus(u32 d)
{
	struct dom_ctx *dc;

	if (d >= TM_MAX_DOMS)
		return NULL;
	dc = bpf_map_lookup_elem(&dom_ctxs, &d);
	return dc ? dc->cpus : NULL;
}

static __always_inline struct bpf_cpumask *tmp_mask(void)
{
	u32 key = bpf_get_smp_processor_id();
	struct dom_ctx *dc = bpf_map_lookup_elem(&tmp_masks, &key);

	return dc ? dc->cpus : NULL;
}

/* The first domain of @home, TM_NO_DOM if none. */
static __always_inline u32 home_first(u64 home)
{
	u32 d;

	bpf_for (d, 0, nr_doms) {
		if (home >> d & 1)
			return d;
	}
	return TM_NO_DOM;
}

/*
 * An idle CPU in @doms that @p may use, claimed (its idle bit cleared);
 * -1 if none. @p NULL: any CPU of @doms.
 */
static s32 pick_idle_in(struct task_struct *p, u64 doms)
{
	struct bpf_cpumask *tmp = p ? tmp_mask() : NULL;
	u32 d;

	if (p && !tmp)
		return -1;
	bpf_for (d, 0, nr_doms) {
		struct bpf_cpumask *m;
		s32 cpu;

		if (!(doms >> d & 1))
			continue;
		m = dom_cpus(d);
		if (!m)
			continue;
		if (p && tmp) {
			bpf_cpumask_and(tmp, (const struct cpumask *)m, p->cpus_ptr);
			cpu = scx_bpf_pick_idle_cpu((const struct cpumask *)tmp, 0);
		} else {
			cpu = scx_bpf_pick_idle_cpu((const struct cpumask *)m, 0);
		}
		if (cpu >= 0)
			return cpu;
	}
	return -1;
}

/* Domains without ONLINE homes, where BE should go first. */
static __always_inline u64 doms_off_homes(void)
{
	u64 all = nr_doms >= 64 ? ~0ULL : (1ULL << nr_doms) - 1;

	return all & ~home_doms;
}

/*
 * BE should not start on this CPU of domain @d: the domain hosts ONLINE
 * homes and another domain has an idle CPU (kicked here to take the BE).
 */
static bool be_avoid_here(u32 d)
{
	s32 cpu;

	if (!be_avoid_homes || !nr_doms || !tm_home_has(home_doms, d) || d == TM_NO_DOM ||
	    !home_doms)
		return false;
	cpu = pick_idle_in(NULL, doms_off_homes());
	if (cpu < 0)
		return false;
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	stat_inc(TM_STAT_BE_AVOIDED);
	return true;
}

/* Task weight scaled by the cpu.weight of the task's cgroup. */
static __always_inline u32 eff_weight(struct task_struct *p, struct task_ctx *tctx)
{
	u32 *cw = tctx ? bpf_map_lookup_elem(&cg_weights, &tctx->cgid) : NULL;

	return tm_eff_weight(p->scx.weight, cw ? *cw : TM_WEIGHT_DFL);
}

/* Class of the nearest classified ancestor of @cg, SYSTEM if none. */
static u32 resolve_class(struct cgroup *cg)
{
	int level = BPF_CORE_READ(cg, level);
	u32 i;

	bpf_for (i, 0, TM_MAX_CGROUP_DEPTH) {
		struct cgroup *anc = NULL;
		u32 *cls;
		u64 id;
		int l = level - (int)i;

		if (l < 0)
			break;
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[l]) || !anc)
			break;
		id = BPF_CORE_READ(anc, kn, id);
		cls = bpf_map_lookup_elem(&classes, &id);
		if (cls && *cls < TM_NR_CLASSES)
			return *cls;
	}
	return TM_CLASS_SYSTEM;
}

/*
 * Home of the nearest placed ancestor of @cg, keeping only the domains @p's
 * affinity reaches (a task whose affinity excludes its home runs as
 * unhomed, never an error).
 */
static void resolve_home(struct task_struct *p, struct cgroup *cg, struct task_ctx *tctx)
{
	int level = BPF_CORE_READ(cg, level);
	struct tm_home *h = NULL;
	u64 reach = 0;
	u32 i;

	tctx->home = 0;
	tctx->soft = 0;
	if (!nr_doms)
		return;
	bpf_for (i, 0, TM_MAX_CGROUP_DEPTH) {
		struct cgroup *anc = NULL;
		u64 id;
		int l = level - (int)i;

		if (l < 0)
			break;
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[l]) || !anc)
			break;
		id = BPF_CORE_READ(anc, kn, id);
		h = bpf_map_lookup_elem(&homes, &id);
		if (h)
			break;
	}
	if (!h || !h->doms)
		return;
	bpf_for (i, 0, nr_doms) {
		struct bpf_cpumask *m;

		if (!(h->doms >> i & 1))
			continue;
		m = dom_cpus(i);
		if (m && bpf_cpumask_intersects((const struct cpumask *)m, p->cpus_ptr))
			reach |= 1ULL << i;
	}
	if (!reach) {
		stat_inc(TM_STAT_HOME_UNREACHABLE);
		return;
	}
	tctx->home = reach;
	tctx->soft = h->soft ? 1 : 0;
}

/* The task's class, resolved again when its cgroup or the rules changed. */
static u32 task_class(struct task_struct *p, struct task_ctx *tctx)
{
	struct cgroup *cg;
	u64 cgid;

	if (p->flags & PF_EXITING)
		return TM_CLASS_SYSTEM; /* let it exit: never throttle */
	if (!tctx)
		return TM_CLASS_SYSTEM;
	cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);
	if (!cg)
		return TM_CLASS_SYSTEM;
	cgid = BPF_CORE_READ(cg, kn, id);
	if (cgid != tctx->cgid || tctx->gen != class_gen) {
		tctx->class = resolve_class(cg);
		if (tctx->class == TM_CLASS_ONLINE)
			resolve_home(p, cg, tctx);
		else
			tctx->home = 0;
		tctx->cgid = cgid;
		tctx->gen = class_gen;
		stat_inc(TM_STAT_RECLASSIFY);
	}
	return tctx->class;
}

static __always_inline bool be_budget_left(void)
{
	return be_budget > 0;
}

/* Does this window still owe BE part of its floor? */
static __always_inline bool floor_owed(void)
{
	return floor_on && be_floor_left > 0;
}

/*
 * Claim @cpu if it runs BE and @p may use it: its class goes BE -> NONE, so
 * two wakers never pick the same victim.
 */
static __always_inline bool claim_be_cpu_only(struct task_struct *p, u32 cpu)
{
	struct tm_cpu_ctx *c;

	if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
		return false;
	c = cpu_ctx(cpu);
	if (!c || c->class != TM_CLASS_BE)
		return false;
	if (__sync_val_compare_and_swap(&c->class, TM_CLASS_BE, TM_CLASS_NONE) != TM_CLASS_BE)
		return false;
	stat_inc(TM_STAT_BE_PREEMPTED);
	return true;
}

static __always_inline bool claim_be_cpu(struct task_struct *p, u32 cpu)
{
	if (!claim_be_cpu_only(p, cpu))
		return false;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	return true;
}

/*
 * Claim a CPU running BE among those @p may use within @home (0: any),
 * this CPU first (no IPI needed). The caller kicks it. -1 if none.
 */
static s32 claim_be_in(struct task_struct *p, u64 home)
{
	u32 i, self = bpf_get_smp_processor_id();

	if (tm_home_has(home, dom_of(self)) && claim_be_cpu_only(p, self))
		return self;
	bpf_for (i, 0, nr_cpus) {
		if (i != self && tm_home_has(home, dom_of(i)) && claim_be_cpu_only(p, i))
			return i;
	}
	return -1;
}

s32 BPF_STRUCT_OPS(tidemark_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx(p);
	bool is_idle = false;
	s32 cpu;

	u32 cls = task_class(p, tctx);

	if (cls == TM_CLASS_ONLINE && tctx && tctx->home) {
		/* homed: an idle home CPU, its previous one first */
		if (tm_home_has(tctx->home, dom_of(prev_cpu)) &&
		    bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr) &&
		    scx_bpf_test_and_clear_cpu_idle(prev_cpu))
			cpu = prev_cpu;
		else
			cpu = pick_idle_in(p, tctx->home);
		if (cpu < 0)
			return prev_cpu; /* enqueue finds it a home CPU */
		is_idle = true;
	} else if (cls == TM_CLASS_BE && be_avoid_homes && home_doms && be_budget_left() &&
		   (cpu = pick_idle_in(p, doms_off_homes())) >= 0) {
		/* BE: an idle CPU away from the ONLINE homes first */
		is_idle = true;
	} else {
		cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	}
	if (!is_idle)
		return cpu;
	/* An idle CPU may take a BE task only while BE has budget. */
	if (cls == TM_CLASS_BE && !be_budget_left())
		return cpu;
	if (tctx) {
		tctx->enq_at = bpf_ktime_get_ns();
		tctx->q_home = cls == TM_CLASS_ONLINE ? tctx->home : 0;
	}
	stat_inc(TM_STAT_ENQ_DIRECT);
	tm_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
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

void BPF_STRUCT_OPS(tidemark_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx(p);
	u32 cls = task_class(p, tctx);
	u64 vtime;
	s32 cpu;

	u64 home = 0;

	if (tctx) {
		tctx->enq_at = bpf_ktime_get_ns();
		tctx->pinned = 0;
		/* exiting tasks are SYSTEM whatever their cgroup: no home */
		if (cls == TM_CLASS_ONLINE)
			home = tctx->home;
		tctx->q_home = home;
	}

	if (cls == TM_CLASS_BE) {
		struct tm_be_cap *cap = tctx ? bpf_map_lookup_elem(&be_caps, &tctx->cgid) : NULL;

		stat_inc(TM_STAT_ENQ_BE);
		if (cap && cap->budget_ns <= 0) {
			/* over its cap: back at the next window */
			__sync_fetch_and_add(&cap->capped, 1);
			stat_inc(TM_STAT_BE_CAPPED);
			tm_insert(p, TM_DSQ_BE_PARKED, slice_ns, enq_flags);
			return;
		}
		tm_insert(p, TM_DSQ_BE, slice_ns, enq_flags);
		if (be_budget_left() || floor_owed()) {
			cpu = be_avoid_homes && home_doms ? pick_idle_in(p, doms_off_homes()) : -1;
			if (cpu < 0)
				cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
			if (cpu >= 0) {
				stat_inc(TM_STAT_KICK_IDLE);
				scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			}
		}
		return;
	}

	/*
	 * Per-CPU kthreads and migration-disabled tasks are short and must run
	 * where they are: straight to the local queue (enqueue runs on the
	 * task's own runqueue). User tasks pinned to one CPU go through the
	 * vtime queue like any other, which only their CPU can take them from:
	 * a local queue is served before the shared one, so two pinned hogs
	 * would starve every other ONLINE/SYSTEM task of that CPU.
	 */
	if (((p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1) || migration_disabled(p)) {
		stat_inc(TM_STAT_ENQ_LOCAL_PINNED);
		if (tctx)
			tctx->pinned = 1;
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		cpu = scx_bpf_task_cpu(p);
		if (!claim_be_cpu(p, cpu))
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}

	/*
	 * The CPU it is queued on runs BE: take that CPU over at once, straight
	 * to its local queue with a preemption (no dispatch round trip). Only
	 * BE is passed: had ONLINE/SYSTEM been waiting, the CPU would not run BE.
	 */
	cpu = scx_bpf_task_cpu(p);
	if (tm_home_has(home, dom_of(cpu)) && claim_be_cpu_only(p, cpu)) {
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags | SCX_ENQ_PREEMPT);
		return;
	}

	/* sleepers get bounded credit; a preempted task keeps its place */
	vtime = p->scx.dsq_vtime;
	if (enq_flags & SCX_ENQ_WAKEUP)
		vtime = tm_vtime_wakeup(vtime, vtime_now, slice_ns, eff_weight(p, tctx));
	stat_inc(TM_STAT_ENQ_HI);

	if (home) {
		/*
		 * Homed: an idle home CPU, else a home CPU running BE; queued
		 * on the queue of that CPU's domain, which only the domain's
		 * CPUs serve (soft homes: others too, after home_wait_us).
		 */
		u64 kick = SCX_KICK_IDLE;
		s32 target = pick_idle_in(p, home);
		u32 d;

		if (target < 0) {
			target = claim_be_in(p, home);
			kick = SCX_KICK_PREEMPT;
		}
		d = target >= 0 ? dom_of(target) : dom_of(cpu);
		if (!tm_home_has(home, d) || d == TM_NO_DOM)
			d = home_first(home);
		tm_insert_vtime(p, tm_dom_dsq(d, tctx && tctx->soft), slice_ns, vtime, enq_flags);
		if (target >= 0) {
			if (kick == SCX_KICK_IDLE)
				stat_inc(TM_STAT_KICK_IDLE);
			scx_bpf_kick_cpu(target, kick);
		} else {
			stat_inc(TM_STAT_HI_NO_CPU);
		}
		return;
	}
	tm_insert_vtime(p, TM_DSQ_HI, slice_ns, vtime, enq_flags);
	if (p->nr_cpus_allowed == 1) {
		/* only its own CPU can take it (not running BE: tried above) */
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}

	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0) {
		stat_inc(TM_STAT_KICK_IDLE);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	cpu = claim_be_in(p, 0);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	else
		stat_inc(TM_STAT_HI_NO_CPU);
}

/* How long the oldest queued BE task has waited, 0 if none. */
static u64 be_head_wait(u64 now)
{
	struct task_struct *p;
	u64 wait = 0;

	/* the window timer is not an RCU section of its own */
	bpf_rcu_read_lock();
	bpf_for_each (scx_dsq, p, TM_DSQ_BE, 0) {
		struct task_ctx *tctx = task_ctx(p);

		if (tctx && time_before(tctx->enq_at, now))
			wait = now - tctx->enq_at;
		break;
	}
	bpf_rcu_read_unlock();
	return wait;
}

/*
 * Start a BE grant of @grant ns on this CPU: the slice ends when it is used up,
 * enforced by the CPU's grant timer. Forced grants (floor, bounded wait)
 * do not come out of the budget.
 */
static void be_grant_start(struct task_struct *p, struct tm_cpu_ctx *c, u64 grant, bool forced,
			   u64 now)
{
	struct grant_timer *gt;
	/* running and dispatch both run on the CPU concerned */
	u32 key = bpf_get_smp_processor_id();

	if (!forced) {
		struct tm_be_cap *cap = cpu_cap();

		/* a capped cgroup's run ends where its cap does */
		if (cap && cap->budget_ns < (s64)grant)
			grant = cap->budget_ns > 0 ? cap->budget_ns : 0;
	}
	if (grant < TM_BE_GRANT_MIN_NS)
		grant = TM_BE_GRANT_MIN_NS;
	if (!forced) {
		__sync_fetch_and_sub(&be_budget, grant);
		/* a regular run counts towards the floor as well */
		__sync_fetch_and_sub(&be_floor_left, grant);
	}
	c->grant_left = grant;
	c->forced = forced;
	c->be_until = now + grant;
	p->scx.slice = grant;
	gt = bpf_map_lookup_elem(&grant_timers, &key);
	if (gt)
		bpf_timer_start(&gt->timer, grant, BPF_F_TIMER_CPU_PIN);
}

/* What a regular grant did not use goes back to the budget and floor. */
static __always_inline void be_grant_return(struct tm_cpu_ctx *c)
{
	if (!c->forced && c->grant_left) {
		__sync_fetch_and_add(&be_budget, c->grant_left);
		__sync_fetch_and_add(&be_floor_left, c->grant_left);
	}
	c->grant_left = 0;
}

/* A regular BE grant: a slice, or what is left of the budget. */
static __always_inline u64 be_regular_grant(void)
{
	s64 b = be_budget;

	return b > 0 && (u64)b < slice_ns ? (u64)b : slice_ns;
}

/*
 * Charge what the task on @c ran since it started or was last charged: to
 * its class and, for BE, to its grant; a run past the grant (the timer was
 * late) comes out of the budget. Done at every tick and at stopping.
 */
static __always_inline void charge(struct tm_cpu_ctx *c, u32 cls, u64 now)
{
	u64 ran = time_before(c->started, now) ? now - c->started : 0, in_grant;

	c->started = now;
	c->run_ns[cls] += ran;
	stat_add(TM_STAT_RUN_NS_SYSTEM + cls, ran);
	if (cls != TM_CLASS_BE)
		return;
	cap_charge(ran);
	in_grant = ran < c->grant_left ? ran : c->grant_left;
	c->grant_left -= in_grant;
	if (!c->forced && ran > in_grant) {
		__sync_fetch_and_sub(&be_budget, ran - in_grant);
		__sync_fetch_and_sub(&be_floor_left, ran - in_grant);
	}
}

/*
 * After a class change, tasks already queued as BE may be ONLINE or SYSTEM
 * now: move them to the HI queue at once instead of leaving them throttled.
 * Tasks that became BE are caught at their next tick or enqueue.
 */
static void requeue_reclassified(void)
{
	struct task_struct *p;
	u32 gen = class_gen;

	if (be_scan_gen == gen)
		return;
	be_scan_gen = gen;
	bpf_for_each (scx_dsq, p, TM_DSQ_BE, 0) {
		struct task_ctx *tctx = task_ctx(p);
		u64 vtime;

		if (task_class(p, tctx) == TM_CLASS_BE)
			continue;
		vtime = tm_vtime_wakeup(p->scx.dsq_vtime, vtime_now, slice_ns, eff_weight(p, tctx));
		if (tctx && tctx->class == TM_CLASS_ONLINE && tctx->home) {
			tctx->q_home = tctx->home;
			tm_move_vtime(BPF_FOR_EACH_ITER, p,
				      tm_dom_dsq(home_first(tctx->home), tctx->soft), vtime);
		} else if (tctx) {
			tctx->q_home = 0;
			tm_move_vtime(BPF_FOR_EACH_ITER, p, TM_DSQ_HI, vtime);
		} else
			tm_move_vtime(BPF_FOR_EACH_ITER, p, TM_DSQ_HI, vtime);
	}
}

/* Vtime of the head of @dsq; false if it is empty. */
static __always_inline bool head_vtime(u64 dsq, u64 *vt)
{
	struct task_struct *p;
	bool found = false;

	bpf_for_each (scx_dsq, p, dsq, 0) {
		*vt = p->scx.dsq_vtime;
		found = true;
		break;
	}
	return found;
}

/*
 * The ONLINE/SYSTEM queues a CPU of domain @d serves, in vtime order of
 * their heads: the shared one and the domain's strict and soft queues.
 */
struct hi_queues {
	u64 dsq[3];
	u64 vt[3];
	u32 n;
};

static __always_inline void hi_queues_of(u32 d, struct hi_queues *q)
{
	u64 ids[3] = {TM_DSQ_HI, 0, 0}, vt;
	u32 i, j, nids = 1;

	if (nr_doms && d < nr_doms) {
		ids[1] = tm_dom_dsq(d, false);
		ids[2] = tm_dom_dsq(d, true);
		nids = 3;
	}
	q->n = 0;
	for (i = 0; i < 3; i++) {
		if (i >= nids || !head_vtime(ids[i], &vt))
			continue;
		/* insertion: at most three */
		for (j = q->n; j > 0 && j < 3 && time_before(vt, q->vt[j - 1]); j--) {
			q->vt[j] = q->vt[j - 1];
			q->dsq[j] = q->dsq[j - 1];
		}
		if (j < 3) {
			q->vt[j] = vt;
			q->dsq[j] = ids[i];
		}
		q->n++;
	}
}

/* Charge @prev's vtime for the slice it just used; keep it running when no
 * queued ONLINE/SYSTEM task this CPU serves is further behind. */
static bool keep_hi_prev(struct task_struct *prev, struct task_ctx *ptx, const struct hi_queues *q)
{
	u64 now = bpf_ktime_get_ns(), used;
	bool keep;

	used = time_before(ptx->ran_at, now) ? now - ptx->ran_at : 0;
	ptx->ran_at = now;
	prev->scx.dsq_vtime += tm_vtime_delta(used, eff_weight(prev, ptx));
	keep = !q->n || !time_before(q->vt[0], prev->scx.dsq_vtime);
	if (keep) {
		prev->scx.slice = slice_ns;
		if (time_before(vtime_now, prev->scx.dsq_vtime))
			vtime_now = prev->scx.dsq_vtime;
	}
	return keep;
}

/*
 * A soft-homed task that has waited home_wait_ns for its home may run on
 * this CPU of domain @d: the oldest head of another domain's soft queue.
 */
static bool steal_soft(u32 d)
{
	u64 now = bpf_ktime_get_ns();
	u32 e;

	bpf_for (e, 0, nr_doms) {
		struct task_struct *p;
		u64 dsq = tm_dom_dsq(e, true);
		bool moved = false;

		if (e == d || !scx_bpf_dsq_nr_queued(dsq))
			continue;
		bpf_for_each (scx_dsq, p, dsq, 0) {
			struct task_ctx *tctx = task_ctx(p);

			if (tctx && tctx->enq_at && time_before(tctx->enq_at, now) &&
			    now - tctx->enq_at >= home_wait_ns)
				moved = tm_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL);
			break;
		}
		if (moved)
			return true;
	}
	return false;
}

/*
 * Run the head BE task on a grant out of what the floor still owes this
 * window (not out of the budget). Reserved first, so that other CPUs do not
 * run the same floor.
 */
static bool be_floor_dispatch(struct tm_cpu_ctx *c, u32 stat)
{
	s64 owed = be_floor_left;

	if (owed <= 0)
		return false;
	c->next_grant = (u64)owed < slice_ns ? (u64)owed : slice_ns;
	__sync_fetch_and_sub(&be_floor_left, c->next_grant);
	if (tm_move_to_local(TM_DSQ_BE)) {
		stat_inc(stat);
		return true;
	}
	__sync_fetch_and_add(&be_floor_left, c->next_grant);
	c->next_grant = 0;
	return false;
}

void BPF_STRUCT_OPS(tidemark_dispatch, s32 cpu, struct task_struct *prev)
{
	struct tm_cpu_ctx *c = cpu_ctx(cpu);
	struct hi_queues q;
	u32 d = dom_of(cpu), i;
	bool be_queued;

	if (!c)
		return;
	requeue_reclassified();
	be_queued = scx_bpf_dsq_nr_queued(TM_DSQ_BE) > 0;
	c->next_grant = 0;
	if (be_queued) {
		/* Bounded wait first, then the floor: both beat ONLINE. */
		if (be_head_wait(bpf_ktime_get_ns()) >= max_be_wait_ns) {
			c->next_grant = TM_BE_FORCED_NS < slice_ns ? TM_BE_FORCED_NS : slice_ns;
			if (tm_move_to_local(TM_DSQ_BE)) {
				stat_inc(TM_STAT_BE_FORCED);
				return;
			}
			c->next_grant = 0;
		}
		/*
		 * The floor goes ahead of ONLINE only at the end of a window
		 * in which BE did not get it: earlier, ONLINE keeps priority.
		 */
		if (floor_owed() && scx_bpf_dsq_nr_queued(TM_DSQ_HI) > 0 &&
		    !time_before(bpf_ktime_get_ns() + be_floor_left, window_end) &&
		    be_floor_dispatch(c, TM_STAT_BE_FLOOR))
			return;
	}
	/*
	 * dispatch runs before the expiring task is charged and queued again,
	 * so it would always hand its CPU to a queued task: with more tasks
	 * than CPUs a heavy task could never run two slices in a row, and
	 * cpu.weight 300 vs 100 came out 2:1. Charge it now and keep it when
	 * it is still the furthest behind.
	 */
	hi_queues_of(d, &q);
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		struct task_ctx *ptx = task_ctx(prev);

		/* its cgroup or class may have changed while it ran */
		if (ptx && task_class(prev, ptx) != TM_CLASS_BE && tm_home_has(ptx->home, d) &&
		    keep_hi_prev(prev, ptx, &q)) {
			stat_inc(TM_STAT_KEEP_RUNNING);
			return;
		}
	}
	for (i = 0; i < 3; i++) {
		if (i < q.n && tm_move_to_local(q.dsq[i])) {
			stat_inc(TM_STAT_DISPATCH_HI);
			return;
		}
	}
	if (nr_doms && home_wait_ns < TM_HOME_WAIT_US_MAX * 1000ULL && steal_soft(d)) {
		stat_inc(TM_STAT_DISPATCH_HI);
		return;
	}
	if (be_queued && be_budget_left()) {
		if (be_avoid_here(d))
			return;
		if (tm_move_to_local(TM_DSQ_BE)) {
			stat_inc(TM_STAT_DISPATCH_BE);
			return;
		}
	}
	/*
	 * Budget spent but the floor not yet reached: run it now, on a CPU
	 * nothing else wants, rather than at the end of the window ahead of
	 * an ONLINE task (which preempts this run like any BE run).
	 */
	if (be_queued && !be_budget_left() && floor_owed() && !be_avoid_here(d) &&
	    be_floor_dispatch(c, TM_STAT_BE_FLOOR_IDLE))
		return;
	/* Nothing else may run: the previous task goes on, BE on a new grant. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		struct task_ctx *tctx = task_ctx(prev);

		if (tctx && !tm_home_has(tctx->home, d))
			return; /* re-enqueued (ENQ_LAST) towards its home */
		if (tctx && tctx->class == TM_CLASS_BE) {
			u64 now = bpf_ktime_get_ns();

			if (be_avoid_here(d))
				return;
			if (be_budget_left()) {
				charge(c, TM_CLASS_BE, now);
				be_grant_return(c);
				be_grant_start(prev, c, be_regular_grant(), false, now);
			} else {
				s64 owed = be_floor_left;
				u64 g;

				/* budget spent: it may still run what the floor owes */
				if (!floor_owed() || owed <= 0)
					return;
				g = (u64)owed < slice_ns ? (u64)owed : slice_ns;
				__sync_fetch_and_sub(&be_floor_left, g);
				charge(c, TM_CLASS_BE, now);
				be_grant_return(c);
				be_grant_start(prev, c, g, true, now);
				stat_inc(TM_STAT_BE_FLOOR_IDLE);
			}
		} else {
			/* ONLINE/SYSTEM behind a queued task it cannot be swapped with */
			prev->scx.slice = slice_ns;
		}
		stat_inc(TM_STAT_KEEP_RUNNING);
	}
}

static __always_inline void cg_wait_add(u64 cgid, u32 bucket)
{
	struct tm_cg_wait *w = bpf_map_lookup_elem(&cg_waits, &cgid);

	if (!w) {
		struct tm_cg_wait zero = {};

		bpf_map_update_elem(&cg_waits, &cgid, &zero, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&cg_waits, &cgid);
	}
	if (w && bucket < TM_HIST_BUCKETS)
		__sync_fetch_and_add(&w->hist[bucket], 1);
	else
		stat_inc(TM_STAT_CG_HIST_FULL);
}

void BPF_STRUCT_OPS(tidemark_running, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);
	struct tm_cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));
	struct tm_cpu_stats *s;
	u64 now = bpf_ktime_get_ns();
	u32 cls = tctx ? tctx->class : TM_CLASS_SYSTEM;

	if (cls >= TM_NR_CLASSES)
		cls = TM_CLASS_SYSTEM;
	if (c) {
		c->started = now;
		c->class = cls;
	}
	if (tctx) {
		/* one wait per enqueue: a resumed task did not wait */
		s = my_stats();
		if (s && tctx->enq_at && time_before(tctx->enq_at, now)) {
			u32 b = tm_hist_bucket(now - tctx->enq_at);

			s->wait_hist[cls][b]++;
			if (cls == TM_CLASS_ONLINE)
				cg_wait_add(tctx->cgid, b);
		}
		tctx->enq_at = 0;
		tctx->ran_at = now;
	}
	if (tctx && nr_doms) {
		u32 d = dom_of(scx_bpf_task_cpu(p));

		if (d != TM_NO_DOM) {
			if (tctx->last_dom != TM_NO_DOM && tctx->last_dom != d)
				stat_inc(TM_STAT_XDOM_SYSTEM + cls);
			tctx->last_dom = d;
			if (tctx->q_home && !tm_home_has(tctx->q_home, d))
				stat_inc(tctx->pinned ? TM_STAT_RUN_OUT_PINNED
					 : tctx->soft ? TM_STAT_RUN_OUT_SOFT
						      : TM_STAT_RUN_OUT_HOME);
		}
	}
	if (c && cls == TM_CLASS_BE) {
		u32 me = bpf_get_smp_processor_id();

		if (me < TM_MAX_CPUS)
			cap_cgid[me] = tctx && bpf_map_lookup_elem(&be_caps, &tctx->cgid) ? tctx->cgid : 0;
		if (c->next_grant)
			be_grant_start(p, c, c->next_grant, true, now);
		else
			be_grant_start(p, c, be_regular_grant(), false, now);
		c->next_grant = 0;
	}
	if (cls != TM_CLASS_BE && time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

/*
 * A BE run ended before its grant did (preempted, or it slept): stop the
 * grant timer, or it would interrupt whatever runs next, often the ONLINE
 * task that preempted BE, for nothing.
 */
static __always_inline void grant_timer_cancel(void)
{
	u32 key = bpf_get_smp_processor_id();
	struct grant_timer *gt = bpf_map_lookup_elem(&grant_timers, &key);

	/* pushed far out rather than cancelled: the next BE run restarts it */
	if (gt)
		bpf_timer_start(&gt->timer, 1000000000ULL, BPF_F_TIMER_CPU_PIN);
}

void BPF_STRUCT_OPS(tidemark_stopping, struct task_struct *p, bool runnable)
{
	struct tm_cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));
	struct task_ctx *tctx = task_ctx(p);
	u32 cls = tctx ? tctx->class : TM_CLASS_SYSTEM;
	u64 now = bpf_ktime_get_ns(), used = 0;

	if (cls >= TM_NR_CLASSES)
		cls = TM_CLASS_SYSTEM;
	if (tctx && time_before(tctx->ran_at, now))
		used = now - tctx->ran_at;
	if (c) {
		charge(c, cls, now);
		if (cls == TM_CLASS_BE) {
			u32 me = bpf_get_smp_processor_id();

			be_grant_return(c);
			grant_timer_cancel();
			if (me < TM_MAX_CPUS)
				cap_cgid[me] = 0;
		}
		c->class = TM_CLASS_NONE;
	}
	if (cls != TM_CLASS_BE)
		p->scx.dsq_vtime += tm_vtime_delta(used, eff_weight(p, tctx));
}

void BPF_STRUCT_OPS(tidemark_tick, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);
	struct tm_cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));

	if (!tctx)
		return;
	if (c && tctx->class < TM_NR_CLASSES)
		charge(c, tctx->class, bpf_ktime_get_ns());
	if (tctx->class == TM_CLASS_BE) {
		struct tm_be_cap *cap = cpu_cap();

		if (cap && cap->budget_ns <= 0) {
			__sync_fetch_and_add(&cap->capped, 1);
			stat_inc(TM_STAT_BE_CAPPED);
			p->scx.slice = 0;
			return;
		}
	}
	/* Reclassify running tasks too: a class change applies at once. */
	if (tctx->gen != class_gen || BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id) != tctx->cgid) {
		p->scx.slice = 0;
		return;
	}
}

/* A BE grant ran out: end the slice now rather than at the next tick. */
static int grant_timer_fn(void *map, int *key, struct grant_timer *gt)
{
	struct tm_cpu_ctx *c = cpu_ctx(*key);

	if (c && c->class == TM_CLASS_BE &&
	    !time_before(bpf_ktime_get_ns() + TM_BE_GRANT_SLACK_NS, c->be_until)) {
		stat_inc(TM_STAT_BE_THROTTLED);
		scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
	}
	return 0;
}

void BPF_STRUCT_OPS(tidemark_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = vtime_now;
}

s32 BPF_STRUCT_OPS(tidemark_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->gen = (u32)-1; /* resolve at first enqueue */
	tctx->class = TM_CLASS_SYSTEM;
	tctx->last_dom = TM_NO_DOM;
	return 0;
}

/* New affinity: the reachable part of its home is worked out again. */
void BPF_STRUCT_OPS(tidemark_set_cpumask, struct task_struct *p, const struct cpumask *cpumask)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
		tctx->gen = (u32)-1;
}

/*
 * A soft-homed task that waited home_wait_ns may run anywhere: wake an idle
 * CPU for it (a busy one finds it at its next dispatch).
 */
static void kick_for_soft(u64 now)
{
	u32 d;

	bpf_rcu_read_lock();
	bpf_for (d, 0, nr_doms) {
		struct task_struct *p;
		u64 dsq = tm_dom_dsq(d, true);

		if (!scx_bpf_dsq_nr_queued(dsq))
			continue;
		bpf_for_each (scx_dsq, p, dsq, 0) {
			struct task_ctx *tctx = task_ctx(p);
			s32 cpu;

			if (tctx && tctx->enq_at && time_before(tctx->enq_at, now) &&
			    now - tctx->enq_at >= home_wait_ns) {
				cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
				if (cpu >= 0)
					scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			}
			break;
		}
	}
	bpf_rcu_read_unlock();
}

/*
 * Every window: measure what each class used, set the BE budget for the
 * next window, and wake idle CPUs when queued BE may run again.
 */
/* A new window for each capped cgroup (bpf_for_each_map_elem callback). */
static long cap_refill(struct bpf_map *map, u64 *id, struct tm_be_cap *cap, u64 *dt)
{
	cap->budget_ns = tm_be_cap_refill(cap->budget_ns, cap->cap_mcpu, *dt);
	caps_active = true;
	return 0;
}

/* Parked BE tasks whose cgroup has budget again (or lost its cap) go back
 * to the tail of the BE queue. */
static void unpark(void)
{
	struct task_struct *p;

	bpf_rcu_read_lock();
	bpf_for_each (scx_dsq, p, TM_DSQ_BE_PARKED, 0) {
		struct task_ctx *tctx = task_ctx(p);
		struct tm_be_cap *cap = tctx ? bpf_map_lookup_elem(&be_caps, &tctx->cgid) : NULL;

		if (!cap || cap->budget_ns > 0)
			tm_move(BPF_FOR_EACH_ITER, p, TM_DSQ_BE);
	}
	bpf_rcu_read_unlock();
}

static int window_fn(void *map, int *key, struct window *w)
{
	struct tm_tunables *t;
	u64 now = bpf_ktime_get_ns(), used[TM_NR_CLASSES] = {}, hi, allow, cap, dt, pred;
	u32 zero = 0, i, kicks;
	s64 left;

	t = bpf_map_lookup_elem(&tunables, &zero);
	if (!t)
		return 0;
	class_gen = t->class_gen;
	max_be_wait_ns = (u64)t->max_be_wait_ms * 1000000;

	bpf_for (i, 0, nr_cpus) {
		struct tm_cpu_ctx *c = cpu_ctx(i);
		u32 k;

		if (!c)
			continue;
		for (k = 0; k < TM_NR_CLASSES; k++)
			used[k] += c->run_ns[k];
		/* include the running task's share so far (racy, bounded) */
		k = c->class;
		if (k < TM_NR_CLASSES && time_before(c->started, now))
			used[k] += now - c->started;
	}
	hi = 0;
	for (i = 0; i < TM_NR_CLASSES; i++) {
		u64 d = used[i] > w->last_run_ns[i] ? used[i] - w->last_run_ns[i] : 0;

		if (i != TM_CLASS_BE)
			hi += d;
		w->last_run_ns[i] = used[i];
	}
	dt = w->last_at && time_before(w->last_at, now) ? now - w->last_at : window_ns;
	w->last_at = now;
	/*
	 * Timers fire late under load: size the next budget on the period that
	 * really elapsed (bounded, so a long stall gives no burst), or a late
	 * timer would cost BE its share.
	 */
	if (dt > 4 * window_ns)
		dt = 4 * window_ns;
	/* The running share is counted again next time: cap at the capacity. */
	cap = dt * cap_cpus;
	if (hi > cap)
		hi = cap;

	be_floor_ns = (u64)t->be_floor_mcpu * dt / 1000;
	be_floor_left = tm_be_floor_owed(cap, t->suppress_pct, hi, be_floor_ns);
	floor_on = be_floor_left > 0;
	allow = tm_be_allowance(cap, t->suppress_pct, hi, be_floor_ns);
	left = be_budget;
	if (left <= 0 && scx_bpf_dsq_nr_queued(TM_DSQ_BE))
		stat_add(TM_STAT_BE_THROTTLED_NS, dt);
	/* the prediction was for a period of pred_dt: rescale to this one */
	pred = w->pred_dt ? w->hi_pred * dt / w->pred_dt : hi;
	be_budget =
		tm_be_budget_next(left, (s64)hi - (s64)pred, allow, cap / 100 * t->suppress_pct);
	/* ONLINE+SYSTEM of the last period predicts the next one */
	w->hi_pred = hi;
	w->pred_dt = dt;

	if (scx_bpf_dsq_nr_queued(TM_DSQ_BE_PARKED) || caps_active) {
		caps_active = false;
		bpf_for_each_map_elem(&be_caps, cap_refill, &dt, 0);
		unpark();
	}

	kicks = scx_bpf_dsq_nr_queued(TM_DSQ_BE);
	if (kicks && (be_budget > 0 || floor_owed() || be_head_wait(now) >= max_be_wait_ns)) {
		bpf_for (i, 0, nr_cpus) {
			if (!kicks)
				break;
			scx_bpf_kick_cpu(i, SCX_KICK_IDLE);
			kicks--;
		}
	}
	if (nr_doms && home_wait_ns < TM_HOME_WAIT_US_MAX * 1000ULL)
		kick_for_soft(now);
	window_end = now + window_ns;
	bpf_timer_start(&w->timer, window_ns, 0);
	return 0;
}

/* Store a fresh empty cpumask in @dc. */
static s32 new_mask(struct dom_ctx *dc)
{
	struct bpf_cpumask *m = bpf_cpumask_create(), *old;

	if (!m)
		return -ENOMEM;
	old = bpf_kptr_xchg(&dc->cpus, m);
	if (old)
		bpf_cpumask_release(old);
	return 0;
}

/* Domain queues and CPU masks, and each CPU's scratch mask. */
static s32 init_domains(void)
{
	u32 i;
	s32 ret;

	bpf_for (i, 0, nr_cpus) {
		struct dom_ctx *dc = bpf_map_lookup_elem(&tmp_masks, &i);

		if (!dc)
			return -ENOENT;
		ret = new_mask(dc);
		if (ret)
			return ret;
	}
	bpf_for (i, 0, nr_doms) {
		struct dom_ctx *dc = bpf_map_lookup_elem(&dom_ctxs, &i);

		if (!dc)
			return -ENOENT;
		ret = new_mask(dc);
		if (ret)
			return ret;
		ret = scx_bpf_create_dsq(tm_dom_dsq(i, false), -1);
		if (!ret)
			ret = scx_bpf_create_dsq(tm_dom_dsq(i, true), -1);
		if (ret)
			return ret;
	}
	bpf_for (i, 0, nr_cpus) {
		struct bpf_cpumask *m;

		bpf_rcu_read_lock();
		m = dom_cpus(dom_of(i));
		if (m)
			bpf_cpumask_set_cpu(i, m);
		bpf_rcu_read_unlock();
	}
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(tidemark_init)
{
	struct tm_abi *abi_v;
	struct window *w;
	u32 zero = 0;
	s32 ret;

	ret = scx_bpf_create_dsq(TM_DSQ_HI, -1);
	if (ret)
		return ret;
	ret = scx_bpf_create_dsq(TM_DSQ_BE_PARKED, -1);
	if (ret)
		return ret;
	ret = scx_bpf_create_dsq(TM_DSQ_BE, -1);
	if (ret)
		return ret;
	ret = init_domains();
	if (ret)
		return ret;
	abi_v = bpf_map_lookup_elem(&abi, &zero);
	if (!abi_v) {
		scx_bpf_error("abi map lookup failed");
		return -ENOENT;
	}
	abi_v->version = TM_ABI_VERSION;
	abi_v->nr_stats = TM_NR_STATS;
	abi_v->cap_cpus = cap_cpus;
	bpf_for (zero, 0, nr_cpus) {
		struct tm_cpu_ctx *c = cpu_ctx(zero);
		struct grant_timer *gt = bpf_map_lookup_elem(&grant_timers, &zero);

		if (c)
			c->class = TM_CLASS_NONE;
		if (!gt)
			return -ENOENT;
		bpf_timer_init(&gt->timer, &grant_timers, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&gt->timer, grant_timer_fn);
	}
	zero = 0;
	w = bpf_map_lookup_elem(&windows, &zero);
	if (!w)
		return -ENOENT;
	bpf_timer_init(&w->timer, &windows, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&w->timer, window_fn);
	return bpf_timer_start(&w->timer, window_ns, 0);
}

s32 BPF_STRUCT_OPS(tidemark_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	u64 id = cgrp->kn->id;
	u32 w = args->weight;

	/* a full map only costs this cgroup its weight: never fail creation */
	bpf_map_update_elem(&cg_weights, &id, &w, BPF_ANY);
	return 0;
}

void BPF_STRUCT_OPS(tidemark_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	u64 id = cgrp->kn->id;

	bpf_map_update_elem(&cg_weights, &id, &weight, BPF_ANY);
}

void BPF_STRUCT_OPS(tidemark_cgroup_exit, struct cgroup *cgrp)
{
	u64 id = cgrp->kn->id;

	bpf_map_delete_elem(&cg_weights, &id);
}

void BPF_STRUCT_OPS(tidemark_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

void BPF_STRUCT_OPS(tidemark_dump, struct scx_dump_ctx *dctx)
{
	scx_bpf_dump("tidemark: be_budget=%lld be_floor=%llu be_floor_left=%lld class_gen=%u "
		     "home_doms=%llx",
		     be_budget, be_floor_ns, be_floor_left, class_gen, home_doms);
	scx_bpf_dump(" hi_queued=%d be_queued=%d be_head_wait_ns=%llu\n",
		     scx_bpf_dsq_nr_queued(TM_DSQ_HI), scx_bpf_dsq_nr_queued(TM_DSQ_BE),
		     be_head_wait(bpf_ktime_get_ns()));
}

void BPF_STRUCT_OPS(tidemark_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
		scx_bpf_dump("tidemark: class=%u cgid=%llu enq_at=%llu home=%llx", tctx->class,
			     tctx->cgid, tctx->enq_at, tctx->home);
}

SCX_OPS_DEFINE(tidemark_ops, .select_cpu = (void *)tidemark_select_cpu,
	       .enqueue = (void *)tidemark_enqueue, .dispatch = (void *)tidemark_dispatch,
	       .running = (void *)tidemark_running, .stopping = (void *)tidemark_stopping,
	       .tick = (void *)tidemark_tick, .enable = (void *)tidemark_enable,
	       .set_cpumask = (void *)tidemark_set_cpumask, .init_task = (void *)tidemark_init_task,
	       .cgroup_init = (void *)tidemark_cgroup_init,
	       .cgroup_exit = (void *)tidemark_cgroup_exit,
	       .cgroup_set_weight = (void *)tidemark_cgroup_set_weight,
	       .init = (void *)tidemark_init, .exit = (void *)tidemark_exit,
	       .dump = (void *)tidemark_dump, .dump_task = (void *)tidemark_dump_task,
	       .name = "tidemark");
