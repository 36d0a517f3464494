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
 *   hierarchical). A sleeper wakes at most a slice ahead of the least
 *   advanced waiting task and two behind the most advanced running one. A
 *   waking ONLINE/SYSTEM task takes an idle CPU (first in its local queue,
 *   preempting BE that started there meanwhile);
 *   if none is idle, a CPU running BE is taken over at once: the one it is
 *   queued on (local insert with SCX_ENQ_PREEMPT), else the local CPU, else
 *   any (kick with SCX_KICK_PREEMPT). A CPU running ONLINE/SYSTEM is
 *   preempted only by a waker further behind it in vtime than wake_gran_us
 *   (at the wakeup; a waker of another cgroup also at the runner's next
 *   tick once it has run that long); otherwise a waker waits for the end
 *   of a slice (slice_us). A wakee only one CPU may run goes straight to
 *   that CPU's local queue when nothing further behind waits there (not
 *   while BE's bounded wait or floor is due: dispatch serves those).
 * - BE waits in a FIFO queue and runs only within its budget: per window
 *   (window_us), BE may use capacity x suppress_pct minus what ONLINE and
 *   SYSTEM used in the previous window, but at least be_floor_mcpu. Each BE
 *   run reserves a grant (a slice, at most a window, or the budget left)
 *   when it starts and returns the unused part when it stops; a per-CPU
 *   timer ends the grant on time (the tick alone is 4 ms at HZ=250). What
 *   the last window went over the line (BE past its grants, ONLINE above
 *   its prediction or the line itself) is paid back from the next budget,
 *   and BE held back is credited what the node left under it, so node busy
 *   holds at the line.
 * - Bounded wait: when the oldest queued BE task has waited max_be_wait_ms,
 *   it runs ahead of everything (a 1 ms grant), so BE never starves and the
 *   sched_ext watchdog never fires. The floor is owed only in windows where
 *   ONLINE+SYSTEM left BE less than it under the line and BE's recent rate
 *   (an average over about 8 windows) is below it; it runs first on CPUs
 *   nothing else wants, and what is still owed at the end of a window runs
 *   ahead of ONLINE: the window timer preempts CPUs running ONLINE or
 *   SYSTEM a grant before the window ends (budget.bpf.h, floor_deadline).
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
 * - SMT (smt_expel): while a hardware thread runs ONLINE, regular BE runs
 *   do not run on its siblings (preempted when ONLINE starts, not started
 *   meanwhile); idle picks take a whole idle core first (smt.bpf.h).
 * - CPU limits: every cgroup's cpu.max (and cpu.max.burst), and caps set
 *   by tidemarkd or tidemarkctl, hold for every class as CFS holds cpu.max:
 *   per period a limited cgroup and its descendants run at most its runtime,
 *   reserved in slices as tasks start running; a task whose limited ancestor
 *   ran out waits in that ancestor's DSQ until its timer refills it
 *   (bandwidth.bpf.h).
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

/* The parts, by concern; each uses only the ones before it and declares
 * nothing it does not define (tests/host/layering.sh). */
#include "state.bpf.h"
#include "trace.bpf.h"
#include "smt.bpf.h"
#include "domains.bpf.h"
#include "classes.bpf.h"
#include "claim.bpf.h"
#include "bandwidth.bpf.h"
#include "budget.bpf.h"
#include "tunables.bpf.h"

/*
 * A soft-homed task that has waited home_wait_ns for its home may run on
 * this CPU of domain @d: the oldest head of another domain's soft queue,
 * checked against its CPU limits too (bandwidth.bpf.h). Global: its loops
 * are verified once, not for each way dispatch reaches it.
 */
__noinline int steal_soft(u32 d)
{
	u64 now = bpf_ktime_get_ns();
	u32 e;

	bpf_for (e, 0, nr_doms) {
		struct task_struct *p;
		u64 dsq = tm_dom_dsq(e, true);
		bool moved = false;

		if (e == d || !domq_has(domq_soft, e) || !scx_bpf_dsq_nr_queued(dsq))
			continue;
		bpf_for_each (scx_dsq, p, dsq, 0) {
			struct task_ctx *tctx = task_ctx(p);
			u64 thr;

			if (bw_on() && tctx && (thr = bw_held(p, now))) {
				bw_note_held(tctx, thr, now);
				tm_move(BPF_FOR_EACH_ITER, p, TM_DSQ_BW_BASE | thr);
				continue;
			}
			if (soft_wait_over(tctx, now))
				moved = tm_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL);
			break;
		}
		if (moved)
			return true;
	}
	return false;
}

