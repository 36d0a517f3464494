// SPDX-License-Identifier: GPL-2.0
/*
 * Satisfaction-based CPU eviction (after Alibaba's design). Every second:
 *   allowed = capacity x suppress_pct - ONLINE/SYSTEM use   (the BE budget)
 *   satisfaction = allowed / BE request, counted only while BE uses at
 *                  least usage_gate_pct of allowed (else BE is not short)
 * all from the scheduler's own per-class run time (exact, not /proc/stat).
 * When, over window_s with at least min_coverage_pct of the samples
 * counted, the average and the current satisfaction are both below
 * lower_pct, BE cgroups are killed to release request x (upper - current):
 * lowest priority first, then the one that frees most, at most
 * max_per_round per round, then a cool-down. BE request per cgroup: the
 * configured request_mcpu, else its cpu.max quota, else its cpu.weight
 * mapped back through kubelet's formula; a cgroup at weight 1 states no
 * request (kubelet gives BestEffort pods weight 1, i.e. 2 shares) and asks
 * for default_request_mcpu: a pod's share of the BE work, which the
 * operator sizes like a typical batch pod. Its use or demand would not do:
 * both shrink with the very shortage satisfaction is meant to show.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "actuate.h"
#include "config.h"
#include "strategy.h"
#include "tidemark_policy.h"
#include "tmlib.h"
#include "evict.h"
#include "tmmaps.h"
#include "window.h"

#define NAME	    "cpu_eviction"
#define MAX_SAMPLES 3600

static struct {
	uint64_t last_ns[TM_NR_CLASSES], last_at;
	bool have_last;
	/* per-second samples: satisfaction, NaN when not counted */
	double sat_buf[MAX_SAMPLES];
	struct tm_win sat;
	struct tm_evict_round round;
} st = {.sat = TM_WIN_OVER(st.sat_buf), .round = {.strategy = NAME}};

struct bcg {
	char path[TM_CFG_PATH_MAX];
	int priority;
	uint32_t request;
	bool dflt; /* request is default_request_mcpu */
};

static uint32_t read_request(const struct tm_daemon *d, const char *rel, uint32_t configured,
			     bool *dflt)
{
	char p[PATH_MAX];
	unsigned long long w;
	__u32 mcpu;
	FILE *f;

	*dflt = false;
	if (configured)
		return configured;
	if (tm_cg_cpu_max(d->cgroup_root, rel, &mcpu) == 1)
		return mcpu;
	if (tm_cg_path(p, sizeof(p), d->cgroup_root, rel, "cpu.weight"))
		return 0;
	f = fopen(p, "r");
	if (f) {
		bool ok = fscanf(f, "%llu", &w) == 1;

		fclose(f);
		if (ok && w > 1)
			return tm_weight_to_mcpu(w);
	}
	*dflt = true;
	return d->cfg.cpu_eviction.default_request_mcpu;
}

/* The configured BE cgroups that have tasks, with their requests, in a
 * malloc'd *out (all of them: the list grows with the node). */
static int be_cgroups(struct tm_daemon *d, struct bcg **out)
{
	struct tm_be_cg *be;
	int nb = tm_be_cgroups(d, &be), n = 0;
	struct bcg *c;

	*out = NULL;
	if (nb <= 0)
		return 0;
	c = calloc(nb, sizeof(*c));
	if (!c) {
		free(be);
		return 0;
	}

	for (int i = 0; i < nb; i++) {
		char p[PATH_MAX];
		FILE *f;
		int ch;

		/* an empty cgroup asks for nothing */
		f = tm_cg_path(p, sizeof(p), d->cgroup_root, be[i].path, "cgroup.procs")
			    ? NULL
			    : fopen(p, "r");
		ch = f ? fgetc(f) : EOF;
		if (f)
			fclose(f);
		if (ch == EOF)
			continue;
		memcpy(c[n].path, be[i].path, sizeof(c[n].path));
		c[n].priority = be[i].cfg->priority;
		c[n].request = read_request(d, be[i].path, be[i].cfg->request_mcpu, &c[n].dflt);
		n++;
	}
	free(be);
	*out = c;
	return n;
}

