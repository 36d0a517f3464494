// SPDX-License-Identifier: GPL-2.0
/*
 * Memory watermark eviction. Node memory used = MemTotal - MemAvailable.
 * At or above evict_pct, act on the configured BE cgroups until used is at
 * or below evict_lower_pct:
 *  1. (throttle_first) lower each BE cgroup's memory.high by its share of
 *     what must be released, so its allocations stall and reclaim;
 *  2. if the node is still above evict_pct after a grace period, kill whole
 *     BE cgroups (cgroup.kill): lowest priority first, then largest, counting
 *     the memory of victims still dying as released.
 * Then a cool-down. Cgroups the configuration or the scheduler calls ONLINE
 * or SYSTEM are never touched. memory.high is restored once the node is
 * back under evict_lower_pct.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate.h"
#include "config.h"
#include "strategy.h"
#include "evict.h"
#include "report.h"
#include "tmlib.h"
#include "log.h"

#define NAME "memory_eviction"

struct throttled {
	char path[TM_CFG_PATH_MAX];
};

struct killed {
	char path[TM_CFG_PATH_MAX];
	uint64_t at_ms;
};

/* Lists that grow with the node (every BE cgroup may be in them). */
static struct {
	int phase; /* 0 idle, 1 throttled, 2 killed (cooling down) */
	uint64_t throttle_at;
	struct tm_evict_round round;
	struct throttled *thr;
	int nr_thr, cap_thr;
	struct killed *kil;
	int nr_kil, cap_kil;
} st = {.round = {.strategy = NAME}};

/*
 * A cgroup whose kill was written is dying while it still has tasks, for
 * at most KILL_RETRY_MS: its memory counts as being released and its
 * cgroup.kill is not written again. Once empty it is done; a job started
 * there afterwards is a new candidate.
 */
#define KILL_RETRY_MS 10000

static bool populated(const struct tm_daemon *d, const char *rel)
{
	char p[PATH_MAX], line[64];
	bool pop = false;
	FILE *f;

	if (tm_cg_path(p, sizeof(p), d->cgroup_root, rel, "cgroup.events"))
		return false;
	f = fopen(p, "r");
	if (!f)
		return false; /* gone */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "populated ", 10))
			pop = line[10] == '1';
	fclose(f);
	return pop;
}

/* Forget kills that are done (the cgroup is empty or gone) or timed out. */
static void prune_kills(const struct tm_daemon *d, uint64_t now)
{
	int w = 0;

	for (int i = 0; i < st.nr_kil; i++)
		if (now - st.kil[i].at_ms < KILL_RETRY_MS && populated(d, st.kil[i].path))
			st.kil[w++] = st.kil[i];
	st.nr_kil = w;
}

static bool dying(const char *path)
{
	for (int i = 0; i < st.nr_kil; i++)
		if (!strcmp(st.kil[i].path, path))
			return true;
	return false;
}

static int grow(void **v, int *cap, int n, size_t size)
{
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, size * (*cap ? *cap * 2 : 64));
	if (!nv)
		return -1;
	*v = nv;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

/* Every configured BE cgroup with its memory, as the sampler read it this
 * round (caller frees *out). */
static int candidates(struct tm_daemon *d, struct tm_evict_cand **out, uint64_t now)
{
	const struct tm_be_use *be;
	int nb = tm_sample_be(d, &be), n = 0;
	struct tm_evict_cand *c;

	*out = NULL;
	prune_kills(d, now);
	if (nb <= 0)
		return 0;
	c = calloc(nb, sizeof(*c));
	if (!c)
		return 0;
	for (int i = 0; i < nb; i++) {
		if (!be[i].mem_ok)
			continue; /* gone, or no memory controller there */
		memcpy(c[n].path, be[i].path, sizeof(c[n].path));
		c[n].priority = be[i].priority;
		c[n].amount = be[i].memory;
		c[n].dying = dying(be[i].path);
		snprintf(c[n].detail, sizeof(c[n].detail), "priority=%d memory_current=%" PRIu64,
			 c[n].priority, c[n].amount);
		n++;
	}
	*out = c;
	return n;
}

static void remember_throttled(const char *path)
{
	for (int i = 0; i < st.nr_thr; i++)
		if (!strcmp(st.thr[i].path, path))
			return;
	if (!grow((void **)&st.thr, &st.cap_thr, st.nr_thr, sizeof(st.thr[0])))
		memcpy(st.thr[st.nr_thr++].path, path, sizeof(st.thr[0].path));
}

/* memory.high back to exactly what it was before the episode */
static void restore(struct tm_daemon *d, const char *why)
{
	for (int i = 0; i < st.nr_thr; i++) {
		if (tm_audit(d, NAME, "unthrottle", d->cfg.memory_eviction.dry_run,
			     "cgroup=%s reason=\"%s\"", st.thr[i].path, why))
			tm_cg_restore(d, NAME, st.thr[i].path, NULL);
	}
	st.nr_thr = 0;
}

