/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kfunc wrappers that load on 6.12 and on kernels with the 6.13 renames.
 *
 * 6.12 has scx_bpf_dispatch[_vtime]() and scx_bpf_consume(); 6.13 added
 * scx_bpf_dsq_insert[_vtime]() and scx_bpf_dsq_move_to_local() and 6.17
 * removed the old names. Both spellings are declared weak (libbpf drops the
 * ___suffix when resolving), and bpf_ksym_exists() picks the one the running
 * kernel has; the other branch is removed by the verifier.
 * Only the old names are exercised by tidemark's tests (6.12 kernel).
 */
#ifndef __TIDEMARK_COMPAT_BPF_H
#define __TIDEMARK_COMPAT_BPF_H

void scx_bpf_dsq_insert___tm(struct task_struct *p, u64 dsq_id, u64 slice,
			     u64 enq_flags) __ksym __weak;
void scx_bpf_dispatch___tm(struct task_struct *p, u64 dsq_id, u64 slice,
			   u64 enq_flags) __ksym __weak;
void scx_bpf_dsq_insert_vtime___tm(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
				   u64 enq_flags) __ksym __weak;
void scx_bpf_dispatch_vtime___tm(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
				 u64 enq_flags) __ksym __weak;
bool scx_bpf_dsq_move_to_local___tm(u64 dsq_id) __ksym __weak;
bool scx_bpf_consume___tm(u64 dsq_id) __ksym __weak;
/* 6.12: dispatch_[vtime_]from_dsq, 6.13+: dsq_move[_vtime] */
bool scx_bpf_dsq_move_vtime___tm(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id,
				 u64 enq_flags) __ksym __weak;
bool scx_bpf_dispatch_vtime_from_dsq___tm(struct bpf_iter_scx_dsq *it, struct task_struct *p,
					  u64 dsq_id, u64 enq_flags) __ksym __weak;
bool scx_bpf_dsq_move___tm(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id,
			   u64 enq_flags) __ksym __weak;
bool scx_bpf_dispatch_from_dsq___tm(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id,
				    u64 enq_flags) __ksym __weak;
void scx_bpf_dsq_move_set_vtime___tm(struct bpf_iter_scx_dsq *it, u64 vtime) __ksym __weak;
void scx_bpf_dispatch_from_dsq_set_vtime___tm(struct bpf_iter_scx_dsq *it, u64 vtime) __ksym __weak;

static __always_inline void tm_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert___tm))
		scx_bpf_dsq_insert___tm(p, dsq_id, slice, enq_flags);
	else
		scx_bpf_dispatch___tm(p, dsq_id, slice, enq_flags);
}

static __always_inline void tm_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
					    u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert_vtime___tm))
		scx_bpf_dsq_insert_vtime___tm(p, dsq_id, slice, vtime, enq_flags);
	else
		scx_bpf_dispatch_vtime___tm(p, dsq_id, slice, vtime, enq_flags);
}

static __always_inline bool tm_move_to_local(u64 dsq_id)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move_to_local___tm))
		return scx_bpf_dsq_move_to_local___tm(dsq_id);
	return scx_bpf_consume___tm(dsq_id);
}

/* Move @p, met while iterating @it, to the vtime-ordered @dsq_id at @vtime. */
static __always_inline bool tm_move_vtime(struct bpf_iter_scx_dsq *it, struct task_struct *p,
					  u64 dsq_id, u64 vtime)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move_vtime___tm)) {
		scx_bpf_dsq_move_set_vtime___tm(it, vtime);
		return scx_bpf_dsq_move_vtime___tm(it, p, dsq_id, 0);
	}
	scx_bpf_dispatch_from_dsq_set_vtime___tm(it, vtime);
	return scx_bpf_dispatch_vtime_from_dsq___tm(it, p, dsq_id, 0);
}

/* Move @p, met while iterating @it, to @dsq_id (e.g. SCX_DSQ_LOCAL). */
static __always_inline bool tm_move(struct bpf_iter_scx_dsq *it, struct task_struct *p, u64 dsq_id)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move___tm))
		return scx_bpf_dsq_move___tm(it, p, dsq_id, 0);
	return scx_bpf_dispatch_from_dsq___tm(it, p, dsq_id, 0);
}

#endif /* __TIDEMARK_COMPAT_BPF_H */
