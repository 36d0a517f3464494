// SPDX-License-Identifier: GPL-2.0
/*
 * Protection when the scheduler is gone. If tidemark is ejected (watchdog,
 * scx_bpf_error, a crash, kill -9, an upgrade), every task falls back to
 * EEVDF and BE would run at full weight. Every 250 ms this checks that
 * tidemark is the running sched_ext scheduler (/sys/kernel/sched_ext/state
 * "enabled" and root/ops "tidemark"). When it is not, the configured BE
 * cgroups are put under CFS: cpu.idle 1 (EEVDF serves everything else
 * first) and a cpu.max recomputed every second from the line and what
 * ONLINE and SYSTEM used (the top-level cgroups' usage less BE's), shared equally
 * among the BE cgroups, never below the BE floor in all. The values these
 * replace are recorded (tm_cg_write_saved) and put back exactly once
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
#include "strategy.h"
#include "tmlib.h"

#define NAME	     "fallback"
#define PERIOD_US    100000 /* cpu.max period written */
#define RECOMPUTE_MS 1000

static struct {
	bool active;
	uint64_t since_ms, entered, last_at;
	uint64_t root_us;
	uint64_t be_us;
	bool have_usage;
	char why[96];
} st;

/* CPU time of the tasks in the root cgroup itself (kernel threads, and on a
 * bare host whatever was never moved), us, from their own run time. */
