// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster thread (kube.h). Its own thread: a slow or refusing API
 * server delays neither the strategies nor the endpoint.
 *
 * Every kubernetes.pods_refresh_s: this node's pods, from the API server
 * (GET /api/v1/pods?fieldSelector=spec.nodeName=NODE) or the kubelet's
 * /pods, into nodemetric.c's table. Every reportIntervalSeconds of the
 * NodeMetric's spec: GET nodemetrics/NODE (its metricCollectPolicy is
 * honoured from then on; created when missing), then a merge patch of its
 * status. A request that fails to connect, times out, or gets 429 or a 5xx
 * is retried kubernetes.retries times, 0.25 s doubling to 4 s apart (or the
 * server's Retry-After, up to 10 s); other answers are final. A token
 * file is read before every request (projected tokens rotate).
 *
 * Credentials: the pod's service account (in-cluster), or one context of a
 * kubeconfig (kubeconfig.c: a token, a token file, a client certificate;
 * the CA as a file or inline). The kubelet is asked with the same ones.
 */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actuate.h"
#include "config.h"
#include "daemon.h"
#include "httpc.h"
#include "evictor.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nodemetric.h"
#include "rules.h"

#define TOKEN_MAX 16384

/* What the counters are kept by: the call, and its outcome. */
enum call {
	C_PODS,
	C_KUBELET_PODS,
	C_NM_GET,
	C_NM_CREATE,
	C_NM_STATUS,
	C_SLO_GET,
	C_EVICT,
	C_EVENT,
	C_NODE_GET,
	C_NODE_PATCH,
	NR_CALLS
};
static const char *const call_name[NR_CALLS] = {"list_pods",
						"kubelet_pods",
						"get_nodemetric",
						"create_nodemetric",
						"patch_nodemetric_status",
						"get_nodeslo",
						"evict_pod",
						"create_event",
						"get_node",
						"patch_node"};

/* One pod the API is asked to evict. */
#define EVICT_Q 64
struct evq {
	char uid[40], ns[64], name[254];
	char rel[TM_CFG_PATH_MAX];
	char strategy[32], action[32];
	uint64_t first_ms, next_ms;
	unsigned int refusals;
	bool fallback; /* done with the API: the main thread kills it */
	char why[256];
};

static struct {
	pthread_mutex_t lock;
	uint64_t ok[NR_CALLS], failed[NR_CALLS], retries[NR_CALLS];
	uint64_t last_ok_s[NR_CALLS]; /* wall clock of the last success */
	struct tm_slo_overlay slo;    /* the NodeSLO's values as last read */
	bool slo_changed, slo_known;
	char slo_state[512];
	/* the NodeMetric status: this tidemarkd writes it unless another
	 * writer did within two report intervals (nm_other, at nm_other_at) */
	bool nm_update;
	char nm_other[129];
	uint64_t nm_other_at;
	uint32_t nm_report_s;
	/* evictions: queued by the main thread, worked by the cluster thread */
	struct evq q[EVICT_Q];
	int nq;
	bool evict_on; /* an API and kubernetes.evict_via_api */
	uint64_t started_ms;
	uint32_t evict_timeout_s;
	bool fallback_kill;
} kube_state = {.lock = PTHREAD_MUTEX_INITIALIZER,
		.slo_state = "not read (kubernetes.api is none)"};

struct tm_kube {
	struct tm_daemon *d;
	pthread_t th;
	volatile bool stop;
	struct tm_kubeconf cred; /* server, CA and credentials */
	char kubelet_url[256], pods[16];
	char node[254];
	uint32_t timeout_ms, retries, refresh_s;
	bool api, update, slo;
	bool said_404; /* a missing NodeMetric said once */
	bool nm_ok;    /* the NodeMetric exists (its status can be written) */
	/* the node's taint while above a forbid line, with hysteresis */
	char taint_key[128], taint_effect[24];
	const char *why; /* of the next taint write, for its audit line */
	uint32_t taint_after_s, untaint_after_s;
	bool taint_known, tainted, forbid;
	uint64_t forbid_since, taint_retry_ms;
};

static void count(enum call c, bool ok, unsigned int retries)
{
	pthread_mutex_lock(&kube_state.lock);
	if (ok) {
		kube_state.ok[c]++;
		kube_state.last_ok_s[c] = (uint64_t)time(NULL);
	} else {
		kube_state.failed[c]++;
	}
	kube_state.retries[c] += retries;
	pthread_mutex_unlock(&kube_state.lock);
}

void tm_kube_prom(struct tm_buf *b)
{
	pthread_mutex_lock(&kube_state.lock);
	tm_bprintf(b, "# HELP tidemark_kube_requests_total Requests to the cluster (API server "
		      "or kubelet) by call and result, retries not counted.\n"
		      "# TYPE tidemark_kube_requests_total counter\n");
	for (int c = 0; c < NR_CALLS; c++)
		tm_bprintf(b,
			   "tidemark_kube_requests_total{call=\"%s\",result=\"ok\"} %" PRIu64 "\n"
			   "tidemark_kube_requests_total{call=\"%s\",result=\"failed\"} %" PRIu64
			   "\n",
			   call_name[c], kube_state.ok[c], call_name[c], kube_state.failed[c]);
	tm_bprintf(b, "# HELP tidemark_kube_retries_total Requests to the cluster tried again "
		      "(connection failure, time-out, 429 or 5xx).\n"
		      "# TYPE tidemark_kube_retries_total counter\n");
	for (int c = 0; c < NR_CALLS; c++)
		tm_bprintf(b, "tidemark_kube_retries_total{call=\"%s\"} %" PRIu64 "\n",
			   call_name[c], kube_state.retries[c]);
	tm_bprintf(b, "# HELP tidemark_kube_last_success_timestamp_seconds When each call last "
		      "succeeded (0: never).\n"
		      "# TYPE tidemark_kube_last_success_timestamp_seconds gauge\n");
	for (int c = 0; c < NR_CALLS; c++)
		tm_bprintf(b,
			   "tidemark_kube_last_success_timestamp_seconds{call=\"%s\"} %" PRIu64
			   "\n",
			   call_name[c], kube_state.last_ok_s[c]);
	tm_prom_help(b, "gauge", "tidemark_nodemetric_writing",
		     "1 when this tidemarkd writes its node's NodeMetric status (0: "
		     "kubernetes.update_nodemetric off, or left to another writer).");
	tm_bprintf(b, "tidemark_nodemetric_writing %d\n",
		   kube_state.nm_update && !kube_state.nm_other[0]);
	tm_prom_help(b, "gauge", "tidemark_nodemetric_other_writer_info",
		     "1 while another field manager (label manager) wrote the NodeMetric status "
		     "within two report intervals: tidemarkd leaves the status to it.");
	if (kube_state.nm_other[0]) {
		tm_bprintf(b, "tidemark_nodemetric_other_writer_info{manager=");
		tm_bprom_label(b, kube_state.nm_other);
		tm_bprintf(b, "} 1\n");
	}
	tm_prom_help(b, "gauge", "tidemark_nodemetric_report_interval_seconds",
		     "The NodeMetric's reportIntervalSeconds in effect: how often its status is "
		     "written.");
	tm_bprintf(b, "tidemark_nodemetric_report_interval_seconds %u\n", kube_state.nm_report_s);
	pthread_mutex_unlock(&kube_state.lock);
}

/* Sleep @ms unless told to stop; false when stopping. */
static bool nap(struct tm_kube *k, uint64_t ms)
{
	for (uint64_t t = 0; t < ms && !k->stop; t += 50)
		usleep(50000);
	return !k->stop;
}

/* The service account's token, trimmed; NULL (and @err) when unreadable. */
static char *read_token(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *t;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "token %.400s: %m", path);
		return NULL;
	}
	t = calloc(1, TOKEN_MAX + 1);
	n = t ? fread(t, 1, TOKEN_MAX, f) : 0;
	fclose(f);
	if (!t)
		return NULL;
	while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' '))
		t[--n] = 0;
	if (!n) {
		snprintf(err, errlen, "token %.400s is empty", path);
		free(t);
		return NULL;
	}
	return t;
}

