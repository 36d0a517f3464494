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
#include "log.h"

#define TOKEN_MAX 16384

/* What the counters are kept by: the call, and its outcome. */
enum call {
	C_PODS,
	C_PODS_WATCH,
	C_KUBELET_PODS,
	C_NM_LIST,
	C_NM_WATCH,
	C_NM_CREATE,
	C_NM_STATUS,
	C_SLO_LIST,
	C_SLO_WATCH,
	C_EVICT,
	C_EVENT,
	C_NODE_GET,
	C_NODE_PATCH,
	NR_CALLS
};
static const char *const call_name[NR_CALLS] = {"list_pods",
						"watch_pods",
						"kubelet_pods",
						"list_nodemetric",
						"watch_nodemetric",
						"create_nodemetric",
						"patch_nodemetric_status",
						"list_nodeslo",
						"watch_nodeslo",
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
	bool said_404;	       /* a missing NodeMetric said once */
	volatile bool nm_ok;   /* the NodeMetric exists (its status can be written) */
	volatile bool nm_seen; /* the NodeMetric watch listed once */
	json_t *nm_obj;	       /* the NodeMetric as last seen (nm_lock) */
	pthread_mutex_t nm_lock;
	uint32_t jitter_s, watch_s;
	struct watch *w_pods, *w_slo, *w_nm;
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

/* The credentials and CA of a request to the API server into @r; the token
 * read from its file, which the caller frees with tok_free (*@tok; NULL
 * when none). -1 when the token file cannot be read. */
static int req_fill(struct tm_kube *k, struct tm_httpc_req *r, char **tok, char *err, size_t errlen)
{
	const struct tm_kubeconf *kc = &k->cred;

	*tok = kc->token_file[0] ? read_token(kc->token_file, err, errlen) : NULL;
	r->bearer = kc->token_file[0] ? *tok : kc->token;
	r->ca_file = kc->ca_file[0] ? kc->ca_file : NULL;
	r->ca_pem = kc->ca_pem;
	r->ca_len = kc->ca_len;
	r->cert_file = kc->cert_file[0] ? kc->cert_file : NULL;
	r->key_file = kc->key_file[0] ? kc->key_file : NULL;
	r->cert_pem = kc->cert_pem;
	r->cert_len = kc->cert_len;
	r->key_pem = kc->key_pem;
	r->key_len = kc->key_len;
	r->proxy = kc->proxy[0] ? kc->proxy : NULL;
	return kc->token_file[0] && !*tok ? -1 : 0;
}

static void tok_free(char *tok)
{
	if (tok) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
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
		struct tm_httpc_req r = {.url = url,
					 .method = method,
					 .body = body,
					 .content_type = ctype,
					 .timeout_ms = k->timeout_ms};
		char *tok;

		*status = 0;
		if (req_fill(k, &r, &tok, err, errlen)) {
			ret = -1; /* no token, no request: not retried either */
			break;
		}
		ret = tm_httpc_exchange(&r, resp, status, err, errlen);
		tok_free(tok);
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

/* The kubelet's pod list (the API server's comes by watch). */
static void refresh_pods(struct tm_kube *k)
{
	char err[512], why[768], msg[256];
	char *resp = NULL;
	struct tm_pod *pods;
	long status;
	json_t *j;
	int n;

	if (call(k, C_KUBELET_PODS, "GET", k->kubelet_url, NULL, NULL, &resp, &status, err,
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
	tm_pods_set(pods, n, "kubelet", NULL);
	free(resp);
	return;
fail:
	tm_log(TM_LOG_WARNING, "tidemarkd: %s\n", why);
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
		tm_log(TM_LOG_NOTICE,
		       "tidemarkd: NodeMetric %s status: %s wrote it at %s, within two report "
		       "intervals (%u s): tidemarkd stops writing it\n",
		       k->node, mgr, when, within_s);
	else if (!mgr[0] && was[0])
		tm_log(TM_LOG_NOTICE,
		       "tidemarkd: NodeMetric %s status: %s has not written it for two report "
		       "intervals (%u s): tidemarkd writes it again\n",
		       k->node, was, within_s);
}

/* Create the node's NodeMetric (koord-manager creates one per node; without
 * it, tidemark does). true when it exists now. */
static bool nm_create(struct tm_kube *k, const char *base)
{
	char err[512], msg[256], *resp = NULL, *body, coll[768];
	long status;
	json_t *j;

	if (!k->said_404)
		tm_log(TM_LOG_NOTICE, "tidemarkd: NodeMetric %s does not exist: creating it\n",
		       k->node);
	k->said_404 = true;
	j = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "slo.koordinator.sh/v1alpha1", "kind",
		      "NodeMetric", "metadata", "name", k->node);
	body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!body)
		return false;
	/* the collection URL: base less "/NODE" */
	snprintf(coll, sizeof(coll), "%.*s", (int)(strrchr(base, '/') - base), base);
	if (call(k, C_NM_CREATE, "POST", coll, "application/json", body, &resp, &status, err,
		 sizeof(err)) ||
	    (status != 201 && status != 200 && status != 409)) {
		answer_msg(resp, msg, sizeof(msg));
		tm_log(TM_LOG_ERR, "tidemarkd: creating NodeMetric %s: %s%s%ld %s\n", k->node,
		       resp ? "" : err, resp ? "HTTP " : "", resp ? status : 0L, resp ? msg : "");
		free(body);
		free(resp);
		return false;
	}
	free(body);
	free(resp);
	return true; /* a new object: the default policy */
}

/* The NodeMetric as the watch sees it (NULL: there is none): its spec's
 * collect policy applies from now on, and who else writes its status is
 * judged from it (nm_judge). */
static void nm_apply(struct tm_kube *k, json_t *obj)
{
	struct tm_nm_policy p;
	char err[512];

	pthread_mutex_lock(&k->nm_lock);
	json_decref(k->nm_obj);
	k->nm_obj = json_incref(obj);
	pthread_mutex_unlock(&k->nm_lock);
	k->nm_ok = obj != NULL;
	if (!obj)
		return;
	if (tm_nm_policy_from_spec(json_object_get(obj, "spec"), &p, err, sizeof(err)))
		/* refused whole: the policy in effect stays */
		tm_log(TM_LOG_WARNING,
		       "tidemarkd: NodeMetric %s: %s (keeping the policy in effect)\n", k->node,
		       err);
	else
		tm_nm_set_policy(&p);
}

/* Another writer of the status within two report intervals, from the
 * NodeMetric last seen: said when that changes (nm_other). */
static void nm_judge(struct tm_kube *k)
{
	struct tm_nm_policy p;
	char other[129] = "";
	uint64_t at = 0;

	tm_nm_get_policy(&p);
	pthread_mutex_lock(&k->nm_lock);
	if (k->nm_obj)
		tm_nm_other_writer(k->nm_obj, TM_NM_MANAGER, (uint64_t)time(NULL), 2 * p.report_s,
				   other, sizeof(other), &at);
	pthread_mutex_unlock(&k->nm_lock);
	nm_other(k, other, at, 2 * p.report_s);
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
		tm_log(TM_LOG_ERR, "tidemarkd: NodeMetric %s status: %s\n", k->node, err);
	else if (status / 100 != 2) {
		answer_msg(resp, msg, sizeof(msg));
		tm_log(TM_LOG_ERR, "tidemarkd: NodeMetric %s status: HTTP %ld %s\n", k->node,
		       status, msg);
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

/* The node's NodeSLO as the watch sees it (NULL: there is none): its
 * resourceUsedThresholdWithBE values, handed to the main thread when they
 * change (none: the file's values). A malformed one is refused whole; the
 * values in effect stay. */
static void slo_apply(struct tm_kube *k, json_t *obj)
{
	struct tm_slo_overlay o = {};
	char err[512];

	if (obj && tm_slo_overlay_from_spec(json_object_get(obj, "spec"), &o, err, sizeof(err))) {
		pthread_mutex_lock(&kube_state.lock);
		if (strcmp(kube_state.slo_state +
				   (strncmp(kube_state.slo_state, "refused: ", 9) ? 0 : 9),
			   err))
			tm_log(TM_LOG_WARNING, "tidemarkd: %s (the values in effect stay)\n", err);
		snprintf(kube_state.slo_state, sizeof(kube_state.slo_state), "refused: %.400s",
			 err);
		pthread_mutex_unlock(&kube_state.lock);
		return;
	}
	pthread_mutex_lock(&kube_state.lock);
	/* the first answer is news too (it may be "none") */
	if (!kube_state.slo_known || memcmp(&o, &kube_state.slo, sizeof(o))) {
		kube_state.slo = o;
		kube_state.slo_changed = true;
		kube_state.slo_known = true;
	}
	pthread_mutex_unlock(&kube_state.lock);
}

/*
 * A list, then a watch, of one collection (this node's pods, its NodeSLO,
 * its NodeMetric), on a thread of its own: the list with resourceVersion=0
 * (the API server's cache, not a quorum read), then a watch from the
 * list's version with bookmarks, renewed at its end (watch_s, jittered)
 * from the last version seen. A 410 (Gone, or an ERROR event "Expired")
 * lists again; a failure waits a jittered back-off (0.5 s doubling to 30 s)
 * before the next try. The cluster thread starts them after a jittered
 * wait (kubernetes.start_jitter_s).
 */
struct watch {
	struct tm_kube *k;
	const char *what; /* for the log: "pods" */
	enum call c_list, c_watch;
	char url[768]; /* the collection with its field selector */
	/* a fresh list (an array), then each event (ADDED, MODIFIED, DELETED) */
	void (*listed)(struct watch *w, json_t *items);
	void (*event)(struct watch *w, const char *type, json_t *obj);
	void (*failed)(struct watch *w, const char *why);
	char rv[64];
	json_t *objs; /* the pod watch's: by UID */
	bool expired; /* a 410: list again */
	bool broken;  /* the stream said something unreadable */
	pthread_t th;
};

/* Up to @ms, or none: a random share of it (start and back-off jitter). */
static uint64_t jitter_ms(uint64_t ms)
{
	return ms ? (uint64_t)random() % ms : 0;
}

static int watch_list(struct watch *w)
{
	char url[900], err[512], msg[256], why[768], *resp = NULL;
	const char *rv;
	long status;
	json_t *j, *items;

	snprintf(url, sizeof(url), "%s&resourceVersion=0", w->url);
	if (call(w->k, w->c_list, "GET", url, NULL, NULL, &resp, &status, err, sizeof(err))) {
		snprintf(why, sizeof(why), "%s: %s", w->what, err);
		goto fail;
	}
	if (status != 200) {
		answer_msg(resp, msg, sizeof(msg));
		snprintf(why, sizeof(why), "%s: HTTP %ld %s", w->what, status, msg);
		goto fail;
	}
	j = json_loads(resp, 0, NULL);
	items = json_object_get(j, "items");
	rv = json_string_value(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
	if (!json_is_array(items) || !rv) {
		json_decref(j);
		snprintf(why, sizeof(why), "%s: a list without items or resourceVersion", w->what);
		goto fail;
	}
	snprintf(w->rv, sizeof(w->rv), "%s", rv);
	w->listed(w, items);
	json_decref(j);
	free(resp);
	return 0;
fail:
	tm_log(TM_LOG_WARNING, "tidemarkd: %s\n", why);
	if (w->failed)
		w->failed(w, why);
	free(resp);
	return -1;
}

/* One line of a watch: an event. Nonzero ends the stream. */
static int watch_line(void *arg, char *line, size_t len)
{
	struct watch *w = arg;
	json_t *ev = json_loadb(line, len, 0, NULL), *obj = json_object_get(ev, "object");
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *rv = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));

	if (!type || !json_is_object(obj)) {
		json_decref(ev);
		w->broken = true;
		return 1;
	}
	if (!strcmp(type, "ERROR")) {
		json_int_t code = json_integer_value(json_object_get(obj, "code"));

		if (code == 410)
			w->expired = true;
		else
			tm_log(TM_LOG_WARNING, "tidemarkd: %s (watch): %lld %s\n", w->what,
			       (long long)code,
			       json_string_value(json_object_get(obj, "message")) ?: "");
		json_decref(ev);
		return 1;
	}
	if (strcmp(type, "BOOKMARK"))
		w->event(w, type, obj);
	if (rv)
		snprintf(w->rv, sizeof(w->rv), "%s", rv);
	json_decref(ev);
	return 0;
}

/* One watch from w->rv until it ends: 0 when it ended (renewed next), 1
 * when the version is gone (list again), -1 when it failed. */
static int watch_stream(struct watch *w)
{
	struct tm_kube *k = w->k;
	uint32_t t = k->watch_s + (uint32_t)jitter_ms(k->watch_s * 1000ULL) / 1000;
	char url[1024], err[512], msg[256], *resp = NULL, *tok;
	struct tm_httpc_req r = {.url = url,
				 .method = "GET",
				 .timeout_ms = (t + 30) * 1000,
				 .on_line = watch_line,
				 .line_arg = w,
				 .stop = &k->stop};
	long status = 0;
	int ret;

	snprintf(url, sizeof(url),
		 "%s&watch=true&allowWatchBookmarks=true&resourceVersion=%s"
		 "&timeoutSeconds=%u",
		 w->url, w->rv, t);
	w->expired = w->broken = false;
	if (req_fill(k, &r, &tok, err, sizeof(err))) {
		count(w->c_watch, false, 0);
		tm_log(TM_LOG_WARNING, "tidemarkd: %s (watch): %s\n", w->what, err);
		return -1;
	}
	ret = tm_httpc_exchange(&r, &resp, &status, err, sizeof(err));
	tok_free(tok);
	count(w->c_watch, !ret && status == 200 && !w->broken, 0);
	if (!ret && status == 410)
		w->expired = true;
	if (w->expired) {
		free(resp);
		return 1;
	}
	if (ret || status != 200 || w->broken) {
		if (ret)
			snprintf(msg, sizeof(msg), "%.200s", err);
		else if (w->broken)
			snprintf(msg, sizeof(msg), "an event it could not read");
		else
			answer_msg(resp, msg, sizeof(msg));
		{
			char why[512];

			if (!ret && !w->broken)
				snprintf(why, sizeof(why), "%s: HTTP %ld %s", w->what, status, msg);
			else
				snprintf(why, sizeof(why), "%s: %s", w->what, msg);
			tm_log(TM_LOG_INFO, "tidemarkd: %s (watch)\n", why);
			if (w->failed)
				w->failed(w, why);
		}
		free(resp);
		return -1;
	}
	free(resp);
	return 0;
}

/* After a failure: the next back-off (0.5 s doubling to 30 s), waited with
 * half of it random, so that nodes failing together do not retry together. */
static void back_off(struct tm_kube *k, uint64_t *ms)
{
	*ms = *ms ? (*ms * 2 > 30000 ? 30000 : *ms * 2) : 500;
	nap(k, *ms / 2 + jitter_ms(*ms / 2));
}

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	struct tm_kube *k = w->k;
	uint64_t backoff = 0;
	bool listed = false;

	while (!k->stop) {
		int r;

		if (!listed && watch_list(w)) {
			back_off(k, &backoff);
			continue;
		}
		listed = true;
		r = watch_stream(w);
		if (r < 0 && !k->stop) {
			back_off(k, &backoff);
			continue;
		}
		listed = r != 1; /* gone (410): a fresh list at once */
		backoff = 0;
	}
	return NULL;
}

/* The pod watch: the table from its objects. */
static void pods_put(struct watch *w)
{
	json_t *list = json_pack("{s:[]}", "items"), *items = json_object_get(list, "items"), *v;
	struct tm_pod *pods;
	const char *uid;
	char err[512], why[768];
	int n;

	json_object_foreach(w->objs, uid, v) json_array_append(items, v);
	n = tm_pods_parse(list, &pods, err, sizeof(err));
	json_decref(list);
	if (n < 0) {
		snprintf(why, sizeof(why), "pods from the api: %s", err);
		tm_log(TM_LOG_WARNING, "tidemarkd: %s\n", why);
		tm_pods_set(NULL, 0, NULL, why);
		return;
	}
	tm_pods_set(pods, n, "API server", NULL);
}

static const char *uid_of(json_t *pod)
{
	return json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
}

static void pods_listed(struct watch *w, json_t *items)
{
	json_t *v;
	size_t i;

	json_object_clear(w->objs);
	json_array_foreach(items, i, v) if (uid_of(v)) json_object_set(w->objs, uid_of(v), v);
	pods_put(w);
}

static void pods_event(struct watch *w, const char *type, json_t *obj)
{
	const char *uid = uid_of(obj);

	if (!uid)
		return;
	if (!strcmp(type, "DELETED"))
		json_object_del(w->objs, uid);
	else
		json_object_set(w->objs, uid, obj);
	pods_put(w);
}

static void pods_failed(struct watch *w, const char *why)
{
	tm_pods_set(NULL, 0, NULL, why);
}

static void slo_listed(struct watch *w, json_t *items)
{
	slo_apply(w->k, json_array_get(items, 0));
}

static void slo_event(struct watch *w, const char *type, json_t *obj)
{
	slo_apply(w->k, strcmp(type, "DELETED") ? obj : NULL);
}

static void nm_listed(struct watch *w, json_t *items)
{
	nm_apply(w->k, json_array_get(items, 0));
	w->k->nm_seen = true;
}

static void nm_event(struct watch *w, const char *type, json_t *obj)
{
	nm_apply(w->k, strcmp(type, "DELETED") ? obj : NULL);
}

static struct watch *watch_start(struct tm_kube *k, const char *what, enum call c_list,
				 enum call c_watch, const char *path, const char *selector,
				 void (*listed)(struct watch *, json_t *),
				 void (*event)(struct watch *, const char *, json_t *),
				 void (*failed)(struct watch *, const char *))
{
	struct watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	*w = (struct watch){.k = k,
			    .what = what,
			    .c_list = c_list,
			    .c_watch = c_watch,
			    .listed = listed,
			    .event = event,
			    .failed = failed,
			    .objs = json_object()};
	snprintf(w->url, sizeof(w->url), "%s%s?fieldSelector=%s%%3D%s", k->cred.server, path,
		 selector, k->node);
	if (pthread_create(&w->th, NULL, watch_thread, w)) {
		tm_log(TM_LOG_ERR, "tidemarkd: cannot start the %s watch\n", what);
		json_decref(w->objs);
		free(w);
		return NULL;
	}
	return w;
}

static void watch_join(struct watch *w)
{
	if (!w)
		return;
	pthread_join(w->th, NULL);
	json_decref(w->objs);
	free(w);
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
		tm_log(TM_LOG_WARNING, "tidemarkd: eviction queue full (%d): %s/%s not queued\n",
		       EVICT_Q, e.ns, e.name);
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
		tm_log(TM_LOG_WARNING, "tidemarkd: event on %s/%s: %s\n", e->ns, e->name, err);
	else if (status / 100 != 2)
		tm_log(TM_LOG_WARNING, "tidemarkd: event on %s/%s: HTTP %ld\n", e->ns, e->name,
		       status);
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
		tm_log(TM_LOG_WARNING, "tidemarkd: node %s: %s\n", k->node, resp ? msg : err);
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
		tm_log(TM_LOG_ERR, "tidemarkd: node %s taint: %s%s%ld %s\n", k->node,
		       resp ? "" : err, resp ? "HTTP " : "", resp ? status : 0L, resp ? msg : "");
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
 * The watches (pods, NodeSLO, NodeMetric) run on threads of their own;
 * this one reads the kubelet's pod list every pods_refresh_s (it has no
 * watch), works the evictions and the taint, creates a missing NodeMetric
 * and writes its status every reportIntervalSeconds unless another writer
 * has it.
 */
static void *kube_thread(void *arg)
{
	struct tm_kube *k = arg;
	uint64_t next_refresh = 0, last_status = 0, next_create = 0;
	char base[768], other;

	nm_base(k, base, sizeof(base));
	/* one jittered start for the node: its lists and watches together */
	if (k->api && !nap(k, jitter_ms(k->jitter_s * 1000ULL)))
		return NULL;
	if (k->api && !strcmp(k->pods, "api"))
		k->w_pods =
			watch_start(k, "pods from the api", C_PODS, C_PODS_WATCH, "/api/v1/pods",
				    "spec.nodeName", pods_listed, pods_event, pods_failed);
	if (k->api && k->slo)
		k->w_slo = watch_start(k, "NodeSLO", C_SLO_LIST, C_SLO_WATCH,
				       "/apis/slo.koordinator.sh/v1alpha1/nodeslos",
				       "metadata.name", slo_listed, slo_event, NULL);
	if (k->api && k->update)
		k->w_nm = watch_start(k, "NodeMetric", C_NM_LIST, C_NM_WATCH,
				      "/apis/slo.koordinator.sh/v1alpha1/nodemetrics",
				      "metadata.name", nm_listed, nm_event, NULL);
	while (!k->stop) {
		uint64_t now = tm_now_ms();
		struct tm_nm_policy p;

		if (!strcmp(k->pods, "kubelet") && now >= next_refresh) {
			refresh_pods(k);
			next_refresh = tm_now_ms() + k->refresh_s * 1000ULL;
		}
		if (k->api)
			evictions(k);
		if (k->api && k->taint_key[0])
			taints(k);
		/* none listed, or deleted since: made (its watch sees it come) */
		if (k->w_nm && k->nm_seen && !k->nm_ok && now >= next_create) {
			nm_create(k, base);
			next_create = tm_now_ms() + 5000;
		}
		if (k->w_nm)
			nm_judge(k);
		tm_nm_get_policy(&p);
		pthread_mutex_lock(&kube_state.lock);
		kube_state.nm_report_s = p.report_s;
		other = kube_state.nm_other[0];
		pthread_mutex_unlock(&kube_state.lock);
		/* from the last write: a shorter interval in the spec applies now */
		if (k->w_nm && k->nm_ok && !other &&
		    (!last_status || tm_now_ms() >= last_status + p.report_s * 1000ULL)) {
			last_status = tm_now_ms();
			write_status(k);
		}
		nap(k, 100);
	}
	watch_join(k->w_pods);
	watch_join(k->w_slo);
	watch_join(k->w_nm);
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
	k->watch_s = c->kubernetes.watch_timeout_s;
	k->jitter_s = c->kubernetes.start_jitter_s;
	pthread_mutex_init(&k->nm_lock, NULL);
	snprintf(k->node, sizeof(k->node), "%s", tm_nm_node());
	snprintf(k->pods, sizeof(k->pods), "%s", c->kubernetes.pods);
	snprintf(k->kubelet_url, sizeof(k->kubelet_url), "%s", c->kubernetes.kubelet_url);
	if (!strcmp(c->kubernetes.api, "kubeconfig")) {
		char err[768];

		/* read again: it was checked with the configuration, and a
		 * restart takes a kubeconfig that changed since */
		if (tm_kubeconfig_load(c->kubernetes.kubeconfig, c->kubernetes.context, &k->cred,
				       err, sizeof(err))) {
			tm_log(TM_LOG_ERR, "tidemarkd: kubernetes.kubeconfig %s\n", err);
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
			tm_log(TM_LOG_ERR,
			       "tidemarkd: kubernetes.api is in-cluster but "
			       "KUBERNETES_SERVICE_HOST and _PORT are not set (not in a pod?) "
			       "and kubernetes.server is empty\n");
			goto fail;
		}
	}
	if (strspn(k->node, "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(k->node) ||
	    !k->node[0]) {
		tm_log(TM_LOG_ERR,
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
		tm_log(TM_LOG_INFO,
		       "tidemarkd: no Kubernetes API configured (kubernetes.api none): "
		       "NodeMetric served at /nodemetric only, pods unnamed\n");
		return NULL;
	}
	k = client_new(d);
	if (!k) {
		*failed = 1;
		return NULL;
	}
	/* each node its own jitter: nodes restarted together spread out */
	{
		unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();

		for (const char *c = k->node; *c; c++)
			seed = seed * 31 + (unsigned char)*c;
		srandom(seed);
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
		tm_log(TM_LOG_ERR, "tidemarkd: cannot start the cluster thread\n");
		goto fail;
	}
	if (!strcmp(c->kubernetes.api, "kubeconfig"))
		tm_log(TM_LOG_INFO,
		       "tidemarkd: cluster: node %s, pods from %s, API server %s (kubeconfig "
		       "%s, context %s, user %s)\n",
		       k->node, k->pods, k->cred.server, c->kubernetes.kubeconfig, k->cred.context,
		       k->cred.user);
	else
		tm_log(TM_LOG_INFO, "tidemarkd: cluster: node %s, pods from %s%s%s\n", k->node,
		       k->pods, k->api ? ", API server " : "", k->api ? k->cred.server : "");
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
		tm_log(TM_LOG_INFO,
		       "tidemarkd: cleanup: kubernetes.api is none: no taint to remove\n");
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
		tm_log(TM_LOG_NOTICE, "tidemarkd: cleanup: node %s: taint %s %s\n", k->node,
		       keys[i], had ? "removed" : "not there");
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
	/* a taint says "above a line now": one that outlived tidemarkd would
	 * keep pods off the node for nothing (a restart puts it back when the
	 * node is still above; one try, stopping) */
	if (k->tainted) {
		k->why = "tidemarkd stopping";
		if (node_taint(k, false))
			tm_log(TM_LOG_NOTICE,
			       "tidemarkd: node %s: taint %s left (tidemarkd --cleanup "
			       "removes it)\n",
			       k->node, k->taint_key);
	}
	json_decref(k->nm_obj);
	pthread_mutex_destroy(&k->nm_lock);
	tm_kubeconfig_free(&k->cred);
	free(k);
}
