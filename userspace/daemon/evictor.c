// SPDX-License-Identifier: GPL-2.0
/*
 * The evictor (evictor.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate.h"
#include "evict.h"
#include "evictor.h"
#include "pods.h"
#include "log.h"

/*
 * What the evictor remembers of each cgroup or pod it killed: kubelet
 * restarts a killed pod's containers in place (new container cgroups, same
 * pod UID), so a kill alone loops. Until its back-off ends, one that comes
 * back is capped, not killed; each kill doubles the next back-off.
 */
#define TM_EVICT_RECS 256

static struct evict_rec {
	char key[64];		   /* "pod:<uid>" */
	char rel[TM_CFG_PATH_MAX]; /* the cgroup capped meanwhile */
	uint32_t kills;
	uint64_t until_ms; /* no kill before this */
	uint64_t backoff_ms;
	bool capped, told;
} recs[TM_EVICT_RECS];
static int nr_recs;

static struct evict_rec *rec_find(const char *key)
{
	for (int i = 0; i < nr_recs; i++)
		if (!strcmp(recs[i].key, key))
			return &recs[i];
	return NULL;
}

/* A pod's back-off record (pod:<uid>), made when there is room; a full table
 * is counted and said once (tm_limit_hit): that pod then loops unslowed. */
static struct evict_rec *rec_new(struct tm_daemon *d, const char *key)
{
	struct evict_rec *r;

	if (nr_recs == TM_EVICT_RECS) {
		tm_limit_hit(d, "eviction.backoff", TM_EVICT_RECS);
		return NULL;
	}
	r = &recs[nr_recs++];
	memset(r, 0, sizeof(*r));
	snprintf(r->key, sizeof(r->key), "%s", key);
	return r;
}

static const struct tm_evict_backend *backend;

void tm_evictor_backend(const struct tm_evict_backend *b)
{
	backend = b;
}

bool tm_evict(struct tm_daemon *d, const char *strategy, const char *action, const char *rel,
	      bool dry_run, const char *fmt, ...)
{
	const struct tm_config *cfg = &d->cfg;
	char details[1500], key[64] = "";
	uint64_t now = tm_now_ms();
	struct tm_target t;
	struct evict_rec *r = NULL;
	int via;
	va_list ap;

	if (tm_protected(d, rel)) {
		tm_log(TM_LOG_WARNING, "tidemarkd: %s: %s is ONLINE or SYSTEM: not evicted\n",
		       strategy, rel);
		return false;
	}
	/* resolved once: the key, the API's call and the audit line agree
	 * whatever the pod list does meanwhile. Outside Kubernetes new tasks
	 * in a killed cgroup are a new job, not a restart: no key. */
	if (tm_target_resolve(rel, &t)) {
		snprintf(key, sizeof(key), "pod:%s", t.uid);
		r = rec_find(key);
	}
	if (r && now < r->until_ms) {
		/* back within its back-off: capped (again: kubelet makes new
		 * container cgroups), and said once per back-off */
		bool capped = cfg->eviction.backoff_cap_mcpu && !dry_run &&
			      tm_be_cap(d, rel, cfg->eviction.backoff_cap_mcpu);

		if (capped && !r->capped) {
			r->capped = true;
			snprintf(r->rel, sizeof(r->rel), "%s", rel);
		}
		if (!r->told) {
			r->told = true;
			tm_audit(d, strategy, "backoff", dry_run,
				 "cgroup=%s key=%s kills=%u kill_again_in_ms=%" PRIu64
				 " cap_mcpu=%u capped=%s wanted=%s",
				 rel, key, r->kills, r->until_ms - now,
				 cfg->eviction.backoff_cap_mcpu, capped ? "true" : "false", action);
		}
		return false;
	}
	va_start(ap, fmt);
	vsnprintf(details, sizeof(details), fmt, ap);
	va_end(ap);
	/* a pod the cluster names is evicted through the API (kubelet would
	 * restart a killed one in place); capped meanwhile, so it frees the
	 * CPU at once, and its memory.high already throttles it */
	via = backend ? backend->evict(&t, strategy, action, dry_run) : TM_EVICT_KILL;
	if (via == TM_EVICT_WAIT) {
		/* a pod killed in place comes back: capped until it has a name */
		if (cfg->eviction.backoff_cap_mcpu && !dry_run)
			tm_be_cap(d, rel, cfg->eviction.backoff_cap_mcpu);
		tm_audit(d, strategy, "wait_pod_list", dry_run,
			 "cgroup=%s wanted=%s why=\"eviction through the API: no pod list yet\"",
			 rel, action);
		return false;
	}
	if (!tm_audit(d, strategy, action, dry_run, "cgroup=%s via=%s %s", rel,
		      via == TM_EVICT_API ? "eviction-api" : "cgroup.kill", details))
		return false;
	if (via == TM_EVICT_API) {
		if (cfg->eviction.backoff_cap_mcpu)
			tm_be_cap(d, rel, cfg->eviction.backoff_cap_mcpu);
	} else if (tm_cg_write(d, rel, "cgroup.kill", "1")) {
		tm_log(TM_LOG_ERR, "tidemarkd: %s: cannot kill %s: %s\n", strategy, rel,
		       strerror(errno));
		return false;
	}
	if (!r && key[0])
		r = rec_new(d, key);
	if (r) {
		r->kills++;
		r->backoff_ms =
			tm_evict_backoff_ms(r->kills, cfg->eviction.backoff_initial_s * 1000ULL,
					    cfg->eviction.backoff_max_s * 1000ULL);
		r->until_ms = now + r->backoff_ms;
		r->told = false;
	}
	return true;
}