/*
 * One call with its retries. 0 with *resp (malloc'd) and *status for any
 * final HTTP answer; -1 with @err when no answer came. @url is absolute.
 */
static int call(struct tm_kube *k, enum call c, const char *method, const char *url,
		const char *ctype, const char *body, char **resp, long *status, char *err,
		size_t errlen)
{
	unsigned int tries = 0, backoff = 250;
	int ret;

	for (;;) {
		const struct tm_kubeconf *kc = &k->cred;
		char *tok = kc->token_file[0] ? read_token(kc->token_file, err, errlen) : NULL;
		struct tm_httpc_req r = {.url = url,
					 .method = method,
					 .body = body,
					 .content_type = ctype,
					 .bearer = kc->token_file[0] ? tok : kc->token,
					 .ca_file = kc->ca_file[0] ? kc->ca_file : NULL,
					 .ca_pem = kc->ca_pem,
					 .ca_len = kc->ca_len,
					 .cert_file = kc->cert_file[0] ? kc->cert_file : NULL,
					 .key_file = kc->key_file[0] ? kc->key_file : NULL,
					 .cert_pem = kc->cert_pem,
					 .cert_len = kc->cert_len,
					 .key_pem = kc->key_pem,
					 .key_len = kc->key_len,
					 .proxy = kc->proxy[0] ? kc->proxy : NULL,
					 .timeout_ms = k->timeout_ms};

		*status = 0;
		if (kc->token_file[0] && !tok) {
			ret = -1; /* no token, no request: not retried either */
			break;
		}
		ret = tm_httpc_exchange(&r, resp, status, err, errlen);
		if (tok) {
			explicit_bzero(tok, strlen(tok));
			free(tok);
		}
		if (!ret && *status != 429 && *status < 500)
			break;
		if (tries >= k->retries)
			break;
		if (!ret) {
			json_t *j = NULL;
			unsigned int wait = backoff;

			/* a 429 may say when (the Status details' retryAfterSeconds) */
			if (*status == 429 && (j = json_loads(*resp, 0, NULL))) {
				json_t *ra = json_object_get(json_object_get(j, "details"),
							     "retryAfterSeconds");

				if (json_is_integer(ra) && json_integer_value(ra) > 0)
					wait = json_integer_value(ra) > 10
						       ? 10000
						       : (unsigned int)json_integer_value(ra) *
								 1000;
				json_decref(j);
			}
			free(*resp);
			*resp = NULL;
			backoff = wait;
		}
		tries++;
		if (!nap(k, backoff))
			break;
		backoff = backoff * 2 > 4000 ? 4000 : backoff * 2;
	}
	count(c, !ret && *status / 100 == 2, tries);
	return ret;
}

/* An answer's message for the log: the Status object's, else the start of
 * the body. */
