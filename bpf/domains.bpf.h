/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cache-domain placement: domains and their CPUs, homes of ONLINE cgroups,
 * idle-CPU search inside a home, the per-domain queues and soft homes.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_DOMAINS_BPF_H
#define __TM_DOMAINS_BPF_H

static __always_inline u32 dom_of(s32 cpu)
{
	u64 c = (u32)cpu;

	/* keep clang from checking one register and indexing with another */
	barrier_var(c);
	if (c >= TM_MAX_CPUS)
		return TM_NO_DOM;
	return cpu_dom[c];
}

/* Domain @d's bit in a set of domains with queues in use (domq_*). */
static __always_inline bool domq_has(u64 m, u32 d)
{
	return m & (1ULL << (d & 63));
}

/* The queue of domain @d's strict or soft homes, about to get a task. */
static __always_inline u64 domq_take(u32 d, bool soft)
{
	u64 *m = soft ? &domq_soft : &domq_strict;

	if (!domq_has(*m, d))
		__sync_fetch_and_or(m, 1ULL << (d & 63));
	return tm_dom_dsq(d, soft);
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

	if (!dc)
		scx_bpf_error("tmp_masks lookup failed for CPU %u", key);
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
 * An idle CPU in @doms among @allowed (a task's p->cpus_ptr, read once by the
 * caller: see tidemark_enqueue), claimed (its idle bit cleared); -1 if none.
 * @allowed NULL: any CPU of @doms.
 */
__noinline s32 pick_idle_in(const struct cpumask *allowed __arg_trusted __arg_nullable, u64 doms)
{
	s32 found = -1;
	u32 d;

	/* global, verified once per program and apart from its callers' RCU
	 * sections: the domains' masks are read under its own */
	bpf_rcu_read_lock();
	bpf_for (d, 0, nr_doms) {
		struct bpf_cpumask *m, *tmp;
		s32 cpu;

		if (!(doms >> d & 1))
			continue;
		m = dom_cpus(d);
		if (!m)
			continue;
		if (allowed) {
			/*
			 * Looked up here, not before the loop: there the
			 * compiler reduced "allowed && tmp" to a test of
			 * @allowed alone, and the verifier, which cannot rule
			 * NULL out for an RCU pointer, saw a NULL scratch mask
			 * passed on (multi-L3 loads failed).
			 */
			tmp = tmp_mask();
			if (!tmp)
				break;
			bpf_cpumask_and(tmp, (const struct cpumask *)m, allowed);
			cpu = smt_pick_idle((const struct cpumask *)tmp);
		} else {
			cpu = smt_pick_idle((const struct cpumask *)m);
		}
		if (cpu >= 0) {
			found = cpu;
			break;
		}
	}
	bpf_rcu_read_unlock();
	return found;
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

/*
 * Home of the nearest placed ancestor of @cg, keeping only the domains @p's
 * affinity reaches (a task whose affinity excludes its home runs as
 * unhomed, never an error).
 */
static void resolve_home(struct task_struct *p, struct cgroup *cg, struct task_ctx *tctx)
{
	const struct cpumask *allowed;
	struct tm_home *h;
	u64 reach = 0;
	u32 i;

	tctx->home = 0;
	tctx->soft = 0;
	if (!nr_doms)
		return;
	h = cg_nearest(cg, &homes);
	if (!h || !h->doms)
		return;
	/* its callers are global functions, verified apart from any RCU
	 * section theirs hold, and bw_update's is sleepable */
	bpf_rcu_read_lock();
	allowed = p->cpus_ptr; /* read once, inside: see tidemark_enqueue */
	bpf_for (i, 0, nr_doms) {
		struct bpf_cpumask *m;

		if (!(h->doms >> i & 1))
			continue;
		m = dom_cpus(i);
		if (m && bpf_cpumask_intersects((const struct cpumask *)m, allowed))
			reach |= 1ULL << i;
	}
	bpf_rcu_read_unlock();
	if (!reach) {
		stat_inc(TM_STAT_HOME_UNREACHABLE);
		return;
	}
	tctx->home = reach;
	tctx->soft = h->soft ? 1 : 0;
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

__noinline int hi_queues_of(u32 d, struct hi_queues *q)
{
	u64 ids[3] = {TM_DSQ_HI, 0, 0}, vt;
	u32 i, j, n = 0, nids = 1;

	/* global (verified once): its orderings did not fan dispatch out */
	if (!q)
		return 0;
	if (nr_doms && d < nr_doms) {
		if (domq_has(domq_strict, d))
			ids[nids++] = tm_dom_dsq(d, false);
		if (domq_has(domq_soft, d))
			ids[nids++] = tm_dom_dsq(d, true);
	}
	for (i = 0; i < 3; i++) {
		if (i >= nids || !head_vtime(ids[i], &vt))
			continue;
		/* insertion: at most three (counted here, not in *@q, which
		 * the verifier does not bound) */
		for (j = n; j > 0 && j < 3 && time_before(vt, q->vt[j - 1]); j--) {
			q->vt[j] = q->vt[j - 1];
			q->dsq[j] = q->dsq[j - 1];
		}
		if (j < 3) {
			q->vt[j] = vt;
			q->dsq[j] = ids[i];
		}
		n++;
	}
	q->n = n;
	return 0;
}

/* No ONLINE/SYSTEM task waits in a queue a CPU of domain @d serves. */
static __always_inline bool hi_queues_empty(u32 d)
{
	if (scx_bpf_dsq_nr_queued(TM_DSQ_HI) > 0)
		return false;
	if (!nr_doms || d >= nr_doms)
		return true;
	if (domq_has(domq_strict, d) && scx_bpf_dsq_nr_queued(tm_dom_dsq(d, false)) > 0)
		return false;
	return !domq_has(domq_soft, d) || scx_bpf_dsq_nr_queued(tm_dom_dsq(d, true)) <= 0;
}

/* Soft homes can time out at all (home_wait_us at its maximum means never). */
static __always_inline bool soft_homes_on(void)
{
	return nr_doms && home_wait_ns < TM_HOME_WAIT_US_MAX * 1000ULL;
}

/* A queued soft-homed task that has waited home_wait_ns for its home. */
static __always_inline bool soft_wait_over(struct task_ctx *tctx, u64 now)
{
	return tctx && tctx->enq_at && time_before(tctx->enq_at, now) &&
	       now - tctx->enq_at >= home_wait_ns;
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

		if (!domq_has(domq_soft, d) || !scx_bpf_dsq_nr_queued(dsq))
			continue;
		bpf_for_each (scx_dsq, p, dsq, 0) {
			struct task_ctx *tctx = task_ctx(p);
			s32 cpu;

			if (soft_wait_over(tctx, now)) {
				cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
				if (cpu >= 0)
					scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
			}
			break;
		}
	}
	bpf_rcu_read_unlock();
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

#endif /* __TM_DOMAINS_BPF_H */
