// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "tmlib.h"

static const char *const class_names[TM_NR_CLASSES] = {
	[TM_CLASS_SYSTEM] = "system",
	[TM_CLASS_ONLINE] = "online",
	[TM_CLASS_BE] = "be",
};

const char *const tm_stat_names[TM_NR_STATS] = {
#define TM_STAT_NAME(e, n, h) n,
	TM_STATS(TM_STAT_NAME)
#undef TM_STAT_NAME
};

const char *const tm_stat_help[TM_NR_STATS] = {
#define TM_STAT_HELP(e, n, h) h,
	TM_STATS(TM_STAT_HELP)
#undef TM_STAT_HELP
};

int tm_read_meminfo(__u64 *total, __u64 *avail)
{
	char key[64];
	unsigned long long v;
	int got = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (got != 3 && fscanf(f, "%63s %llu kB\n", key, &v) == 2) {
		if (!strcmp(key, "MemTotal:")) {
			*total = v * 1024;
			got |= 1;
		} else if (!strcmp(key, "MemAvailable:")) {
			*avail = v * 1024;
			got |= 2;
		}
	}
	fclose(f);
	return got == 3 ? 0 : -1;
}

int tm_class_parse(const char *s)
{
	for (int i = 0; i < TM_NR_CLASSES; i++)
		if (!strcmp(s, class_names[i]))
			return i;
	return -1;
}

const char *tm_class_name(unsigned int cls)
{
	return cls < TM_NR_CLASSES ? class_names[cls] : "none";
}

int tm_cgroup_id(const char *path, __u64 *id, char *err, size_t errlen)
{
	char full[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	size_t rl = strlen(TM_CGROUP_ROOT);

	if (!path || !*path) {
		snprintf(err, errlen, "empty cgroup path");
		return -1;
	}
	if (statfs(TM_CGROUP_ROOT, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen,
			 "%s is not a cgroup v2 mount (cgroup v1-only hosts are not supported)",
			 TM_CGROUP_ROOT);
		return -1;
	}
	if (!strncmp(path, TM_CGROUP_ROOT, rl) && (path[rl] == '/' || !path[rl]))
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s/%s", TM_CGROUP_ROOT,
			 path[0] == '/' ? path + 1 : path);
	if (stat(full, &st)) {
		snprintf(err, errlen, "cgroup %s: %s", full, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || statfs(full, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "%s is not a cgroup v2 directory", full);
		return -1;
	}
	/* on cgroup2 the inode number is the kernfs id the kernel uses */
	*id = st.st_ino;
	return 0;
}

#define TM_TUN_INFO(f, N, u, d, lo, hi, w, e)    \
	{.name = #f,                             \
	 .unit = u,                              \
	 .who = w,                               \
	 .effect = e,                            \
	 .dfl = d,                               \
	 .min = lo,                              \
	 .max = hi,                              \
	 .off = offsetof(struct tm_tunables, f), \
	 .bit = TM_TUN_##N},
#define TM_LOAD_INFO(n, u, d, lo, hi, y, e) \
	{.name = #n,                        \
	 .unit = u,                         \
	 .who = "load",                     \
	 .why = y,                          \
	 .effect = e,                       \
	 .dfl = d,                          \
	 .min = lo,                         \
	 .max = hi},
const struct tm_tunable_info tm_tunable_infos[] = {TM_TUNABLES(TM_TUN_INFO)
							   TM_LOAD_SETTINGS(TM_LOAD_INFO)};
#undef TM_TUN_INFO
#undef TM_LOAD_INFO
const size_t tm_nr_tunable_infos = sizeof(tm_tunable_infos) / sizeof(tm_tunable_infos[0]);

__u32 tm_tunable_get(const struct tm_tunables *t, size_t i)
{
	return *(const __u32 *)((const char *)t + tm_tunable_infos[i].off);
}

void tm_tunables_format(const struct tm_tunables *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < TM_NR_TUNABLES && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s=%u", i ? " " : "",
				tm_tunable_infos[i].name, tm_tunable_get(t, i));
}

int tm_tunable_set(struct tm_tunables *t, __u32 *set, const char *assign, char *err, size_t errlen)
{
	const char *eq = strchr(assign, '=');
	unsigned long long v;
	char names[512];
	size_t off = 0;
	char *end;

	if (!eq) {
		snprintf(err, errlen, "'%s': expected NAME=VALUE", assign);
		return -1;
	}
	for (size_t i = 0; i < tm_nr_tunable_infos; i++) {
		const struct tm_tunable_info *ti = &tm_tunable_infos[i];
		bool is_bool = !strcmp(ti->unit, "bool");

		if (strlen(ti->name) != (size_t)(eq - assign) ||
		    strncmp(ti->name, assign, eq - assign))
			continue;
		if (ti->why) {
			snprintf(err, errlen,
				 "%s is fixed for the scheduler's lifetime (%s): give it "
				 "to scx_tidemark and restart it",
				 ti->name, ti->why);
			return -1;
		}
		if (is_bool && (!strcmp(eq + 1, "on") || !strcmp(eq + 1, "off"))) {
			v = !strcmp(eq + 1, "on");
		} else {
			errno = 0;
			v = strtoull(eq + 1, &end, 10);
			if (!eq[1] || eq[1] == '-' || *end || errno || v > UINT32_MAX) {
				snprintf(err, errlen, "%s needs %s, got '%s'", ti->name,
					 is_bool ? "0, 1, off or on" : "a whole number", eq + 1);
				return -1;
			}
		}
		*(__u32 *)((char *)t + ti->off) = v;
		*set |= ti->bit;
		return 0;
	}
	for (size_t i = 0; i < TM_NR_TUNABLES && off < sizeof(names); i++)
		off += snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
				tm_tunable_infos[i].name);
	snprintf(err, errlen, "unknown tunable '%.*s' (%s)", (int)(eq - assign), assign, names);
	return -1;
}

