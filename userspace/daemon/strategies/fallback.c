// SPDX-License-Identifier: GPL-2.0
/*
 * Protection when the scheduler is gone. If tidemark is ejected (watchdog,
 * scx_bpf_error, a crash, kill -9, an upgrade), every task falls back to
 * EEVDF and BE would run at full weight. Every 250 ms this checks that
 * tidemark is the running sched_ext scheduler (/sys/kernel/sched_ext/state
 * "enabled" and root/ops "tidemark"). When it is not, the configured BE
 * cgroups are put under CFS: cpu.idle 1 (EEVDF serves everything else
 * first) and a cpu.max recomputed every second from the line and what
 * ONLINE and SYSTEM used (the top-level cgroups' usage less BE's, counter by
 * counter: usage.h), shared equally among the BE cgroups, never below the BE
 * floor in all. Until a first short interval (250 ms) is measured, the last
 * report sample's figure stands in (none: the floor). While
 * active the BE cgroups are listed every 100 ms: a new one is limited at once
 * (and the share split again), not a second later at full speed. The values
 * these replace are recorded (tm_cg_write_saved) and put back exactly once
 * tidemark runs again, also by a tidemarkd started after one killed
 * mid-fallback.
 */
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actuate.h"
#include "config.h"
#include "report.h"
#include "strategy.h"
#include "tmlib.h"
#include "usage.h"
#include "log.h"

#define NAME	     "fallback"
#define PERIOD_US    100000 /* cpu.max period written */
#define RECOMPUTE_MS 1000
#define FIRST_MS     250 /* the first measured interval after entry */
#define WATCH_MS     100 /* while active: new BE cgroups limited this soon */

static struct {
	bool active;
	uint64_t since_ms, entered, last_at;
	struct tm_usetab use; /* the counters at the last recompute */
	bool have_usage;
	bool measured;	     /* a recompute from our own interval happened */
	uint64_t allow_mcpu; /* BE's share, all its cgroups together */
	uint64_t set_sig;    /* the BE cgroups limited last */
	int set_n;
	char why[96];
} st;

/* The CPU time of the tasks in the root cgroup itself (kernel threads, and on
 * a bare host whatever was never moved), one counter per task. */
