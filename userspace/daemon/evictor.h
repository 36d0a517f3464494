/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one evictor: every strategy kills through it, so protection, the
 * back-off of pods kubelet restarts in place, and eviction through the
 * API (kube.c) are decided in one place.
 */
#ifndef __TM_EVICTOR_H
#define __TM_EVICTOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "config.h"

struct tm_daemon;
struct tm_target;

/*
 * Where an eviction goes instead of cgroup.kill: the cluster wing's
 * Eviction API (kube.c), given to the evictor at start (tm_cluster_eviction);
 * without one every eviction is a kill. evict() answers for a target
 * resolved once (pods.h):
 * - TM_EVICT_API: queued through the API (not when dry-running);
 * - TM_EVICT_WAIT: a pod, but the pod list has not come yet: wait rather
 *   than kill a pod kubelet would restart in place;
 * - TM_EVICT_KILL: not a pod, or the API is not used for it: kill.
 * given_back() hands the main thread, one at a time, a cgroup whose API
 * eviction failed and is to be killed after all (false: none).
 */
enum { TM_EVICT_KILL, TM_EVICT_API, TM_EVICT_WAIT };
struct tm_evict_backend {
	int (*evict)(const struct tm_target *t, const char *strategy, const char *action,
		     bool dry_run);
	bool (*given_back)(char *rel, size_t rlen, char *strategy, size_t slen, char *why,
			   size_t wlen);
};
/* The backend from now on (NULL: none, every eviction a kill). */
void tm_evictor_backend(const struct tm_evict_backend *b);

/*
 * Kill every task of cgroup @rel (cgroup.kill) for @strategy: one audit line
 * "action=@action ... cgroup=@rel <details>", the metric, and the error on
 * stderr if the write fails. A protected cgroup is refused. A Kubernetes
 * pod (by UID, whatever its container cgroups; kubelet restarts a killed
 * pod's containers in place) killed before and back within its back-off (eviction.backoff_*:
 * doubled each kill) is not killed but capped at eviction.backoff_cap_mcpu, audited once as
 * "action=backoff". True when killed.
 */
bool tm_evict(struct tm_daemon *d, const char *strategy, const char *action, const char *rel,
	      bool dry_run, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Once a loop: pods the API gave up on killed (eviction_fallback "kill"),
 * caps of ended back-offs removed, quiet records forgotten. */
void tm_evict_maintain(struct tm_daemon *d, uint64_t now);

/*
 * The eviction round every evicting strategy shares: each keeps only its
 * need (how much must go, in its own unit) and its candidates; the pick,
 * the per-round cap, the audit lines and the cool-down are here.
 */
struct tm_evict_cand {
	char path[TM_CFG_PATH_MAX]; /* "/x/y" under the cgroup root */
	int priority;		    /* lower goes first */
	uint64_t amount;	    /* what killing it releases, in the round's unit */
	bool dying;		    /* killed earlier, still releasing: counts as released */
	char detail[160];	    /* its own figures, first in its audit line */
	bool picked;		    /* set by the round */
};

/* A strategy's rounds. */
struct tm_evict_round {
	const char *strategy;	 /* in audit lines */
	uint64_t cooldown_until; /* ms: no round before */
};

/* May a round of @r run at @now (no cool-down running)? */
bool tm_evict_round_ready(const struct tm_evict_round *r, uint64_t now);

/*
 * One round at @now: among @c[0..@n) pick what releases @need, lowest
 * priority first, then the largest (tm_evict_pick; dying ones count as
 * released and are not picked), at most @max_kills of them (0: as many as
 * it takes), and kill each through tm_evict, its audit line its detail
 * then the round's own (@fmt). Picked candidates are marked. Returns how
 * many were picked, and when any, no round follows for @cooldown_ms; -1
 * when out of memory (said on stderr).
 */
int tm_evict_round_run(struct tm_daemon *d, struct tm_evict_round *r, uint64_t now,
		       struct tm_evict_cand *c, int n, uint64_t need, uint32_t max_kills,
		       uint64_t cooldown_ms, bool dry_run, const char *fmt, ...)
	__attribute__((format(printf, 10, 11)));

/* A cool-down without a kill (memory eviction after throttling). */
void tm_evict_round_cool(struct tm_evict_round *r, uint64_t now, uint64_t cooldown_ms);
#endif
