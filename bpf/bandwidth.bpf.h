/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU bandwidth: cgroup cpu.max (and cpu.max.burst) and per-cgroup caps,
 * enforced for every class as CFS enforces cpu.max, which sched_ext tasks
 * escape on 6.12.
 *
 * - Each limited cgroup (map "cg_bw") gets eff_ns of runtime per period,
 *   refilled by its own timer at the period's boundary; its descendants
 *   share it. A task runs only while every limited ancestor has runtime left.
 * - A task starting to run reserves a grant (a slice, at most what its
 *   tightest ancestor has left) from each limited ancestor, and gives back
 *   what it did not use when it stops; the CPU's grant timer ends the run
 *   when the grant does.
 * - A task whose ancestor is out waits in that ancestor's DSQ: checked at
 *   wakeup, at enqueue and when a CPU picks it from a shared queue, so a
 *   released crowd cannot all run on one refill. The refill moves the
 *   waiting tasks back to their class's queue.
 * - Exiting and migration-disabled tasks are never held. A task held longer
 *   than bw_guard_ns (half the watchdog timeout) runs a minimum grant
 *   anyway: a limit must never eject the scheduler.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_BANDWIDTH_BPF_H
#define __TM_BANDWIDTH_BPF_H

/* The limited ancestors of @p's cgroup (itself first), looked up again when
 * its cgroup or the set of limited cgroups changed. (Global, as those
 * below: its walk up the cgroups verified once per program.) */
__noinline int bw_refresh(struct task_struct *p __arg_trusted, struct task_ctx *tctx)
{
	struct cgroup *cg = task_cgroup(p);
	u64 cgid;
	int level;
	u32 i, n;

	if (!tctx)
		return 0;
	if (!cg) {
		tctx->bw_n = 0;
		return 0;
	}
	cgid = cgroup_id_of(cg);
	if (tctx->bw_gen == bw_gen && tctx->bw_cgid == cgid)
		return 0;
	level = BPF_CORE_READ(cg, level);
	/* from 0, but a 0 the verifier does not know: with the count exact
	 * the loop's states differed at every count and never converged */
	n = unknown_zero;
	bpf_for (i, 0, TM_MAX_CGROUP_DEPTH) {
		struct cgroup *anc = NULL;
		int l = level - (int)i;
		u64 id;

		if (l < 0)
			break;
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[l]) || !anc)
			break;
		id = BPF_CORE_READ(anc, kn, id);
		if (!bpf_map_lookup_elem(&cg_bw, &id))
			continue;
		if (n >= TM_BW_LEVELS)
			break;
		tctx->bw_ids[n & (TM_BW_LEVELS - 1)] = id;
		n++;
	}
	tctx->bw_n = n;
	tctx->bw_gen = bw_gen;
	tctx->bw_cgid = cgid;
	return 0;
}

/*
 * The limited ancestor holding @p back (0: none may stop it). Exiting and
 * migration-disabled tasks are never held; one held past bw_guard_ns runs.
 */
static u64 bw_throttler(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	u32 i, n;

	if (!tctx || (p->flags & PF_EXITING) || migration_disabled(p))
		return 0;
	bw_refresh(p, tctx);
	n = tctx->bw_n;
	bpf_for (i, 0, TM_BW_LEVELS) {
		struct tm_cg_bw *bw;
		u64 id;

		if (i >= n)
			break;
		id = tctx->bw_ids[i & (TM_BW_LEVELS - 1)];
		bw = bpf_map_lookup_elem(&cg_bw, &id);
		if (!bw || !bw->eff_ns || bw->runtime_ns > 0)
			continue;
		if (tctx->thr_since && now - tctx->thr_since > bw_guard_ns) {
			stat_inc(TM_STAT_BW_GUARD);
			return 0;
		}
		return id;
	}
	return 0;
}

