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
	u32 *cw = tctx ? bpf_map_lookup_elem(&cg_weights, &tctx->cgid) : NULL;

	return tm_eff_weight(p->scx.weight, cw ? *cw : TM_WEIGHT_DFL);
}

/* Class of the nearest classified ancestor of @cg, SYSTEM if none (or if
 * its entry is no class: userspace validates what it writes). */
static u32 resolve_class(struct cgroup *cg)
{
	u32 *cls = cg_nearest(cg, &classes);

	return cls && *cls < TM_NR_CLASSES ? *cls : TM_CLASS_SYSTEM;
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

#endif /* __TM_CLASSES_BPF_H */