static void configure(struct tm_daemon *d)
{
	int n, gone;

	/* a reload does not forget what was throttled or killed */
	if (!d->cfg.memory_eviction.enabled && st.nr_thr)
		restore(d, "memory eviction disabled");
	/* left by a tidemarkd killed in an episode: no episode runs now */
	if (!st.nr_thr && tm_saved_count(NAME)) {
		n = tm_cg_restore(d, NAME, NULL, &gone);
		tm_audit(d, NAME, "unthrottle", false,
			 "restored=%d gone=%d reason=\"left lowered by an earlier tidemarkd\"", n,
			 gone);
	}
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	const struct tm_config *cfg = &d->cfg;
	__u64 total = 0, avail = 0;
	uint64_t used, need, sum = 0;
	uint32_t pct;
	struct tm_evict_cand *c;
	int n, k;

	if (!cfg->memory_eviction.enabled || tm_read_meminfo(&total, &avail))
		return;
	used = total > avail ? total - avail : 0;
	pct = tm_mem_used_pct(total, used);
	need = tm_evict_need(total, used, cfg->memory.evict_lower_pct);
	if (!need) {
		if (st.nr_thr)
			restore(d, "node memory back under evict_lower_pct");
		if (st.phase && tm_evict_round_ready(&st.round, now))
			st.phase = 0;
		return;
	}
	/* an episode starts at evict_pct and goes on until evict_lower_pct */
	if ((st.phase == 0 && pct < cfg->memory.evict_pct) || !tm_evict_round_ready(&st.round, now))
		return;
	n = candidates(d, &c, now);
	for (int i = 0; i < n; i++)
		if (!c[i].dying)
			sum += c[i].amount;
	if (cfg->memory_eviction.throttle_first && st.phase == 0 && sum) {
		for (int i = 0; i < n; i++) {
			uint64_t share, high;
			char val[32];

			if (c[i].dying || !c[i].amount)
				continue;
			share = (uint64_t)((double)need * c[i].amount / sum);
			high = c[i].amount > share ? c[i].amount - share : 0;
			snprintf(val, sizeof(val), "%" PRIu64, high);
			if (tm_audit(d, NAME, "throttle", cfg->memory_eviction.dry_run,
				     "cgroup=%s memory_current=%" PRIu64 " memory_high=%" PRIu64
				     " node_used_pct=%u evict_pct=%u need_bytes=%" PRIu64,
				     c[i].path, c[i].amount, high, pct, cfg->memory.evict_pct,
				     need)) {
				if (tm_cg_write_saved(d, NAME, c[i].path, "memory.high", val))
					tm_log(TM_LOG_ERR,
					       "tidemarkd: %s: cannot set memory.high of %s: %s\n",
					       NAME, c[i].path, strerror(errno));
			}
			remember_throttled(c[i].path);
		}
		st.phase = 1;
		st.throttle_at = now;
		free(c);
		return;
	}
	/* the throttle gets a moment to work before anything is killed */
	if (st.phase == 1 && now - st.throttle_at < 3ULL * cfg->memory_eviction.poll_ms + 200) {
		free(c);
		return;
	}
	/* every pick it takes: memory.high already holds each one back */
	k = tm_evict_round_run(d, &st.round, now, c, n, need, 0, cfg->memory_eviction.cooldown_ms,
			       cfg->memory_eviction.dry_run,
			       "node_used_pct=%u evict_pct=%u need_bytes=%" PRIu64, pct,
			       cfg->memory.evict_pct, need);
	for (int i = 0; i < n && k > 0; i++) {
		if (!c[i].picked ||
		    grow((void **)&st.kil, &st.cap_kil, st.nr_kil, sizeof(st.kil[0])))
			continue;
		memcpy(st.kil[st.nr_kil].path, c[i].path, sizeof(st.kil[0].path));
		st.kil[st.nr_kil++].at_ms = now;
	}
	free(c);
	if (k < 0 || (!k && !cfg->memory_eviction.throttle_first))
		return;
	st.phase = 2;
	if (!k) /* throttled, nothing left to kill: cool down all the same */
		tm_evict_round_cool(&st.round, now, cfg->memory_eviction.cooldown_ms);
}

static void stop(struct tm_daemon *d)
{
	/* memory.high is a throttle for an episode, not a setting to leave behind */
	if (st.nr_thr)
		restore(d, "daemon stopping");
}

static uint32_t period_ms(const struct tm_daemon *d)
{
	return d->cfg.memory_eviction.poll_ms;
}

static const struct tm_cfg_row rows[] = {
	TM_CFG_BOOL_ROW("enabled", memory_eviction.enabled, "true",
			"memory watermark eviction runs"),
	TM_CFG_BOOL_ROW("dry_run", memory_eviction.dry_run, "false",
			"decide, log and count; never act"),
	TM_CFG_BOOL_ROW("throttle_first", memory_eviction.throttle_first, "true",
			"lower memory.high of the BE cgroups before killing"),
	TM_CFG_U32_ROW("poll_ms", memory_eviction.poll_ms, 10, 1000, "100", "ms",
		       "how often MemAvailable is read; the reaction bound"),
	TM_CFG_U32_ROW("cooldown_ms", memory_eviction.cooldown_ms, 0, 600000, "2000", "ms",
		       "pause after a round"),
};

static const struct tm_cfg_section config = {
	.name = "memory_eviction",
	.help = "memory watermark eviction (strategy memory_eviction): throttle, then kill BE down "
		"to "
		"watermarks.memory.evict_lower_pct",
	TM_CFG_ROWS(rows),
};

const struct tm_strategy tm_strategy_memevict = {
	.name = NAME,
	.config = &config,
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
	.stop = stop,
};