s32 BPF_STRUCT_OPS(tidemark_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	/* read once: each walk of a pointer read from a task costs the
	 * verifier BTF name scans (see tidemark_enqueue) */
	const struct cpumask *allowed = p->cpus_ptr;
	struct task_ctx *tctx = task_ctx(p);
	bool is_idle = false;
	s32 cpu;

	u32 cls = task_class(p, tctx);

	if (cls == TM_CLASS_ONLINE && tctx && tctx->home) {
		/* homed: an idle home CPU, its previous one first if its
		 * whole core is idle (else an idle core is looked for) */
		if (tm_home_has(tctx->home, dom_of(prev_cpu)) &&
		    bpf_cpumask_test_cpu(prev_cpu, allowed) && smt_core_idle(prev_cpu) &&
		    scx_bpf_test_and_clear_cpu_idle(prev_cpu))
			cpu = prev_cpu;
		else
			cpu = pick_idle_in(allowed, tctx->home);
		if (cpu < 0)
			return prev_cpu; /* enqueue finds it a home CPU */
		is_idle = true;
	} else if (cls == TM_CLASS_BE && be_avoid_homes && home_doms && be_budget_left() &&
		   (cpu = pick_idle_in(allowed, doms_off_homes())) >= 0) {
		/* BE: an idle CPU away from the ONLINE homes first */
		is_idle = true;
	} else {
		cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	}
	if (!is_idle)
		return cpu;
	/* An idle CPU may take a BE task only while BE has budget, and not
	 * next to ONLINE on its core. */
	if (cls == TM_CLASS_BE && (!be_budget_left() || smt_hold_be(cpu)))
		return cpu;
	/* nor a task a CPU limit holds back (enqueue queues it for its refill) */
	if (bw_on() && bw_held(p, bpf_ktime_get_ns()))
		return cpu;
	if (tctx) {
		tctx->enq_at = bpf_ktime_get_ns();
		tctx->q_home = cls == TM_CLASS_ONLINE ? tctx->home : 0;
	}
	stat_inc(TM_STAT_ENQ_DIRECT);
	trace_task(TM_TR_ENQUEUE, p, cpu, 0, TM_TRQ_IDLE_CPU);
	/*
	 * The insert lands later, under that CPU's lock, and the CPU may have
	 * started BE meanwhile (a window kick that found BE to dispatch):
	 * first in its queue, and preempting what runs there if that is one
	 * of ours. Without, ONLINE waited out BE's whole grant (up to 8.8 ms,
	 * 1% of the bursty service's wakeups on an idle CPU, 2 vCPUs).
	 */
	tm_insert(p, SCX_DSQ_LOCAL, slice_ns,
		  cls == TM_CLASS_BE ? 0 : SCX_ENQ_HEAD | SCX_ENQ_PREEMPT);
	if (cls == TM_CLASS_ONLINE)
		smt_expel_siblings(cpu, true); /* with the wakeup, not after it */
	return cpu;
}

/*
 * A wakeup that found no idle CPU and no BE to take: preempt the
 * ONLINE/SYSTEM task on @cpu, which serves the queue @p went to, when that
 * one has run wake_gran_ns and is further ahead (tm_wake_preempts). Its
 * dispatch then charges it and runs whoever is least advanced.
 */
__noinline int wake_preempt_at(struct task_struct *p __arg_trusted, struct task_ctx *tctx, s32 cpu,
			       u64 vtime)
{
	struct cpu_run *r = cpu_run_of(cpu);
	u64 key;

	if (!r || !r->w)
		return 0;
	key = tm_wake_key(vtime, eff_weight(p, tctx), wake_gran_ns);
	if (!tm_wake_key_preempts(key, r->vt, r->at, r->w, bpf_ktime_get_ns(), wake_gran_ns)) {
		/*
		 * Not yet: the runner's tick looks again (tidemark_tick), for
		 * a wakee of another cgroup. Within one cgroup the slice
		 * stands: its tasks trading the CPU at every tick cost
		 * throughput (switches at every tick).
		 */
		if (tctx && tctx->cgid != r->cgid && (!r->wpend || (s64)(key - r->wkey) < 0)) {
			r->wkey = key;
			r->wpend = 1;
		}
		return 0;
	}
	stat_inc(TM_STAT_WAKE_PREEMPT);
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	return 1;
}

/* (The checks inline, the rest global: enqueue calls it from three places.) */
static __always_inline void wake_preempt(struct task_struct *p, const struct cpumask *allowed,
					 struct task_ctx *tctx, s32 cpu, u64 vtime, u64 enq_flags)
{
	if (wake_gran_ns && (enq_flags & SCX_ENQ_WAKEUP) && bpf_cpumask_test_cpu(cpu, allowed))
		wake_preempt_at(p, tctx, cpu, vtime);
}

/*
 * May a wakee that only @cpu may run go straight to its local queue (see
 * tidemark_enqueue)? Global: each way through these tests went on through
 * the rest of enqueue.
 */
__noinline int wake_local(u64 home, s32 cpu, u64 vtime)
{
	return !be_wait_due && !floor_owed() && (!home || tm_home_has(home, dom_of(cpu))) &&
	       (!time_before(vtime_min, vtime) || hi_queues_empty(dom_of(cpu)));
}

