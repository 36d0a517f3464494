/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Node-load arithmetic for the reports, pure functions (host unit tests run
 * exactly this code): window statistics and BE allocatable.
 */
#ifndef __TM_NODELOAD_H
#define __TM_NODELOAD_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tm_wstat {
	double avg, p50, p90, p95, p99;
	uint32_t n;
};

static inline int tm_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of @sorted (ascending, n > 0). */
static inline double tm_pctl(const double *sorted, uint32_t n, uint32_t pct)
{
	uint64_t rank = ((uint64_t)pct * n + 99) / 100; /* ceil(p/100 x n) */

	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

/* Statistics of @v (n values; @scratch holds n doubles). */
static inline struct tm_wstat tm_window_stats(const double *v, uint32_t n, double *scratch)
{
	struct tm_wstat s = {.n = n};
	double sum = 0;

	if (!n)
		return s;
	memcpy(scratch, v, n * sizeof(*v));
	qsort(scratch, n, sizeof(*scratch), tm_cmp_double);
	for (uint32_t i = 0; i < n; i++)
		sum += scratch[i];
	s.avg = sum / n;
	s.p50 = tm_pctl(scratch, n, 50);
	s.p90 = tm_pctl(scratch, n, 90);
	s.p95 = tm_pctl(scratch, n, 95);
	s.p99 = tm_pctl(scratch, n, 99);
	return s;
}

/*
 * What the node can still give BE (Koordinator's batch allocatable):
 * capacity x reclaim_pct - max(system used, system reserved) - ONLINE peak,
 * never below 0. Same formula for CPU (mCPU) and memory (bytes).
 */
static inline double tm_be_allocatable(double capacity, uint32_t reclaim_pct, double system_used,
				       double system_reserved, double online_peak)
{
	double sys = system_used > system_reserved ? system_used : system_reserved;
	double a = capacity * reclaim_pct / 100.0 - sys - online_peak;

	return a > 0 ? a : 0;
}
#endif
