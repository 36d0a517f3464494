// SPDX-License-Identifier: GPL-2.0
/*
 * The node's sampler (report.h): every report.sample_s, node CPU from
 * /proc/stat, memory from /proc/meminfo (used = MemTotal - MemAvailable),
 * ONLINE and BE usage from the configured cgroups (cpu.stat usage_usec,
 * memory.current); system = node - ONLINE - BE. Windows of 5, 10 and 30
 * minutes keep the samples for avg/p50/p90/p95/p99. The scheduler's maps
 * (CPU limits, ONLINE waits per cgroup) are read at the same time.
 */
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "buf.h"
#include "actuate.h"
#include "daemon.h"
#include "nodemetric.h"
#include "report.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "topo.h"
#include "usage.h"
#include "window.h"
#include "log.h"

#define WIN_MAX 1800 /* 30 min at 1 s */

const uint32_t tm_win_s[3] = {300, 600, 1800};

static struct {
	uint64_t cpu_busy, cpu_total; /* /proc/stat jiffies at the last sample */
	uint64_t at_us;
	/* this sample's growth of the class cgroups' usage, cgroup by cgroup
	 * (a sum of totals falls when a cgroup goes), and its running total
	 * since start for the counters of /metrics, us */
	uint64_t grow_us[TM_NR_CLASSES];
	double total_s[TM_NR_CLASSES];
	/* one per sample, for the windows: node CPU and memory used, ONLINE's */
	double cpu_buf[WIN_MAX], mem_buf[WIN_MAX], on_cpu_buf[WIN_MAX], on_mem_buf[WIN_MAX];
	struct tm_win cpu, mem, on_cpu, on_mem;
	double scratch[WIN_MAX];
} samp = {
	.cpu = TM_WIN_OVER(samp.cpu_buf),
	.mem = TM_WIN_OVER(samp.mem_buf),
	.on_cpu = TM_WIN_OVER(samp.on_cpu_buf),
	.on_mem = TM_WIN_OVER(samp.on_mem_buf),
};

/* Node busy and total jiffies (the "cpu" line of /proc/stat). */
static void node_stat(int cpu, __u64 busy, __u64 total, void *arg)
{
	uint64_t *bt = arg;

	if (cpu < 0) {
		bt[0] = busy;
		bt[1] = total;
	}
}

static int read_proc_stat(uint64_t *busy, uint64_t *total)
{
	uint64_t bt[2] = {};

	if (tm_proc_stat(node_stat, bt) || !bt[1])
		return -1;
	*busy = bt[0];
	*total = bt[1];
	return 0;
}

static uint64_t cg_u64(const char *root, const char *rel, const char *file, const char *key)
{
	char dir[PATH_MAX];
	__u64 v = 0;

	if (tm_cg_path(dir, sizeof(dir), root, rel, NULL))
		return 0;
	return tm_cg_read_u64(dir, file, key, &v) ? 0 : v;
}

/* Sum over the cgroups matching @pats (no nested double counting: a match
 * inside an earlier match is skipped). */
/* The cgroups of the sample being taken (main thread); swapped into d->cg
 * at its end, the previous list giving each cgroup's rate. */
static struct {
	struct tm_cg_usage *v;
	int n, cap;
} cur;
static int prev_cap; /* allocated length of d->cg */
/* d->cg's rows by path, for each cgroup's previous row (a scan of every row
 * per cgroup was 500,000 strcmp a sample at 1,000 cgroups) */
static int *prev_idx, prev_idx_cap;
static const struct tm_cg_usage *idx_rows;

static int by_path(const void *a, const void *b)
{
	return strcmp(idx_rows[*(const int *)a].path, idx_rows[*(const int *)b].path);
}

