// SPDX-License-Identifier: GPL-2.0
/*
 * The pod table (pods.h): a PodList parsed into pods sorted by UID, with
 * Koordinator's classes and the effective requests, kept under one lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pods.h"
#include "quantity.h"
#include "rules.h"

static struct {
	pthread_mutex_t lock; /* everything below: the API client's and its readers' threads */
	struct tm_pod *pods;
	int nr_pods;
	char source[16];  /* where pods came from: "api", "kubelet", "" */
	char why[256];	  /* why no pod has a name */
	uint64_t pods_at; /* wall clock of the list, s */
} podtab = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = o ? json_object_get(o, k) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The effective request of a pod: its containers' sum, or its largest init
 * container's when that is more (the kubelet's rule), plus overhead. */
static void pod_requests(json_t *spec, struct tm_pod *p)
{
	uint64_t sum[2] = {0, 0}, init[2] = {0, 0}, v;
	static const char *const res[2] = {"cpu", "memory"};
	static const uint64_t scale[2] = {1000, 1};
	json_t *c, *cs;
	size_t i;

	for (int pass = 0; pass < 2; pass++) {
		cs = json_object_get(spec, pass ? "initContainers" : "containers");
		json_array_foreach(cs, i, c)
		{
			json_t *req = json_object_get(json_object_get(c, "resources"), "requests");

			for (int r = 0; r < 2; r++) {
				const char *q = jstr(req, res[r]);

				if (!q || tm_qty_parse(q, scale[r], &v))
					continue;
				if (pass)
					init[r] = v > init[r] ? v : init[r];
				else
					sum[r] += v;
			}
		}
	}
	for (int r = 0; r < 2; r++) {
		const char *q = jstr(json_object_get(spec, "overhead"), res[r]);

		if (init[r] > sum[r])
			sum[r] = init[r];
		if (q && !tm_qty_parse(q, scale[r], &v))
			sum[r] += v;
	}
	p->req_mcpu = sum[0];
	p->req_bytes = sum[1];
}

/*
 * Koordinator's classes: the koordinator.sh/qosClass label, else LS for a
 * Guaranteed or Burstable pod and BE for a BestEffort one; the priority
 * class from spec.priority's band (prod 9000-9999, mid 7000-7999, batch
 * 5000-5999, free 3000-3999), else koordinator.sh/priority-class, else
 * batch for BE and prod for the rest.
 */
static void pod_classes(json_t *labels, json_t *spec, struct tm_pod *p)
{
	static const char *const qos[] = {"LSE", "LSR", "LS", "BE", "SYSTEM", NULL};
	static const char *const prio[] = {"koord-prod", "koord-mid", "koord-batch", "koord-free",
					   NULL};
	const char *l = jstr(labels, "koordinator.sh/qosClass");
	json_t *pr = json_object_get(spec, "priority");

	p->qos[0] = p->prio[0] = 0;
	for (int i = 0; l && qos[i]; i++)
		if (!strcmp(l, qos[i]))
			snprintf(p->qos, sizeof(p->qos), "%s", qos[i]);
	if (!p->qos[0])
		snprintf(p->qos, sizeof(p->qos), "%s",
			 !strcmp(p->kube_qos, "BestEffort") ? "BE" : "LS");
	if (json_is_integer(pr)) {
		json_int_t v = json_integer_value(pr);

		if (v >= 9000 && v <= 9999)
			snprintf(p->prio, sizeof(p->prio), "koord-prod");
		else if (v >= 7000 && v <= 7999)
			snprintf(p->prio, sizeof(p->prio), "koord-mid");
		else if (v >= 5000 && v <= 5999)
			snprintf(p->prio, sizeof(p->prio), "koord-batch");
		else if (v >= 3000 && v <= 3999)
			snprintf(p->prio, sizeof(p->prio), "koord-free");
	}
	l = jstr(labels, "koordinator.sh/priority-class");
	for (int i = 0; !p->prio[0] && l && prio[i]; i++)
		if (!strcmp(l, prio[i]))
			snprintf(p->prio, sizeof(p->prio), "%s", prio[i]);
	if (!p->prio[0])
		snprintf(p->prio, sizeof(p->prio), "%s",
			 !strcmp(p->qos, "BE") ? "koord-batch" : "koord-prod");
}

static int pod_by_uid(const void *a, const void *b)
{
	return strcmp(((const struct tm_pod *)a)->uid, ((const struct tm_pod *)b)->uid);
}

