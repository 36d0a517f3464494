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
/* tidemarkd --cleanup: remove from the node the taint this configuration
 * names and the one tidemark 0.6.0 put by default (tidemark.io/be-forbidden),
 * whoever put them last; others' taints are kept. 0 when done, -1 (said)
 * when the API could not be asked. */
int tm_kube_cleanup(struct tm_daemon *d);

/* The client's counters as /metrics text. */
void tm_kube_prom(struct tm_buf *b);

/*
 * Eviction through the API (policy/v1 Eviction, an Event on the pod), the
 * evictor's backend (evictor.h) in a tidemarkd with the cluster wing: a
 * pod it names is queued for the cluster thread when
 * kubernetes.evict_via_api is on (a pod already queued is not queued
 * twice), waited for in the first 30 s before the pod list came. A PDB
 * refusal (429) is tried again until kubernetes.eviction_timeout_s, any
 * other failure ends it at once; then, with eviction_fallback "kill", the
 * cgroup is given back to be killed. NULL in a node-only build.
 */
struct tm_evict_backend;
const struct tm_evict_backend *tm_cluster_eviction(void);

struct tm_slo_overlay;
/* The NodeSLO's values when they changed since the last call (main thread:
 * it applies them); false when unchanged. */
bool tm_kube_slo_take(struct tm_slo_overlay *o);
/* The NodeSLO's values as last read (a reload of the file keeps them). */
void tm_kube_slo_current(struct tm_slo_overlay *o);
/* What became of the NodeSLO, for /report ("applied: ...", "refused: ..."). */
void tm_kube_slo_said(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The report's members from the cluster wing: "nodeslo" (what became of the
 * NodeSLO) and "nodeMetricStatus" (who writes it). */
void tm_kube_json(json_t *r);
#endif