/* @bw starts being held back: one more throttled period, timed. */
static __always_inline void bw_hold_start(struct tm_cg_bw *bw, u64 now)
{
	if (!bw->throttled_at && !__sync_val_compare_and_swap(&bw->throttled_at, 0, now))
		__sync_fetch_and_add(&bw->nr_throttled, 1);
}

/* A task of @tctx is held back by @thr from @now: count it, time it. */
static __always_inline void bw_note_held(struct task_ctx *tctx, u64 thr, u64 now)
{
	struct tm_cg_bw *bw = bpf_map_lookup_elem(&cg_bw, &thr);

	if (bw)
		bw_hold_start(bw, now);
	if (!tctx->thr_since)
		tctx->thr_since = now;
	stat_inc(TM_STAT_BW_THROTTLED);
}

/* Queue @p in the DSQ of @thr, the ancestor holding it back. */
static void bw_hold(struct task_struct *p, struct task_ctx *tctx, u64 thr, u64 enq_flags)
{
	bw_note_held(tctx, thr, bpf_ktime_get_ns());
	tm_insert(p, TM_DSQ_BW_BASE | thr, slice_ns, enq_flags);
}

/*
 * The limited ancestor holding @p back, as bw_throttler(). The helpers below
 * that run on the scheduling paths are global functions: the verifier checks
 * each once per program instead of at every call site and state (inlined,
 * they made dispatch cost it 260k instructions and loading take a minute
 * under emulation).
 */
__noinline u64 bw_held(struct task_struct *p __arg_trusted, u64 now)
{
	return bw_throttler(p, task_ctx(p), now);
}

/* May @p run on @cpu now? Global: bw_pick's loop walks it several times,
 * and each walk of p->cpus_ptr costs the verifier BTF name scans. */
__noinline int task_may_run_on(struct task_struct *p __arg_trusted, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr) && !migration_disabled(p);
}

/*
 * Move the first task of @dsq this CPU may run and no limit holds back to
 * the local queue; held tasks met on the way go to their ancestor's DSQ.
 */
__noinline int bw_pick(u64 dsq, s32 cpu)
{
	struct task_struct *p;
	u64 now = bpf_ktime_get_ns();

	bpf_for_each (scx_dsq, p, dsq, 0) {
		struct task_ctx *tctx;
		u64 thr;

		if (!task_may_run_on(p, cpu))
			continue;
		tctx = task_ctx(p);
		thr = bw_held(p, now);
		if (thr && tctx) {
			bw_note_held(tctx, thr, now);
			tm_move(BPF_FOR_EACH_ITER, p, TM_DSQ_BW_BASE | thr);
			continue;
		}
		if (tm_move(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL))
			return 1;
	}
	return 0;
}

static __always_inline bool bw_move_to_local(u64 dsq, s32 cpu)
{
	if (!bw_on())
		return tm_move_to_local(dsq);
	return bw_pick(dsq, cpu);
}

/* The refill timer of @bw is started when it has something to refill. */
static __always_inline void bw_arm(struct tm_cg_bw *bw, u64 now)
{
	if (bw->armed || __sync_val_compare_and_swap(&bw->armed, 0, 1))
		return;
	bw->next_at = now + bw->period_ns;
	bw->snap_ns = bw->runtime_ns;
	bpf_timer_start(&bw->timer, bw->period_ns, 0);
}

/* The least runtime left among @tctx's limited levels, @left at most.
 * (Global, as bw_reserve: each loop verified once, not once per way out of
 * the loop before it.) */
__noinline s64 bw_least_left(struct task_ctx *tctx, s64 left)
{
	u32 i, n;

	if (!tctx)
		return left;
	n = tctx->bw_n;
	bpf_for (i, 0, TM_BW_LEVELS) {
		struct tm_cg_bw *bw;
		u64 id;

		if (i >= n)
			break;
		id = tctx->bw_ids[i & (TM_BW_LEVELS - 1)];
		bw = bpf_map_lookup_elem(&cg_bw, &id);
		if (bw && bw->eff_ns && bw->runtime_ns < left)
			left = bw->runtime_ns;
	}
	return left;
}

