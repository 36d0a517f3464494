// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU evict watermark (Koordinator's evict line, for CPU). Every second
 * the node's CPU use is sampled: the scheduler's own run time of every class
 * when it runs (exact), else /proc/stat. When the mean over
 * watermarks.cpu.evict_window_s is above watermarks.cpu.evict_pct and BE
 * cgroups are using CPU, BE cgroups are killed to bring the node down to
 * evict_lower_pct: lowest priority first, then the one using most, each
 * counted for what it used over the last second, at most
 * cpu_eviction.max_per_round, then cpu_eviction.cooldown_s and a fresh
 * window. The scheduler keeps BE under the suppress line; the node goes
 * above evict_pct only when ONLINE and SYSTEM leave BE nothing but its floor
 * and forced runs, which this takes back. A policy of CPU eviction: its
 * lines are watermarks.cpu's, its switches, cap and cool-down cpu_eviction's.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "actuate.h"
#include "report.h"
#include "strategy.h"
#include "tmlib.h"
#include "evict.h"
#include "tmmaps.h"
#include "window.h"

#define NAME	    "cpu_high"
#define MAX_SAMPLES 600

struct cg_use {
	char path[TM_CFG_PATH_MAX];
	uint64_t usage_us;
	uint64_t at_ms;
	uint32_t mcpu; /* over the last period, 0 if unknown */
	int priority;
	bool seen;
};

static struct {
	/* the source of the last sample: scheduler class run time or /proc/stat */
	bool sched;
	uint64_t last_ns, last_busy, last_total, last_at;
	bool have_last;
	double pct_buf[MAX_SAMPLES];
	struct tm_win pct; /* node CPU %, one per second */
	struct tm_evict_round round;
	struct cg_use *cg; /* every BE cgroup: grows with the node */
	int cap_cg;
	int ncg;
	double last_avg; /* for the report, -1 until a window is full */
} st = {.pct = TM_WIN_OVER(st.pct_buf), .last_avg = -1, .round = {.strategy = NAME}};

static void add_stat(int cpu, __u64 busy, __u64 total, void *arg)
{
	__u64 *v = arg;

	if (cpu < 0) {
		v[0] = busy;
		v[1] = total;
	}
}

/* Node CPU use over the last period, % of capacity; < 0 when not known yet. */
static double sample(struct tm_daemon *d, uint64_t now)
{
	struct tm_cpu_stats sum;
	uint64_t ns = 0;
	__u64 v[2] = {};
	double pct = -1;
	int fd = tm_pin(d, TM_PIN_STATS);

	if (fd >= 0 && !tm_stats_sum(fd, &sum)) {
		for (int k = 0; k < TM_NR_CLASSES; k++)
			ns += sum.cnt[TM_STAT_RUN_NS_SYSTEM + k];
		if (st.have_last && st.sched && now > st.last_at && ns >= st.last_ns)
			pct = (ns - st.last_ns) * 100.0 /
			      ((double)(now - st.last_at) * 1e6 * tm_nr_cpus());
		st.sched = true;
		st.last_ns = ns;
	} else if (!tm_proc_stat(add_stat, v)) {
		if (st.have_last && !st.sched && v[1] > st.last_total)
			pct = (v[0] - st.last_busy) * 100.0 / (v[1] - st.last_total);
		st.sched = false;
		st.last_busy = v[0];
		st.last_total = v[1];
	}
	if (fd >= 0)
		close(fd);
	st.have_last = true;
	st.last_at = now;
	return pct;
}

static struct cg_use *cg_find(const char path[TM_CFG_PATH_MAX])
{
	for (int i = 0; i < st.ncg; i++)
		if (!strcmp(st.cg[i].path, path))
			return &st.cg[i];
	if (st.ncg == st.cap_cg) {
		int nc = st.cap_cg ? st.cap_cg * 2 : 64;
		struct cg_use *ng = realloc(st.cg, sizeof(*ng) * nc);

		if (!ng)
			return NULL;
		st.cg = ng;
		st.cap_cg = nc;
	}
	memset(&st.cg[st.ncg], 0, sizeof(st.cg[0]));
	memcpy(st.cg[st.ncg].path, path, sizeof(st.cg[0].path));
	st.cg[st.ncg].path[sizeof(st.cg[0].path) - 1] = 0;
	return &st.cg[st.ncg++];
}

/* What each BE cgroup used over the last period (the sampler's reading of
 * this round); forgets those gone. */