static void answer_msg(const char *resp, char *out, size_t len)
{
	json_t *j = resp ? json_loads(resp, 0, NULL) : NULL;
	const char *m = json_is_object(j) ? json_string_value(json_object_get(j, "message")) : NULL;

	snprintf(out, len, "%.200s", m ? m : resp ? resp : "");
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	json_decref(j);
}

static void refresh_pods(struct tm_kube *k)
{
	char url[768], err[512], why[768], msg[256];
	char *resp = NULL;
	struct tm_pod *pods;
	long status;
	json_t *j;
	int n;
	bool api = !strcmp(k->pods, "api");

	if (api)
		snprintf(url, sizeof(url), "%s/api/v1/pods?fieldSelector=spec.nodeName%%3D%s",
			 k->cred.server, k->node);
	else
		snprintf(url, sizeof(url), "%s", k->kubelet_url);
	if (call(k, api ? C_PODS : C_KUBELET_PODS, "GET", url, NULL, NULL, &resp, &status, err,
		 sizeof(err))) {
		snprintf(why, sizeof(why), "pods from the %s: %s", k->pods, err);
		goto fail;
	}
	if (status != 200) {
		answer_msg(resp, msg, sizeof(msg));
		snprintf(why, sizeof(why), "pods from the %s: HTTP %ld %s", k->pods, status, msg);
		goto fail;
	}
	j = json_loads(resp, 0, NULL);
	n = tm_pods_parse(j, &pods, err, sizeof(err));
	json_decref(j);
	if (n < 0) {
		snprintf(why, sizeof(why), "pods from the %s: %s", k->pods, err);
		goto fail;
	}
	tm_pods_set(pods, n, api ? "API server" : "kubelet", NULL);
	free(resp);
	return;
fail:
	fprintf(stderr, "tidemarkd: %s\n", why);
	tm_pods_set(NULL, 0, NULL, why);
	free(resp);
}

/* Another writer of the NodeMetric status (@mgr, "" none, its last write
 * @at): said when tidemarkd starts or stops leaving the status to it. */
static void nm_other(struct tm_kube *k, const char *mgr, uint64_t at, uint32_t within_s)
{
	char was[129], when[32];

	pthread_mutex_lock(&kube_state.lock);
	snprintf(was, sizeof(was), "%s", kube_state.nm_other);
	snprintf(kube_state.nm_other, sizeof(kube_state.nm_other), "%s", mgr);
	kube_state.nm_other_at = at;
	pthread_mutex_unlock(&kube_state.lock);
	tm_rfc3339(when, sizeof(when), at);
	if (mgr[0] && strcmp(was, mgr))
		fprintf(stderr,
			"tidemarkd: NodeMetric %s status: %s wrote it at %s, within two report "
			"intervals (%u s): tidemarkd stops writing it\n",
			k->node, mgr, when, within_s);
	else if (!mgr[0] && was[0])
		fprintf(stderr,
			"tidemarkd: NodeMetric %s status: %s has not written it for two report "
			"intervals (%u s): tidemarkd writes it again\n",
			k->node, was, within_s);
}

/* The NodeMetric's spec into the collect policy; creates the object when
 * there is none (koord-manager creates one per node; without it, tidemark
 * does). false when the status cannot be written now. */
static bool nodemetric_spec(struct tm_kube *k, const char *base)
{
	char err[512], msg[256], *resp = NULL, *body, other[129];
	struct tm_nm_policy p;
	uint64_t at = 0;
	long status;
	json_t *j;

	if (call(k, C_NM_GET, "GET", base, NULL, NULL, &resp, &status, err, sizeof(err))) {
		fprintf(stderr, "tidemarkd: NodeMetric %s: %s\n", k->node, err);
		return false;
	}
	if (status == 404) {
		free(resp);
		resp = NULL;
		if (!k->said_404)
			fprintf(stderr, "tidemarkd: NodeMetric %s does not exist: creating it\n",
				k->node);
		k->said_404 = true;
		j = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "slo.koordinator.sh/v1alpha1",
			      "kind", "NodeMetric", "metadata", "name", k->node);
		body = j ? json_dumps(j, JSON_COMPACT) : NULL;
		json_decref(j);
		if (!body)
			return false;
		/* the collection URL: base less "/NODE" */
		char coll[768];

		snprintf(coll, sizeof(coll), "%.*s", (int)(strrchr(base, '/') - base), base);
		if (call(k, C_NM_CREATE, "POST", coll, "application/json", body, &resp, &status,
			 err, sizeof(err)) ||
		    (status != 201 && status != 200 && status != 409)) {
			answer_msg(resp, msg, sizeof(msg));
			fprintf(stderr, "tidemarkd: creating NodeMetric %s: %s%s%ld %s\n", k->node,
				resp ? "" : err, resp ? "HTTP " : "", resp ? status : 0L,
				resp ? msg : "");
			free(body);
			free(resp);
			return false;
		}
		free(body);
		free(resp);
		return true; /* a new object: the default policy */
	}
	if (status != 200) {
		answer_msg(resp, msg, sizeof(msg));
		fprintf(stderr, "tidemarkd: NodeMetric %s: HTTP %ld %s\n", k->node, status, msg);
		free(resp);
		return false;
	}
	j = json_loads(resp, 0, NULL);
	free(resp);
	if (tm_nm_policy_from_spec(json_object_get(j, "spec"), &p, err, sizeof(err)))
		/* refused whole: the policy in effect stays */
		fprintf(stderr, "tidemarkd: NodeMetric %s: %s (keeping the policy in effect)\n",
			k->node, err);
	else
		tm_nm_set_policy(&p);
	tm_nm_get_policy(&p);
	other[0] = 0;
	tm_nm_other_writer(j, TM_NM_MANAGER, (uint64_t)time(NULL), 2 * p.report_s, other,
			   sizeof(other), &at);
	nm_other(k, other, at, 2 * p.report_s);
	json_decref(j);
	return true;
}

