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
#include "buf.h"

struct tm_daemon;
struct tm_kube;

/* Start the cluster thread (NULL and a message when it cannot start; a
 * configuration without an API or a pod source starts none and says so). */
struct tm_kube *tm_kube_start(struct tm_daemon *d, int *failed);
void tm_kube_stop(struct tm_kube *k);

/* The client's counters as /metrics text. */
void tm_kube_prom(struct tm_buf *b);
#endif