static int add_root_tasks(const struct tm_daemon *d, struct tm_usetab *t)
{
	char p[PATH_MAX];
	long pid;
	FILE *f;
	int ret = 0;

	if (tm_cg_path(p, sizeof(p), d->cgroup_root, "/", "cgroup.procs"))
		return 0;
	f = fopen(p, "r");
	if (!f)
		return 0;
	while (!ret && fscanf(f, "%ld", &pid) == 1) {
		char pat[64];
		glob_t g;

		snprintf(pat, sizeof(pat), "/proc/%ld/task/*/schedstat", pid);
		if (glob(pat, 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc && !ret; i++) {
			unsigned long long v;
			FILE *ts = fopen(g.gl_pathv[i], "r");

			/* keyed "proc/<pid>/task/<tid>" */
			*strrchr(g.gl_pathv[i], '/') = 0;
			if (ts && fscanf(ts, "%llu", &v) == 1)
				ret = tm_use_add(t, g.gl_pathv[i] + 1, v / 1000);
			if (ts)
				fclose(ts);
		}
		globfree(&g);
	}
	fclose(f);
	return ret;
}

/*
 * Every counter the rate needs, us: "/<top>" each top-level cgroup's
 * usage_usec, which is exact (the root's own cpu.stat is built from tick
 * samples and points high under virtualisation), "proc/<pid>/task/<tid>"
 * the root cgroup's own tasks, "be:/x/y" each BE cgroup (none inside
 * another: tm_be_top_level).
 */
static int read_usage(struct tm_daemon *d, const struct tm_be_cg *be, int nb, struct tm_usetab *t)
{
	char pat[PATH_MAX], key[TM_CFG_PATH_MAX + 4];
	size_t rl = strlen(d->cgroup_root);
	const struct tm_be_use *use;
	int nu;
	glob_t g;
	__u64 v;

	if (!tm_cg_path(pat, sizeof(pat), d->cgroup_root, "/*", "cgroup.procs") &&
	    !glob(pat, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			*strrchr(g.gl_pathv[i], '/') = 0;
			if (!tm_cg_read_u64(g.gl_pathv[i], "cpu.stat", "usage_usec", &v) &&
			    tm_use_add(t, g.gl_pathv[i] + rl, v)) {
				globfree(&g);
				return -1;
			}
		}
		globfree(&g);
	}
	if (add_root_tasks(d, t))
		return -1;
	/* BE as the sampler read it this round */
	nu = tm_sample_be(d, &use);
	for (int i = 0; i < nb; i++) {
		const struct tm_be_use *u = tm_sample_be_find(use, nu > 0 ? nu : 0, be[i].path);

		if (!u || !u->ok)
			continue;
		snprintf(key, sizeof(key), "be:%s", be[i].path);
		if (tm_use_add(t, key, u->usage_us))
			return -1;
	}
	tm_use_done(t);
	return 0;
}

/*
 * BE's share until the next recompute: the line less what ONLINE and SYSTEM
 * (everything but BE) used since the last one. On entry there is no interval
 * of our own: the last report sample's figure stands in (taken while
 * tidemark ran; a tidemarkd just started has none and gives BE its floor),
 * and the first measured interval is a short one (FIRST_MS).
 */
static void measure(struct tm_daemon *d, const struct tm_be_cg *be, int nb, uint64_t now)
{
	uint64_t cap_mcpu = (uint64_t)tm_nr_cpus() * 1000, line_mcpu, hi_mcpu = 0;
	struct tm_usetab cur = {};
	bool have = !read_usage(d, be, nb, &cur);

	if (have && st.have_usage && now > st.last_at) {
		uint64_t dt_us = (now - st.last_at) * 1000, most = dt_us * tm_nr_cpus();
		uint64_t all = tm_use_growth(&st.use, &cur, "/", most) +
			       tm_use_growth(&st.use, &cur, "proc/", most);
		uint64_t bed = tm_use_growth(&st.use, &cur, "be:", most);

		/* a BE cgroup removed in the interval is in its parent's
		 * growth only: counted as not BE, BE gets less, never more */
		hi_mcpu = (all > bed ? all - bed : 0) / (now - st.last_at);
	} else if (d->snap.at_ms && d->snap.cpu_used_mcpu > 0) {
		hi_mcpu = d->snap.cpu_used_mcpu > d->snap.cpu_be_mcpu
				  ? (uint64_t)(d->snap.cpu_used_mcpu - d->snap.cpu_be_mcpu)
				  : 0;
	} else {
		hi_mcpu = cap_mcpu; /* nothing known: the floor */
	}
	tm_use_free(&st.use);
	st.use = cur;
	st.have_usage = have;
	st.last_at = now;
	line_mcpu = cap_mcpu * tm_line_pct(d, NULL) / 100;
	st.allow_mcpu = line_mcpu > hi_mcpu ? line_mcpu - hi_mcpu : 0;
	if (st.allow_mcpu < d->cfg.be_floor_mcpu)
		st.allow_mcpu = d->cfg.be_floor_mcpu;
}

/* FNV-1a over the paths in order: the set of BE cgroups limited */
static uint64_t set_sig(const struct tm_be_cg *be, int n)
{
	uint64_t h = 1469598103934665603ULL;

	for (int i = 0; i < n; i++)
		for (const char *c = be[i].path;; c++) {
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			if (!*c)
				break;
		}
	return h;
}

/* Put the BE cgroups under CFS, st.allow_mcpu shared equally; unless @force,
 * only when the set of BE cgroups changed since the last time (a new one
 * would run unlimited until the next recompute). */
static void limit(struct tm_daemon *d, const struct tm_be_cg *be, int n, bool force)
{
	const struct tm_config *cfg = &d->cfg;
	uint64_t quota_us = 0, sig = set_sig(be, n);
	bool *skip, changed = sig != st.set_sig || n != st.set_n;
	char val[64];

	if (!force && !changed)
		return;
	if (!n || cfg->fallback.dry_run)
		goto done;
	/* mCPU over a 100 ms period: 1000 mCPU is 100000 us; at least 1 ms */
	quota_us = st.allow_mcpu * (PERIOD_US / 1000) / n;
	if (quota_us < 1000)
		quota_us = 1000;
	snprintf(val, sizeof(val), "%" PRIu64 " %d", quota_us, PERIOD_US);
	/* every value about to be replaced recorded first, stored once (one
	 * file written for the whole node, not one per cgroup); cpu.idle 0
	 * resets cpu.weight to 100, so the weight is saved to be put back */
	skip = calloc(n, sizeof(*skip));
	if (!skip)
		return;
	for (int i = 0; i < n; i++) {
		skip[i] = tm_cg_record(d, NAME, be[i].path, "cpu.weight") ||
			  tm_cg_record(d, NAME, be[i].path, "cpu.idle") ||
			  tm_cg_record(d, NAME, be[i].path, "cpu.max");
		if (skip[i] && errno != ENOENT)
			tm_log(TM_LOG_ERR, "tidemarkd: %s: cannot record %s: %s\n", NAME,
			       be[i].path, strerror(errno));
	}
	if (tm_saved_sync(d)) {
		tm_log(TM_LOG_ERR, "tidemarkd: %s: values not recorded, nothing limited\n", NAME);
		free(skip);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (skip[i])
			continue;
		if (tm_cg_write(d, be[i].path, "cpu.idle", "1") ||
		    tm_cg_write(d, be[i].path, "cpu.max", val))
			if (errno != ENOENT)
				tm_log(TM_LOG_ERR, "tidemarkd: %s: cannot limit %s: %s\n", NAME,
				       be[i].path, strerror(errno));
	}
	free(skip);
done:
	/* a BE cgroup came or went between recomputes (not the entry's own) */
	if (changed && st.set_sig)
		tm_audit(d, NAME, "limit", cfg->fallback.dry_run,
			 "cgroups=%d->%d allow_mcpu=%" PRIu64 " quota_us=%" PRIu64, st.set_n, n,
			 st.allow_mcpu, quota_us);
	st.set_sig = sig;
	st.set_n = n;
}

static void leave(struct tm_daemon *d, uint64_t now, const char *why)
{
	int gone, n = tm_cg_restore(d, NAME, NULL, &gone);

	tm_audit(d, NAME, "leave", d->cfg.fallback.dry_run,
		 "restored=%d gone=%d after_ms=%" PRIu64 " reason=\"%s\"", n, gone,
		 st.active ? now - st.since_ms : 0, why);
	pthread_mutex_lock(&d->lock);
	st.active = false;
	d->fallback_active = false;
	pthread_mutex_unlock(&d->lock);
	tm_use_free(&st.use);
	st.have_usage = false;
	st.set_n = 0;
	st.set_sig = 0;
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	char why[96];
	bool ours = tm_sched_running(NULL, why, sizeof(why)), fresh = false;
	struct tm_be_cg *be;
	int nb, n;

	if (!d->cfg.fallback.enabled || ours) {
		/* also what an earlier tidemarkd left */
		if (st.active || tm_saved_count(NAME))
			leave(d, now,
			      ours ? "tidemark is the scheduler again" : "fallback disabled");
		return;
	}
	if (!st.active) {
		tm_audit(d, NAME, "enter", d->cfg.fallback.dry_run,
			 "reason=\"%s\" line_pct=%u recorded_values=%d", why, tm_line_pct(d, NULL),
			 tm_saved_count(NAME));
		pthread_mutex_lock(&d->lock);
		st.active = true;
		d->fallback_active = !d->cfg.fallback.dry_run;
		st.since_ms = now;
		st.entered++;
		snprintf(st.why, sizeof(st.why), "%s", why);
		pthread_mutex_unlock(&d->lock);
		st.have_usage = false;
		fresh = true;
	}
	nb = tm_be_cgroups(d, &be);
	if (nb < 0)
		return;
	/* a BE cgroup inside another is limited with it */
	n = tm_be_top_level(be, nb);
	if (fresh || now - st.last_at >= (st.measured ? RECOMPUTE_MS : FIRST_MS)) {
		st.measured = !fresh;
		measure(d, be, n, now);
		limit(d, be, n, true);
	} else {
		limit(d, be, n, false);
	}
	free(be);
}

static uint32_t period_ms(const struct tm_daemon *d)
{
	return st.active ? WATCH_MS : 250;
}

static void configure(struct tm_daemon *d)
{
}

static void report_prom(struct tm_daemon *d, struct tm_buf *b)
{
	bool active;
	uint64_t entered;

	pthread_mutex_lock(&d->lock);
	active = st.active;
	entered = st.entered;
	pthread_mutex_unlock(&d->lock);
	tm_bprintf(b,
		   "# HELP tidemark_fallback_active 1 while tidemark is not the running scheduler "
		   "and BE cgroups are held under CFS limits.\n"
		   "# TYPE tidemark_fallback_active gauge\n"
		   "tidemark_fallback_active %d\n"
		   "# HELP tidemark_fallback_entered_total Times the CFS fallback was entered.\n"
		   "# TYPE tidemark_fallback_entered_total counter\n"
		   "tidemark_fallback_entered_total %" PRIu64 "\n",
		   active ? 1 : 0, entered);
}

static void report_json(struct tm_daemon *d, json_t *r)
{
	pthread_mutex_lock(&d->lock);
	json_object_set_new(r, "fallback",
			    json_pack("{s:b,s:I,s:o}", "active", st.active, "entered",
				      (json_int_t)st.entered, "reason",
				      tm_json_str(st.active ? st.why : "")));
	pthread_mutex_unlock(&d->lock);
}

static const struct tm_cfg_row rows[] = {
	TM_CFG_BOOL_ROW("enabled", fallback.enabled, "true",
			"the CFS fallback while tidemark is not the running scheduler"),
	TM_CFG_BOOL_ROW("dry_run", fallback.dry_run, "false", "decide, log and count; never act"),
	TM_CFG_BOOL_ROW("ready", fallback.ready, "false",
			"/readyz answers ready while the fallback holds BE (a node meant to run "
			"without the scheduler); false: ready only once tidemark is attached"),
};

static const struct tm_cfg_section config = {
	.name = "fallback",
	.help = "BE held near the line with cpu.idle and cpu.max while the scheduler is gone",
	TM_CFG_ROWS(rows),
};

const struct tm_strategy tm_strategy_fallback = {
	.name = NAME,
	.config = &config,
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
	.report_prom = report_prom,
	.report_json = report_json,
};
