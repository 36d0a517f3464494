/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the tidemark BPF scheduler, its loader and host unit tests.
 * Fixed-width types only; everything the two sides exchange is sized here.
 * Pure decision logic lives in static inline functions so host unit tests
 * exercise exactly the code the scheduler runs.
 */
#ifndef __TIDEMARK_H
#define __TIDEMARK_H

#ifndef __bpf__
#include <linux/types.h>
#include <stdbool.h>
#endif

enum tm_limits {
	TM_MAX_CPUS = 512,
};

/* User DSQ ids (bit 63 clear). */
enum tm_dsq {
	/* every CPU drains it, so no task is ever stranded by affinity */
	TM_DSQ_SHARED = 0,
};

enum tm_defaults {
	TM_SLICE_US_DFL = 5000,
	TM_SLICE_US_MIN = 100,
	TM_SLICE_US_MAX = 100000,
	/* sched_ext's own ceiling for the watchdog */
	TM_TIMEOUT_MS_MAX = 30000,
	/* cgroup v2 cpu.weight: default and range */
	TM_WEIGHT_DFL = 100,
	TM_WEIGHT_MIN = 1,
	TM_WEIGHT_MAX = 10000,
};

/* enum scx_exit_kind: values from here on are errors (kernel ABI). */
#define TM_EXIT_KIND_ERROR 1024


/*
 * Counters: X(enum suffix, name shown to users, help text). Per-CPU in BPF,
 * summed by userspace; names are stable (tools parse the JSON form).
 */
#define TM_STATS(X)                                                                    \
	X(ENQ_DIRECT, "enq_direct", "wakeups placed straight on an idle CPU")          \
	X(ENQ_SHARED, "enq_shared", "tasks queued on the shared queue")                \
	X(ENQ_LOCAL_PINNED, "enq_local_pinned", "pinned or migration-disabled tasks queued on their CPU") \
	X(DISPATCH, "dispatch", "tasks moved from the shared queue to a CPU")          \
	X(KICK_IDLE, "kick_idle", "idle CPUs woken for queued work")                   \
	X(KEEP_RUNNING, "keep_running", "slices extended because nothing else waited")

#define TM_STAT_ENUM(e, n, h) TM_STAT_##e,
enum tm_stat_idx { TM_STATS(TM_STAT_ENUM) TM_NR_STATS };
#undef TM_STAT_ENUM

struct tm_cpu_stats {
	__u64 cnt[TM_NR_STATS];
};
_Static_assert(sizeof(struct tm_cpu_stats) == TM_NR_STATS * 8, "tm_cpu_stats layout");

/*
 * Weighted vtime: a task's virtual time advances by its runtime scaled
 * inversely to its weight, so a weight-200 task gets twice the CPU of a
 * weight-100 one when both are runnable.
 */
static inline __u64 tm_vtime_delta(__u64 runtime_ns, __u32 weight)
{
	if (weight < TM_WEIGHT_MIN)
		weight = TM_WEIGHT_MIN;
	return runtime_ns * TM_WEIGHT_DFL / weight;
}

/*
 * A task that slept long must not come back with a vtime so far behind that
 * it monopolises the CPU: cap the credit it can bank at one slice (scaled by
 * weight) behind the queue's current vtime.
 */
static inline __u64 tm_vtime_wakeup(__u64 task_vtime, __u64 now_vtime, __u64 slice_ns,
				    __u32 weight)
{
	__u64 credit = tm_vtime_delta(slice_ns, weight);
	__u64 floor = now_vtime > credit ? now_vtime - credit : 0;

	return task_vtime < floor ? floor : task_vtime;
}

/* Tunables validated identically by the loader and the unit tests. */
static inline bool tm_slice_us_valid(__u64 slice_us)
{
	return slice_us >= TM_SLICE_US_MIN && slice_us <= TM_SLICE_US_MAX;
}

#endif /* __TIDEMARK_H */
