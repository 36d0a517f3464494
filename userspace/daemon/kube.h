/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tidemarkd and the cluster: an API client (in-cluster service account:
 * HTTPS, bearer token, the cluster's CA; time-outs, retries with back-off,
 * counters) and the thread that uses it: the pod list that names pods,
 * NodeMetric's spec (the collect policy) and its status every report
 * interval. Without kubernetes.api, nothing is sent and the report says so.
 */
#ifndef __TM_KUBE_H
#define __TM_KUBE_H
#include <stdbool.h>
#include "buf.h"

struct tm_daemon;
struct tm_kube;

/* Start the cluster thread (NULL and a message when it cannot start; a
 * configuration without an API or a pod source starts none and says so). */
struct tm_kube *tm_kube_start(struct tm_daemon *d, int *failed);
void tm_kube_stop(struct tm_kube *k);

/* The client's counters as /metrics text. */
void tm_kube_prom(struct tm_buf *b);

struct tm_slo_overlay;
/* The NodeSLO's values when they changed since the last call (main thread:
 * it applies them); false when unchanged. */
bool tm_kube_slo_take(struct tm_slo_overlay *o);
/* The NodeSLO's values as last read (a reload of the file keeps them). */
void tm_kube_slo_current(struct tm_slo_overlay *o);
/* What became of the NodeSLO, for /report ("applied: ...", "refused: ..."). */
void tm_kube_slo_said(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same as a JSON string member of /report. */
void tm_kube_slo_json(struct tm_buf *b);
#endif
