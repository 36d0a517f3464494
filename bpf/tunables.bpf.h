/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only writer of the tunables once the scheduler runs (tunables_update).
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_TUNABLES_BPF_H
#define __TM_TUNABLES_BPF_H

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
	struct tm_tunables val = req->val, *t, next, prev;
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
	prev = *t;
	next = prev;
#define TM_TUN_SET(f, N, u, d, lo, hi, w, e) \
	if (set & TM_TUN_##N)                \
		next.f = val.f;
	TM_TUNABLES(TM_TUN_SET)
#undef TM_TUN_SET
	if (bump)
		next.class_gen++;
	if (tm_tunables_check(&next, cap_cpus))
		ret = -EINVAL;
	else
		*t = next;
	bpf_spin_unlock(&l->lock);
	req->val = next;
	req->prev = prev;
	req->ret = ret;
	req->cap_cpus = cap_cpus;
	return 0;
}

#endif /* __TM_TUNABLES_BPF_H */
