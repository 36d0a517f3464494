/* SPDX-License-Identifier: GPL-2.0 */
/* The node's sampler and its reports: Prometheus text and the JSON
 * NodeMetric-like report; each strategy adds its own section through the
 * strategy interface. */
#ifndef __TM_REPORT_H
#define __TM_REPORT_H
#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include <linux/types.h>
struct tm_daemon;

/* Sample the node and the scheduler into the daemon's snapshot (sampler.c). */
void tm_report_sample(struct tm_daemon *d, uint64_t now_ms);
/*
 * Every configured BE cgroup (tm_be_cgroups: no duplicates, never a
 * protected one), its cumulative CPU time and its memory, read once a
 * main-loop round:
 * the first caller of a round reads, the others share it until
 * tm_sample_round starts the next one (as tm_pins_round does for pins).
 * How many, *@out valid until then; -1 when out of memory.
 */
struct tm_be_use {
	char path[TM_CFG_PATH_MAX]; /* "/x/y" under the cgroup root */
	int priority;		    /* its cgroups.be entry's */
	uint64_t usage_us;	    /* cpu.stat usage_usec */
	uint64_t memory;	    /* memory.current, bytes */
	bool ok;		    /* usage_us read (false: gone, or no cpu controller) */
	bool mem_ok;		    /* memory read (false: gone, or no memory controller) */
};
int tm_sample_be(struct tm_daemon *d, const struct tm_be_use **out);
/* The row of @path among tm_sample_be's @n rows (sorted by path), or NULL. */
const struct tm_be_use *tm_sample_be_find(const struct tm_be_use *v, int n, const char *path);
/* A new round of the main loop: the BE cgroups are read again when asked. */
void tm_sample_round(void);

/* The windows' spans, s (sampler.c). */
extern const uint32_t tm_win_s[3];
struct tm_cg_usage;
/* The per-cgroup rows as of now, copied (caller holds d->lock, frees *out):
 * how many, 0 when there are none or no memory for the copy. */
int tm_sample_cgroups(const struct tm_daemon *d, struct tm_cg_usage **out);

struct tm_buf;
/* One wait histogram (log2 buckets of ns) as a Prometheus histogram @name
 * with label @lname="@lval". */
void tm_wait_hist_lines(struct tm_buf *b, const char *name, const char *lname, const char *lval,
			const __u64 *hist, __u64 sum_ns);

/* Render into a malloc'd buffer; NULL on allocation failure (metrics.c,
 * report.c). */
char *tm_report_prometheus(struct tm_daemon *d);
char *tm_report_json(struct tm_daemon *d);
#endif
