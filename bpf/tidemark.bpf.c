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
 *   sched_ext watchdog never fires. When BE has not had its floor by the
 *   end of a window, it also runs ahead of ONLINE for what it is owed.
 * - Per-CPU kthreads and migration-disabled tasks go to their CPU's local
 *   queue; user tasks pinned to one CPU use the shared queues, which only
 *   their CPU takes them from (BE pinned tasks stay throttled). Exiting
 *   tasks are never throttled. After a class change, queued BE tasks that
 *   are no longer BE move to the ONLINE/SYSTEM queue at the next dispatch.
 */
#include <scx/common.bpf.h>
#include "tidemark.h"
#include "tidemark_compat.bpf.h"

char _license[] SEC("license") = "GPL";

/* Set by the loader before load; see scx_tidemark --help. */
const volatile u64 slice_ns = TM_SLICE_US_DFL * 1000ULL;
const volatile u64 window_ns = TM_WINDOW_US_DFL * 1000ULL;
const volatile u32 nr_cpus = 1;

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
/* When the current window ends (the window timer's next expiry). */
static u64 window_end;
static u64 max_be_wait_ns = TM_MAX_BE_WAIT_MS_DFL * 1000000ULL;
static u32 class_gen;
/* class_gen the BE queue was last checked at */
static u32 be_scan_gen;

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

struct task_ctx {
	u64 cgid;	/* cgroup the class was resolved for */
	u64 enq_at;	/* when it was queued, for wait time and bounded wait */
	u64 ran_at;	/* when it started running or was last charged vtime */
	u32 gen;	/* class_gen the class was resolved at */
	u8 class;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

/* What each CPU runs now, read by other CPUs to find BE to preempt. */
struct cpu_ctx {
	u64 started;	/* when the current task started running or was charged */
	u64 run_ns[TM_NR_CLASSES];	/* cumulative runtime per class */
	u64 grant_left;	/* BE: reserved runtime not yet charged, ns */
	u64 be_until;	/* BE: when the grant runs out */
	u64 next_grant;	/* BE run forced by dispatch (floor, bounded wait), ns */
	u32 class;	/* TM_CLASS_NONE when none of ours runs */
	u8 forced;	/* BE: this run is beyond the budget (floor, bounded wait) */
	u8 pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct cpu_ctx);
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
	u64 hi_pred;	/* ONLINE+SYSTEM use predicted for the period ... */
	u64 pred_dt;	/* ... of this length */
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

static __always_inline struct cpu_ctx *cpu_ctx(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &key);
}

