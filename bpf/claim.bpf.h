/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Claims and grant timers, which both bandwidth and the BE budget use: a
 * waker claims a CPU running BE (its class goes BE -> NONE, so two wakers
 * never take the same one), and each CPU's grant timer ends a run when its
 * grant does.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_CLAIM_BPF_H
#define __TM_CLAIM_BPF_H

/*
 * Claim @cpu if it runs BE and @p may use it (@allowed: its p->cpus_ptr):
 * its class goes BE -> NONE, so two wakers never pick the same victim.
 */
static __always_inline bool claim_be_cpu_mask(struct task_struct *p, const struct cpumask *allowed,
					      u32 cpu)
{
	struct tm_cpu_ctx *c;

	if (!bpf_cpumask_test_cpu(cpu, allowed))
		return false;
	c = cpu_ctx(cpu);
	if (!c || c->class != TM_CLASS_BE)
		return false;
	if (__sync_val_compare_and_swap(&c->class, TM_CLASS_BE, TM_CLASS_NONE) != TM_CLASS_BE)
		return false;
	stat_inc(TM_STAT_BE_PREEMPTED);
	trace_task(TM_TR_PREEMPT, p, cpu, 0, 0);
	return true;
}

/* claim_be_cpu_mask as a call: global, so what follows a claim in enqueue
 * is walked once, not once per way its checks end */
__noinline int claim_be_one(struct task_struct *p __arg_trusted,
			    const struct cpumask *allowed __arg_trusted, u32 cpu)
{
	return claim_be_cpu_mask(p, allowed, cpu);
}

static __always_inline bool claim_be_cpu_only(struct task_struct *p, u32 cpu)
{
	return claim_be_one(p, p->cpus_ptr, cpu);
}

static __always_inline bool claim_be_cpu(struct task_struct *p, u32 cpu)
{
	if (!claim_be_cpu_only(p, cpu))
		return false;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	return true;
}

/*
 * Claim a CPU running BE among those @p may use (@allowed: its p->cpus_ptr,
 * read once by the caller: see tidemark_enqueue) within @home (0: any), this
 * CPU first (no IPI needed). The caller kicks it. -1 if none. Global: its
 * loop over the CPUs is verified once per program, not at each call site.
 */
__noinline s32 claim_be_in(struct task_struct *p __arg_trusted,
			   const struct cpumask *allowed __arg_trusted, u64 home)
{
	u32 i, self = bpf_get_smp_processor_id();

	if (tm_home_has(home, dom_of(self)) && claim_be_cpu_mask(p, allowed, self))
		return self;
	bpf_for (i, 0, nr_cpus) {
		if (i != self && tm_home_has(home, dom_of(i)) && claim_be_cpu_mask(p, allowed, i))
			return i;
	}
	return -1;
}

/* Arm this CPU's grant timer for @at, or leave it when it fires earlier. */
static __always_inline void grant_timer_at(u64 at, u64 now)
{
	u32 key = bpf_get_smp_processor_id();
	struct grant_timer *gt = bpf_map_lookup_elem(&grant_timers, &key);

	if (!gt) {
		scx_bpf_error("grant_timers lookup failed for CPU %u", key);
		return;
	}
	bpf_timer_start(&gt->timer, time_before(now, at) ? at - now : 0, BPF_F_TIMER_CPU_PIN);
}

#endif /* __TM_CLAIM_BPF_H */
