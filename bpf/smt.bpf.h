/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SMT: two hardware threads of a core share its execution units, so BE on
 * the sibling of a thread running ONLINE takes a large share of the core
 * from ONLINE. With smt_expel, ONLINE sent to a thread or starting on it
 * preempts BE on its siblings at once, a thread does not start BE while a
 * sibling runs ONLINE or is about to, and is kicked when that ends. The bounded wait
 * (max_be_wait_ms) and the floor ahead of ONLINE still run: they are guarantees. Siblings come from
 * the loader (the topology's cores), never from CPU numbering. Part of tidemark.bpf.c (one
 * translation unit), in order: after state.bpf.h, before domains.bpf.h (which picks idle cores).
 */
#ifndef __TM_SMT_BPF_H
#define __TM_SMT_BPF_H

static __always_inline bool smt_on(void)
{
	return smt_present && smt_expel;
}

/* The i-th sibling of @cpu, -1 when there is no more. */
static __always_inline s32 smt_sib(s32 cpu, u32 i)
{
	u64 k = (u64)(u32)cpu * (TM_MAX_SMT - 1) + i;

	/* keep clang from checking one register and indexing with another */
	barrier_var(k);
	if ((u32)cpu >= TM_MAX_CPUS || i >= TM_MAX_SMT - 1 || k >= TM_MAX_CPUS * (TM_MAX_SMT - 1))
		return -1;
	return (s32)cpu_sibs[k] - 1;
}

/* A sibling of @cpu runs ONLINE now. */
static bool smt_sib_online(s32 cpu)
{
	u32 i;

	if (!smt_on())
		return false;
	bpf_for (i, 0, TM_MAX_SMT - 1) {
		s32 s = smt_sib(cpu, i);
		struct tm_cpu_ctx *c;

		if (s < 0)
			break;
		c = cpu_ctx(s);
		/* running ONLINE, or about to: sent there, not started yet */
		if (c && (c->class == TM_CLASS_ONLINE || c->online_next))
			return true;
	}
	return false;
}

/* BE must not start on @cpu now (its sibling runs ONLINE): counted. */
static __always_inline bool smt_hold_be(s32 cpu)
{
	if (!smt_sib_online(cpu))
		return false;
	stat_inc(TM_STAT_SMT_HELD);
	return true;
}

/* ONLINE starts on @cpu, or was just sent there (@sent: from then until
 * it starts or the CPU looks for work, the siblings hold BE too): BE on
 * its siblings is preempted at once. The victim's class goes BE -> NONE,
 * as when a waker claims it, so a waker and this never both count it. */
static void smt_expel_siblings(s32 cpu, bool sent)
{
	struct tm_cpu_ctx *me;
	u32 i;

	if (!smt_on())
		return;
	if (sent && (me = cpu_ctx(cpu)))
		me->online_next = 1;
	bpf_for (i, 0, TM_MAX_SMT - 1) {
		s32 s = smt_sib(cpu, i);
		struct tm_cpu_ctx *c;

		if (s < 0)
			break;
		c = cpu_ctx(s);
		if (!c || c->class != TM_CLASS_BE || c->forced)
			continue;
		if (__sync_val_compare_and_swap(&c->class, TM_CLASS_BE, TM_CLASS_NONE) !=
		    TM_CLASS_BE)
			continue;
		stat_inc(TM_STAT_SMT_EXPELLED);
		scx_bpf_kick_cpu(s, SCX_KICK_PREEMPT);
	}
}

/* ONLINE stopped on @cpu: siblings that may have stayed idle for it are
 * woken if BE waits and may run. */
static void smt_release_siblings(s32 cpu)
{
	u32 i;

	if (!smt_on() || !scx_bpf_dsq_nr_queued(TM_DSQ_BE) || (!be_budget_left() && !floor_owed()))
		return;
	bpf_for (i, 0, TM_MAX_SMT - 1) {
		s32 s = smt_sib(cpu, i);

		if (s < 0)
			break;
		scx_bpf_kick_cpu(s, SCX_KICK_IDLE);
	}
}

/* @cpu's whole core is idle (always true when SMT does not matter). */
static bool smt_core_idle(s32 cpu)
{
	const struct cpumask *m;
	bool idle;

	if (!smt_on())
		return true;
	m = scx_bpf_get_idle_smtmask();
	idle = bpf_cpumask_test_cpu(cpu, m);
	scx_bpf_put_idle_cpumask(m);
	return idle;
}

/* An idle CPU @p may use, a whole idle core first when SMT matters (for
 * ONLINE: no sibling to share with; for BE: no ONLINE sibling to hurt). */
static __always_inline s32 smt_pick_idle(const struct cpumask *mask)
{
	s32 cpu;

	if (smt_on()) {
		cpu = scx_bpf_pick_idle_cpu(mask, SCX_PICK_IDLE_CORE);
		if (cpu >= 0)
			return cpu;
	}
	return scx_bpf_pick_idle_cpu(mask, 0);
}

#endif /* __TM_SMT_BPF_H */