static const struct tm_cg_usage *prev_row(const struct tm_daemon *d, const char *path)
{
	int lo = 0, hi = d->nr_cg - 1;

	if (!prev_idx)
		return NULL;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(d->cg[prev_idx[mid]].path, path);

		if (!c)
			return &d->cg[prev_idx[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* One cgroup's line in the report: its class and usage since last time. */
static void record_cg(struct tm_daemon *d, const char *path, int cls, uint64_t usage_us,
		      uint64_t mem, uint64_t now_us)
{
	const struct tm_cg_usage *prev = NULL;
	struct tm_cg_usage *u;
	int sc;

	if (strlen(path) >= sizeof(u->path))
		return; /* longer than any configured path: cannot be matched */
	if (cur.n == cur.cap) {
		int nc = cur.cap ? cur.cap * 2 : 64;
		struct tm_cg_usage *nv = realloc(cur.v, sizeof(*nv) * nc);

		if (!nv)
			return;
		cur.v = nv;
		cur.cap = nc;
	}
	u = &cur.v[cur.n++];
	memset(u, 0, sizeof(*u));
	snprintf(u->path, sizeof(u->path), "%s", path);
	sc = tm_sched_class_of(d, path);
	u->cls = sc >= 0 ? sc : cls;
	u->mem = mem;
	u->usage_us = usage_us;
	u->at_us = now_us;
	/* d->cg is written by this thread only: read without the lock */
	prev = prev_row(d, path);
	if (prev && now_us > prev->at_us && usage_us >= prev->usage_us)
		u->cpu_mcpu = 1000.0 * (usage_us - prev->usage_us) / (now_us - prev->at_us);
	/* the class's growth cgroup by cgroup: one that went adds nothing, a
	 * new one at most what the interval allowed */
	if (samp.at_us && now_us > samp.at_us && cls >= 0 && cls < TM_NR_CLASSES)
		samp.grow_us[cls] += tm_use_grown(prev != NULL, prev ? prev->usage_us : 0, usage_us,
						  (now_us - samp.at_us) * tm_nr_cpus());
}

static void cg_sum(struct tm_daemon *d, int cls, const char (*pats)[TM_CFG_PATH_MAX], int npat,
		   const struct tm_cfg_cgroup *be, int nbe, uint64_t *cpu_us, uint64_t *mem,
		   uint64_t now_us)
{
	const char *root = d->cgroup_root;
	size_t rl = strlen(root);
	int first = cur.n; /* this class's matches so far: cur.v[first..] */

	*cpu_us = *mem = 0;
	for (int i = 0; i < (pats ? npat : nbe); i++) {
		const char *rel = pats ? pats[i] : be[i].path;
		char pat[PATH_MAX];
		glob_t g;

		while (*rel == '/')
			rel++;
		snprintf(pat, sizeof(pat), "%s/%s", root, rel);
		if (glob(pat, GLOB_ONLYDIR, NULL, &g))
			continue;
		/* one pattern's matches all have its depth ('*' stops at '/'):
		 * none is inside another, only inside an earlier pattern's (a
		 * check against every match was 500,000 strncmp a sample at
		 * 1,000 cgroups) */
		int pat_first = cur.n;

		for (size_t k = 0; k < g.gl_pathc; k++) {
			const char *p = g.gl_pathv[k] + rl;
			bool nested = false;

			for (int j = first; j < pat_first && !nested; j++) {
				size_t l = strlen(cur.v[j].path);

				nested = !strncmp(cur.v[j].path, p, l) && (p[l] == '/' || !p[l]);
			}
			if (nested || strlen(p) >= TM_CFG_PATH_MAX)
				continue;
			uint64_t u = cg_u64(root, p, "cpu.stat", "usage_usec");
			uint64_t m = cg_u64(root, p, "memory.current", NULL);

			*cpu_us += u;
			*mem += m;
			record_cg(d, p, cls, u, m, now_us);
		}
		globfree(&g);
	}
}

/* sched_ext's enable_seq: every scheduler load since boot (0: none, or no
 * sched_ext) */
static uint64_t read_enable_seq(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/sched_ext/enable_seq", "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static bool sched_state(struct tm_daemon *d, struct tm_tunables *t, struct tm_cpu_stats *stats)
{
	char buf[32] = "";
	__u32 zero = 0;
	int fd;
	FILE *f = fopen("/sys/kernel/sched_ext/state", "r");
	bool up;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	up = !strncmp(buf, "enabled", 7);
	memset(stats, 0, sizeof(*stats));
	fd = tm_pin(d, TM_PIN_TUNABLES);
	if (fd < 0)
		return false; /* not ours, or none */
	if (bpf_map_lookup_elem(fd, &zero, t))
		memset(t, 0, sizeof(*t));
	close(fd);
	fd = tm_pin(d, TM_PIN_STATS);
	if (fd >= 0) {
		tm_stats_sum(fd, stats);
		close(fd);
	}
	return up;
}

/* Cache domains, found once; per-CPU /proc/stat at the last sample. */
static struct {
	struct tm_topology *t;
	bool tried;
	uint64_t busy[TM_TOPO_MAX_CPUS], total[TM_TOPO_MAX_CPUS];
} dom_use;

/* One CPU's /proc/stat line: its use since the last sample, to its domain. */
static void dom_cpu_stat(int cpu, __u64 busy, __u64 total, void *arg)
{
	double *used = arg;

	if (cpu < 0 || cpu >= TM_TOPO_MAX_CPUS)
		return;
	if (dom_use.total[cpu] && total > dom_use.total[cpu]) {
		for (int k = 0; k < dom_use.t->nr_domains && k < TM_REPORT_MAX_DOMS; k++)
			if (tm_cpuset_test(&dom_use.t->d[k].cpus, cpu))
				used[k] += 1000.0 * (busy - dom_use.busy[cpu]) /
					   (total - dom_use.total[cpu]);
	}
	dom_use.busy[cpu] = busy;
	dom_use.total[cpu] = total;
}

/* Free capacity per cache domain: its online CPUs minus what they used
 * since the last sample (per-CPU lines of /proc/stat). */
static void dom_usage(struct tm_snapshot *s)
{
	char err[256];
	double used[TM_REPORT_MAX_DOMS] = {};

	if (!dom_use.tried) {
		dom_use.tried = true;
		dom_use.t = calloc(1, sizeof(*dom_use.t));
		if (dom_use.t && tm_topo_load(NULL, dom_use.t, err, sizeof(err))) {
			tm_log(TM_LOG_NOTICE, "tidemarkd: no per-domain report: %s\n", err);
			free(dom_use.t);
			dom_use.t = NULL;
		}
	}
	if (!dom_use.t)
		return;
	tm_proc_stat(dom_cpu_stat, used);
	snprintf(s->dom_kind, sizeof(s->dom_kind), "%s", tm_domain_kind_name(dom_use.t->kind));
	for (int k = 0; k < dom_use.t->nr_domains && k < TM_REPORT_MAX_DOMS; k++) {
		tm_cpuset_format(&dom_use.t->d[k].online, s->dom[k].cpus, sizeof(s->dom[k].cpus));
		s->dom[k].cap_mcpu = tm_cpuset_count(&dom_use.t->d[k].online) * 1000;
		s->dom[k].used_mcpu = used[k];
		s->nr_dom = k + 1;
	}
}

/* Cgroup ids (the scheduler's map keys) to paths: the tree as last walked,
 * walked once more per sample when an id is not in it (a cgroup made since). */
static struct {
	struct tm_cg_path *paths;
	size_t np;
	bool rewalked; /* in this sample */
} idpaths;

static const char *id_path(struct tm_daemon *d, __u64 id)
{
	const char *path = tm_cgroup_path_of(idpaths.paths, idpaths.np, id);

	if (!path && !idpaths.rewalked) {
		idpaths.rewalked = true;
		tm_cgroup_paths_free(idpaths.paths, idpaths.np);
		idpaths.paths = NULL;
		if (tm_cgroup_walk(d->cgroup_root, &idpaths.paths, &idpaths.np))
			idpaths.np = 0;
		path = tm_cgroup_path_of(idpaths.paths, idpaths.np, id);
	}
	return path; /* NULL: removed, its entry goes with it */
}

/* Histogram lines of a run-queue wait: log2 buckets of us ([0,1), [1,2),
 * [2,4) ...), so bucket k's upper bound is 2^k us; cumulative, in seconds. */
void tm_wait_hist_lines(struct tm_buf *b, const char *name, const char *lname, const char *lval,
			const __u64 *hist, __u64 sum_ns)
{
	uint64_t cum = 0;

	for (int k = 0; k < TM_HIST_BUCKETS; k++) {
		cum += hist[k];
		tm_bprintf(b, "%s_bucket{", name);
		if (lname) {
			tm_bprintf(b, "%s=", lname);
			tm_bprom_label(b, lval);
			tm_bprintf(b, ",");
		}
		tm_bprintf(b, "le=\"%.6g\"} %" PRIu64 "\n", (double)(1ULL << k) / 1e6, cum);
	}
	tm_bprintf(b, "%s_bucket{", name);
	if (lname) {
		tm_bprintf(b, "%s=", lname);
		tm_bprom_label(b, lval);
		tm_bprintf(b, ",");
	}
	tm_bprintf(b, "le=\"+Inf\"} %" PRIu64 "\n%s_sum", cum, name);
	if (lname) {
		tm_bprintf(b, "{%s=", lname);
		tm_bprom_label(b, lval);
		tm_bprintf(b, "}");
	}
	tm_bprintf(b, " %.9f\n%s_count", sum_ns / 1e9, name);
	if (lname) {
		tm_bprintf(b, "{%s=", lname);
		tm_bprom_label(b, lval);
		tm_bprintf(b, "}");
	}
	tm_bprintf(b, " %" PRIu64 "\n", cum);
}

/* The run-queue wait of each ONLINE cgroup's tasks (map cg_waits) as
 * histograms, rendered at each sample. */
static char *wait_section(struct tm_daemon *d)
{
	static const char name[] = "tidemark_cgroup_wait_seconds";
	struct tm_buf b = {};
	__u64 key, at, *prev = NULL;
	struct tm_cg_wait w;
	int fd = tm_pin(d, TM_PIN_CG_WAITS);

	if (fd < 0)
		return NULL;
	tm_bprintf(&b,
		   "# HELP %s Run-queue wait (wakeup to running) of an ONLINE cgroup's tasks, "
		   "by the task's own cgroup.\n# TYPE %s histogram\n",
		   name, name);
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		const char *path;

		at = key;
		prev = &at;
		if (bpf_map_lookup_elem(fd, &key, &w))
			continue;
		path = id_path(d, key);
		if (path)
			tm_wait_hist_lines(&b, name, "cgroup", path, w.hist, w.sum_ns);
	}
	close(fd);
	return tm_buf_done(&b);
}

/* The CPU limits the scheduler enforces (map cg_bw) and their cpu.stat-like
 * counters, one series per limited cgroup, rendered at each sample. */
static char *bw_section(struct tm_daemon *d)
{
	static const struct {
		const char *name, *help;
		bool counter;
	} m[] = {
		{"tidemark_cgroup_cpu_limit_cores",
		 "CPU limit the scheduler enforces on a cgroup (cpu.max or cap, the tighter), "
		 "in CPUs.",
		 false},
		{"tidemark_cgroup_cpu_periods_total",
		 "Enforcement periods a limited cgroup was active in (cpu.stat nr_periods).", true},
		{"tidemark_cgroup_cpu_throttled_periods_total",
		 "Periods a limited cgroup ran out of runtime (cpu.stat nr_throttled).", true},
		{"tidemark_cgroup_cpu_throttled_seconds_total",
		 "Time a limited cgroup had runnable tasks held back (cpu.stat throttled_usec).",
		 true},
		{"tidemark_cgroup_cpu_bursts_total",
		 "Periods a cgroup used more than its quota (cpu.max.burst; cpu.stat nr_bursts).",
		 true},
		{"tidemark_cgroup_cpu_burst_seconds_total",
		 "CPU time used beyond the quota (cpu.stat burst_usec).", true},
		{"tidemark_cgroup_cpu_limited_usage_seconds_total",
		 "CPU time the scheduler charged to a limited cgroup.", true},
	};
	struct tm_cg_bw *rows = NULL;
	__u64 *ids = NULL, key, at, *prev = NULL;
	size_t n = 0, cap = 0;
	struct tm_buf b = {};
	int fd = tm_pin(d, TM_PIN_CG_BW);

	if (fd < 0)
		return NULL; /* no scheduler, or one without CPU limits */
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		at = key;
		prev = &at;
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 64;
			struct tm_cg_bw *r2 = realloc(rows, c2 * sizeof(*r2));
			__u64 *i2 = r2 ? realloc(ids, c2 * sizeof(*i2)) : NULL;

			if (r2)
				rows = r2;
			if (!i2)
				break;
			ids = i2;
			cap = c2;
		}
		if (!bpf_map_lookup_elem(fd, &key, &rows[n]))
			ids[n++] = key;
	}
	close(fd);
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		if (m[k].counter)
			tm_prom_help(&b, "counter", m[k].name, m[k].help);
		else
			tm_prom_help(&b, "gauge", m[k].name, m[k].help);
		for (size_t i = 0; i < n; i++) {
			const struct tm_cg_bw *r = &rows[i];
			const char *path = id_path(d, ids[i]);
			double v;

			if (!path)
				continue; /* removed: its entry goes with it */
			switch (k) {
			case 0:
				v = r->period_ns ? (double)r->eff_ns / r->period_ns : 0;
				break;
			case 1:
				v = r->nr_periods;
				break;
			case 2:
				v = r->nr_throttled;
				break;
			case 3:
				v = r->throttled_ns / 1e9;
				break;
			case 4:
				v = r->nr_bursts;
				break;
			case 5:
				v = r->burst_ns_used / 1e9;
				break;
			default:
				v = r->usage_ns / 1e9;
				break;
			}
			tm_bprintf(&b, "%s{cgroup=", m[k].name);
			tm_bprom_label(&b, path);
			tm_bprintf(&b, k == 1 || k == 2 || k == 4 ? "} %.0f\n" : "} %.6f\n", v);
		}
	}
	free(rows);
	free(ids);
	return tm_buf_done(&b);
}