/* Per-class run time of the scheduler (ns), summed over CPUs. */
static int class_ns(struct tm_daemon *d, uint64_t *ns)
{
	struct tm_cpu_stats sum;
	int fd, ret;

	fd = tm_pin(d, TM_PIN_STATS);
	if (fd < 0)
		return -1;
	ret = tm_stats_sum(fd, &sum);
	close(fd);
	for (int k = 0; k < TM_NR_CLASSES && !ret; k++)
		ns[k] = sum.cnt[TM_STAT_RUN_NS_SYSTEM + k];
	return ret;
}

static void configure(struct tm_daemon *d)
{
	/* a new window: samples taken under other bounds do not count */
	tm_win_reset(&st.sat);
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	struct tm_evict_cand *cand = NULL;
	struct bcg *c = NULL;
	int n;
	const struct tm_config *cfg = &d->cfg;
	uint64_t ns[TM_NR_CLASSES];
	double be, allowed, request = 0, sat = -1, cur, avg = 0, release;
	__u64 dt_ns, hi_ns, allow_ns;
	uint32_t counted = 0, want;

	if (!cfg->cpu_eviction.enabled)
		return;
	if (class_ns(d, ns)) {
		st.have_last = false; /* no scheduler: nothing to measure */
		return;
	}
	if (!st.have_last || now <= st.last_at) {
		memcpy(st.last_ns, ns, sizeof(ns));
		st.last_at = now;
		st.have_last = true;
		return;
	}
	/* over the last period: BE's allowance exactly as the scheduler computes
	 * it (tm_be_allowance), at the line the arbiter holds now */
	dt_ns = (now - st.last_at) * 1000000ULL;
	hi_ns = ns[TM_CLASS_SYSTEM] - st.last_ns[TM_CLASS_SYSTEM] + ns[TM_CLASS_ONLINE] -
		st.last_ns[TM_CLASS_ONLINE];
	allow_ns = tm_be_allowance((__u64)tm_nr_cpus() * dt_ns, tm_line_pct(d, NULL), hi_ns,
				   (__u64)cfg->be_floor_mcpu * dt_ns / 1000);
	allowed = 1000.0 * allow_ns / dt_ns;
	be = 1000.0 * (ns[TM_CLASS_BE] - st.last_ns[TM_CLASS_BE]) / dt_ns;
	memcpy(st.last_ns, ns, sizeof(ns));
	st.last_at = now;
	n = be_cgroups(d, &c);
	for (int i = 0; i < n; i++)
		request += c[i].request;
	if (!tm_satisfaction(allowed, be, request, cfg->cpu_eviction.usage_gate_pct, &sat))
		sat = -1;
	tm_win_push(&st.sat, sat < 0 ? NAN : sat);

	want = cfg->cpu_eviction.window_s < MAX_SAMPLES ? cfg->cpu_eviction.window_s : MAX_SAMPLES;
	if (!tm_evict_round_ready(&st.round, now) || tm_win_mean(&st.sat, want, &avg, &counted))
		goto out;
	cur = sat;
	if (counted * 100 < want * cfg->cpu_eviction.min_coverage_pct || cur < 0)
		goto out;
	if (avg * 100 >= cfg->cpu_eviction.lower_pct || cur * 100 >= cfg->cpu_eviction.lower_pct)
		goto out;
	release = tm_sat_release_mcpu(request, cur, cfg->cpu_eviction.upper_pct);
	cand = calloc(n ? n : 1, sizeof(*cand));
	if (!cand)
		goto out;
	for (int i = 0; i < n; i++) {
		memcpy(cand[i].path, c[i].path, sizeof(cand[i].path));
		cand[i].priority = c[i].priority;
		cand[i].amount = c[i].request;
		snprintf(cand[i].detail, sizeof(cand[i].detail), "priority=%d request_mcpu=%u%s",
			 c[i].priority, c[i].request, c[i].dflt ? " (default_request_mcpu)" : "");
	}
	if (tm_evict_round_run(d, &st.round, now, cand, n, (uint64_t)release,
			       cfg->cpu_eviction.max_per_round,
			       cfg->cpu_eviction.cooldown_s * 1000ULL, cfg->cpu_eviction.dry_run,
			       "satisfaction_pct=%.0f window_avg_pct=%.0f lower_pct=%u"
			       " allowed_mcpu=%.0f be_used_mcpu=%.0f be_request_mcpu=%.0f"
			       " release_mcpu=%.0f",
			       cur * 100, avg * 100, cfg->cpu_eviction.lower_pct, allowed, be,
			       request, release) > 0)
		tm_win_reset(&st.sat); /* judge the next round on fresh samples */
out:
	free(cand);
	free(c);
}