static void nm_base(struct tm_kube *k, char *base, size_t len)
{
	snprintf(base, len, "%s/apis/slo.koordinator.sh/v1alpha1/nodemetrics/%s", k->cred.server,
		 k->node);
}

static void write_status(struct tm_kube *k)
{
	char base[768], url[800], err[512], msg[256], *resp = NULL, *body;
	json_t *o, *patch;
	long status;

	nm_base(k, base, sizeof(base));
	o = tm_nm_object(k->d);
	patch = o ? json_pack("{s:O}", "status", json_object_get(o, "status")) : NULL;
	body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	json_decref(patch);
	json_decref(o);
	if (!body)
		return;
	snprintf(url, sizeof(url), "%s/status?fieldManager=" TM_NM_MANAGER, base);
	if (call(k, C_NM_STATUS, "PATCH", url, "application/merge-patch+json", body, &resp, &status,
		 err, sizeof(err)))
		fprintf(stderr, "tidemarkd: NodeMetric %s status: %s\n", k->node, err);
	else if (status / 100 != 2) {
		answer_msg(resp, msg, sizeof(msg));
		fprintf(stderr, "tidemarkd: NodeMetric %s status: HTTP %ld %s\n", k->node, status,
			msg);
		if (status == 404)
			k->nm_ok = false; /* deleted meanwhile: created again first */
	}
	free(resp);
	free(body);
}

bool tm_kube_slo_take(struct tm_slo_overlay *o)
{
	bool c;

	pthread_mutex_lock(&kube_state.lock);
	c = kube_state.slo_changed;
	kube_state.slo_changed = false;
	*o = kube_state.slo;
	pthread_mutex_unlock(&kube_state.lock);
	return c;
}

void tm_kube_slo_current(struct tm_slo_overlay *o)
{
	pthread_mutex_lock(&kube_state.lock);
	*o = kube_state.slo;
	pthread_mutex_unlock(&kube_state.lock);
}

void tm_kube_slo_said(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&kube_state.lock);
	va_start(ap, fmt);
	vsnprintf(kube_state.slo_state, sizeof(kube_state.slo_state), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&kube_state.lock);
}

void tm_kube_json(json_t *r)
{
	json_t *nm;

	pthread_mutex_lock(&kube_state.lock);
	json_object_set_new(r, "nodeslo", tm_json_str(kube_state.slo_state));
	if (!kube_state.nm_update) {
		nm = json_pack("{s:s,s:s}", "writer", "none", "why",
			       "kubernetes.api is none or kubernetes.update_nodemetric false");
	} else if (kube_state.nm_other[0]) {
		char when[32];

		tm_rfc3339(when, sizeof(when), kube_state.nm_other_at);
		nm = json_pack("{s:o,s:s,s:s}", "writer", tm_json_str(kube_state.nm_other),
			       "otherWriteAt", when, "why",
			       "another writer within two report intervals: tidemarkd leaves it");
	} else {
		nm = json_pack("{s:s,s:I}", "writer", TM_NM_MANAGER, "reportIntervalSeconds",
			       (json_int_t)kube_state.nm_report_s);
	}
	json_object_set_new(r, "nodeMetricStatus", nm);
	pthread_mutex_unlock(&kube_state.lock);
}

/* The node's NodeSLO: its resourceUsedThresholdWithBE values, handed to the
 * main thread when they change (none: a 404, or the strategy off). A
 * malformed one is refused whole; the values in effect stay. */
static void read_nodeslo(struct tm_kube *k)
{
	char url[768], err[512], msg[256], *resp = NULL;
	struct tm_slo_overlay o = {};
	long status;
	json_t *j;

	snprintf(url, sizeof(url), "%s/apis/slo.koordinator.sh/v1alpha1/nodeslos/%s",
		 k->cred.server, k->node);
	if (call(k, C_SLO_GET, "GET", url, NULL, NULL, &resp, &status, err, sizeof(err))) {
		fprintf(stderr, "tidemarkd: NodeSLO %s: %s\n", k->node, err);
		return; /* unreachable now: the values in effect stay */
	}
	if (status == 404) {
		free(resp);
		goto set; /* none for this node: the file's values */
	}
	if (status != 200) {
		answer_msg(resp, msg, sizeof(msg));
		fprintf(stderr, "tidemarkd: NodeSLO %s: HTTP %ld %s\n", k->node, status, msg);
		free(resp);
		return;
	}
	j = json_loads(resp, 0, NULL);
	free(resp);
	if (tm_slo_overlay_from_spec(json_object_get(j, "spec"), &o, err, sizeof(err))) {
		json_decref(j);
		pthread_mutex_lock(&kube_state.lock);
		if (strcmp(kube_state.slo_state +
				   (strncmp(kube_state.slo_state, "refused: ", 9) ? 0 : 9),
			   err))
			fprintf(stderr, "tidemarkd: %s (the values in effect stay)\n", err);
		snprintf(kube_state.slo_state, sizeof(kube_state.slo_state), "refused: %.400s",
			 err);
		pthread_mutex_unlock(&kube_state.lock);
		return;
	}
	json_decref(j);
set:
	pthread_mutex_lock(&kube_state.lock);
	/* the first answer is news too (it may be "none") */
	if (!kube_state.slo_known || memcmp(&o, &kube_state.slo, sizeof(o))) {
		kube_state.slo = o;
		kube_state.slo_changed = true;
		kube_state.slo_known = true;
	}
	pthread_mutex_unlock(&kube_state.lock);
}

