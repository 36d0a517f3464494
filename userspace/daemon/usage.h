/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU time counters by key (a cgroup path, a task id), kept from one reading
 * to the next so that a rate is the sum of each counter's own growth. A sum
 * of counters taken twice is wrong whenever a member leaves between the two
 * readings: a task that exits takes all its CPU time out of the second sum,
 * and the difference can be negative or far too small. Here a counter seen
 * only in the earlier reading adds nothing, one seen only in the later adds
 * what it has (it started within the interval), and one that went backwards
 * (a name reused) counts from zero.
 */
#ifndef __TM_USAGE_H
#define __TM_USAGE_H
#include <stdint.h>

/* One counter's growth over an interval: @cur less @prev when it was read
 * before (@seen) and has not gone backwards; otherwise (new, or a name
 * reused) all it has, at most @new_max_us. The rule every reader of
 * cgroup CPU time uses (tm_use_growth, the sampler). */
static inline uint64_t tm_use_grown(int seen, uint64_t prev, uint64_t cur, uint64_t new_max_us)
{
	if (seen && cur >= prev)
		return cur - prev;
	return cur < new_max_us ? cur : new_max_us;
}

struct tm_use {
	char *key;
	uint64_t us;
};

struct tm_usetab {
	struct tm_use *v;
	int n, cap;
	int sorted; /* after tm_use_done */
};

/* Add a counter (keys are copied); -1 when out of memory. */
int tm_use_add(struct tm_usetab *t, const char *key, uint64_t us);
/* Sort the table for lookups: call once after the last tm_use_add. */
void tm_use_done(struct tm_usetab *t);
/* Growth from @prev (sorted) to @cur (sorted), summed over @cur's counters
 * whose key starts with @prefix ("" for every one). A counter new in @cur
 * adds at most @new_max_us (what it could have run in the interval: one
 * that existed before without being read, e.g. a cgroup a configuration
 * reload brought in, must not count its whole history). */
uint64_t tm_use_growth(const struct tm_usetab *prev, const struct tm_usetab *cur,
		       const char *prefix, uint64_t new_max_us);
void tm_use_free(struct tm_usetab *t);
#endif