/* Reserve the grant @g from each of @tctx's limited levels, noted in @bc
 * for bw_stop_limited. Returns how many levels were noted. */
__noinline int bw_reserve(struct task_ctx *tctx, struct bw_cpu *bc, u64 g, u64 now)
{
	u32 i, n;

	if (!tctx || !bc)
		return 0;
	n = tctx->bw_n;
	bpf_for (i, 0, TM_BW_LEVELS) {
		struct tm_cg_bw *bw;
		u64 id;

		if (i >= n)
			break;
		id = tctx->bw_ids[i & (TM_BW_LEVELS - 1)];
		bw = bpf_map_lookup_elem(&cg_bw, &id);
		bc->ids[i & (TM_BW_LEVELS - 1)] = id;
		if (!bw || !bw->eff_ns)
			continue; /* no limit now: nothing to reserve or count */
		__sync_fetch_and_sub(&bw->runtime_ns, g);
		bw_arm(bw, now);
	}
	return n < TM_BW_LEVELS ? n : TM_BW_LEVELS;
}

/*
 * @p starts running on this CPU: reserve its grant from each limited
 * ancestor and end the run when it is used up (@p->scx.slice and the CPU's
 * grant timer, unless a BE grant ending at @be_until ends it first).
 */
__noinline int bw_start_limited(struct task_struct *p __arg_trusted, u64 now, u64 be_until)
{
	u32 me = bpf_get_smp_processor_id();
	u64 bw_slice = slice_ns < TM_BW_SLICE_NS ? slice_ns : TM_BW_SLICE_NS;
	struct task_ctx *tctx;
	struct bw_cpu *bc;
	u64 g;
	int n;

	if (me >= TM_MAX_CPUS)
		return 0;
	bc = &bw_cpus[me];
	bc->n = 0;
	if (!bw_on() || (p->flags & PF_EXITING))
		return 0;
	/* looked up only with a limit set: most runs have none */
	tctx = task_ctx(p);
	if (!tctx)
		return 0;
	tctx->thr_since = 0;
	bw_refresh(p, tctx);
	if (!tctx->bw_n)
		return 0;
	g = tm_bw_grant(bw_least_left(tctx, (s64)bw_slice), bw_slice);
	n = bw_reserve(tctx, bc, g, now);
	if (n <= 0)
		return 0;
	bc->n = n;
	bc->grant = g;
	bc->started = now;
	bc->until = now + g;
	if (p->scx.slice > g)
		p->scx.slice = g;
	if (!be_until || time_before(bc->until, be_until))
		grant_timer_at(bc->until, now);
	return 0;
}

/* The run on this CPU ends (or is renewed): give back what it did not use
 * of its grant, charge what it used beyond. */
__noinline int bw_stop_limited(u64 now)
{
	u32 me = bpf_get_smp_processor_id(), i, n;
	struct bw_cpu *bc;
	u64 used;

	if (me >= TM_MAX_CPUS)
		return 0;
	bc = &bw_cpus[me];
	n = bc->n;
	if (!n)
		return 0;
	used = time_before(bc->started, now) ? now - bc->started : 0;
	bpf_for (i, 0, TM_BW_LEVELS) {
		struct tm_cg_bw *bw;
		u64 id;

		if (i >= n)
			break;
		id = bc->ids[i & (TM_BW_LEVELS - 1)];
		bw = bpf_map_lookup_elem(&cg_bw, &id);
		if (!bw || !bw->eff_ns)
			continue;
		__sync_fetch_and_add(&bw->runtime_ns, (s64)bc->grant - (s64)used);
		__sync_fetch_and_add(&bw->period_used, used);
		__sync_fetch_and_add(&bw->usage_ns, used);
	}
	bc->n = 0;
	return 0;
}

/*
 * The checks every run makes, inline: a call to a global function (frame,
 * registers) cost running and stopping a tenth of their time just to find
 * no limit set.
 */
