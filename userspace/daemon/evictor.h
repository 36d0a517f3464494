/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one evictor: every strategy kills through it, so protection, the
 * back-off of pods kubelet restarts in place, and eviction through the
 * API (kube.c) are decided in one place.
 */
#ifndef __TM_EVICTOR_H
#define __TM_EVICTOR_H
#include <stdbool.h>
#include <stdint.h>

struct tm_daemon;

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
/* Once a round: caps of ended back-offs removed, quiet records forgotten. */
void tm_evict_round(struct tm_daemon *d, uint64_t now);
#endif