static __always_inline struct task_ctx *task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
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

	bpf_for(i, 0, TM_MAX_CGROUP_DEPTH)
	{
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

/* The task's class, resolved again when its cgroup or the rules changed. */
static u32 task_class(struct task_struct *p, struct task_ctx *tctx)
{
	struct cgroup *cg;
	u64 cgid;

	if (p->flags & PF_EXITING)
		return TM_CLASS_SYSTEM;	/* let it exit: never throttle */
	if (!tctx)
		return TM_CLASS_SYSTEM;
	cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);
	if (!cg)
		return TM_CLASS_SYSTEM;
	cgid = BPF_CORE_READ(cg, kn, id);
	if (cgid != tctx->cgid || tctx->gen != class_gen) {
		tctx->class = resolve_class(cg);
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

/*
 * Claim @cpu if it runs BE and @p may use it: its class goes BE -> NONE, so
 * two wakers never pick the same victim.
 */
static __always_inline bool claim_be_cpu_only(struct task_struct *p, u32 cpu)
{
	struct cpu_ctx *c;

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

/* Preempt a CPU running BE among those @p may use. */
static bool preempt_be_for(struct task_struct *p)
{
	u32 i, self = bpf_get_smp_processor_id();

	/* this CPU first: no IPI needed */
	if (claim_be_cpu(p, self))
		return true;
	bpf_for(i, 0, nr_cpus)
	{
		if (i != self && claim_be_cpu(p, i))
			return true;
	}
	return false;
}

s32 BPF_STRUCT_OPS(tidemark_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx(p);
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (!is_idle)
		return cpu;
	/* An idle CPU may take a BE task only while BE has budget. */
	if (task_class(p, tctx) == TM_CLASS_BE && !be_budget_left())
		return cpu;
	if (tctx)
		tctx->enq_at = bpf_ktime_get_ns();
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

	if (tctx)
		tctx->enq_at = bpf_ktime_get_ns();

	if (cls == TM_CLASS_BE) {
		stat_inc(TM_STAT_ENQ_BE);
		tm_insert(p, TM_DSQ_BE, slice_ns, enq_flags);
		if (be_budget_left()) {
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
	if (claim_be_cpu_only(p, cpu)) {
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags | SCX_ENQ_PREEMPT);
		return;
	}

	/* sleepers get bounded credit; a preempted task keeps its place */
	vtime = p->scx.dsq_vtime;
	if (enq_flags & SCX_ENQ_WAKEUP)
		vtime = tm_vtime_wakeup(vtime, vtime_now, slice_ns, eff_weight(p, tctx));
	stat_inc(TM_STAT_ENQ_HI);
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
	if (!preempt_be_for(p))
		stat_inc(TM_STAT_HI_NO_CPU);
}

/* How long the oldest queued BE task has waited, 0 if none. */
static u64 be_head_wait(u64 now)
{
	struct task_struct *p;
	u64 wait = 0;

	/* the window timer is not an RCU section of its own */
	bpf_rcu_read_lock();
	bpf_for_each(scx_dsq, p, TM_DSQ_BE, 0)
	{
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
static void be_grant_start(struct task_struct *p, struct cpu_ctx *c, u64 grant, bool forced,
			   u64 now)
{
	struct grant_timer *gt;
	/* running and dispatch both run on the CPU concerned */
	u32 key = bpf_get_smp_processor_id();

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
static __always_inline void be_grant_return(struct cpu_ctx *c)
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
static __always_inline void charge(struct cpu_ctx *c, u32 cls, u64 now)
{
	u64 ran = time_before(c->started, now) ? now - c->started : 0, in_grant;

	c->started = now;
	c->run_ns[cls] += ran;
	stat_add(TM_STAT_RUN_NS_SYSTEM + cls, ran);
	if (cls != TM_CLASS_BE)
		return;
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
	bpf_for_each(scx_dsq, p, TM_DSQ_BE, 0)
	{
		struct task_ctx *tctx = task_ctx(p);
		u64 vtime;

		if (task_class(p, tctx) == TM_CLASS_BE)
			continue;
		vtime = tm_vtime_wakeup(p->scx.dsq_vtime, vtime_now, slice_ns, eff_weight(p, tctx));
		tm_move_vtime(BPF_FOR_EACH_ITER, p, TM_DSQ_HI, vtime);
	}
}

/* Charge @prev's vtime for the slice it just used; keep it running when no
 * queued ONLINE/SYSTEM task is further behind. */
static bool keep_hi_prev(struct task_struct *prev, struct task_ctx *ptx)
{
	struct task_struct *p;
	u64 now = bpf_ktime_get_ns(), used;
	bool keep = true;

	used = time_before(ptx->ran_at, now) ? now - ptx->ran_at : 0;
	ptx->ran_at = now;
	prev->scx.dsq_vtime += tm_vtime_delta(used, eff_weight(prev, ptx));
	bpf_for_each(scx_dsq, p, TM_DSQ_HI, 0)
	{
		keep = !time_before(p->scx.dsq_vtime, prev->scx.dsq_vtime);
		break;
	}
	if (keep) {
		prev->scx.slice = slice_ns;
		if (time_before(vtime_now, prev->scx.dsq_vtime))
			vtime_now = prev->scx.dsq_vtime;
	}
	return keep;
}

void BPF_STRUCT_OPS(tidemark_dispatch, s32 cpu, struct task_struct *prev)
{
	struct cpu_ctx *c = cpu_ctx(cpu);
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
		}
		/*
		 * The floor goes ahead of ONLINE only at the end of a window
		 * in which BE did not get it: earlier, ONLINE keeps priority.
		 */
		if (be_floor_left > 0 && scx_bpf_dsq_nr_queued(TM_DSQ_HI) > 0 &&
		    !time_before(bpf_ktime_get_ns() + be_floor_left, window_end)) {
			s64 owed = be_floor_left;

			/* reserve it, so other CPUs do not run the same floor */
			c->next_grant = (u64)owed < slice_ns ? (u64)owed : slice_ns;
			__sync_fetch_and_sub(&be_floor_left, c->next_grant);
			if (tm_move_to_local(TM_DSQ_BE)) {
				stat_inc(TM_STAT_BE_FLOOR);
				return;
			}
			__sync_fetch_and_add(&be_floor_left, c->next_grant);
		}
		c->next_grant = 0;
	}
	/*
	 * dispatch runs before the expiring task is charged and queued again,
	 * so it would always hand its CPU to a queued task: with more tasks
	 * than CPUs a heavy task could never run two slices in a row, and
	 * cpu.weight 300 vs 100 came out 2:1. Charge it now and keep it when
	 * it is still the furthest behind.
	 */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		struct task_ctx *ptx = task_ctx(prev);

		if (ptx && ptx->class != TM_CLASS_BE && keep_hi_prev(prev, ptx)) {
			stat_inc(TM_STAT_KEEP_RUNNING);
			return;
		}
	}
	if (tm_move_to_local(TM_DSQ_HI)) {
		stat_inc(TM_STAT_DISPATCH_HI);
		return;
	}
	if (be_queued && be_budget_left() && tm_move_to_local(TM_DSQ_BE)) {
		stat_inc(TM_STAT_DISPATCH_BE);
		return;
	}
	/* Nothing else may run: the previous task goes on, BE on a new grant. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		struct task_ctx *tctx = task_ctx(prev);

		if (tctx && tctx->class == TM_CLASS_BE) {
			u64 now = bpf_ktime_get_ns();

			if (!be_budget_left())
				return;
			charge(c, TM_CLASS_BE, now);
			be_grant_return(c);
			be_grant_start(prev, c, be_regular_grant(), false, now);
		} else {
			/* ONLINE/SYSTEM were kept above; this is a task without context */
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
	struct cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));
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
	if (c && cls == TM_CLASS_BE) {
		if (c->next_grant)
			be_grant_start(p, c, c->next_grant, true, now);
		else
			be_grant_start(p, c, be_regular_grant(), false, now);
		c->next_grant = 0;
	}
	if (cls != TM_CLASS_BE && time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(tidemark_stopping, struct task_struct *p, bool runnable)
{
	struct cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));
	struct task_ctx *tctx = task_ctx(p);
	u32 cls = tctx ? tctx->class : TM_CLASS_SYSTEM;
	u64 now = bpf_ktime_get_ns(), used = 0;

	if (cls >= TM_NR_CLASSES)
		cls = TM_CLASS_SYSTEM;
	if (tctx && time_before(tctx->ran_at, now))
		used = now - tctx->ran_at;
	if (c) {
		charge(c, cls, now);
		if (cls == TM_CLASS_BE)
			be_grant_return(c);
		c->class = TM_CLASS_NONE;
	}
	if (cls != TM_CLASS_BE)
		p->scx.dsq_vtime += tm_vtime_delta(used, eff_weight(p, tctx));
}

void BPF_STRUCT_OPS(tidemark_tick, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);
	struct cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));

	if (!tctx)
		return;
	if (c && tctx->class < TM_NR_CLASSES)
		charge(c, tctx->class, bpf_ktime_get_ns());
	/* Reclassify running tasks too: a class change applies at once. */
	if (tctx->gen != class_gen || BPF_CORE_READ(p, cgroups, dfl_cgrp, kn, id) != tctx->cgid) {
		p->scx.slice = 0;
		return;
	}
}