int tm_pods_parse(json_t *list, struct tm_pod **pods, char *err, size_t errlen)
{
	json_t *items = json_is_object(list) ? json_object_get(list, "items") : NULL, *it;
	struct tm_pod *v;
	size_t i;
	int n = 0;

	*pods = NULL;
	if (!json_is_array(items)) {
		snprintf(err, errlen, "not a pod list (no items)");
		return -1;
	}
	v = calloc(json_array_size(items) + 1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_array_foreach(items, i, it)
	{
		json_t *md = json_object_get(it, "metadata"), *spec = json_object_get(it, "spec");
		const char *uid = jstr(md, "uid"), *ns = jstr(md, "namespace"),
			   *name = jstr(md, "name");
		const char *kq = jstr(json_object_get(it, "status"), "qosClass");
		struct tm_pod *p = &v[n];

		/* a pod without these cannot be matched or named: left out */
		if (!uid || !ns || !name || !*uid || !*ns || !*name ||
		    strlen(uid) >= sizeof(p->uid) || strlen(ns) >= sizeof(p->ns) ||
		    strlen(name) >= sizeof(p->name))
			continue;
		snprintf(p->uid, sizeof(p->uid), "%s", uid);
		snprintf(p->ns, sizeof(p->ns), "%s", ns);
		snprintf(p->name, sizeof(p->name), "%s", name);
		snprintf(p->kube_qos, sizeof(p->kube_qos), "%s", kq ? kq : "");
		if (json_is_object(spec))
			pod_requests(spec, p);
		pod_classes(json_object_get(md, "labels"), spec, p);
		n++;
	}
	qsort(v, n, sizeof(*v), pod_by_uid);
	*pods = v;
	return n;
}

void tm_pods_init(const char *pods_cfg)
{
	pthread_mutex_lock(&podtab.lock);
	if (!strcmp(pods_cfg, "none") || !pods_cfg[0])
		snprintf(podtab.why, sizeof(podtab.why),
			 "no pod list: kubernetes.pods is none (no API server or kubelet "
			 "configured)");
	else
		snprintf(podtab.why, sizeof(podtab.why), "no pod list yet from the %s", pods_cfg);
	pthread_mutex_unlock(&podtab.lock);
}

void tm_pods_set(struct tm_pod *pods, int n, const char *source, const char *why)
{
	pthread_mutex_lock(&podtab.lock);
	if (pods) {
		free(podtab.pods);
		podtab.pods = pods;
		podtab.nr_pods = n;
		snprintf(podtab.source, sizeof(podtab.source), "%s", source);
		podtab.pods_at = (uint64_t)time(NULL);
		podtab.why[0] = 0;
	} else if (why) {
		/* the last list stays: pods change slowly, a failed refresh is
		 * said in the report */
		snprintf(podtab.why, sizeof(podtab.why), "%s", why);
	}
	pthread_mutex_unlock(&podtab.lock);
}

static const struct tm_pod *pod_of(const char *uid)
{
	struct tm_pod key;

	snprintf(key.uid, sizeof(key.uid), "%s", uid);
	return podtab.nr_pods ? bsearch(&key, podtab.pods, podtab.nr_pods, sizeof(*podtab.pods),
					pod_by_uid)
			      : NULL;
}

bool tm_pods_listed(void)
{
	bool l;

	pthread_mutex_lock(&podtab.lock);
	l = podtab.source[0] != 0;
	pthread_mutex_unlock(&podtab.lock);
	return l;
}

bool tm_pod_name(const char *uid, char *ns, size_t nslen, char *name, size_t namelen)
{
	const struct tm_pod *p;
	bool ok = false;

	pthread_mutex_lock(&podtab.lock);
	p = pod_of(uid);
	if (p) {
		snprintf(ns, nslen, "%s", p->ns);
		snprintf(name, namelen, "%s", p->name);
		ok = true;
	}
	pthread_mutex_unlock(&podtab.lock);
	return ok;
}

bool tm_pod_get(const char *uid, struct tm_pod *out)
{
	const struct tm_pod *p;

	pthread_mutex_lock(&podtab.lock);
	p = pod_of(uid);
	if (p)
		*out = *p;
	pthread_mutex_unlock(&podtab.lock);
	return p != NULL;
}

void tm_pods_origin(char *source, size_t slen, uint64_t *at, char *why, size_t wlen)
{
	pthread_mutex_lock(&podtab.lock);
	snprintf(source, slen, "%s", podtab.source);
	*at = podtab.pods_at;
	snprintf(why, wlen, "%s", podtab.why);
	pthread_mutex_unlock(&podtab.lock);
}

bool tm_target_resolve(const char *rel, struct tm_target *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->rel, sizeof(t->rel), "%s", rel);
	if (tm_pod_uid(rel, t->uid, sizeof(t->uid)) != 1) {
		t->uid[0] = 0;
		return false;
	}
	tm_pod_name(t->uid, t->ns, sizeof(t->ns), t->name, sizeof(t->name));
	return true;
}