void tm_report_sample(struct tm_daemon *d, uint64_t now_ms)
{
	char *bw, *waits;
	const struct tm_config *c = &d->cfg;
	__u64 mtot = 0, mavail = 0;
	uint64_t busy = 0, total = 0, on_us, be_us, on_mem, be_mem;
	struct tm_cpu_stats st;
	uint64_t now_us = now_ms * 1000;
	struct tm_snapshot s = {};
	double used_mcpu = 0, on_mcpu = 0, be_mcpu = 0, dt;

	s.nr_cpus = tm_nr_cpus();
	if (read_proc_stat(&busy, &total) || tm_read_meminfo(&mtot, &mavail))
		return;
	cur.n = 0;
	memset(samp.grow_us, 0, sizeof(samp.grow_us));
	cg_sum(d, TM_CLASS_ONLINE, c->online, c->nr_online, NULL, 0, &on_us, &on_mem, now_us);
	cg_sum(d, TM_CLASS_BE, NULL, 0, c->be, c->nr_be, &be_us, &be_mem, now_us);
	dom_usage(&s);
	if (samp.cpu_total && total > samp.cpu_total)
		used_mcpu = 1000.0 * s.nr_cpus * (busy - samp.cpu_busy) / (total - samp.cpu_total);
	dt = samp.at_us && now_us > samp.at_us ? (double)(now_us - samp.at_us) : 0;
	if (dt > 0) {
		on_mcpu = 1000.0 * samp.grow_us[TM_CLASS_ONLINE] / dt;
		be_mcpu = 1000.0 * samp.grow_us[TM_CLASS_BE] / dt;
		samp.total_s[TM_CLASS_ONLINE] += samp.grow_us[TM_CLASS_ONLINE] / 1e6;
		samp.total_s[TM_CLASS_BE] += samp.grow_us[TM_CLASS_BE] / 1e6;
		if (used_mcpu > on_mcpu + be_mcpu)
			samp.total_s[TM_CLASS_SYSTEM] += (used_mcpu - on_mcpu - be_mcpu) * dt / 1e9;
	}
	bool first = !samp.at_us;

	samp.cpu_busy = busy;
	samp.cpu_total = total;
	samp.at_us = now_us;
	memcpy(s.cpu_total_s, samp.total_s, sizeof(s.cpu_total_s));
	s.at_realtime = time(NULL);
	s.at_ms = now_ms;
	s.cpu_used_mcpu = used_mcpu;
	s.cpu_online_mcpu = on_mcpu;
	s.cpu_be_mcpu = be_mcpu;
	s.cpu_system_mcpu = used_mcpu > on_mcpu + be_mcpu ? used_mcpu - on_mcpu - be_mcpu : 0;
	s.mem_total = mtot;
	s.mem_used = mtot > mavail ? mtot - mavail : 0;
	s.mem_online = on_mem;
	s.mem_be = be_mem;
	if (!first) {
		tm_win_push(&samp.cpu, used_mcpu);
		tm_win_push(&samp.mem, s.mem_used);
		tm_win_push(&samp.on_cpu, on_mcpu);
		tm_win_push(&samp.on_mem, on_mem);
	}
	/* windows: the most recent samples covering 5, 10, 30 minutes (at
	 * least the newest one); ONLINE's peak over the longest */
	for (int w = 0; w < 3; w++) {
		uint32_t k = tm_win_s[w] / (c->report.sample_s ? c->report.sample_s : 1);
		double v[WIN_MAX];

		k = tm_win_last(&samp.cpu, k ? k : 1, v);
		s.cpu_win[w] = tm_window_stats(v, k, samp.scratch);
		k = tm_win_last(&samp.mem, k, v);
		s.mem_win[w] = tm_window_stats(v, k, samp.scratch);
		if (w == 2) {
			s.online_peak_mcpu = tm_win_max(&samp.on_cpu, k);
			s.online_peak_mem = tm_win_max(&samp.on_mem, k);
		}
	}
	s.be_alloc_mcpu =
		tm_be_allocatable(1000.0 * s.nr_cpus, c->report.reclaim_pct, s.cpu_system_mcpu,
				  c->report.system_reserved_mcpu, s.online_peak_mcpu);
	s.be_alloc_mem = tm_be_allocatable(
		(double)s.mem_total, c->report.reclaim_pct,
		(double)(s.mem_used > s.mem_online + s.mem_be ? s.mem_used - s.mem_online - s.mem_be
							      : 0),
		(double)c->report.system_reserved_mib * 1048576, (double)s.online_peak_mem);
	s.forbid = (s.nr_cpus && used_mcpu >= 10.0 * s.nr_cpus * c->cpu.forbid_pct) ||
		   (s.mem_total && s.mem_used * 100 >= s.mem_total * c->memory.forbid_pct);
	s.sched_up = sched_state(d, &s.tun, &st);
	memcpy(s.sched_stats, st.cnt, sizeof(s.sched_stats));
	memcpy(s.wait_hist, st.wait_hist, sizeof(s.wait_hist));
	memcpy(s.wait_sum_ns, st.wait_sum_ns, sizeof(s.wait_sum_ns));
	s.enable_seq = read_enable_seq();
	s.line_pct = tm_line_pct(d, &s.line_owner);
	idpaths.rewalked = false;
	bw = s.sched_up ? bw_section(d) : NULL;
	waits = s.sched_up ? wait_section(d) : NULL;
	pthread_mutex_lock(&d->lock);
	d->snap = s;
	free(d->bw_prom);
	d->bw_prom = bw;
	free(d->wait_prom);
	d->wait_prom = waits;
	/* this sample's list becomes the reported one; the old one is reused */
	{
		struct tm_cg_usage *old = d->cg;
		int oldcap = prev_cap;

		d->cg = cur.v;
		d->nr_cg = cur.n;
		prev_cap = cur.cap;
		if (cur.n > prev_idx_cap) {
			int *ni = realloc(prev_idx, sizeof(*ni) * cur.n);

			if (ni) {
				prev_idx = ni;
				prev_idx_cap = cur.n;
			}
		}
		if (cur.n <= prev_idx_cap) {
			for (int i = 0; i < cur.n; i++)
				prev_idx[i] = i;
			idx_rows = d->cg;
			if (cur.n) /* none yet: no index (qsort wants one) */
				qsort(prev_idx, cur.n, sizeof(*prev_idx), by_path);
		} else {
			free(prev_idx); /* no memory for the index: no rates this time */
			prev_idx = NULL;
			prev_idx_cap = 0;
		}
		cur.v = old;
		cur.cap = oldcap;
		cur.n = 0;
	}
	pthread_mutex_unlock(&d->lock);
	if (!first)
		tm_nm_sample(d, now_us, used_mcpu);
}

