/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Classes: the nearest classified ancestor of a task's cgroup, cached per
 * task until the cgroup or the class map changes; ONLINE/SYSTEM weights.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_CLASSES_BPF_H
#define __TM_CLASSES_BPF_H

/* Task weight scaled by the cpu.weight of the task's cgroup. */
static __always_inline u32 eff_weight(struct task_struct *p, struct task_ctx *tctx)
{
	u32 *cw, gen = weight_gen;

	if (!tctx)
		return tm_eff_weight(p->scx.weight, TM_WEIGHT_DFL);
	/* a hash lookup at every stop and wakeup cost more than the rest of
	 * the vtime sums: looked up again only when a weight changed or the
	 * task's cgroup did (task_class clears cw_gen). gen is read before
	 * the lookup: a change during it is seen at the next call. */
	if (tctx->cw_gen != gen) {
		cw = bpf_map_lookup_elem(&cg_weights, &tctx->cgid);
		tctx->cw = cw ? *cw : TM_WEIGHT_DFL;
		tctx->cw_gen = gen;
	}
	return tm_eff_weight(p->scx.weight, tctx->cw);
}

/* Class of the nearest classified ancestor of @cg, SYSTEM if none (or if
 * its entry is no class: userspace validates what it writes). */
static u32 resolve_class(struct cgroup *cg)
{
	u32 *cls = cg_nearest(cg, &classes);

	return cls && *cls < TM_NR_CLASSES ? *cls : TM_CLASS_SYSTEM;
}

/* The task's class, resolved again when its cgroup or the rules changed.
 * Global: the walk up the cgroups and the home's reach, verified once per
 * program rather than at each of its call sites. */
__noinline u32 task_class(struct task_struct *p __arg_trusted, struct task_ctx *tctx)
{
	struct cgroup *cg;
	u64 cgid;

	if (p->flags & PF_EXITING)
		return TM_CLASS_SYSTEM; /* let it exit: never throttle */
	if (!tctx)
		return TM_CLASS_SYSTEM;
	cg = task_cgroup(p);
	if (!cg)
		return TM_CLASS_SYSTEM;
	cgid = cgroup_id_of(cg);
	if (cgid != tctx->cgid || tctx->gen != class_gen) {
		tctx->class = resolve_class(cg);
		if (tctx->class == TM_CLASS_ONLINE)
			resolve_home(p, cg, tctx);
		else
			tctx->home = 0;
		tctx->cgid = cgid;
		tctx->gen = class_gen;
		tctx->cw_gen = 0; /* its cgroup's weight: looked up again */
		stat_inc(TM_STAT_RECLASSIFY);
	}
	return tctx->class;
}

/*
 * The queue an ONLINE/SYSTEM task taken out of another goes to (its home's
 * domain queue, else the shared one, noted in q_home), its vtime credited
 * from the most advanced running task into *@vt: less than enqueue gives a
 * sleeper, the task did not sleep. Global: verified once, not in each loop.
 */
__noinline u64 requeue_dsq(struct task_struct *p __arg_trusted, struct task_ctx *tctx, u64 *vt)
{
	if (vt)
		*vt = tm_vtime_wakeup(p->scx.dsq_vtime, vtime_now, slice_ns, eff_weight(p, tctx));
	if (!tctx)
		return TM_DSQ_HI;
	if (tctx->class == TM_CLASS_ONLINE && tctx->home) {
		tctx->q_home = tctx->home;
		return domq_take(home_first(tctx->home), tctx->soft);
	}
	tctx->q_home = 0;
	return TM_DSQ_HI;
}

/*
 * After a class change, tasks already queued as BE may be ONLINE or SYSTEM
 * now: move them to the HI queue at once instead of leaving them throttled.
 * Tasks that became BE are caught at their next tick or enqueue.
 */
__noinline int requeue_reclassified(void)
{
	struct task_struct *p;
	u32 gen = class_gen;

	if (be_scan_gen == gen)
		return 0;
	be_scan_gen = gen;
	bpf_for_each (scx_dsq, p, TM_DSQ_BE, 0) {
		struct task_ctx *tctx = task_ctx(p);
		u64 vtime = 0, dsq;

		if (task_class(p, tctx) == TM_CLASS_BE)
			continue;
		dsq = requeue_dsq(p, tctx, &vtime);
		tm_move_vtime(BPF_FOR_EACH_ITER, p, dsq, vtime);
	}
	return 0;
}

#endif /* __TM_CLASSES_BPF_H */