void BPF_STRUCT_OPS(tidemark_enqueue, struct task_struct *p, u64 enq_flags)
{
	/*
	 * Read once and passed down: the verifier looks a pointer read from a
	 * task up in the kernel's BTF by name (up to three linear scans of
	 * vmlinux's types) at every walk of the read, and it walks enqueue's
	 * branches and loops many times: such scans were a large part of a
	 * load's time, many of them for this field.
	 */
	const struct cpumask *allowed = p->cpus_ptr;
	struct task_ctx *tctx = task_ctx(p);
	u32 cls = task_class(p, tctx);
	u64 vtime;
	s32 cpu, qcpu;
	bool local;

	u64 home = 0;

	if (tctx) {
		tctx->enq_at = bpf_ktime_get_ns();
		tctx->pinned = 0;
		/* exiting tasks are SYSTEM whatever their cgroup: no home */
		if (cls == TM_CLASS_ONLINE)
			home = tctx->home;
		tctx->q_home = home;
	}

	/* a cgroup CPU limit (cpu.max, cap) holds it until its refill */
	if (bw_on() && tctx) {
		u64 thr = bw_held(p, tctx->enq_at);

		if (thr) {
			trace_task(TM_TR_ENQUEUE, p, scx_bpf_task_cpu(p), 0, TM_TRQ_LIMITED);
			bw_hold(p, tctx, thr, enq_flags);
			return;
		}
	}

	if (cls == TM_CLASS_BE) {
		stat_inc(TM_STAT_ENQ_BE);
		trace_task(TM_TR_ENQUEUE, p, scx_bpf_task_cpu(p), 0, TM_TRQ_BE);
		tm_insert(p, TM_DSQ_BE, be_grant_ns, enq_flags);
		if (be_budget_left() || floor_owed()) {
			cpu = be_avoid_homes && home_doms ? pick_idle_in(allowed, doms_off_homes())
							  : -1;
			if (cpu < 0)
				cpu = smt_pick_idle(allowed);
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
	 * would starve every other ONLINE/SYSTEM task of that CPU (their
	 * wakeups go there only when nothing further behind waits: below).
	 */
	if (((p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1) || migration_disabled(p)) {
		stat_inc(TM_STAT_ENQ_LOCAL_PINNED);
		if (tctx)
			tctx->pinned = 1;
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		cpu = scx_bpf_task_cpu(p);
		trace_task(TM_TR_ENQUEUE, p, cpu, 0, TM_TRQ_PINNED);
		/* an idle CPU needs no kick (local_dsq_post_enq: below) */
		claim_be_cpu(p, cpu);
		return;
	}

	/*
	 * The CPU it is queued on runs BE: take that CPU over at once, straight
	 * to its local queue with a preemption (no dispatch round trip). Only
	 * BE is passed: had ONLINE/SYSTEM been waiting, the CPU would not run BE.
	 */
	cpu = scx_bpf_task_cpu(p);
	if (tm_home_has(home, dom_of(cpu)) && claim_be_one(p, allowed, cpu)) {
		trace_task(TM_TR_ENQUEUE, p, cpu, 0, TM_TRQ_TAKE_BE);
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags | SCX_ENQ_PREEMPT);
		if (cls == TM_CLASS_ONLINE)
			smt_expel_siblings(cpu, true);
		return;
	}

	/*
	 * Sleepers get a slice of credit before the least advanced waiting
	 * task, at most two slices behind the most advanced running one
	 * (tm_vtime_wake_ref). Counted from the most advanced running one
	 * only, a service sharing CPUs with busy neighbours queued behind
	 * those that had waited longer, and under a neighbour at its cpu.max
	 * its wakeups waited up to two of their slices. A preempted task keeps
	 * its place.
	 */
	vtime = p->scx.dsq_vtime;
	if (enq_flags & SCX_ENQ_WAKEUP) {
		u64 credit = tm_vtime_delta(slice_ns, eff_weight(p, tctx));

		vtime = tm_vtime_credit(vtime, tm_vtime_wake_ref(vtime_now, vtime_min, credit),
					credit);
	}
	/*
	 * A wakee only its CPU may run (a 1-CPU cpuset, say) that is the least
	 * advanced of what waits, or nothing waits: its CPU would dispatch it
	 * next anyway. On that CPU's local queue it runs without a dispatch
	 * round (the kernel calls ops.dispatch only for an empty local queue),
	 * which shortens wakeups where every task has one CPU. Not while BE's
	 * bounded wait or floor is due: both
	 * are served in dispatch, which a pinned pair waking each other on
	 * their local queue would never call (BE then starves until the
	 * watchdog ejects the scheduler).
	 */
	local = (enq_flags & SCX_ENQ_WAKEUP) && p->nr_cpus_allowed == 1 &&
		wake_local(home, cpu, vtime);
	/* queued below what the last dispatch saw: the new least advanced */
	if (time_before(vtime, vtime_min))
		vtime_min = vtime;
	stat_inc(TM_STAT_ENQ_HI);
	trace_task(TM_TR_ENQUEUE, p, cpu, 0, home ? TM_TRQ_HOME : TM_TRQ_SHARED);
	if (local) {
		stat_inc(TM_STAT_ENQ_LOCAL_WAKE);
		p->scx.dsq_vtime = vtime;
		/* no kick: an insert on the local queue of an idle CPU
		 * reschedules it (local_dsq_post_enq), while a kick from
		 * enqueue, under the rq lock, is bounced through an irq_work
		 * self-IPI, which delays the wakeup */
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		wake_preempt(p, allowed, tctx, cpu, vtime, enq_flags);
		return;
	}

	if (home) {
		/*
		 * Homed: an idle home CPU, else a home CPU running BE; queued
		 * on the queue of that CPU's domain, which only the domain's
		 * CPUs serve (soft homes: others too, after home_wait_us).
		 */
		u64 kick = SCX_KICK_IDLE;
		s32 target = pick_idle_in(allowed, home);
		u32 d;

		if (target < 0) {
			target = claim_be_in(p, allowed, home);
			kick = SCX_KICK_PREEMPT;
		}
		d = target >= 0 ? dom_of(target) : dom_of(cpu);
		if (!tm_home_has(home, d) || d == TM_NO_DOM)
			d = home_first(home);
		tm_insert_vtime(p, domq_take(d, tctx && tctx->soft), slice_ns, vtime, enq_flags);
		if (target >= 0) {
			if (kick == SCX_KICK_IDLE)
				stat_inc(TM_STAT_KICK_IDLE);
			scx_bpf_kick_cpu(target, kick);
			smt_expel_siblings(target, true); /* homes are ONLINE's */
		} else {
			stat_inc(TM_STAT_HI_NO_CPU);
			/* its CPU serves that queue only if in that domain */
			if (dom_of(cpu) == d)
				wake_preempt(p, allowed, tctx, cpu, vtime, enq_flags);
		}
		return;
	}
	tm_insert_vtime(p, TM_DSQ_HI, slice_ns, vtime, enq_flags);
	if (p->nr_cpus_allowed == 1) {
		/* only its own CPU can take it (not running BE: tried above) */
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		wake_preempt(p, allowed, tctx, cpu, vtime, enq_flags);
		return;
	}

	qcpu = cpu;
	cpu = smt_pick_idle(allowed);
	if (cpu >= 0) {
		stat_inc(TM_STAT_KICK_IDLE);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	} else if ((cpu = claim_be_in(p, allowed, 0)) >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	} else {
		stat_inc(TM_STAT_HI_NO_CPU);
		wake_preempt(p, allowed, tctx, qcpu, vtime, enq_flags);
	}
	/* the CPU's siblings at once, not after its kick lands */
	if (cpu >= 0 && cls == TM_CLASS_ONLINE)
		smt_expel_siblings(cpu, true);
}

/* @prev, an ONLINE or SYSTEM task, would go on running: its slice ran out. */
static __always_inline bool hi_prev_wants(struct task_struct *prev)
{
	struct task_ctx *ptx;

	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED))
		return false;
	ptx = task_ctx(prev);
	return ptx && ptx->class != TM_CLASS_BE;
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
		struct cpu_run *r = cpu_run_of(bpf_get_smp_processor_id());

		/* a renewed slice: a granularity before a wakeup preempts it */
		if (r) {
			r->vt = prev->scx.dsq_vtime;
			r->at = now;
			r->wpend = 0;
		}
		prev->scx.slice = slice_ns;
		if (time_before(vtime_now, prev->scx.dsq_vtime))
			vtime_now = prev->scx.dsq_vtime;
	}
	return keep;
}