/* The per-cgroup rows as of now, copied (caller holds d->lock, frees
 * *out): how many, 0 when there are none or no memory for the copy. */
int tm_sample_cgroups(const struct tm_daemon *d, struct tm_cg_usage **out)
{
	*out = d->nr_cg ? malloc(sizeof(**out) * d->nr_cg) : NULL;
	if (!*out)
		return 0;
	memcpy(*out, d->cg, sizeof(**out) * d->nr_cg);
	return d->nr_cg;
}

/* The BE cgroups' usage of the current round (tm_sample_be). */
static struct {
	bool read; /* in this round */
	struct tm_be_use *v;
	int n, cap;
} beuse;

static int be_use_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tm_be_use *)a)->path, ((const struct tm_be_use *)b)->path);
}

const struct tm_be_use *tm_sample_be_find(const struct tm_be_use *v, int n, const char *path)
{
	struct tm_be_use key;

	if (snprintf(key.path, sizeof(key.path), "%s", path) >= (int)sizeof(key.path))
		return NULL;
	return bsearch(&key, v, n, sizeof(*v), be_use_cmp);
}

void tm_sample_round(void)
{
	beuse.read = false;
}

int tm_sample_be(struct tm_daemon *d, const struct tm_be_use **out)
{
	struct tm_be_cg *be;
	int nb;

	if (beuse.read) {
		*out = beuse.v;
		return beuse.n;
	}
	nb = tm_be_cgroups(d, &be);
	if (nb < 0)
		return -1;
	if (nb > beuse.cap) {
		struct tm_be_use *nv = realloc(beuse.v, sizeof(*nv) * nb);

		if (!nv) {
			free(be);
			return -1;
		}
		beuse.v = nv;
		beuse.cap = nb;
	}
	for (int i = 0; i < nb; i++) {
		struct tm_be_use *u = &beuse.v[i];
		char dir[PATH_MAX];
		__u64 us = 0, mem = 0;
		bool at = !tm_cg_path(dir, sizeof(dir), d->cgroup_root, be[i].path, NULL);

		snprintf(u->path, sizeof(u->path), "%s", be[i].path);
		u->priority = be[i].cfg->priority;
		u->ok = at && !tm_cg_read_u64(dir, "cpu.stat", "usage_usec", &us);
		u->mem_ok = at && !tm_cg_read_u64(dir, "memory.current", NULL, &mem);
		u->usage_us = us;
		u->memory = mem;
	}
	free(be);
	qsort(beuse.v, nb, sizeof(*beuse.v), be_use_cmp);
	beuse.n = nb;
	beuse.read = true;
	*out = beuse.v;
	return nb;
}
