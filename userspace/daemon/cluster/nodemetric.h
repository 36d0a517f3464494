/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node's usage in Koordinator's NodeMetric (slo.koordinator.sh/v1alpha1):
 * node, system and per-pod usage averaged over the collect policy's window,
 * aggregated node usage per duration, ONLINE host applications, what prod
 * pods leave unused. Pods are found in the kubelet's cgroup tree (either
 * driver) and named from the pod table (pods.h).
 */
#ifndef __TM_NODEMETRIC_H
#define __TM_NODEMETRIC_H
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct tm_buf;
#include "pods.h"

struct tm_daemon;

#define TM_NM_MAX_DURATIONS 8

/* NodeMetric's spec.metricCollectPolicy, as honoured. */
struct tm_nm_policy {
	uint32_t aggregate_s; /* the window nodeUsage and podUsage average over */
	uint32_t report_s;    /* how often the status is written */
	uint32_t durations[TM_NM_MAX_DURATIONS]; /* aggregatedNodeUsages, s */
	int nr_durations;
	int mem; /* TM_NM_MEM_* */
};

enum {
	TM_NM_MEM_NO_CACHE,  /* usageWithoutPageCache (the default) */
	TM_NM_MEM_HOT_CACHE, /* usageWithHotPageCache: active file pages count */
	TM_NM_MEM_CACHE,     /* usageWithPageCache */
};

/* Koordinator's defaults: 300 s, 60 s, 5m/10m/30m, without page cache. */
void tm_nm_policy_default(struct tm_nm_policy *p);

/*
 * Read spec.metricCollectPolicy from a NodeMetric object (@spec its "spec"
 * member, may be NULL): what it leaves out keeps the default. -1 with the
 * field named in @err when a value is not one Koordinator allows.
 */
int tm_nm_policy_from_spec(json_t *spec, struct tm_nm_policy *p, char *err, size_t errlen);

/*
 * The field manager tidemarkd writes the NodeMetric status as
 * (?fieldManager=), and the other writers of that status: the latest one
 * other than @self (metadata.managedFields, the status subresource or
 * f:status) whose write is no older than @within_s at wall clock @now_s,
 * into @mgr and *@at. false when none is.
 */
#define TM_NM_MANAGER "tidemarkd"
/* Unix seconds @t as metav1.Time ("2026-12-03T09:00:00Z"). */
void tm_rfc3339(char *out, size_t len, uint64_t t);
bool tm_nm_other_writer(json_t *nm, const char *self, uint64_t now_s, uint32_t within_s, char *mgr,
			size_t len, uint64_t *at);

/* Set up (main thread, before the HTTP and cluster threads start): the
 * node's name from kubernetes.node_name, $NODE_NAME or the host name. */
void tm_nm_init(struct tm_daemon *d);
const char *tm_nm_node(void);

/* One sample of the node and of every pod and ONLINE host cgroup (main
 * thread, with the report's sample). */
void tm_nm_sample(struct tm_daemon *d, uint64_t now_us, double node_mcpu);

/* The collect policy NodeMetric's spec asks for (kube.c). */
void tm_nm_set_policy(const struct tm_nm_policy *p);
void tm_nm_get_policy(struct tm_nm_policy *p);

/* tidemark_pod_info: one series per pod cgroup sampled (the NodeMetric's
 * tracks): its cgroup as the per-cgroup series name it, the pod's
 * namespace and name from the pod list ("" until listed) and UID. */
void tm_nm_pod_prom(struct tm_buf *b);

/* The whole NodeMetric object (apiVersion, kind, metadata, spec, status);
 * NULL when no memory. */
json_t *tm_nm_object(struct tm_daemon *d);

/* GET /nodemetric's body: the object as text. */
char *tm_nm_json(struct tm_daemon *d);
#endif