/* The head BE task waited @head_wait, past max_be_wait_ns: run it on
 * @cpu now, on a forced grant. Global, as be_floor_dispatch. */
__noinline int be_forced_dispatch(s32 cpu, u64 head_wait)
{
	struct tm_cpu_ctx *c = cpu_ctx(cpu);

	if (!c)
		return 0;
	c->next_grant = TM_BE_FORCED_NS < be_grant_ns ? TM_BE_FORCED_NS : be_grant_ns;
	if (bw_move_to_local(TM_DSQ_BE, cpu)) {
		stat_inc(TM_STAT_BE_FORCED);
		trace_cpu(TM_TR_FORCED, cpu, head_wait);
		return 1;
	}
	c->next_grant = 0;
	return 0;
}

/*
 * Nothing else may run on @cpu (in domain @d): @prev, still queued, goes on,
 * BE on a new grant. Global: dispatch's ways to get here are many, and each
 * walked all of this.
 */
__noinline int prev_goes_on(struct task_struct *prev __arg_trusted, s32 cpu, u32 d)
{
	struct tm_cpu_ctx *c = cpu_ctx(cpu);
	struct task_ctx *tctx = task_ctx(prev);

	if (!c)
		return 0;
	if (tctx && !tm_home_has(tctx->home, d))
		return 0; /* re-enqueued (ENQ_LAST) towards its home */
	/* a CPU limit holds it: re-enqueued (ENQ_LAST) and held there */
	if (bw_on() && bw_held(prev, bpf_ktime_get_ns()))
		return 0;
	if (tctx && tctx->class == TM_CLASS_BE) {
		u64 now = bpf_ktime_get_ns();

		if (be_avoid_here(d) || smt_sib_online(cpu))
			return 0;
		/* BE goes on here: an expel that set NONE saw it
		 * leave, and must see it again */
		if (smt_on())
			__atomic_exchange_n(&c->class, TM_CLASS_BE, __ATOMIC_SEQ_CST);
		if (be_budget_left()) {
			charge(c, prev, TM_CLASS_BE, now);
			be_grant_return(c);
			be_grant_start(prev, c, be_regular_grant(), false, now);
			bw_renew(prev, c->be_until);
		} else {
			u64 g;

			/* budget spent: it may still run what the floor owes */
			if (!floor_owed() || !(g = floor_grant_take()))
				return 0;
			charge(c, prev, TM_CLASS_BE, now);
			be_grant_return(c);
			be_grant_start(prev, c, g, true, now);
			bw_renew(prev, c->be_until);
			stat_inc(TM_STAT_BE_FLOOR_IDLE);
		}
	} else {
		/* ONLINE/SYSTEM behind a queued task it cannot be swapped with */
		prev->scx.slice = slice_ns;
		bw_renew(prev, 0);
	}
	stat_inc(TM_STAT_KEEP_RUNNING);
	return 0;
}