static int evict(const struct tm_target *t, const char *strategy, const char *action, bool dry_run)
{
	struct evq e = {};
	uint64_t since;
	bool on, full = false;

	pthread_mutex_lock(&kube_state.lock);
	on = kube_state.evict_on;
	since = kube_state.started_ms;
	pthread_mutex_unlock(&kube_state.lock);
	if (!on || !t->uid[0])
		return TM_EVICT_KILL;
	if (!t->name[0])
		/* not yet named: wait for the first list, not longer than 30 s */
		return !tm_pods_listed() && tm_now_ms() - since < 30000 ? TM_EVICT_WAIT
									: TM_EVICT_KILL;
	if (dry_run)
		return TM_EVICT_API;
	snprintf(e.uid, sizeof(e.uid), "%s", t->uid);
	snprintf(e.ns, sizeof(e.ns), "%s", t->ns);
	snprintf(e.name, sizeof(e.name), "%s", t->name);
	snprintf(e.rel, sizeof(e.rel), "%s", t->rel);
	snprintf(e.strategy, sizeof(e.strategy), "%s", strategy);
	snprintf(e.action, sizeof(e.action), "%s", action);
	e.first_ms = e.next_ms = tm_now_ms();
	pthread_mutex_lock(&kube_state.lock);
	for (int i = 0; i < kube_state.nq; i++)
		if (!strcmp(kube_state.q[i].uid, e.uid))
			goto out; /* already on its way */
	if (kube_state.nq < EVICT_Q)
		kube_state.q[kube_state.nq++] = e;
	else
		full = true;
out:
	pthread_mutex_unlock(&kube_state.lock);
	if (full) /* never silent: the cgroup is capped, the next round asks again */
		fprintf(stderr, "tidemarkd: eviction queue full (%d): %s/%s not queued\n", EVICT_Q,
			e.ns, e.name);
	return TM_EVICT_API;
}

static bool given_back(char *rel, size_t rlen, char *strategy, size_t slen, char *why, size_t wlen)
{
	bool got = false;

	pthread_mutex_lock(&kube_state.lock);
	for (int i = 0; i < kube_state.nq && !got; i++) {
		if (!kube_state.q[i].fallback)
			continue;
		snprintf(rel, rlen, "%s", kube_state.q[i].rel);
		snprintf(strategy, slen, "%s", kube_state.q[i].strategy);
		snprintf(why, wlen, "%s", kube_state.q[i].why);
		kube_state.q[i] = kube_state.q[--kube_state.nq];
		got = true;
	}
	pthread_mutex_unlock(&kube_state.lock);
	return got;
}

static const struct tm_evict_backend eviction_api = {.evict = evict, .given_back = given_back};

const struct tm_evict_backend *tm_cluster_eviction(void)
{
	return &eviction_api;
}

static void iso_now(char *out, size_t len)
{
	struct timespec ts;
	struct tm tmv;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tmv);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

/* A core/v1 Event on the pod: what tidemark did to it and why. */
static void pod_event(struct tm_kube *k, const struct evq *e, const char *type, const char *reason,
		      const char *msg)
{
	char url[512], err[512], now[32], *resp = NULL, *body;
	long status;
	json_t *j;

	iso_now(now, sizeof(now));
	j = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s,s:s},"
		      "s:s,s:s,s:i,s:s,s:s}",
		      "apiVersion", "v1", "kind", "Event", "metadata", "generateName", "tidemark-",
		      "namespace", e->ns, "involvedObject", "apiVersion", "v1", "kind", "Pod",
		      "name", e->name, "namespace", e->ns, "uid", e->uid, "reason", reason,
		      "message", msg, "type", type, "source", "component", "tidemarkd", "host",
		      k->node, "firstTimestamp", now, "lastTimestamp", now, "count", 1,
		      "reportingComponent", "tidemarkd", "reportingInstance", k->node);
	body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!body)
		return;
	snprintf(url, sizeof(url), "%s/api/v1/namespaces/%s/events", k->cred.server, e->ns);
	if (call(k, C_EVENT, "POST", url, "application/json", body, &resp, &status, err,
		 sizeof(err)))
		fprintf(stderr, "tidemarkd: event on %s/%s: %s\n", e->ns, e->name, err);
	else if (status / 100 != 2)
		fprintf(stderr, "tidemarkd: event on %s/%s: HTTP %ld\n", e->ns, e->name, status);
	free(resp);
	free(body);
}

/* Work the queue: each due pod's Eviction; what ended leaves the queue or
 * waits for the main thread's fallback kill. */