static __always_inline void bw_start(struct task_struct *p, u64 now, u64 be_until)
{
	u32 me = bpf_get_smp_processor_id();

	/* a store only when there is something to clear: no cache line
	 * written on every run of an unlimited task */
	if (me < TM_MAX_CPUS && bw_cpus[me].n)
		bw_cpus[me].n = 0;
	if (bw_on())
		bw_start_limited(p, now, be_until);
}

static __always_inline void bw_stop(u64 now)
{
	u32 me = bpf_get_smp_processor_id();

	if (me < TM_MAX_CPUS && bw_cpus[me].n)
		bw_stop_limited(now);
}

/*
 * The task on this CPU would go on (dispatch found nothing to run instead):
 * false when a limit holds it back (its slice is ended: it is queued again,
 * ENQ_LAST, and held), else its grant is renewed.
 */
__noinline int bw_renew(struct task_struct *p __arg_trusted, u64 be_until)
{
	u64 now;

	if (!bw_on())
		return 1;
	now = bpf_ktime_get_ns();
	bw_stop(now);
	if (bw_held(p, now)) {
		p->scx.slice = 0;
		return 0;
	}
	bw_start(p, now, be_until);
	return 1;
}

/* Wake a CPU for a task just moved back to the queue of its class. */
static __always_inline void kick_for(struct task_struct *p, u32 cls)
{
	const struct cpumask *allowed = p->cpus_ptr; /* read once */
	struct task_ctx *tctx = task_ctx(p);
	s32 cpu;

	if (cls == TM_CLASS_BE) {
		if (!be_budget_left() && !floor_owed())
			return;
		cpu = scx_bpf_pick_idle_cpu(allowed, 0);
		if (cpu >= 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	cpu = tctx && tctx->home ? pick_idle_in(NULL, tctx->home)
				 : scx_bpf_pick_idle_cpu(allowed, 0);
	if (cpu >= 0) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	cpu = claim_be_in(p, allowed, tctx ? tctx->home : 0);
	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
}

/* (the refill timer's; a global function checks no RCU section of its caller) */
__noinline int bw_kick_for(struct task_struct *p __arg_trusted, u32 cls)
{
	bpf_rcu_read_lock();
	kick_for(p, cls);
	bpf_rcu_read_unlock();
	return 0;
}

/*
 * Move every task waiting in the DSQ of @id back to its class's queue (or to
 * the DSQ of another ancestor still out). Tasks that the runtime cannot all
 * serve are held again when a CPU picks them (bw_move_to_local). Global:
 * bw_timer_fn calls it twice.
 */
__noinline int bw_release(u64 id, u64 now)
{
	struct task_struct *p;

	/* the timer is not an RCU section of its own */
	bpf_rcu_read_lock();
	bpf_for_each (scx_dsq, p, TM_DSQ_BW_BASE | id, 0) {
		struct task_ctx *tctx = task_ctx(p);
		u32 cls = task_class(p, tctx);
		u64 thr = bw_held(p, now), vtime = 0;

		if (thr && thr != id) {
			tm_move(BPF_FOR_EACH_ITER, p, TM_DSQ_BW_BASE | thr);
			continue;
		}
		if (tctx)
			tctx->enq_at = now; /* held is not waiting for a CPU */
		if (cls == TM_CLASS_BE) {
			tm_move(BPF_FOR_EACH_ITER, p, TM_DSQ_BE);
		} else {
			/* a task its limit held did not sleep (requeue_dsq) */
			u64 dsq = requeue_dsq(p, tctx, &vtime);

			tm_move_vtime(BPF_FOR_EACH_ITER, p, dsq, vtime);
		}
		bw_kick_for(p, cls);
	}
	bpf_rcu_read_unlock();
	return 0;
}

/*
 * A period of cgroup @key ends: refill its runtime, count the period, let
 * its waiting tasks go. The timer stops while the cgroup is idle with its
 * runtime full, and restarts with its next run (bw_arm).
 */
static int bw_timer_fn(void *map, u64 *key, struct tm_cg_bw *bw)
{
	u64 now = bpf_ktime_get_ns(), used, eff = bw->eff_ns, id = *key, held, burst;
	s64 old, next;

	held = scx_bpf_dsq_nr_queued(TM_DSQ_BW_BASE | id) > 0;
	if (!eff) {
		/* no longer limited */
		bw_release(id, now);
		bw->throttled_at = 0;
		bw->armed = 0;
		return 0;
	}
	used = __sync_fetch_and_and(&bw->period_used, 0);
	if (used || held)
		__sync_fetch_and_add(&bw->nr_periods, 1);
	old = bw->runtime_ns;
	/* as CFS counts them: runtime taken beyond the quota, which only
	 * runtime carried over from idle periods (cpu.max.burst) allows;
	 * overruns paid back as debt are not bursts */
	burst = tm_bw_burst_used(bw->snap_ns, old, eff);
	if (burst) {
		__sync_fetch_and_add(&bw->nr_bursts, 1);
		__sync_fetch_and_add(&bw->burst_ns_used, burst);
	}
	next = tm_bw_refill(old, eff, bw->burst_ns);
	__sync_fetch_and_add(&bw->runtime_ns, next - old);
	bw->snap_ns = next;
	if (bw->runtime_ns > 0) {
		u64 at = bw->throttled_at;

		if (at && __sync_val_compare_and_swap(&bw->throttled_at, at, 0) == at &&
		    time_before(at, now))
			__sync_fetch_and_add(&bw->throttled_ns, now - at);
		if (held)
			bw_release(id, now);
	}
	/* idle and full, burst included: nothing to refill until it runs */
	if (!used && !held && bw->runtime_ns >= (s64)(eff + bw->burst_ns)) {
		bw->armed = 0;
		return 0;
	}
	/* periods on absolute boundaries: a late timer does not stretch them */
	bw->next_at += bw->period_ns;
	if (time_before(bw->next_at, now))
		bw->next_at = now + bw->period_ns;
	bpf_timer_start(&bw->timer, bw->next_at, BPF_F_TIMER_ABS);
	return 0;
}

/* A new "cg_bw" entry for cgroup @id: its DSQ first, then the entry and
 * its timer. Global: bw_apply's ways through its checks each walked it. */
__noinline int bw_entry_new(u64 id)
{
	struct tm_cg_bw zero = {}, *bw;
	s32 err;

	err = scx_bpf_create_dsq(TM_DSQ_BW_BASE | id, -1);
	if (err && err != -EEXIST)
		return err;
	zero.period_ns = TM_BW_PERIOD_DFL_US * 1000ULL;
	if (bpf_map_update_elem(&cg_bw, &id, &zero, BPF_NOEXIST) ||
	    !(bw = bpf_map_lookup_elem(&cg_bw, &id)))
		return -E2BIG;
	bpf_timer_init(&bw->timer, &cg_bw, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&bw->timer, bw_timer_fn);
	__sync_fetch_and_add(&bw_nr, 1);
	__sync_fetch_and_add(&bw_gen, 1);
	return 0;
}

/*
 * The only writer of "cg_bw" and "be_caps" from userspace: a cgroup's
 * cpu.max (the loader, every --rescan-ms) or cap (tidemarkd, tidemarkctl).
 * A new entry gets its DSQ first, then its timer: no task is ever queued for
 * a limit without a queue to wait in.
 */
static s32 bw_apply(const struct tm_bw_req *r)
{
	u64 id = r->cgid, quota = r->quota_us, period = r->period_us, burst = r->burst_us;
	u32 set = r->set, cap = r->cap_mcpu, owner = r->owner;
	u64 now = bpf_ktime_get_ns(), eff;
	struct tm_cg_bw *bw;
	s32 err;

	if ((set & TM_BW_SET_MAX) && tm_bw_check(quota, period, burst))
		return -EINVAL;
	if ((set & TM_BW_SET_CAP) && cap > TM_MCPU_MAX)
		return -EINVAL;
	bw = bpf_map_lookup_elem(&cg_bw, &id);
	if (!bw) {
		if (!((set & TM_BW_SET_MAX) && quota) && !((set & TM_BW_SET_CAP) && cap)) {
			if (set & TM_BW_SET_CAP)
				bpf_map_delete_elem(&be_caps, &id);
			return 0;
		}
		err = bw_entry_new(id);
		if (err)
			return err;
		bw = bpf_map_lookup_elem(&cg_bw, &id);
		if (!bw)
			return -E2BIG;
	}
	if (set & TM_BW_SET_CAP) {
		struct tm_be_cap c = {.cap_mcpu = cap, .owner = owner};

		if (cap)
			bpf_map_update_elem(&be_caps, &id, &c, BPF_ANY);
		else
			bpf_map_delete_elem(&be_caps, &id);
		bw->cap_mcpu = cap;
	}
	if (set & TM_BW_SET_MAX) {
		bw->quota_ns = quota * 1000;
		bw->burst_ns = quota ? burst * 1000 : 0;
		bw->period_ns = period * 1000;
	}
	eff = tm_bw_eff(bw->quota_ns, bw->period_ns, bw->cap_mcpu);
	if (eff != bw->eff_ns) {
		/* a new limit starts with a full period's runtime; a changed one
		 * keeps what is left, within the new bound */
		if (!bw->eff_ns || bw->runtime_ns > (s64)(eff + bw->burst_ns))
			bw->runtime_ns = eff;
		bw->eff_ns = eff;
		bw->period_used = 0;
		bw->snap_ns = bw->runtime_ns;
	}
	/* the timer refills from the next period; unlimited now, it lets the
	 * waiting tasks go at once */
	if (!eff) {
		bw->armed = 1;
		bpf_timer_start(&bw->timer, 0, 0);
	} else if (!bw->armed) {
		bw->armed = 1;
		bw->next_at = now + bw->period_ns;
		bpf_timer_start(&bw->timer, bw->period_ns, 0);
	}
	return 0;
}

SEC("syscall")
int bw_update(struct tm_bw_req *req)
{
	struct tm_bw_req r = {.cgid = req->cgid,
			      .quota_us = req->quota_us,
			      .period_us = req->period_us,
			      .burst_us = req->burst_us,
			      .set = req->set,
			      .cap_mcpu = req->cap_mcpu,
			      .owner = req->owner};

	barrier();
	req->ret = bw_apply(&r);
	return 0;
}

/*
 * Linux 6.17 tells the scheduler of a cpu.max write (ops.cgroup_set_bandwidth);
 * there the limit acts at once, the loader's rescan staying as a second path.
 * "max" comes as a quota too large for any period. Not in 6.12: the loader
 * drops the callback there, and this path is untested on this project's kernel.
 */
/* the kernel's largest cpu.max quota (2^44 - 1 us); beyond: "max" */
#define TM_BW_QUOTA_MAX_US ((1ULL << 44) - 1)

void BPF_STRUCT_OPS(tidemark_cgroup_set_bandwidth, struct cgroup *cgrp, u64 period_us, u64 quota_us,
		    u64 burst_us)
{
	struct tm_bw_req r = {.cgid = BPF_CORE_READ(cgrp, kn, id), .set = TM_BW_SET_MAX};

	if (quota_us > TM_BW_QUOTA_MAX_US)
		quota_us = 0; /* no limit */
	r.quota_us = quota_us;
	r.period_us = period_us ? period_us : TM_BW_PERIOD_DFL_US;
	r.burst_us = quota_us ? burst_us : 0;
	/* a value the rescan also refuses (and says so): the old limit stays */
	bw_apply(&r);
}

#endif /* __TM_BANDWIDTH_BPF_H */
