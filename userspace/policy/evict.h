/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Eviction decisions, pure functions on plain arrays (host unit tests run
 * exactly this code): how much must be released, and which BE cgroups go.
 */
#ifndef __TM_EVICT_H
#define __TM_EVICT_H
#include <stdbool.h>
#include <stdint.h>

struct tm_victim {
	uint64_t id;
	int priority;	 /* lower goes first */
	uint64_t amount; /* what killing it releases (bytes, mCPU: the caller's unit) */
	bool dying;	 /* killed earlier, memory not yet released */
};

/*
 * Bytes to release so that used memory goes down to @lower_pct of @total:
 * 0 when already there.
 */
static inline uint64_t tm_evict_need(uint64_t total, uint64_t used, uint32_t lower_pct)
{
	uint64_t target = total / 100 * lower_pct + total % 100 * lower_pct / 100;

	return used > target ? used - target : 0;
}

/*
 * Back-off after the @kills-th kill of the same cgroup or pod: @initial_ms,
 * doubled for each kill after the first, at most @max_ms.
 */
static inline uint64_t tm_evict_backoff_ms(uint32_t kills, uint64_t initial_ms, uint64_t max_ms)
{
	uint64_t b = initial_ms;

	for (uint32_t k = 1; k < kills && b < max_ms; k++)
		b *= 2;
	return b < max_ms ? b : max_ms;
}

/* Node memory used, % of total, rounded down. */
static inline uint32_t tm_mem_used_pct(uint64_t total, uint64_t used)
{
	return total ? (uint32_t)(used * 100 / total) : 0;
}

/* Does @a go before @b? Lowest priority first, then the largest. */
static inline bool tm_victim_before(const struct tm_victim *a, const struct tm_victim *b)
{
	if (a->priority != b->priority)
		return a->priority < b->priority;
	if (a->amount != b->amount)
		return a->amount > b->amount;
	return a->id < b->id; /* stable, whatever the input order */
}

/*
 * Choose victims to release @need (in their amount's unit). Memory of victims already dying
 * counts as released (they are not chosen again). @order receives the
 * indexes of the chosen ones, in kill order; returns how many. Stops when
 * enough is released or no candidate is left.
 */
static inline int tm_evict_pick(const struct tm_victim *v, int n, uint64_t need, int *order)
{
	uint64_t released = 0;
	int k = 0, m = 0;

	for (int i = 0; i < n; i++)
		if (v[i].dying)
			released += v[i].amount;
	/* candidates, insertion-sorted (n is small) */
	for (int i = 0; i < n; i++) {
		int j;

		if (v[i].dying)
			continue;
		for (j = m; j > 0 && tm_victim_before(&v[i], &v[order[j - 1]]); j--)
			order[j] = order[j - 1];
		order[j] = i;
		m++;
	}
	while (k < m && released < need) {
		released += v[order[k]].amount;
		k++;
	}
	return k;
}

/*
 * CPU request of a BE cgroup from its cpu.weight, inverting kubelet's
 * mapping (shares = mCPU x 1024 / 1000; weight = 1 + (shares - 2) x 9999 /
 * 262142), so a pod's request comes back to within kubelet's rounding.
 */
static inline uint32_t tm_weight_to_mcpu(uint32_t weight)
{
	uint64_t shares;

	if (weight < 1)
		weight = 1;
	shares = 2 + ((uint64_t)(weight - 1) * 262142 + 9998) / 9999;
	return (uint32_t)(shares * 1000 / 1024);
}

/*
 * BE satisfaction (see README "CPU eviction"): what the node lets BE use
 * (the scheduler's budget: capacity x suppress - ONLINE/SYSTEM use) over
 * what BE requested. Only meaningful while BE uses at least @gate_pct of
 * what it may; otherwise BE is not short of CPU and false is returned.
 */
static inline bool tm_satisfaction(double allowed_mcpu, double used_mcpu, double request_mcpu,
				   uint32_t gate_pct, double *sat)
{
	if (request_mcpu <= 0 || allowed_mcpu < 0)
		return false;
	if (used_mcpu * 100 < allowed_mcpu * gate_pct)
		return false;
	*sat = allowed_mcpu / request_mcpu;
	return true;
}

/*
 * The CPU evict watermark: mCPU to release so that a node of @cap_mcpu
 * whose CPU use averaged @avg_pct (of capacity) comes down to @lower_pct;
 * 0 unless the average is above @evict_pct.
 */
static inline uint64_t tm_cpu_high_need_mcpu(double avg_pct, uint32_t evict_pct, uint32_t lower_pct,
					     uint64_t cap_mcpu)
{
	double need;

	if (avg_pct <= evict_pct)
		return 0;
	need = (avg_pct - lower_pct) * (double)cap_mcpu / 100.0;
	return need > 0 ? (uint64_t)(need + 0.5) : 0;
}

/* CPU to release so that satisfaction comes back up to @upper_pct. */
static inline double tm_sat_release_mcpu(double request_mcpu, double sat, uint32_t upper_pct)
{
	double r = request_mcpu * (upper_pct / 100.0 - sat);

	return r > 0 ? r : 0;
}
#endif