static void be_use(struct tm_daemon *d, uint64_t now)
{
	const struct tm_be_use *be;
	int nb = tm_sample_be(d, &be), k = 0;

	for (int i = 0; i < st.ncg; i++)
		st.cg[i].seen = false;
	for (int i = 0; i < nb; i++) {
		struct cg_use *u;

		if (!be[i].ok)
			continue;
		u = cg_find(be[i].path);
		if (!u)
			break;
		u->mcpu = u->at_ms && now > u->at_ms && be[i].usage_us >= u->usage_us
				  ? (uint32_t)((be[i].usage_us - u->usage_us) / (now - u->at_ms))
				  : 0;
		u->usage_us = be[i].usage_us;
		u->at_ms = now;
		u->priority = be[i].priority;
		u->seen = true;
	}
	for (int i = 0; i < st.ncg; i++)
		if (st.cg[i].seen)
			st.cg[k++] = st.cg[i];
	st.ncg = k;
}

static void configure(struct tm_daemon *d)
{
	tm_win_reset(&st.pct);
	st.last_avg = -1;
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	const struct tm_config *cfg = &d->cfg;
	uint32_t want =
		cfg->cpu.evict_window_s < MAX_SAMPLES ? cfg->cpu.evict_window_s : MAX_SAMPLES;
	struct tm_evict_cand *c;
	int n = 0;
	uint64_t need, be_mcpu = 0, cap = (uint64_t)tm_nr_cpus() * 1000;
	double pct, avg = 0;
	uint32_t counted;

	if (!cfg->cpu_eviction.enabled)
		return;
	pct = sample(d, now);
	be_use(d, now);
	if (pct < 0)
		return;
	tm_win_push(&st.pct, pct);
	if (tm_win_mean(&st.pct, want, &avg, &counted))
		return;
	pthread_mutex_lock(&d->lock);
	st.last_avg = avg;
	pthread_mutex_unlock(&d->lock);
	need = tm_cpu_high_need_mcpu(avg, cfg->cpu.evict_pct, cfg->cpu.evict_lower_pct, cap);
	if (!need || !tm_evict_round_ready(&st.round, now))
		return;
	c = calloc(st.ncg ? st.ncg : 1, sizeof(*c));
	if (!c)
		return;
	for (int i = 0; i < st.ncg; i++) {
		if (!st.cg[i].mcpu)
			continue; /* idle: killing it frees nothing */
		memcpy(c[n].path, st.cg[i].path, sizeof(c[n].path));
		c[n].priority = st.cg[i].priority;
		c[n].amount = st.cg[i].mcpu;
		snprintf(c[n].detail, sizeof(c[n].detail), "priority=%d used_mcpu=%u",
			 st.cg[i].priority, st.cg[i].mcpu);
		be_mcpu += st.cg[i].mcpu;
		n++;
	}
	/* no BE running: ONLINE and SYSTEM alone are above the line */
	if (n &&
	    tm_evict_round_run(d, &st.round, now, c, n, need, cfg->cpu_eviction.max_per_round,
			       cfg->cpu_eviction.cooldown_s * 1000ULL, cfg->cpu_eviction.dry_run,
			       "node_cpu_pct=%.1f window_s=%u evict_pct=%u evict_lower_pct=%u"
			       " need_mcpu=%" PRIu64 " be_used_mcpu=%" PRIu64 " source=%s",
			       avg, want, cfg->cpu.evict_pct, cfg->cpu.evict_lower_pct, need,
			       be_mcpu, st.sched ? "scheduler" : "proc_stat") > 0)
		tm_win_reset(&st.pct); /* judge the next round on fresh samples */
	free(c);
}

static uint32_t period_ms(const struct tm_daemon *d)
{
	return 1000;
}

/* caller holds no lock */
static void report_json(struct tm_daemon *d, json_t *r)
{
	double avg;

	pthread_mutex_lock(&d->lock);
	avg = st.last_avg;
	pthread_mutex_unlock(&d->lock);
	json_object_set_new(r, "cpu_high",
			    json_pack("{s:o,s:I}", "node_cpu_pct",
				      avg < 0 ? json_null() : json_real(round(avg * 10) / 10),
				      "window_s", (json_int_t)d->cfg.cpu.evict_window_s));
}

static void report_prom(struct tm_daemon *d, struct tm_buf *b)
{
	double avg;

	pthread_mutex_lock(&d->lock);
	avg = st.last_avg;
	pthread_mutex_unlock(&d->lock);
	if (avg < 0)
		return;
	tm_bprintf(b,
		   "# HELP tidemark_node_cpu_window_ratio Node CPU use averaged over "
		   "watermarks.cpu.evict_window_s, fraction of capacity (what the evict "
		   "watermark judges).\n"
		   "# TYPE tidemark_node_cpu_window_ratio gauge\n"
		   "tidemark_node_cpu_window_ratio %.4f\n",
		   avg / 100);
}

const struct tm_strategy tm_strategy_cpuhigh = {
	.name = NAME,
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
	.report_prom = report_prom,
	.report_json = report_json,
};