static void evictions(struct tm_kube *k)
{
	for (;;) {
		char url[768], err[512], msg[512], *resp = NULL, *body;
		struct evq e;
		uint64_t now = tm_now_ms();
		long status = 0;
		int i, rc;
		json_t *j;

		pthread_mutex_lock(&kube_state.lock);
		for (i = 0; i < kube_state.nq; i++)
			if (!kube_state.q[i].fallback && now >= kube_state.q[i].next_ms)
				break;
		if (i == kube_state.nq) {
			pthread_mutex_unlock(&kube_state.lock);
			return;
		}
		e = kube_state.q[i];
		pthread_mutex_unlock(&kube_state.lock);

		j = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "policy/v1", "kind",
			      "Eviction", "metadata", "name", e.name, "namespace", e.ns);
		body = j ? json_dumps(j, JSON_COMPACT) : NULL;
		json_decref(j);
		if (!body)
			return;
		snprintf(url, sizeof(url), "%s/api/v1/namespaces/%s/pods/%s/eviction",
			 k->cred.server, e.ns, e.name);
		rc = call(k, C_EVICT, "POST", url, "application/json", body, &resp, &status, err,
			  sizeof(err));
		free(body);
		if (!rc && (status == 200 || status == 201 || status == 404)) {
			snprintf(msg, sizeof(msg), "%s",
				 status == 404 ? "gone already" : "evicted");
			tm_audit(k->d, "evictor", "evicted_api", false,
				 "cgroup=%s pod=%s/%s for=%s result=\"%s\" refusals=%u", e.rel,
				 e.ns, e.name, e.strategy, msg, e.refusals);
			if (status != 404) {
				snprintf(
					msg, sizeof(msg),
					"tidemark %s (%s) on node %s: evicted through the Eviction "
					"API",
					e.strategy, e.action, k->node);
				pod_event(k, &e, "Warning", "TidemarkEvicted", msg);
			}
			pthread_mutex_lock(&kube_state.lock);
			for (i = 0; i < kube_state.nq; i++)
				if (!strcmp(kube_state.q[i].uid, e.uid))
					kube_state.q[i] = kube_state.q[--kube_state.nq];
			pthread_mutex_unlock(&kube_state.lock);
		} else if (!rc && status == 429 &&
			   now - e.first_ms < (uint64_t)kube_state.evict_timeout_s * 1000) {
			/* a PodDisruptionBudget says not now: asked again later */
			pthread_mutex_lock(&kube_state.lock);
			for (i = 0; i < kube_state.nq; i++)
				if (!strcmp(kube_state.q[i].uid, e.uid)) {
					kube_state.q[i].refusals++;
					kube_state.q[i].next_ms = now + 5000;
				}
			pthread_mutex_unlock(&kube_state.lock);
			if (!e.refusals)
				tm_audit(k->d, "evictor", "eviction_refused", false,
					 "cgroup=%s pod=%s/%s for=%s status=429 retry_for_s=%u",
					 e.rel, e.ns, e.name, e.strategy,
					 kube_state.evict_timeout_s);
		} else {
			if (rc)
				snprintf(msg, sizeof(msg), "%.400s", err);
			else if (status == 429)
				snprintf(msg, sizeof(msg),
					 "refused (429, a disruption budget) for %u s",
					 kube_state.evict_timeout_s);
			else {
				char m[256];

				answer_msg(resp, m, sizeof(m));
				snprintf(msg, sizeof(msg), "HTTP %ld %s", status, m);
			}
			tm_audit(k->d, "evictor", "eviction_failed", false,
				 "cgroup=%s pod=%s/%s for=%s why=\"%s\" fallback=%s", e.rel, e.ns,
				 e.name, e.strategy, msg,
				 kube_state.fallback_kill ? "kill" : "none");
			pthread_mutex_lock(&kube_state.lock);
			for (i = 0; i < kube_state.nq; i++)
				if (!strcmp(kube_state.q[i].uid, e.uid)) {
					if (kube_state.fallback_kill) {
						kube_state.q[i].fallback = true;
						snprintf(kube_state.q[i].why,
							 sizeof(kube_state.q[i].why), "%.200s",
							 msg);
					} else {
						kube_state.q[i] = kube_state.q[--kube_state.nq];
					}
				}
			pthread_mutex_unlock(&kube_state.lock);
			if (kube_state.fallback_kill) {
				char m2[1024];

				snprintf(m2, sizeof(m2),
					 "tidemark %s (%s) on node %s: the Eviction API did not "
					 "evict "
					 "it (%.200s): its containers are killed",
					 e.strategy, e.action, k->node, msg);
				pod_event(k, &e, "Warning", "TidemarkKilled", m2);
			}
		}
		free(resp);
	}
}

/*
 * Our taint on the node, set (@want) or removed, others' kept: the node read,
 * its taints rewritten in one JSON patch that first tests the
 * resourceVersion (a concurrent change makes it fail: tried again later).
 * With @want < 0 only learn whether it is there. 0 when done.
 */