/* satisfaction is sampled once a second: the window is counted in seconds */
static uint32_t period_ms(const struct tm_daemon *d)
{
	return 1000;
}

static void check(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	if (c->cpu_eviction.lower_pct >= c->cpu_eviction.upper_pct)
		tm_cfg_fail(x, "cpu_eviction.lower_pct", "%u must be below upper_pct (%u)",
			    c->cpu_eviction.lower_pct, c->cpu_eviction.upper_pct);
}

static const struct tm_cfg_row rows[] = {
	TM_CFG_BOOL_ROW(
		"enabled", cpu_eviction.enabled, "true",
		"CPU eviction runs: both its policies, satisfaction (cpu_eviction) and the evict "
		"watermark (cpu_high, its lines in watermarks.cpu)"),
	TM_CFG_BOOL_ROW("dry_run", cpu_eviction.dry_run, "false",
			"decide, log and count; never act (both policies)"),
	TM_CFG_U32_ROW("window_s", cpu_eviction.window_s, 10, 3600, "300", "s",
		       "satisfaction's averaging window"),
	TM_CFG_U32_ROW("min_coverage_pct", cpu_eviction.min_coverage_pct, 1, 100, "80", "%",
		       "samples of the window that must count"),
	TM_CFG_U32_ROW("lower_pct", cpu_eviction.lower_pct, 1, 100, "60", "%",
		       "evict below this satisfaction"),
	TM_CFG_U32_ROW("upper_pct", cpu_eviction.upper_pct, 1, 100, "80", "%",
		       "release enough to get back to this satisfaction"),
	TM_CFG_U32_ROW("usage_gate_pct", cpu_eviction.usage_gate_pct, 1, 100, "90", "%",
		       "a sample counts only while BE uses this much of what it may"),
	TM_CFG_U32_ROW("cooldown_s", cpu_eviction.cooldown_s, 0, 3600, "60", "s",
		       "pause after a round that killed (both policies)"),
	TM_CFG_U32_ROW("max_per_round", cpu_eviction.max_per_round, 1, 100, "1", "",
		       "kills per round at most (both policies)"),
	TM_CFG_U32_ROW(
		"default_request_mcpu", cpu_eviction.default_request_mcpu, 1, TM_MCPU_MAX, "1000",
		"mCPU",
		"CPU request of a BE cgroup that states none (BestEffort pods), for satisfaction"),
};

static const struct tm_cfg_section config = {
	.name = "cpu_eviction",
	.help = "CPU eviction: by BE satisfaction (strategy cpu_eviction) and by the CPU evict "
		"watermark (strategy cpu_high)",
	TM_CFG_ROWS(rows),
	.check = check,
};

const struct tm_strategy tm_strategy_cpuevict = {
	.name = NAME,
	.config = &config,
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
};