void tm_evict_maintain(struct tm_daemon *d, uint64_t now)
{
	char rel[TM_CFG_PATH_MAX], strategy[32], why[256];
	int k = 0;

	/* pods the API did not evict in time, whose fallback is a kill */
	while (backend && backend->given_back(rel, sizeof(rel), strategy, sizeof(strategy), why,
					      sizeof(why))) {
		if (tm_protected(d, rel))
			continue;
		tm_audit(d, "evictor", "kill_fallback", false, "cgroup=%s for=%s why=\"%s\"", rel,
			 strategy, why);
		if (tm_cg_write(d, rel, "cgroup.kill", "1") && errno != ENOENT)
			tm_log(TM_LOG_ERR, "tidemarkd: cannot kill %s: %s\n", rel, strerror(errno));
	}

	for (int i = 0; i < nr_recs; i++) {
		struct evict_rec *r = &recs[i];

		if (r->capped && now >= r->until_ms) {
			r->capped = false;
			tm_audit(d, "evictor", "backoff_end", false,
				 "cgroup=%s key=%s kills=%u cap=%s", r->rel, r->key, r->kills,
				 tm_be_cap(d, r->rel, 0) ? "removed"
							 : "gone (no cgroup or scheduler)");
		}
		/* forgotten after a quiet back-off as long again: counts restart */
		if (now >= r->until_ms + r->backoff_ms)
			continue;
		recs[k++] = *r;
	}
	nr_recs = k;
}

bool tm_evict_round_ready(const struct tm_evict_round *r, uint64_t now)
{
	return now >= r->cooldown_until;
}

void tm_evict_round_cool(struct tm_evict_round *r, uint64_t now, uint64_t cooldown_ms)
{
	r->cooldown_until = now + cooldown_ms;
}

int tm_evict_round_run(struct tm_daemon *d, struct tm_evict_round *r, uint64_t now,
		       struct tm_evict_cand *c, int n, uint64_t need, uint32_t max_kills,
		       uint64_t cooldown_ms, bool dry_run, const char *fmt, ...)
{
	struct tm_victim *v = malloc(sizeof(*v) * (n ? n : 1));
	int *order = malloc(sizeof(*order) * (n ? n : 1));
	char round[1024];
	va_list ap;
	int m;

	if (!v || !order) {
		tm_log(TM_LOG_ERR, "tidemarkd: %s: out of memory for %d eviction candidates\n",
		       r->strategy, n);
		free(v);
		free(order);
		return -1;
	}
	va_start(ap, fmt);
	vsnprintf(round, sizeof(round), fmt, ap);
	va_end(ap);
	for (int i = 0; i < n; i++) {
		v[i] = (struct tm_victim){.id = i,
					  .priority = c[i].priority,
					  .amount = c[i].amount,
					  .dying = c[i].dying};
		c[i].picked = false;
	}
	m = tm_evict_pick(v, n, need, order);
	if (max_kills && m > (int)max_kills)
		m = max_kills;
	for (int j = 0; j < m; j++) {
		struct tm_evict_cand *x = &c[order[j]];

		x->picked = true;
		tm_evict(d, r->strategy, "kill", x->path, dry_run, "%s %s", x->detail, round);
	}
	if (m)
		tm_evict_round_cool(r, now, cooldown_ms);
	free(v);
	free(order);
	return m;
}