static uint64_t root_tasks_us(const struct tm_daemon *d)
{
	char p[PATH_MAX];
	uint64_t ns = 0;
	long pid;
	FILE *f;

	if (tm_cg_path(p, sizeof(p), d->cgroup_root, "/", "cgroup.procs"))
		return 0;
	f = fopen(p, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1) {
		char pat[64];
		glob_t g;

		snprintf(pat, sizeof(pat), "/proc/%ld/task/*/schedstat", pid);
		if (glob(pat, 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++) {
			unsigned long long v;
			FILE *t = fopen(g.gl_pathv[i], "r");

			if (t && fscanf(t, "%llu", &v) == 1)
				ns += v;
			if (t)
				fclose(t);
		}
		globfree(&g);
	}
	fclose(f);
	return ns / 1000;
}

/*
 * CPU time of every task, us: the top-level cgroups' usage_usec, which is
 * exact (the root's own cpu.stat is built from tick samples, points high
 * under virtualisation), and the run time of the root cgroup's own tasks.
 * A task that exits takes its part with it from the root's share: the
 * next period starts again from what is there.
 */
static uint64_t top_usage_us(const struct tm_daemon *d)
{
	char pat[PATH_MAX];
	uint64_t sum = 0;
	glob_t g;
	__u64 v;

	if (tm_cg_path(pat, sizeof(pat), d->cgroup_root, "/*", "cgroup.procs") ||
	    glob(pat, 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *slash = strrchr(g.gl_pathv[i], '/');

		*slash = 0;
		if (!tm_cg_read_u64(g.gl_pathv[i], "cpu.stat", "usage_usec", &v))
			sum += v;
	}
	globfree(&g);
	return sum + root_tasks_us(d);
}

static bool under_other(const struct tm_be_cg *be, int n, int i)
{
	for (int j = 0; j < n; j++) {
		size_t l = strlen(be[j].path);

		if (j != i && !strncmp(be[i].path, be[j].path, l) && be[i].path[l] == '/')
			return true;
	}
	return false;
}

/* Put the BE cgroups under CFS, sized from the last second's use. */
static void apply(struct tm_daemon *d, uint64_t now)
{
	const struct tm_config *cfg = &d->cfg;
	struct tm_be_cg *be;
	int nb = tm_be_cgroups(d, &be), n = 0;
	uint64_t root_us = 0, be_us = 0, cap_mcpu = (uint64_t)tm_nr_cpus() * 1000;
	uint64_t hi_mcpu = 0, line_mcpu, allow_mcpu, quota_us;
	char val[64];
	bool *skip;
	__u64 v;

	root_us = top_usage_us(d);
	for (int i = 0; i < nb; i++) {
		char dir[PATH_MAX];

		if (tm_cg_path(dir, sizeof(dir), d->cgroup_root, be[i].path, NULL))
			continue;
		/* a BE cgroup inside another is in that one's usage already */
		if (!under_other(be, nb, i) && !tm_cg_read_u64(dir, "cpu.stat", "usage_usec", &v))
			be_us += v;
		be[n++] = be[i];
	}
	/* ONLINE+SYSTEM: everything but BE over the last period; the whole
	 * line for BE on the first round (cpu.idle puts it behind the rest) */
	if (st.have_usage && now > st.last_at && root_us >= st.root_us) {
		uint64_t all = root_us - st.root_us, bed = be_us > st.be_us ? be_us - st.be_us : 0;

		hi_mcpu = (all > bed ? all - bed : 0) / (now - st.last_at);
	}
	st.root_us = root_us;
	st.be_us = be_us;
	st.last_at = now;
	st.have_usage = true;
	line_mcpu = cap_mcpu * tm_line_pct(d, NULL) / 100;
	allow_mcpu = line_mcpu > hi_mcpu ? line_mcpu - hi_mcpu : 0;
	if (allow_mcpu < cfg->be_floor_mcpu)
		allow_mcpu = cfg->be_floor_mcpu;
	if (!n) {
		free(be);
		return;
	}
	/* mCPU over a 100 ms period: 1000 mCPU is 100000 us; at least 1 ms */
	quota_us = allow_mcpu * (PERIOD_US / 1000) / n;
	if (quota_us < 1000)
		quota_us = 1000;
	snprintf(val, sizeof(val), "%" PRIu64 " %d", quota_us, PERIOD_US);
	if (cfg->fallback.dry_run) {
		free(be);
		return;
	}
	/* every value about to be replaced recorded first, stored once (one
	 * file written for the whole node, not one per cgroup); cpu.idle 0
	 * resets cpu.weight to 100, so the weight is saved to be put back */
	skip = calloc(n, sizeof(*skip));
	if (!skip) {
		free(be);
		return;
	}
	for (int i = 0; i < n; i++) {
		skip[i] = tm_cg_record(d, NAME, be[i].path, "cpu.weight") ||
			  tm_cg_record(d, NAME, be[i].path, "cpu.idle") ||
			  tm_cg_record(d, NAME, be[i].path, "cpu.max");
		if (skip[i] && errno != ENOENT)
			fprintf(stderr, "tidemarkd: %s: cannot record %s: %s\n", NAME, be[i].path,
				strerror(errno));
	}
	if (tm_saved_sync(d)) {
		fprintf(stderr, "tidemarkd: %s: values not recorded, nothing limited\n", NAME);
		free(skip);
		free(be);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (skip[i])
			continue;
		if (tm_cg_write(d, be[i].path, "cpu.idle", "1") ||
		    tm_cg_write(d, be[i].path, "cpu.max", val))
			if (errno != ENOENT)
				fprintf(stderr, "tidemarkd: %s: cannot limit %s: %s\n", NAME,
					be[i].path, strerror(errno));
	}
	free(skip);
	free(be);
}

static void leave(struct tm_daemon *d, uint64_t now, const char *why)
{
	int n = tm_cg_restore(d, NAME, NULL);

	tm_audit(d, NAME, "leave", d->cfg.fallback.dry_run,
		 "restored=%d after_ms=%" PRIu64 " reason=\"%s\"", n,
		 st.active ? now - st.since_ms : 0, why);
	pthread_mutex_lock(&d->lock);
	st.active = false;
	pthread_mutex_unlock(&d->lock);
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	char why[96];
	bool ours = tm_sched_running(NULL, why, sizeof(why));

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
		st.since_ms = now;
		st.entered++;
		snprintf(st.why, sizeof(st.why), "%s", why);
		pthread_mutex_unlock(&d->lock);
		st.have_usage = false;
		apply(d, now);
		return;
	}
	if (now - st.last_at >= RECOMPUTE_MS)
		apply(d, now);
}

static uint32_t period_ms(const struct tm_daemon *d)
{
	return 250;
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

static void report_json(struct tm_daemon *d, struct tm_buf *b)
{
	pthread_mutex_lock(&d->lock);
	tm_bprintf(b, "\"fallback\":{\"active\":%s,\"entered\":%" PRIu64 ",\"reason\":",
		   st.active ? "true" : "false", st.entered);
	tm_bjson_str(b, st.active ? st.why : "");
	tm_bprintf(b, "},");
	pthread_mutex_unlock(&d->lock);
}

const struct tm_strategy tm_strategy_fallback = {
	.name = NAME,
	.section = "fallback",
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
	.report_prom = report_prom,
	.report_json = report_json,
};
