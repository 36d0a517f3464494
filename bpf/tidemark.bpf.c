/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_tidemark: the tidemark colocation scheduler.
 *
 * Policy (foundation stage):
 * - Every task is scheduled by this class (full switch, not partial mode).
 * - A waking task whose previous or another CPU is idle is placed straight on
 *   that CPU's local queue.
 * - Otherwise it joins one shared queue ordered by weighted virtual time
 *   (cgroup/task weight honoured); every CPU drains the shared queue, so a
 *   task restricted by affinity is always picked by some allowed CPU.
 * - Tasks that can run on one CPU only (per-CPU kthreads, pinned tasks,
 *   migration-disabled tasks) go to that CPU's local queue at once: the
 *   shared queue would only delay them.
 * - A sleeper's banked vtime credit is capped at one slice, so waking tasks
 *   get prompt service without monopolising the CPU.
 *
 * Classes, the BE watermark and CCX placement build on this skeleton.
 */
#include <scx/common.bpf.h>
#include "tidemark.h"
#include "tidemark_compat.bpf.h"

char _license[] SEC("license") = "GPL";

/* Set by the loader before load; see scx_tidemark --help. */
const volatile u64 slice_ns = TM_SLICE_US_DFL * 1000ULL;

UEI_DEFINE(uei);

/* Highest vtime seen running: the shared queue's "now". Races are benign. */
static u64 vtime_now;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(struct tm_cpu_stats));
	__uint(max_entries, 1);
} stats SEC(".maps");

static __always_inline void stat_inc(enum tm_stat_idx idx)
{
	u32 zero = 0;
	struct tm_cpu_stats *s = bpf_map_lookup_elem(&stats, &zero);

	if (s && idx < TM_NR_STATS)
		s->cnt[idx]++;
}

static __always_inline bool time_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

s32 BPF_STRUCT_OPS(tidemark_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle) {
		stat_inc(TM_STAT_ENQ_DIRECT);
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	}
	return cpu;
}

void BPF_STRUCT_OPS(tidemark_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 vtime;
	s32 cpu;

	/*
	 * enqueue runs on the task's own runqueue, so SCX_DSQ_LOCAL is a CPU
	 * the task may run on even when it cannot migrate.
	 */
	if (p->nr_cpus_allowed == 1 || p->migration_disabled) {
		stat_inc(TM_STAT_ENQ_LOCAL_PINNED);
		tm_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		scx_bpf_kick_cpu(scx_bpf_task_cpu(p), SCX_KICK_IDLE);
		return;
	}

	vtime = tm_vtime_wakeup(p->scx.dsq_vtime, vtime_now, slice_ns, p->scx.weight);
	stat_inc(TM_STAT_ENQ_SHARED);
	tm_insert_vtime(p, TM_DSQ_SHARED, slice_ns, vtime, enq_flags);

	/* Wakeups that bypassed select_cpu still deserve an idle CPU. */
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0) {
		stat_inc(TM_STAT_KICK_IDLE);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
}

void BPF_STRUCT_OPS(tidemark_dispatch, s32 cpu, struct task_struct *prev)
{
	if (tm_move_to_local(TM_DSQ_SHARED)) {
		stat_inc(TM_STAT_DISPATCH);
		return;
	}
	/* Nothing waits: let the previous task go on for another slice. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED)) {
		prev->scx.slice = slice_ns;
		stat_inc(TM_STAT_KEEP_RUNNING);
	}
}

void BPF_STRUCT_OPS(tidemark_running, struct task_struct *p)
{
	if (time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(tidemark_stopping, struct task_struct *p, bool runnable)
{
	u64 used = slice_ns > p->scx.slice ? slice_ns - p->scx.slice : 0;

	p->scx.dsq_vtime += tm_vtime_delta(used, p->scx.weight);
}

void BPF_STRUCT_OPS(tidemark_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = vtime_now;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(tidemark_init)
{
	return scx_bpf_create_dsq(TM_DSQ_SHARED, -1);
}

void BPF_STRUCT_OPS(tidemark_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(tidemark_ops,
	       .select_cpu	= (void *)tidemark_select_cpu,
	       .enqueue		= (void *)tidemark_enqueue,
	       .dispatch	= (void *)tidemark_dispatch,
	       .running		= (void *)tidemark_running,
	       .stopping	= (void *)tidemark_stopping,
	       .enable		= (void *)tidemark_enable,
	       .init		= (void *)tidemark_init,
	       .exit		= (void *)tidemark_exit,
	       .name		= "tidemark");