__u64 tm_hist_pct_us(const __u64 *hist, unsigned int nbuckets, unsigned int pct)
{
	__u64 total = 0, seen = 0, want;
	unsigned int b;

	for (b = 0; b < nbuckets; b++)
		total += hist[b];
	if (!total)
		return 0;
	want = (total * pct + 99) / 100;
	if (!want)
		want = 1;
	for (b = 0; b < nbuckets; b++) {
		seen += hist[b];
		if (seen >= want)
			break;
	}
	/* bucket b holds [2^(b-1), 2^b) us: report its upper bound */
	return b >= nbuckets ? 1ULL << (nbuckets - 1) : 1ULL << b;
}

static int walk(const char *root, const char *rel, int depth, struct tm_cg_path **v, size_t *n,
		size_t *cap)
{
	char dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s%s", root, rel);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return 0; /* removed meanwhile */
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct tm_cg_path *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[*n].id = st.st_ino;
	(*v)[*n].path = strdup(*rel ? rel : "/");
	if (!(*v)[*n].path)
		return -1;
	(*n)++;
	if (depth >= TM_MAX_CGROUP_DEPTH * 4)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name) >= sizeof(sub))
			continue;
		if (walk(root, sub, depth + 1, v, n, cap)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static int cmp_cg_path(const void *a, const void *b)
{
	const struct tm_cg_path *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int tm_cgroup_walk(const char *root, struct tm_cg_path **out, size_t *n)
{
	struct tm_cg_path *v = NULL;
	size_t nv = 0, cap = 0;

	if (walk(root, "", 0, &v, &nv, &cap)) {
		tm_cgroup_paths_free(v, nv);
		return -1;
	}
	qsort(v, nv, sizeof(*v), cmp_cg_path);
	*out = v;
	*n = nv;
	return 0;
}

void tm_cgroup_paths_free(struct tm_cg_path *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

const char *tm_cgroup_path_of(const struct tm_cg_path *v, size_t n, __u64 id)
{
	struct tm_cg_path key = {.id = id};
	const struct tm_cg_path *hit = n ? bsearch(&key, v, n, sizeof(*v), cmp_cg_path) : NULL;

	return hit ? hit->path : NULL;
}

int tm_cg_read_u64(const char *dir, const char *file, const char *key, __u64 *out)
{
	char p[PATH_MAX], k[64];
	unsigned long long x;
	FILE *f;
	int ret = -1;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (!key) {
		if (fscanf(f, "%llu", &x) == 1) {
			*out = x;
			ret = 0;
		}
	} else {
		while (fscanf(f, "%63s %llu", k, &x) == 2)
			if (!strcmp(k, key)) {
				*out = x;
				ret = 0;
				break;
			}
	}
	fclose(f);
	return ret;
}

int tm_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

int tm_cg_path(char *out, size_t len, const char *root, const char *rel, const char *file)
{
	int n;

	while (rel && *rel == '/')
		rel++;
	n = snprintf(out, len, "%s%s%s%s%s", root, rel && *rel ? "/" : "", rel ? rel : "",
		     file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int tm_cg_rel_norm(const char *in, char *out, size_t len, const char **why)
{
	size_t rl = strlen(TM_CGROUP_ROOT), o = 0;
	const char *p = in;

	if (!*in) {
		*why = "empty cgroup path";
		return -1;
	}
	/* the mount's own path names the same cgroup as a relative one */
	if (!strncmp(p, TM_CGROUP_ROOT, rl) && (p[rl] == '/' || !p[rl]))
		p += rl;
	while (*p) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if (e - p == 2 && p[0] == '.' && p[1] == '.') {
			*why = "'..' is not allowed in a cgroup path";
			return -1;
		}
		if (e - p == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (o + 1 + (e - p) + 1 > len) {
			*why = "cgroup path too long";
			return -1;
		}
		out[o++] = '/';
		memcpy(out + o, p, e - p);
		o += e - p;
		p = e;
	}
	if (!o) {
		if (len < 2) {
			*why = "cgroup path too long";
			return -1;
		}
		out[o++] = '/'; /* the root */
	}
	out[o] = 0;
	/* "/sys/fs/cgroup/sys/fs/cgroup/x" or "//sys/fs/cgroup/x": read again,
	 * the one form would name another cgroup */
	if (!strncmp(out, TM_CGROUP_ROOT, rl) && (out[rl] == '/' || !out[rl])) {
		*why = "ambiguous: the path still starts with " TM_CGROUP_ROOT
		       " once the mount is taken off; give it relative to the cgroup root";
		return -1;
	}
	return 0;
}

int tm_cg_cpu_max(const char *root, const char *rel, __u32 *mcpu)
{
	unsigned long long quota, period;
	char p[PATH_MAX], buf[64];
	FILE *f;
	int ret = -1;

	if (tm_cg_path(p, sizeof(p), root, rel, "cpu.max"))
		return -1;
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "max", 3)) {
			ret = 0;
		} else if (sscanf(buf, "%llu %llu", &quota, &period) == 2 && period) {
			quota = quota * 1000 / period;
			*mcpu = quota > UINT32_MAX ? UINT32_MAX : quota ? quota : 1;
			ret = 1;
		}
	}
	fclose(f);
	return ret;
}

/* the kernel's largest cpu.max quota (MAX_BW, kernel/sched/sched.h), us */
#define CG_QUOTA_MAX_US ((1ULL << 44) - 1)

int tm_cg_bw_read(const char *root, const char *rel, __u64 *quota_us, __u64 *period_us,
		  __u64 *burst_us)
{
	unsigned long long q, p;
	char path[PATH_MAX], buf[64], tail;
	FILE *f;
	int ret = -1;

	if (tm_cg_path(path, sizeof(path), root, rel, "cpu.max"))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* only what the kernel can hold (period 1 ms-1 s, quota 1 ms-2^44 us,
	 * no sign): a period of 0 would divide by zero downstream */
	if (fgets(buf, sizeof(buf), f) && !strpbrk(buf, "+-")) {
		if (sscanf(buf, "max %llu%c", &p, &tail) == 2 && tail == '\n' &&
		    p >= TM_BW_PERIOD_MIN_US && p <= TM_BW_PERIOD_MAX_US) {
			*quota_us = 0;
			*period_us = p;
			ret = 0;
		} else if (sscanf(buf, "%llu %llu%c", &q, &p, &tail) == 3 && tail == '\n' &&
			   p >= TM_BW_PERIOD_MIN_US && p <= TM_BW_PERIOD_MAX_US &&
			   q >= TM_BW_QUOTA_MIN_US && q <= CG_QUOTA_MAX_US) {
			*quota_us = q;
			*period_us = p;
			ret = 1;
		}
	}
	fclose(f);
	*burst_us = 0;
	if (ret >= 0 && !tm_cg_path(path, sizeof(path), root, rel, "cpu.max.burst")) {
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%llu", &q) == 1 && q <= CG_QUOTA_MAX_US)
				*burst_us = q;
			fclose(f);
		}
	}
	return ret;
}

int tm_proc_stat(void (*fn)(int cpu, __u64 busy, __u64 total, void *arg), void *arg)
{
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	int seen = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8] = {}, total;
		int cpu = -1, off = 3;

		if (strncmp(line, "cpu", 3))
			continue;
		if (line[3] >= '0' && line[3] <= '9') {
			char *end;

			cpu = strtol(line + 3, &end, 10);
			off = end - line;
		}
		if (sscanf(line + off, " %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 8)
			continue;
		/* user nice system idle iowait irq softirq steal (guest is in user) */
		total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		fn(cpu, total - v[3] - v[4], total, arg);
		seen++;
	}
	fclose(f);
	return seen ? 0 : -1;
}

int tm_read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(out, len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = 0;
	return 0;
}
