/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-cgroup BE caps (map "be_caps"): charging a capped cgroup's runs, the
 * refill each window, and letting parked tasks go again.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_CAPS_BPF_H
#define __TM_CAPS_BPF_H

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

#endif /* __TM_CAPS_BPF_H */