void BPF_STRUCT_OPS(tidemark_dispatch, s32 cpu, struct task_struct *prev)
{
	struct tm_cpu_ctx *c = cpu_ctx(cpu);
	struct cpu_run *r = cpu_run_of(cpu);
	struct hi_queues q = {};
	u64 vmin;
	u32 d = dom_of(cpu), i;
	bool be_queued, smt_held, floor_kick = false;

	if (!c)
		return;
	if (r && r->floor_kick) {
		r->floor_kick = 0;
		floor_kick = true;
	}
	requeue_reclassified();
	/* whatever was sent here is taken now (or was taken elsewhere) */
	c->online_next = 0;
	be_queued = scx_bpf_dsq_nr_queued(TM_DSQ_BE) > 0;
	c->next_grant = 0;
	if (be_queued) {
		u64 head_wait = be_head_wait(bpf_ktime_get_ns());

		/* Bounded wait first, then the floor: both beat ONLINE. */
		if (head_wait >= max_be_wait_ns && be_forced_dispatch(cpu, head_wait))
			return;
		/*
		 * The floor goes ahead of ONLINE only at the end of a window
		 * in which BE did not get it (the window timer preempts CPUs
		 * then, floor_kick: its kick may land after the window's end,
		 * 1-8 ms late under TCG): earlier, ONLINE keeps priority.
		 * Ahead of a queued task or of the one this CPU ran, which
		 * dispatch would keep.
		 */
		if (floor_owed() &&
		    (floor_kick || !time_before(bpf_ktime_get_ns() + be_floor_left, window_end)) &&
		    (hi_prev_wants(prev) || !hi_queues_empty(d)) &&
		    be_floor_dispatch(cpu, TM_STAT_BE_FLOOR))
			return;
	}
	/*
	 * dispatch runs before the expiring task is charged and queued again,
	 * so it would always hand its CPU to a queued task: with more tasks
	 * than CPUs a heavy task could never run two slices in a row, and
	 * cpu.weight shares came out flattened. Charge it now and keep it when
	 * it is still the furthest behind.
	 */
	hi_queues_of(d, &q);
	/* written only when it moves: every CPU reads it at each wakeup */
	vmin = q.n ? q.vt[0] : vtime_now;
	if (vtime_min != vmin)
		vtime_min = vmin;
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		struct task_ctx *ptx = task_ctx(prev);

		/* its cgroup or class may have changed while it ran */
		if (ptx && task_class(prev, ptx) != TM_CLASS_BE && tm_home_has(ptx->home, d) &&
		    (!bw_on() || !bw_held(prev, bpf_ktime_get_ns())) &&
		    keep_hi_prev(prev, ptx, &q)) {
			/* a limited task goes on with a new grant, or is held */
			if (bw_renew(prev, 0))
				stat_inc(TM_STAT_KEEP_RUNNING);
			return;
		}
	}
	for (i = 0; i < 3; i++) {
		if (i < q.n && bw_move_to_local(q.dsq[i], cpu)) {
			stat_inc(TM_STAT_DISPATCH_HI);
			return;
		}
	}
	if (soft_homes_on() && steal_soft(d)) {
		stat_inc(TM_STAT_DISPATCH_HI);
		return;
	}
	/* regular BE and the floor on idle CPUs wait while a sibling runs
	 * ONLINE; the bounded wait and the floor ahead of ONLINE did not */
	smt_held = be_queued && smt_hold_be(cpu);
	if (be_queued && be_budget_left() && !smt_held) {
		if (be_avoid_here(d))
			return;
		if (bw_move_to_local(TM_DSQ_BE, cpu)) {
			stat_inc(TM_STAT_DISPATCH_BE);
			return;
		}
	}
	/*
	 * Budget spent but the floor not yet reached: run it now, on a CPU
	 * nothing else wants, rather than at the end of the window ahead of
	 * an ONLINE task (which preempts this run like any BE run).
	 */
	if (be_queued && !be_budget_left() && floor_owed() && !smt_held && !be_avoid_here(d) &&
	    be_floor_dispatch(cpu, TM_STAT_BE_FLOOR_IDLE))
		return;
	/* Nothing else may run: the previous task goes on, BE on a new grant. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED))
		prev_goes_on(prev, cpu, d);
}

/*
 * Move the pending ONLINE waits of @cpu to their cgroup's cg_waits entry. A
 * global function, verified once: inlined at its three call sites, its
 * unrolled loop made loading much slower. Unrolled: an open-coded iterator
 * is a kfunc call per bucket, which running pays for.
 */
