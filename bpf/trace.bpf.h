/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decision trace: what the scheduler decided, event by event, into the ring
 * buffer "trace" while "trace_ctl" asks for it (tidemarkctl trace). Off, a
 * trace point is a load of trace_mask and a branch: the events are built
 * out of line. trace_mask follows trace_ctl at every window, and drops to 0
 * by itself at trace_ctl.until_ns.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_TRACE_BPF_H
#define __TM_TRACE_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TM_TRACE_RB_BYTES);
} trace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, u32);
	__type(value, struct tm_trace_ctl);
	__uint(max_entries, 1);
} trace_ctl SEC(".maps");

/* 1 << TM_TR_* of the kinds being traced; 0 almost always. */
static u32 trace_mask;
/* Bumped when a trace starts; a CPU's entry is set to it once the trace
 * said what runs there (a task kept running for seconds has no run event). */
static u32 trace_gen;
static u32 trace_seen[TM_MAX_CPUS];

#ifdef TM_TRACE_COMPILED_OUT
/* the build the zero-cost measurement compares with (make bench, tests) */
#define trace_on(kind) false
#else
#define trace_on(kind) unlikely(trace_mask &(1u << (kind)))
#endif

/* At every window: take trace_ctl's mask until its deadline. */
static __always_inline void trace_refresh(u64 now)
{
	u32 zero = 0;
	struct tm_trace_ctl *tc = bpf_map_lookup_elem(&trace_ctl, &zero);

	u32 m = tc && time_before(now, tc->until_ns) ? tc->mask & TM_TRACE_ALL : 0;

	if (m && !trace_mask)
		trace_gen++;
	trace_mask = m;
}

/* One event; @p: the task concerned (its class and cgroup as last
 * resolved), NULL for an event about @cpu alone. Global functions, out of
 * line and verified once: five arguments at most, and nothing of them in
 * the callers' hot paths or in their verification. */
__noinline int trace_ev(u32 kind, s32 cpu, s64 arg,
			struct task_struct *p __arg_trusted __arg_nullable, u32 aux)
{
	struct tm_trace_ev *ev = bpf_ringbuf_reserve(&trace, sizeof(*ev), 0);
	struct task_ctx *tctx;

	if (!ev) {
		stat_inc(TM_STAT_TRACE_LOST);
		return 0;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->arg = arg;
	ev->cpu = cpu;
	ev->kind = kind;
	ev->aux = aux;
	ev->cgid = 0;
	ev->cls = TM_CLASS_NONE;
	ev->pid = 0;
	ev->comm[0] = 0;
	if (p) {
		tctx = task_ctx(p);
		if (tctx) {
			ev->cgid = tctx->cgid;
			ev->cls = tctx->class;
		}
		ev->pid = p->pid;
		bpf_probe_read_kernel_str(ev->comm, sizeof(ev->comm), p->comm);
	}
	/* no wakeup: the reader drains every 50 ms, and a wakeup per event
	 * would make the reader's own runs most of what it traces */
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
	return 0;
}

/* @p starts running after waiting @wait ns (out of line: nothing of it is
 * evaluated when the trace is off). */
__noinline int trace_run_ev(struct task_struct *p __arg_trusted, u64 wait)
{
	s32 cpu = scx_bpf_task_cpu(p);

	if ((u32)cpu < TM_MAX_CPUS)
		trace_seen[cpu] = trace_gen;
	return trace_ev(TM_TR_RUN, cpu, wait, p, 0);
}
#define trace_run(p, wait)                     \
	do {                                   \
		if (trace_on(TM_TR_RUN))       \
			trace_run_ev(p, wait); \
	} while (0)

/* At a tick: what ran on this CPU when the trace began, once (aux 1). */
__noinline int trace_tick_ev(struct task_struct *p __arg_trusted)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= TM_MAX_CPUS || trace_seen[cpu] == trace_gen)
		return 0;
	trace_seen[cpu] = trace_gen;
	return trace_ev(TM_TR_RUN, cpu, 0, p, 1);
}
#define trace_tick(p)                     \
	do {                              \
		if (trace_on(TM_TR_RUN))  \
			trace_tick_ev(p); \
	} while (0)

#define trace_task(kind, p, cpu, arg, aux)                \
	do {                                              \
		if (trace_on(kind))                       \
			trace_ev(kind, cpu, arg, p, aux); \
	} while (0)

/* A window ended: its inputs and outputs, for tuning (tidemarkctl trace):
 * arg the next budget, cgid the running error (both signed), aux and pid
 * what ONLINE+SYSTEM and BE used in it, in us. */
__noinline int trace_window_ev(s64 budget, s64 over, u64 hi_ns, u64 be_ns)
{
	struct tm_trace_ev *ev = bpf_ringbuf_reserve(&trace, sizeof(*ev), 0);

	if (!ev) {
		stat_inc(TM_STAT_TRACE_LOST);
		return 0;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->arg = budget;
	ev->cgid = (u64)over;
	ev->cpu = bpf_get_smp_processor_id();
	ev->kind = TM_TR_WINDOW;
	ev->cls = TM_CLASS_NONE;
	ev->aux = hi_ns / 1000;
	ev->pid = be_ns / 1000;
	ev->comm[0] = 0;
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
	return 0;
}

#define trace_window(budget, over, hi, be)                     \
	do {                                                   \
		if (trace_on(TM_TR_WINDOW))                    \
			trace_window_ev(budget, over, hi, be); \
	} while (0)

/* An event about @cpu alone. */
#define trace_cpu(kind, cpu, arg)                          \
	do {                                               \
		if (trace_on(kind))                        \
			trace_ev(kind, cpu, arg, NULL, 0); \
	} while (0)

#endif /* __TM_TRACE_BPF_H */
