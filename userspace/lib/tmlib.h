/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by scx_tidemark and tidemarkctl. No exit(): errors are
 * returned with a message in the caller's buffer. */
#ifndef __TMLIB_H
#define __TMLIB_H
#include <stddef.h>
#include "tidemark_abi.h"
#include "pins.h"

#define TM_CGROUP_ROOT "/sys/fs/cgroup"

/* The release ("0.6.0+git.abc1234"), and "PROG RELEASE (scheduler map ABI N)" on stdout. */
const char *tm_version(void);
void tm_version_print(const char *prog);

/* Counter names and help texts, in TM_STATS order. */
extern const char *const tm_stat_names[TM_NR_STATS];
extern const char *const tm_stat_help[TM_NR_STATS];

/*
 * A number from cgroup file @file under directory @dir: the value of @key in a
 * flat keyed file (cpu.stat, memory.stat), or the first number when @key is
 * NULL (memory.current). 0, or -1 when unreadable or the key is missing.
 */
int tm_cg_read_u64(const char *dir, const char *file, const char *key, __u64 *out);

/* The first line of file @path without its newline; -1 if unreadable or empty. */
int tm_read_line(const char *path, char *out, size_t len);

/* MemTotal and MemAvailable from /proc/meminfo, bytes; -1 if unreadable. */
int tm_read_meminfo(__u64 *total, __u64 *avail);

/* "online", "be", "system" -> class; -1 if unknown. */
int tm_class_parse(const char *s);
const char *tm_class_name(unsigned int cls);

/*
 * Resolve a cgroup v2 path (absolute under /sys/fs/cgroup, or relative to
 * it, or "/x/y" meaning /sys/fs/cgroup/x/y) to its id. Returns 0, or -1
 * with a message naming the problem in err.
 */
int tm_cgroup_id(const char *path, __u64 *id, char *err, size_t errlen);

/* Parse "name=value" for a tunable into *t and add its TM_TUN_* bit to
 * *set; -1 with a message. Booleans take 0/1 or off/on. */
int tm_tunable_set(struct tm_tunables *t, __u32 *set, const char *assign, char *err, size_t errlen);

/* One row of TM_TUNABLES (runtime) or TM_LOAD_SETTINGS (why != NULL). */
struct tm_tunable_info {
	const char *name, *unit, *who, *why, *effect;
	__u64 dfl, min, max;
	size_t off; /* in struct tm_tunables (runtime ones) */
	__u32 bit;
};
extern const struct tm_tunable_info tm_tunable_infos[];
extern const size_t tm_nr_tunable_infos; /* runtime ones first, TM_NR_TUNABLES of them */

/* Value of runtime tunable @i (an index into tm_tunable_infos) in @t. */
__u32 tm_tunable_get(const struct tm_tunables *t, size_t i);
/* "name=value" of every runtime tunable, space-separated, into @buf. */
void tm_tunables_format(const struct tm_tunables *t, char *buf, size_t len);

/* Estimate the pct-th percentile (0-100) of a log2-us histogram, in us. */
__u64 tm_hist_pct_us(const __u64 *hist, unsigned int nbuckets, unsigned int pct);
/* Every cgroup under a root, as id -> path ("/a/b", "/" for the root). */
struct tm_cg_path {
	__u64 id;
	char *path;
};

/* Walk the tree under @root; *out is sorted by id. -1 on allocation failure. */
int tm_cgroup_walk(const char *root, struct tm_cg_path **out, size_t *n);
void tm_cgroup_paths_free(struct tm_cg_path *v, size_t n);
/* The path of cgroup @id, NULL if unknown (removed, or not walked yet). */
const char *tm_cgroup_path_of(const struct tm_cg_path *v, size_t n, __u64 id);

/* The CPUs the node's capacity counts: the online ones. The one definition
 * every program uses (scheduler capacity, tunables checks, reports). */
int tm_nr_cpus(void);

/* "@root/@rel/@file" into @out (@rel "/x/y" or "x/y", "" or "/" for the root;
 * @file may be NULL); -1 when it does not fit. */
int tm_cg_path(char *out, size_t len, const char *root, const char *rel, const char *file);

/*
 * A configured cgroup path in its one form, "/x/y" relative to the cgroup
 * root: "x/y", "/x//y/", "./x/y" and "/sys/fs/cgroup/x/y" all give "/x/y"
 * (glob characters are kept). -1 with @why for "", "..", or too long.
 */
int tm_cg_rel_norm(const char *in, char *out, size_t len, const char **why);

/* cgroup @rel's cpu.max in milli-CPUs: 1 with *mcpu when a quota is set, 0
 * for "max" (no limit), -1 when unreadable. */
int tm_cg_cpu_max(const char *root, const char *rel, __u32 *mcpu);
/* cgroup @rel's cpu.max as written ("QUOTA PERIOD" or "max PERIOD", in us)
 * and cpu.max.burst (0 when absent): 1 with a quota, 0 for "max", -1 when
 * there is no cpu.max (no cpu controller) or it does not parse. */
int tm_cg_bw_read(const char *root, const char *rel, __u64 *quota_us, __u64 *period_us,
		  __u64 *burst_us);

/* /proc/stat: @fn gets busy and total jiffies of all CPUs (cpu -1) and of each
 * CPU. 0, or -1 when unreadable. */
int tm_proc_stat(void (*fn)(int cpu, __u64 busy, __u64 total, void *arg), void *arg);

#endif
