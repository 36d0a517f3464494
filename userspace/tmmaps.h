/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers on the scheduler's maps, for the programs that link libbpf. */
#ifndef __TMMAPS_H
#define __TMMAPS_H
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tidemark.h"

/*
 * Sum the per-CPU "stats" map. A per-CPU lookup fills one value per
 * *possible* CPU, which may be more than the configured ones.
 */
static inline int tm_stats_sum(int stats_fd, struct tm_cpu_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus(), ret = -1;
	struct tm_cpu_stats *per;
	__u32 zero = 0;

	memset(sum, 0, sizeof(*sum));
	if (ncpu <= 0)
		return -1;
	per = calloc(ncpu, sizeof(*per));
	if (per && !bpf_map_lookup_elem(stats_fd, &zero, per)) {
		for (int c = 0; c < ncpu; c++) {
			for (int j = 0; j < TM_NR_STATS; j++)
				sum->cnt[j] += per[c].cnt[j];
			for (int j = 0; j < TM_NR_CLASSES; j++)
				for (int k = 0; k < TM_HIST_BUCKETS; k++)
					sum->wait_hist[j][k] += per[c].wait_hist[j][k];
		}
		ret = 0;
	}
	free(per);
	return ret;
}

/* A class change bumps class_gen so cached per-task lookups are redone. */
static inline int tm_bump_class_gen(int tunables_fd)
{
	struct tm_tunables t;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(tunables_fd, &zero, &t))
		return -1;
	t.class_gen++;
	return bpf_map_update_elem(tunables_fd, &zero, &t, BPF_ANY);
}
#endif