__noinline int cg_wait_flush(u32 cpu)
{
	struct cg_wait_pend *q = cg_wait_pend_of(cpu);
	struct tm_cg_wait *w;
	u64 cgid;
	u32 b;

	if (!q || !q->n)
		return 0;
	cgid = q->cgid;
	w = bpf_map_lookup_elem(&cg_waits, &cgid);
	if (!w) {
		struct tm_cg_wait zero = {};

		bpf_map_update_elem(&cg_waits, &cgid, &zero, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&cg_waits, &cgid);
	}
	if (w) {
		__sync_fetch_and_add(&w->sum_ns, q->sum_ns);
#pragma unroll
		for (b = 0; b < TM_HIST_BUCKETS; b++)
			if (q->hist[b])
				__sync_fetch_and_add(&w->hist[b], q->hist[b]);
	} else {
		stat_add(TM_STAT_CG_HIST_FULL, q->n);
	}
	__builtin_memset(q->hist, 0, sizeof(q->hist));
	q->sum_ns = 0;
	q->n = 0;
	return 0;
}

/* Pending waits older than TM_CG_WAIT_FLUSH_NS go to cg_waits. */
static __always_inline void cg_wait_age(s32 cpu, struct cg_wait_pend *q, u64 now)
{
	if (q && q->n && now - q->first >= TM_CG_WAIT_FLUSH_NS)
		cg_wait_flush(cpu);
}

static __always_inline void cg_wait_add(s32 cpu, struct cg_wait_pend *q, u64 cgid, u32 bucket,
					u64 wait_ns, u64 now)
{
	if (q->n &&
	    (q->cgid != cgid || q->n >= TM_CG_WAIT_BATCH || now - q->first >= TM_CG_WAIT_FLUSH_NS))
		cg_wait_flush(cpu);
	if (bucket >= TM_HIST_BUCKETS)
		return;
	if (!q->n) {
		q->cgid = cgid;
		q->first = now;
	}
	q->hist[bucket]++;
	q->sum_ns += wait_ns;
	q->n++;
}

/* tm_hist_bucket's bit search, global: it ends 64 ways, and with the clamp
 * in the same function each of them was walked to the end (the clamp's test
 * of a known length makes the length precise, so none was pruned). */
__noinline u32 wait_bitlen(u64 us)
{
	return tm_hist_bitlen(us);
}

/*
 * A task of class @cls starts running on @cpu after waiting @wait ns: its
 * class's wait histogram, and ONLINE's per-cgroup pending waits (@cgid).
 * Global, verified once: the bucket's bit search branches six ways, and
 * inlined every one of its outcomes went on through the rest of running.
 * 1: @cpu's pending waits were aged here.
 */
__noinline int wait_note(u32 cls, u64 wait, u64 cgid, s32 cpu, u64 now)
{
	struct tm_cpu_stats *s = my_stats();
	struct cg_wait_pend *q;
	u32 b = tm_hist_clamp(wait_bitlen(wait / 1000));

	if (!s || cls >= TM_NR_CLASSES || b >= TM_HIST_BUCKETS)
		return 0;
	s->wait_hist[cls][b]++;
	s->wait_sum_ns[cls] += wait;
	if (cls != TM_CLASS_ONLINE)
		return 0;
	q = cg_wait_pend_of(cpu);
	if (!q)
		return 0;
	cg_wait_add(cpu, q, cgid, b, wait, now);
	return 1;
}

/*
 * @p (@tctx, class @cls) starts running on @cpu: the wait it ends, and its
 * run's start. 1: @cpu's pending waits were aged here. Global: running's
 * ways to get here (class, SMT) each walked it.
 */
__noinline int run_starts(struct task_struct *p __arg_trusted, struct task_ctx *tctx, u32 cls,
			  s32 cpu, u64 now)
{
	u64 wait;
	int aged = 0;

	if (!tctx)
		return 0;
	/* one wait per enqueue: a resumed task did not wait */
	wait = tctx->enq_at && time_before(tctx->enq_at, now) ? now - tctx->enq_at : 0;
	if (wait)
		aged = wait_note(cls, wait, tctx->cgid, cpu, now);
	trace_run(p, wait);
	tctx->enq_at = 0;
	tctx->ran_at = now;
	tctx->run_sum = p->se.sum_exec_runtime;
	return aged;
}