static int node_taint(struct tm_kube *k, int want)
{
	char url[768], err[512], msg[256], now[32], *resp = NULL, *body = NULL;
	json_t *node = NULL, *taints, *nt = NULL, *t, *patch = NULL;
	const char *rv, *key;
	bool had = false;
	long status;
	size_t i;
	int ret = -1;

	snprintf(url, sizeof(url), "%s/api/v1/nodes/%s", k->cred.server, k->node);
	if (call(k, C_NODE_GET, "GET", url, NULL, NULL, &resp, &status, err, sizeof(err)) ||
	    status != 200) {
		answer_msg(resp, msg, sizeof(msg));
		fprintf(stderr, "tidemarkd: node %s: %s\n", k->node, resp ? msg : err);
		goto out;
	}
	node = json_loads(resp, 0, NULL);
	rv = json_string_value(
		json_object_get(json_object_get(node, "metadata"), "resourceVersion"));
	taints = json_object_get(json_object_get(node, "spec"), "taints");
	nt = json_array();
	json_array_foreach(taints, i, t)
	{
		key = json_string_value(json_object_get(t, "key"));
		if (key && !strcmp(key, k->taint_key)) {
			had = true;
			continue;
		}
		json_array_append(nt, t);
	}
	if (want < 0 || (bool)want == had) {
		k->tainted = had;
		ret = 0;
		goto out;
	}
	if (want) {
		iso_now(now, sizeof(now));
		json_array_append_new(nt, json_pack("{s:s,s:s,s:s,s:s}", "key", k->taint_key,
						    "value", "true", "effect", k->taint_effect,
						    "timeAdded", now));
	}
	patch = json_pack("[{s:s,s:s,s:s?},{s:s,s:s,s:O}]", "op", "test", "path",
			  "/metadata/resourceVersion", "value", rv, "op", "add", "path",
			  "/spec/taints", "value", nt);
	body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	free(resp);
	resp = NULL;
	if (!body)
		goto out;
	if (call(k, C_NODE_PATCH, "PATCH", url, "application/json-patch+json", body, &resp, &status,
		 err, sizeof(err)) ||
	    status / 100 != 2) {
		answer_msg(resp, msg, sizeof(msg));
		fprintf(stderr, "tidemarkd: node %s taint: %s%s%ld %s\n", k->node, resp ? "" : err,
			resp ? "HTTP " : "", resp ? status : 0L, resp ? msg : "");
		goto out;
	}
	k->tainted = want;
	tm_audit(k->d, "cluster", want ? "taint" : "untaint", false,
		 "node=%s taint=%s:%s why=\"%s\"", k->node, k->taint_key, k->taint_effect, k->why);
	ret = 0;
out:
	json_decref(patch);
	json_decref(nt);
	json_decref(node);
	free(resp);
	free(body);
	return ret;
}

/* Tainted once above a forbid line for taint_after_s, untainted once below
 * for untaint_after_s; a failed write is tried again 5 s later. */
static void taints(struct tm_kube *k)
{
	uint64_t now = tm_now_ms();
	bool forbid, want;

	pthread_mutex_lock(&k->d->lock);
	forbid = k->d->snap.forbid;
	pthread_mutex_unlock(&k->d->lock);
	if (forbid != k->forbid || !k->forbid_since) {
		k->forbid = forbid;
		k->forbid_since = now;
	}
	if (now < k->taint_retry_ms)
		return;
	if (!k->taint_known) { /* a taint an earlier tidemarkd left is ours */
		if (node_taint(k, -1)) {
			k->taint_retry_ms = now + 5000;
			return;
		}
		k->taint_known = true;
	}
	want = k->tainted;
	if (forbid && now - k->forbid_since >= k->taint_after_s * 1000ULL)
		want = true;
	else if (!forbid && now - k->forbid_since >= k->untaint_after_s * 1000ULL)
		want = false;
	k->why = want ? "above a forbid-scheduling line" : "below every forbid-scheduling line";
	if (want != k->tainted && node_taint(k, want))
		k->taint_retry_ms = now + 5000;
}

/*
 * Pods and the NodeMetric's spec every pods_refresh_s (a changed collect
 * policy applies within that), the status every reportIntervalSeconds once
 * the object exists.
 */
static void *kube_thread(void *arg)
{
	struct tm_kube *k = arg;
	uint64_t next_refresh = 0, last_status = 0;
	char base[768], other;

	nm_base(k, base, sizeof(base));
	while (!k->stop) {
		uint64_t now = tm_now_ms();
		struct tm_nm_policy p;

		if (now >= next_refresh) {
			if (strcmp(k->pods, "none"))
				refresh_pods(k);
			if (k->api && k->update)
				k->nm_ok = nodemetric_spec(k, base);
			if (k->api && k->slo)
				read_nodeslo(k);
			next_refresh = tm_now_ms() + k->refresh_s * 1000ULL;
		}
		if (k->api)
			evictions(k);
		if (k->api && k->taint_key[0])
			taints(k);
		tm_nm_get_policy(&p);
		pthread_mutex_lock(&kube_state.lock);
		kube_state.nm_report_s = p.report_s;
		other = kube_state.nm_other[0];
		pthread_mutex_unlock(&kube_state.lock);
		/* from the last write: a shorter interval in the spec applies now */
		if (k->api && k->update && k->nm_ok && !other &&
		    (!last_status || tm_now_ms() >= last_status + p.report_s * 1000ULL)) {
			last_status = tm_now_ms();
			write_status(k);
		}
		nap(k, 100);
	}
	return NULL;
}

/* The client for @d's configuration, its thread not started (NULL, said,
 * when the configuration cannot reach the API). */
