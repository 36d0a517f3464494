// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster wing of a node-only tidemarkd (make CLUSTER=0): no API client,
 * no kubeconfig, no HTTP client, so neither libcurl nor libyaml nor libcrypto
 * is linked. NodeMetric and the pod table stay (/nodemetric is served from
 * the node's own samples). The configuration refuses what would need the
 * rest (tm_cluster_missing), so nothing here is reached by a valid one but
 * the calls every tidemarkd makes.
 */
#include <stdarg.h>
#include <stdio.h>

#include "buf.h"
#include "config.h"
#include "daemon.h"
#include "httpc.h"
#include "kube.h"
#include "kubeconfig.h"
#include "log.h"

static const char missing[] = "this tidemarkd is built node-only (make CLUSTER=0): no Kubernetes "
			      "API client, kubeconfig reader or HTTP client";

const char *tm_cluster_missing(void)
{
	return missing;
}

struct tm_kube *tm_kube_start(struct tm_daemon *d, int *failed)
{
	*failed = 0;
	tm_log(TM_LOG_INFO, "tidemarkd: node-only build: NodeMetric served at /nodemetric only, "
			    "pods unnamed\n");
	return NULL;
}

void tm_kube_stop(struct tm_kube *k)
{
}

void tm_kube_prom(struct tm_buf *b)
{
}

int tm_kube_cleanup(struct tm_daemon *d)
{
	return 0; /* no API client: it cannot have tainted anything */
}

const struct tm_evict_backend *tm_cluster_eviction(void)
{
	return NULL;
}

bool tm_kube_slo_take(struct tm_slo_overlay *o)
{
	return false;
}

void tm_kube_slo_current(struct tm_slo_overlay *o)
{
	*o = (struct tm_slo_overlay){};
}

void tm_kube_slo_said(const char *fmt, ...)
{
}

void tm_kube_json(json_t *r)
{
	json_object_set_new(r, "nodeslo", json_string("not read (node-only build)"));
	json_object_set_new(r, "nodeMetricStatus",
			    json_pack("{s:s,s:s}", "writer", "none", "why", "node-only build"));
}

int tm_kubeconfig_load(const char *path, const char *context, struct tm_kubeconf *kc, char *err,
		       size_t errlen)
{
	snprintf(err, errlen, "%s", missing);
	return -1;
}

void tm_kubeconfig_free(struct tm_kubeconf *kc)
{
}

int tm_httpc_global_init(char *err, size_t errlen)
{
	return 0;
}

/* Only the kubelet's default URL reaches this in a valid configuration:
 * never used here, so not judged. */
int tm_httpc_url_check(const char *url, char *err, size_t errlen)
{
	return 0;
}

int tm_httpc_request(const char *url, const char *method, const char *body, unsigned int timeout_ms,
		     char **resp, long *status, char *err, size_t errlen)
{
	*resp = NULL;
	snprintf(err, errlen, "%s", missing);
	return -1;
}