void BPF_STRUCT_OPS(tidemark_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct task_ctx *tctx = task_ctx(p);
	struct tm_cpu_ctx *c = cpu_ctx(cpu);
	struct cpu_run *r;
	u64 now = bpf_ktime_get_ns();
	u32 cls = tctx ? tctx->class : TM_CLASS_SYSTEM;
	struct cg_wait_pend *q = cg_wait_pend_of(cpu);

	if (cls >= TM_NR_CLASSES)
		cls = TM_CLASS_SYSTEM;
	if (c) {
		c->started = now;
		c->run_sum = p->se.sum_exec_runtime;
		c->online_next = 0;
		if (smt_on() && (cls == TM_CLASS_ONLINE || cls == TM_CLASS_BE)) {
			/* an exchange, so that this and a sibling starting at the
			 * same time cannot both miss the other's class */
			__atomic_exchange_n(&c->class, cls, __ATOMIC_SEQ_CST);
			if (cls == TM_CLASS_ONLINE)
				smt_expel_siblings(cpu, false);
		} else {
			c->class = cls;
		}
	}
	if (tctx && run_starts(p, tctx, cls, cpu, now))
		q = NULL; /* its age checked there */
	cg_wait_age(cpu, q, now);
	if (tctx && nr_doms) {
		u32 d = dom_of(cpu);

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
		if (c->next_grant)
			be_grant_start(p, c, c->next_grant, true, now);
		else
			be_grant_start(p, c, be_regular_grant(), false, now);
		c->next_grant = 0;
		/* a sibling started ONLINE while this CPU picked BE */
		if (!c->forced && smt_hold_be(cpu))
			scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	}
	bw_start(p, now, c && cls == TM_CLASS_BE ? c->be_until : 0);
	if (cls != TM_CLASS_BE && time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
	r = cpu_run_of(cpu);
	if (r) {
		r->vt = p->scx.dsq_vtime;
		r->at = now;
		r->w = cls != TM_CLASS_BE ? eff_weight(p, tctx) : 0;
		r->cgid = tctx ? tctx->cgid : 0;
		r->wpend = 0;
	}
}

void BPF_STRUCT_OPS(tidemark_stopping, struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct tm_cpu_ctx *c = cpu_ctx(cpu);
	struct cpu_run *r;
	struct task_ctx *tctx = task_ctx(p);
	u32 cls = tctx ? tctx->class : TM_CLASS_SYSTEM;
	u64 now = bpf_ktime_get_ns(), used = 0;

	if (cls >= TM_NR_CLASSES)
		cls = TM_CLASS_SYSTEM;
	if (tctx && time_before(tctx->ran_at, now))
		used = now - tctx->ran_at;
	/* the kernel brought sum_exec_runtime up to date just before this */
	trace_task(TM_TR_STOP, p, cpu,
		   tctx && p->se.sum_exec_runtime >= tctx->run_sum
			   ? p->se.sum_exec_runtime - tctx->run_sum
			   : used,
		   runnable);
	if (c) {
		charge(c, p, cls, now);
		if (cls == TM_CLASS_BE) {
			be_grant_return(c);
			grant_timer_cancel();
		}
		c->class = TM_CLASS_NONE;
	}
	r = cpu_run_of(cpu);
	if (r)
		r->w = 0;
	bw_stop(now);
	if (cls == TM_CLASS_ONLINE && !runnable)
		smt_release_siblings(cpu);
	if (cls != TM_CLASS_BE)
		p->scx.dsq_vtime += tm_vtime_delta(used, eff_weight(p, tctx));
}

void BPF_STRUCT_OPS(tidemark_tick, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx(p);
	struct tm_cpu_ctx *c = cpu_ctx(scx_bpf_task_cpu(p));
	/* one clock read for all: each read costs */
	u64 now = bpf_ktime_get_ns();

	trace_tick(p);
	/* a CPU that runs one task for long still hands its waits on */
	cg_wait_age(scx_bpf_task_cpu(p), cg_wait_pend_of(scx_bpf_task_cpu(p)), now);
	if (!tctx)
		return;
	if (c && tctx->class < TM_NR_CLASSES)
		charge(c, p, tctx->class, now);
	if (bw_on()) {
		u32 me = bpf_get_smp_processor_id();

		/* the grant timer ends a limited run; the tick backs it up */
		if (me < TM_MAX_CPUS && bw_cpus[me].n && !time_before(now, bw_cpus[me].until)) {
			p->scx.slice = 0;
			return;
		}
	}
	/* a wakeup that came too early in this slice to preempt it */
	if (wake_gran_ns && tctx->class != TM_CLASS_BE) {
		struct cpu_run *r = cpu_run_of(scx_bpf_task_cpu(p));

		if (r && r->wpend &&
		    tm_wake_key_preempts(r->wkey, r->vt, r->at, r->w, now, wake_gran_ns)) {
			r->wpend = 0;
			stat_inc(TM_STAT_WAKE_PREEMPT);
			p->scx.slice = 0;
			return;
		}
	}
	/* backs up the expel: BE never runs a tick next to ONLINE */
	if (c && tctx->class == TM_CLASS_BE && !c->forced && smt_sib_online(scx_bpf_task_cpu(p))) {
		p->scx.slice = 0;
		return;
	}
	/* Reclassify running tasks too: a class change applies at once. */
	if (tctx->gen != class_gen || cgroup_id_of(task_cgroup(p)) != tctx->cgid) {
		p->scx.slice = 0;
		return;
	}
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

s32 BPF_STRUCT_OPS_SLEEPABLE(tidemark_init)
{
	struct tm_tunables *t;
	struct tm_abi *abi_v;
	struct window *w;
	u32 zero = 0;
	s32 ret;

	/* the loader wrote the tunables before attaching */
	t = bpf_map_lookup_elem(&tunables, &zero);
	if (!t)
		return -ENOENT;
	tunables_apply(t);
	ret = scx_bpf_create_dsq(TM_DSQ_HI, -1);
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

/* Tasks look their cgroup's weight up again (eff_weight); 0 is skipped,
 * it means "never looked up". */
static __always_inline void weight_bump(void)
{
	if (__sync_add_and_fetch(&weight_gen, 1) == 0)
		__sync_fetch_and_add(&weight_gen, 1);
}

s32 BPF_STRUCT_OPS(tidemark_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	u64 id = cgrp->kn->id;
	u32 w = args->weight;

	/* a full map only costs this cgroup its weight: never fail creation */
	bpf_map_update_elem(&cg_weights, &id, &w, BPF_ANY);
	weight_bump();
	return 0;
}

void BPF_STRUCT_OPS(tidemark_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	u64 id = cgrp->kn->id;

	bpf_map_update_elem(&cg_weights, &id, &weight, BPF_ANY);
	weight_bump();
}

/*
 * A removed cgroup has no tasks, so its bandwidth DSQ is empty: the entry
 * goes first (no task looks it up again), then the DSQ.
 */
void BPF_STRUCT_OPS(tidemark_cgroup_exit, struct cgroup *cgrp)
{
	u64 id = cgrp->kn->id;

	bpf_map_delete_elem(&cg_weights, &id);
	weight_bump();
	bpf_map_delete_elem(&be_caps, &id);
	if (!bpf_map_delete_elem(&cg_bw, &id)) {
		__sync_fetch_and_sub(&bw_nr, 1);
		__sync_fetch_and_add(&bw_gen, 1);
		scx_bpf_destroy_dsq(TM_DSQ_BW_BASE | id);
	}
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
	scx_bpf_dump(" limited_cgroups=%d", bw_nr);
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

/*
 * The kernel's struct sched_ext_ops with 6.17's cgroup_set_bandwidth added:
 * libbpf matches struct_ops members by name and drops the ___ flavour, so
 * one object loads on 6.12 (where the loader sets the callback to NULL) and
 * on kernels that have it.
 */
struct sched_ext_ops___bw {
	s32 (*select_cpu)(struct task_struct *, s32, u64);
	void (*enqueue)(struct task_struct *, u64);
	void (*dequeue)(struct task_struct *, u64);
	void (*dispatch)(s32, struct task_struct *);
	void (*tick)(struct task_struct *);
	void (*runnable)(struct task_struct *, u64);
	void (*running)(struct task_struct *);
	void (*stopping)(struct task_struct *, bool);
	void (*quiescent)(struct task_struct *, u64);
	bool (*yield)(struct task_struct *, struct task_struct *);
	bool (*core_sched_before)(struct task_struct *, struct task_struct *);
	void (*set_weight)(struct task_struct *, u32);
	void (*set_cpumask)(struct task_struct *, const struct cpumask *);
	void (*update_idle)(s32, bool);
	void (*cpu_acquire)(s32, struct scx_cpu_acquire_args *);
	void (*cpu_release)(s32, struct scx_cpu_release_args *);
	s32 (*init_task)(struct task_struct *, struct scx_init_task_args *);
	void (*exit_task)(struct task_struct *, struct scx_exit_task_args *);
	void (*enable)(struct task_struct *);
	void (*disable)(struct task_struct *);
	void (*dump)(struct scx_dump_ctx *);
	void (*dump_cpu)(struct scx_dump_ctx *, s32, bool);
	void (*dump_task)(struct scx_dump_ctx *, struct task_struct *);
	s32 (*cgroup_init)(struct cgroup *, struct scx_cgroup_init_args *);
	void (*cgroup_exit)(struct cgroup *);
	s32 (*cgroup_prep_move)(struct task_struct *, struct cgroup *, struct cgroup *);
	void (*cgroup_move)(struct task_struct *, struct cgroup *, struct cgroup *);
	void (*cgroup_cancel_move)(struct task_struct *, struct cgroup *, struct cgroup *);
	void (*cgroup_set_weight)(struct cgroup *, u32);
	void (*cgroup_set_bandwidth)(struct cgroup *, u64, u64, u64);
	void (*cpu_online)(s32);
	void (*cpu_offline)(s32);
	s32 (*init)(void);
	void (*exit)(struct scx_exit_info *);
	u32 dispatch_max_batch;
	u64 flags;
	u32 timeout_ms;
	u32 exit_dump_len;
	u64 hotplug_seq;
	char name[128];
};

SEC(".struct_ops.link")
struct sched_ext_ops___bw tidemark_ops = {
	.select_cpu = (void *)tidemark_select_cpu,
	.enqueue = (void *)tidemark_enqueue,
	.dispatch = (void *)tidemark_dispatch,
	.running = (void *)tidemark_running,
	.stopping = (void *)tidemark_stopping,
	.tick = (void *)tidemark_tick,
	.enable = (void *)tidemark_enable,
	.set_cpumask = (void *)tidemark_set_cpumask,
	.init_task = (void *)tidemark_init_task,
	.cgroup_init = (void *)tidemark_cgroup_init,
	.cgroup_exit = (void *)tidemark_cgroup_exit,
	.cgroup_set_weight = (void *)tidemark_cgroup_set_weight,
	.init = (void *)tidemark_init,
	.exit = (void *)tidemark_exit,
	.dump = (void *)tidemark_dump,
	.dump_task = (void *)tidemark_dump_task,
	.cgroup_set_bandwidth = (void *)tidemark_cgroup_set_bandwidth,
	.name = "tidemark",
};