/* A BE grant ran out: end the slice now rather than at the next tick. */
static int grant_timer_fn(void *map, int *key, struct grant_timer *gt)
{
	struct cpu_ctx *c = cpu_ctx(*key);

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
	tctx->gen = (u32)-1;	/* resolve at first enqueue */
	tctx->class = TM_CLASS_SYSTEM;
	return 0;
}

/*
 * Every window: measure what each class used, set the BE budget for the
 * next window, and wake idle CPUs when queued BE may run again.
 */
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

	bpf_for(i, 0, nr_cpus)
	{
		struct cpu_ctx *c = cpu_ctx(i);
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
	cap = dt * nr_cpus;
	if (hi > cap)
		hi = cap;

	be_floor_ns = (u64)t->be_floor_mcpu * dt / 1000;
	be_floor_left = be_floor_ns;
	allow = tm_be_allowance(cap, t->suppress_pct, hi, be_floor_ns);
	left = be_budget;
	if (left <= 0 && scx_bpf_dsq_nr_queued(TM_DSQ_BE))
		stat_add(TM_STAT_BE_THROTTLED_NS, dt);
	/* the prediction was for a period of pred_dt: rescale to this one */
	pred = w->pred_dt ? w->hi_pred * dt / w->pred_dt : hi;
	be_budget = tm_be_budget_next(left, (s64)hi - (s64)pred, allow, cap / 100 * t->suppress_pct);
	/* ONLINE+SYSTEM of the last period predicts the next one */
	w->hi_pred = hi;
	w->pred_dt = dt;

	kicks = scx_bpf_dsq_nr_queued(TM_DSQ_BE);
	if (kicks && (be_budget > 0 || be_head_wait(now) >= max_be_wait_ns)) {
		bpf_for(i, 0, nr_cpus)
		{
			if (!kicks)
				break;
			scx_bpf_kick_cpu(i, SCX_KICK_IDLE);
			kicks--;
		}
	}
	window_end = now + window_ns;
	bpf_timer_start(&w->timer, window_ns, 0);
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(tidemark_init)
{
	struct window *w;
	u32 zero = 0;
	s32 ret;

	ret = scx_bpf_create_dsq(TM_DSQ_HI, -1);
	if (ret)
		return ret;
	ret = scx_bpf_create_dsq(TM_DSQ_BE, -1);
	if (ret)
		return ret;
	bpf_for(zero, 0, nr_cpus)
	{
		struct cpu_ctx *c = cpu_ctx(zero);
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
	scx_bpf_dump("tidemark: be_budget=%lld be_floor=%llu be_floor_left=%lld class_gen=%u",
		     be_budget, be_floor_ns, be_floor_left, class_gen);
	scx_bpf_dump(" hi_queued=%d be_queued=%d be_head_wait_ns=%llu\n",
		     scx_bpf_dsq_nr_queued(TM_DSQ_HI), scx_bpf_dsq_nr_queued(TM_DSQ_BE),
		     be_head_wait(bpf_ktime_get_ns()));
}

void BPF_STRUCT_OPS(tidemark_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
		scx_bpf_dump("tidemark: class=%u cgid=%llu enq_at=%llu", tctx->class, tctx->cgid,
			     tctx->enq_at);
}

SCX_OPS_DEFINE(tidemark_ops,
	       .select_cpu	= (void *)tidemark_select_cpu,
	       .enqueue		= (void *)tidemark_enqueue,
	       .dispatch	= (void *)tidemark_dispatch,
	       .running		= (void *)tidemark_running,
	       .stopping	= (void *)tidemark_stopping,
	       .tick		= (void *)tidemark_tick,
	       .enable		= (void *)tidemark_enable,
	       .init_task	= (void *)tidemark_init_task,
	       .cgroup_init	= (void *)tidemark_cgroup_init,
	       .cgroup_exit	= (void *)tidemark_cgroup_exit,
	       .cgroup_set_weight = (void *)tidemark_cgroup_set_weight,
	       .init		= (void *)tidemark_init,
	       .exit		= (void *)tidemark_exit,
	       .dump		= (void *)tidemark_dump,
	       .dump_task	= (void *)tidemark_dump_task,
	       .name		= "tidemark");
