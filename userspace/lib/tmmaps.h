/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers on the scheduler's maps, for the programs that link libbpf. */
#ifndef __TMMAPS_H
#define __TMMAPS_H
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include "tidemark_abi.h"
#include "tmlib.h"
#include "pins.h"

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
			for (int j = 0; j < TM_NR_CLASSES; j++) {
				for (int k = 0; k < TM_HIST_BUCKETS; k++)
					sum->wait_hist[j][k] += per[c].wait_hist[j][k];
				sum->wait_sum_ns[j] += per[c].wait_sum_ns[j];
			}
		}
		ret = 0;
	}
	free(per);
	return ret;
}

/*
 * Cap the cgroup at @dir (a full path under the cgroup root) and every
 * cgroup below it to @mcpu, a CPU limit like cpu.max (the smaller of the two
 * holds), through the scheduler's bw_update program @bw_fd; 0 removes the
 * cap. Every id is collected before anything is changed, so a failed walk
 * applies nothing. Returns the number of cgroups written, or -1.
 */
static inline int tm_be_cap_set(int bw_fd, const char *dir, __u32 mcpu, __u32 owner)
{
	struct tm_cg_path *v = NULL;
	size_t n = 0;
	int done = 0;
	char err[256];

	if (tm_cgroup_walk(dir, &v, &n) || !n) {
		tm_cgroup_paths_free(v, n);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct tm_bw_req req = {
			.cgid = v[i].id, .set = TM_BW_SET_CAP, .cap_mcpu = mcpu, .owner = owner};

		if (!tm_bw_update(bw_fd, &req, err, sizeof(err)))
			done++;
	}
	tm_cgroup_paths_free(v, n);
	return done;
}

/* Remove every cap @owner set (records in @caps_fd); returns how many. */
static inline int tm_be_caps_clear(int caps_fd, int bw_fd, __u32 owner)
{
	static __u64 ids[TM_MAX_BE_CAPS];
	__u64 key, at, *prev = NULL;
	int n = 0, done = 0;
	char err[256];

	/* collect first: deleting while walking restarts a hash map's walk */
	while (n < TM_MAX_BE_CAPS && !bpf_map_get_next_key(caps_fd, prev, &key)) {
		struct tm_be_cap cap;

		if (!bpf_map_lookup_elem(caps_fd, &key, &cap) && cap.owner == owner)
			ids[n++] = key;
		at = key;
		prev = &at;
	}
	for (int i = 0; i < n; i++) {
		struct tm_bw_req req = {.cgid = ids[i], .set = TM_BW_SET_CAP, .owner = owner};

		done += !tm_bw_update(bw_fd, &req, err, sizeof(err));
	}
	return done;
}

#endif
