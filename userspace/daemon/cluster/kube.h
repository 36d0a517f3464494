/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tidemarkd and the cluster: an API client (the in-cluster service account
 * or a kubeconfig: HTTPS, bearer token or client certificate, the cluster's
 * CA; time-outs, retries with back-off, counters) and the thread that uses it: the pod list that
 * names pods, NodeMetric's spec (the collect policy) and its status every report interval. Without
 * kubernetes.api, nothing is sent and the report says so.
 */
#ifndef __TM_KUBE_H
#define __TM_KUBE_H
#include <stdbool.h>
#include <stddef.h>
#include "buf.h"

struct tm_daemon;
struct tm_kube;

/* NULL when this tidemarkd has the cluster wing; else why not (a node-only
 * build, make CLUSTER=0: cluster/none.c). */
const char *tm_cluster_missing(void);

/* Start the cluster thread (NULL and a message when it cannot start; a
 * configuration without an API or a pod source starts none and says so). */
struct tm_kube *tm_kube_start(struct tm_daemon *d, int *failed);
void tm_kube_stop(struct tm_kube *k);

/* The client's counters as /metrics text. */
void tm_kube_prom(struct tm_buf *b);

/*
 * Eviction through the API (policy/v1 Eviction, an Event on the pod), one
 * call for a target resolved once (pods.h):
 * - TM_EVICT_API: the pod is named and kubernetes.evict_via_api is on; it is
 *   queued for the cluster thread unless @dry_run (a pod already queued is
 *   not queued twice);
 * - TM_EVICT_WAIT: it is a pod, API eviction is on, but no pod list came yet
 *   (the first 30 s after start): the caller waits rather than kill a pod
 *   kubelet would restart in place;
 * - TM_EVICT_KILL: no pod's cgroup, API eviction off, or a pod the list
 *   does not have: the caller kills the cgroup.
 * A PDB refusal (429) is tried again until kubernetes.eviction_timeout_s,
 * any other failure ends it at once; then, with eviction_fallback "kill",
 * the cgroup comes back through tm_kube_evict_fallback (main thread) to be
 * killed.
 */
enum { TM_EVICT_KILL, TM_EVICT_API, TM_EVICT_WAIT };
struct tm_target;
int tm_kube_evict(const struct tm_target *t, const char *strategy, const char *action,
		  bool dry_run);
bool tm_kube_evict_fallback(char *rel, size_t rlen, char *strategy, size_t slen, char *why,
			    size_t wlen);

struct tm_slo_overlay;
/* The NodeSLO's values when they changed since the last call (main thread:
 * it applies them); false when unchanged. */
bool tm_kube_slo_take(struct tm_slo_overlay *o);
/* The NodeSLO's values as last read (a reload of the file keeps them). */
void tm_kube_slo_current(struct tm_slo_overlay *o);
/* What became of the NodeSLO, for /report ("applied: ...", "refused: ..."). */
void tm_kube_slo_said(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same as the string member "nodeslo" of the /report object @r. */
void tm_kube_slo_json(json_t *r);
#endif
