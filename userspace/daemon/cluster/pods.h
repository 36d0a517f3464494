/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pod table: the pods of this node as the cluster lists them, by UID.
 * The API client (kube.c) writes it; the evictor's API path and NodeMetric
 * read it. Safe from every thread.
 */
#ifndef __TM_PODS_H
#define __TM_PODS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* One pod of this node as the cluster lists it. */
struct tm_pod {
	char uid[40];
	char ns[64];
	char name[254];
	char qos[8];	   /* Koordinator's: LSE, LSR, LS, BE, SYSTEM */
	char prio[16];	   /* koord-prod, koord-mid, koord-batch, koord-free */
	char kube_qos[16]; /* Guaranteed, Burstable, BestEffort */
	uint64_t req_mcpu, req_bytes;
};

/*
 * A PodList (the API's or the kubelet's /pods) into *pods, sorted by UID;
 * Koordinator's QoS and priority class from its labels and priority, else
 * from the Kubernetes QoS class. How many, -1 with @err on a malformed list.
 */
int tm_pods_parse(json_t *list, struct tm_pod **pods, char *err, size_t errlen);

/* Why no pod has a name before the first list: @pods_cfg is
 * kubernetes.pods ("api", "kubelet", "none" or ""). */
void tm_pods_init(const char *pods_cfg);

/* The pods the cluster lists now (kube.c); @source "api" or "kubelet". The
 * table is taken over. @why: why there is none (NULL when listed). */
void tm_pods_set(struct tm_pod *pods, int n, const char *source, const char *why);

/* A pod list arrived since start. */
bool tm_pods_listed(void);

/* The namespace and name of pod @uid in the last list; false when unknown. */
bool tm_pod_name(const char *uid, char *ns, size_t nslen, char *name, size_t namelen);

/* A cgroup to act on, resolved once: its pod's UID (from the kubelet's
 * cgroup name) and, when the last list has the pod, its namespace and name. */
struct tm_target {
	char rel[512]; /* the cgroup, "/x/y" under the cgroup root */
	char uid[40];  /* "": no pod's cgroup */
	char ns[64];   /* "": the pod list does not name it (yet) */
	char name[254];
};

/* Resolve cgroup @rel into *@t; true when it is a pod's (named or not). */
bool tm_target_resolve(const char *rel, struct tm_target *t);

/* A copy of pod @uid from the last list; false when it is not in it. */
bool tm_pod_get(const char *uid, struct tm_pod *out);

/* Where the names come from: @source "" while no list came, the list's wall
 * clock in s (*@at), and why there is none or the last refresh failed. */
void tm_pods_origin(char *source, size_t slen, uint64_t *at, char *why, size_t wlen);
#endif