static struct tm_kube *client_new(struct tm_daemon *d)
{
	const struct tm_config *c = &d->cfg;
	struct tm_kube *k;
	const char *host = getenv("KUBERNETES_SERVICE_HOST"),
		   *port = getenv("KUBERNETES_SERVICE_PORT");

	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->d = d;
	k->api = strcmp(c->kubernetes.api, "none");
	k->update = c->kubernetes.update_nodemetric;
	k->slo = c->kubernetes.nodeslo;
	snprintf(k->taint_key, sizeof(k->taint_key), "%s", c->kubernetes.taint_key);
	snprintf(k->taint_effect, sizeof(k->taint_effect), "%s", c->kubernetes.taint_effect);
	k->taint_after_s = c->kubernetes.taint_after_s;
	k->untaint_after_s = c->kubernetes.untaint_after_s;
	k->timeout_ms = c->kubernetes.timeout_ms;
	k->retries = c->kubernetes.retries;
	k->refresh_s = c->kubernetes.pods_refresh_s;
	snprintf(k->node, sizeof(k->node), "%s", tm_nm_node());
	snprintf(k->pods, sizeof(k->pods), "%s", c->kubernetes.pods);
	snprintf(k->kubelet_url, sizeof(k->kubelet_url), "%s", c->kubernetes.kubelet_url);
	if (!strcmp(c->kubernetes.api, "kubeconfig")) {
		char err[768];

		/* read again: it was checked with the configuration, and a
		 * restart takes a kubeconfig that changed since */
		if (tm_kubeconfig_load(c->kubernetes.kubeconfig, c->kubernetes.context, &k->cred,
				       err, sizeof(err))) {
			fprintf(stderr, "tidemarkd: kubernetes.kubeconfig %s\n", err);
			goto fail;
		}
	} else {
		snprintf(k->cred.token_file, sizeof(k->cred.token_file), "%s",
			 c->kubernetes.token_file);
		snprintf(k->cred.ca_file, sizeof(k->cred.ca_file), "%s", c->kubernetes.ca_file);
		if (c->kubernetes.server[0])
			snprintf(k->cred.server, sizeof(k->cred.server), "%s",
				 c->kubernetes.server);
		else if (k->api && host && *host && port && *port)
			snprintf(k->cred.server, sizeof(k->cred.server),
				 strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
				 port);
		else if (k->api) {
			fprintf(stderr,
				"tidemarkd: kubernetes.api is in-cluster but "
				"KUBERNETES_SERVICE_HOST and _PORT are not set (not in a pod?) "
				"and kubernetes.server is empty\n");
			goto fail;
		}
	}
	if (strspn(k->node, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(k->node) ||
	    !k->node[0]) {
		fprintf(stderr,
			"tidemarkd: node name '%s' (kubernetes.node_name, else $NODE_NAME, "
			"else the host name) is not a Kubernetes node name\n",
			k->node);
		goto fail;
	}
	return k;
fail:
	tm_kubeconfig_free(&k->cred);
	free(k);
	return NULL;
}

struct tm_kube *tm_kube_start(struct tm_daemon *d, int *failed)
{
	const struct tm_config *c = &d->cfg;
	struct tm_kube *k;

	*failed = 0;
	if (!strcmp(c->kubernetes.api, "none") && strcmp(c->kubernetes.pods, "kubelet")) {
		fprintf(stderr, "tidemarkd: no Kubernetes API configured (kubernetes.api none): "
				"NodeMetric served at /nodemetric only, pods unnamed\n");
		return NULL;
	}
	k = client_new(d);
	if (!k) {
		*failed = 1;
		return NULL;
	}
	pthread_mutex_lock(&kube_state.lock);
	kube_state.evict_on = k->api && c->kubernetes.evict_via_api;
	kube_state.started_ms = tm_now_ms();
	kube_state.evict_timeout_s = c->kubernetes.eviction_timeout_s;
	kube_state.fallback_kill = !strcmp(c->kubernetes.eviction_fallback, "kill");
	kube_state.nm_update = k->api && k->update;
	pthread_mutex_unlock(&kube_state.lock);
	if (k->api && k->slo)
		tm_kube_slo_said("not read yet");
	else if (k->api)
		tm_kube_slo_said("not read (kubernetes.nodeslo is false)");
	if (pthread_create(&k->th, NULL, kube_thread, k)) {
		fprintf(stderr, "tidemarkd: cannot start the cluster thread\n");
		goto fail;
	}
	if (!strcmp(c->kubernetes.api, "kubeconfig"))
		fprintf(stderr,
			"tidemarkd: cluster: node %s, pods from %s, API server %s (kubeconfig "
			"%s, context %s, user %s)\n",
			k->node, k->pods, k->cred.server, c->kubernetes.kubeconfig, k->cred.context,
			k->cred.user);
	else
		fprintf(stderr, "tidemarkd: cluster: node %s, pods from %s%s%s\n", k->node, k->pods,
			k->api ? ", API server " : "", k->api ? k->cred.server : "");
	return k;
fail:
	tm_kubeconfig_free(&k->cred);
	free(k);
	*failed = 1;
	return NULL;
}

/* The 0.6.0 default taint key: a node it ran on may carry it. */
#define OLD_TAINT_KEY "tidemark.io/be-forbidden"

int tm_kube_cleanup(struct tm_daemon *d)
{
	const char *keys[2] = {d->cfg.kubernetes.taint_key, OLD_TAINT_KEY};
	struct tm_kube *k;
	bool had;
	int ret = 0;

	if (!strcmp(d->cfg.kubernetes.api, "none")) {
		fprintf(stderr, "tidemarkd: cleanup: kubernetes.api is none: no taint to remove\n");
		return 0;
	}
	k = client_new(d);
	if (!k)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (!keys[i][0] || (i && !strcmp(keys[0], keys[1])))
			continue;
		snprintf(k->taint_key, sizeof(k->taint_key), "%s", keys[i]);
		k->why = "tidemarkd --cleanup";
		if (node_taint(k, -1) || ((had = k->tainted) && node_taint(k, 0))) {
			ret = -1;
			continue;
		}
		fprintf(stderr, "tidemarkd: cleanup: node %s: taint %s %s\n", k->node, keys[i],
			had ? "removed" : "not there");
	}
	tm_kubeconfig_free(&k->cred);
	free(k);
	return ret;
}

void tm_kube_stop(struct tm_kube *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&kube_state.lock);
	kube_state.evict_on = false; /* strategies' stops kill, not queue */
	pthread_mutex_unlock(&kube_state.lock);
	k->stop = true;
	pthread_join(k->th, NULL);
	tm_kubeconfig_free(&k->cred);
	free(k);
}
