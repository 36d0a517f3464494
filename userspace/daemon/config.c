// SPDX-License-Identifier: GPL-2.0
/* tidemarkd configuration: see config.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "httpc.h"
#include "kube.h"
#include "kubeconfig.h"
#include "tidemark_policy.h"
#include "tmlib.h"

void tm_config_defaults(struct tm_config *c)
{
	memset(c, 0, sizeof(*c));
	c->version = TM_CONFIG_VERSION;
	c->cpu.forbid_pct = 60;
	c->cpu.suppress_pct = 65;
	c->cpu.evict_pct = 70;
	c->cpu.evict_lower_pct = 0; /* suppress_pct unless given */
	c->cpu.evict_window_s = 10;
	c->memory.forbid_pct = 65;
	c->memory.evict_lower_pct = 68;
	c->memory.evict_pct = 70;
	c->max_be_wait_ms = 1000;
	c->be_floor_mcpu = 100;
	c->memevict.enabled = true;
	c->memevict.throttle_first = true;
	c->memevict.poll_ms = 100;
	c->memevict.cooldown_ms = 2000;
	c->fallback.enabled = true;
	c->eviction.backoff_initial_s = 60;
	c->eviction.backoff_max_s = 1800;
	c->eviction.backoff_cap_mcpu = 100;
	c->cpuevict.enabled = true;
	c->cpuevict.window_s = 300;
	c->cpuevict.min_coverage_pct = 80;
	c->cpuevict.lower_pct = 60;
	c->cpuevict.upper_pct = 80;
	c->cpuevict.usage_gate_pct = 90;
	c->cpuevict.cooldown_s = 60;
	c->cpuevict.max_per_round = 1;
	c->cpuevict.default_request_mcpu = 1000;
	c->interfere.enabled = true;
	c->interfere.sample_ms = 1000;
	c->interfere.warmup_samples = 10;
	c->interfere.baseline_span = 60;
	c->interfere.sigma = 3;
	c->interfere.min_rise_pct = 50;
	c->interfere.need_n = 3;
	c->interfere.of_m = 5;
	c->interfere.corr_samples = 20;
	c->interfere.min_corr_pct = 50;
	c->interfere.min_active_mcpu = 50;
	c->interfere.cooldown_s = 5;
	c->interfere.recover_s = 60;
	c->interfere.suppress_step_pct = 15;
	c->interfere.suppress_min_pct = 30;
	c->interfere.throttle_mcpu = 200;
	snprintf(c->report.listen_addr, sizeof(c->report.listen_addr), "127.0.0.1");
	c->report.listen_ip = htonl(INADDR_LOOPBACK);
	c->report.listen_port = 9477;
	c->report.sample_s = 10;
	c->report.reclaim_pct = 100;
	c->report.push_interval_s = 60;
	snprintf(c->pin_dir, sizeof(c->pin_dir), "/sys/fs/bpf/tidemark");
	snprintf(c->kube.api, sizeof(c->kube.api), "none");
	snprintf(c->kube.token_file, sizeof(c->kube.token_file),
		 "/var/run/secrets/kubernetes.io/serviceaccount/token");
	snprintf(c->kube.ca_file, sizeof(c->kube.ca_file),
		 "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
	c->kube.pods[0] = 0; /* api when the API is configured, else none */
	snprintf(c->kube.kubelet_url, sizeof(c->kube.kubelet_url), "https://127.0.0.1:10250/pods");
	c->kube.pods_refresh_s = 10;
	c->kube.timeout_ms = 5000;
	c->kube.retries = 3;
	c->kube.update_nodemetric = true;
	c->kube.nodeslo = true;
	c->kube.evict_via_api = true;
	c->kube.eviction_timeout_s = 60;
	snprintf(c->kube.eviction_fallback, sizeof(c->kube.eviction_fallback), "kill");
	snprintf(c->kube.taint_key, sizeof(c->kube.taint_key), "tidemark.io/be-forbidden");
	c->kube.taint_after_s = 10;
	c->kube.untaint_after_s = 60;
}

struct ctx {
	char *err;
	size_t errlen;
	int failed;
};

static int fail(struct ctx *x, const char *field, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (x->failed++)
		return -1; /* the first error is the one reported */
	n = snprintf(x->err, x->errlen, "%s: ", field);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < x->errlen)
		vsnprintf(x->err + n, x->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Every key of @obj must be one of @keys (NULL-terminated). */
static void known_keys(struct ctx *x, const char *where, json_t *obj, const char *const *keys)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
	{
		bool ok = false;

		for (int i = 0; keys[i] && !ok; i++)
			ok = !strcmp(k, keys[i]);
		if (!ok) {
			char f[256];

			snprintf(f, sizeof(f), "%s%s%s", where, *where ? "." : "", k);
			fail(x, f, "unknown field");
			return;
		}
	}
}

static json_t *object(struct ctx *x, json_t *parent, const char *key, const char *field)
{
	json_t *o = json_object_get(parent, key);

	if (o && !json_is_object(o)) {
		fail(x, field, "must be an object");
		return NULL;
	}
	return o;
}

static void u32_field(struct ctx *x, json_t *obj, const char *key, const char *field, uint32_t min,
		      uint32_t max, uint32_t *out)
{
	json_t *v = json_object_get(obj, key);
	json_int_t n;

	if (!v)
		return;
	if (!json_is_integer(v)) {
		fail(x, field, "must be a whole number");
		return;
	}
	n = json_integer_value(v);
	if (n < min || n > max) {
		fail(x, field, "%lld is out of range %u-%u", (long long)n, min, max);
		return;
	}
	*out = (uint32_t)n;
}

static void bool_field(struct ctx *x, json_t *obj, const char *key, const char *field, bool *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_boolean(v)) {
		fail(x, field, "must be true or false");
		return;
	}
	*out = json_is_true(v);
}

static void num_field(struct ctx *x, json_t *obj, const char *key, const char *field, double min,
		      double max, double *out)
{
	json_t *v = json_object_get(obj, key);
	double n;

	if (!v)
		return;
	if (!json_is_number(v)) {
		fail(x, field, "must be a number");
		return;
	}
	n = json_number_value(v);
	if (n < min || n > max) {
		fail(x, field, "%g is out of range %g-%g", n, min, max);
		return;
	}
	*out = n;
}

static void str_field(struct ctx *x, json_t *obj, const char *key, const char *field, char *out,
		      size_t len)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_string(v)) {
		fail(x, field, "must be a string");
		return;
	}
	if (strlen(json_string_value(v)) >= len) {
		fail(x, field, "longer than %zu bytes", len - 1);
		return;
	}
	snprintf(out, len, "%s", json_string_value(v));
}

/* Every configured path in its one form ("/x/y", tm_cg_rel_norm), in place,
 * so that all strategies compare like with like. */
static bool path_ok(struct ctx *x, const char *field, char *p)
{
	char norm[TM_CFG_PATH_MAX];
	const char *why;

	if (tm_cg_rel_norm(p, norm, sizeof(norm), &why))
		return fail(x, field, "%s", why), false;
	memcpy(p, norm, strlen(norm) + 1);
	return true;
}

/* "cgroups": {"be": ["/be", {"path": "/be/low", "priority": -1}], "online": ["/online"]} */
static void cgroups(struct ctx *x, json_t *o, struct tm_config *c)
{
	static const char *const keys[] = {"be", "online", NULL};
	json_t *be, *on, *v;
	size_t i;
	char f[64];

	known_keys(x, "cgroups", o, keys);
	be = json_object_get(o, "be");
	if (be && !json_is_array(be))
		fail(x, "cgroups.be", "must be an array");
	else if (be) {
		c->nr_be = 0;
		json_array_foreach(be, i, v)
		{
			struct tm_cfg_cgroup *g = &c->be[c->nr_be];

			snprintf(f, sizeof(f), "cgroups.be[%zu]", i);
			if (c->nr_be >= TM_CFG_MAX_CGROUPS) {
				fail(x, f, "more than %d BE cgroups", TM_CFG_MAX_CGROUPS);
				return;
			}
			memset(g, 0, sizeof(*g));
			if (json_is_string(v)) {
				if (strlen(json_string_value(v)) >= sizeof(g->path)) {
					fail(x, f, "path longer than %zu bytes",
					     sizeof(g->path) - 1);
					return;
				}
				snprintf(g->path, sizeof(g->path), "%s", json_string_value(v));
			} else if (json_is_object(v)) {
				static const char *const gk[] = {"path", "priority", "request_mcpu",
								 NULL};
				json_t *pr = json_object_get(v, "priority");
				json_t *rq = json_object_get(v, "request_mcpu");

				known_keys(x, f, v, gk);
				if (!json_is_string(json_object_get(v, "path"))) {
					fail(x, f, "needs a \"path\" string");
					return;
				}
				if (strlen(json_string_value(json_object_get(v, "path"))) >=
				    sizeof(g->path)) {
					fail(x, f, "path longer than %zu bytes",
					     sizeof(g->path) - 1);
					return;
				}
				snprintf(g->path, sizeof(g->path), "%s",
					 json_string_value(json_object_get(v, "path")));
				if (pr && (!json_is_integer(pr) || json_integer_value(pr) < -1000 ||
					   json_integer_value(pr) > 1000)) {
					fail(x, f,
					     "priority must be a whole number in -1000..1000");
					return;
				}
				g->priority = pr ? (int)json_integer_value(pr) : 0;
				if (rq && (!json_is_integer(rq) || json_integer_value(rq) < 1 ||
					   json_integer_value(rq) > TM_MCPU_MAX)) {
					fail(x, f, "request_mcpu must be a whole number in 1..%d",
					     TM_MCPU_MAX);
					return;
				}
				g->request_mcpu = rq ? (uint32_t)json_integer_value(rq) : 0;
			} else {
				fail(x, f, "must be a path or {\"path\", \"priority\"}");
				return;
			}
			if (!path_ok(x, f, g->path))
				return;
			c->nr_be++;
		}
	}
	on = json_object_get(o, "online");
	if (on && !json_is_array(on))
		fail(x, "cgroups.online", "must be an array");
	else if (on) {
		c->nr_online = 0;
		json_array_foreach(on, i, v)
		{
			snprintf(f, sizeof(f), "cgroups.online[%zu]", i);
			if (c->nr_online >= TM_CFG_MAX_CGROUPS) {
				fail(x, f, "more than %d ONLINE cgroups", TM_CFG_MAX_CGROUPS);
				return;
			}
			if (!json_is_string(v) || strlen(json_string_value(v)) >= TM_CFG_PATH_MAX) {
				fail(x, f, "must be a cgroup path string");
				return;
			}
			snprintf(c->online[c->nr_online], TM_CFG_PATH_MAX, "%s",
				 json_string_value(v));
			if (!path_ok(x, f, c->online[c->nr_online]))
				return;
			c->nr_online++;
		}
	}
}

static void listen_field(struct ctx *x, json_t *o, struct tm_config *c)
{
	char buf[96], *colon, *end;
	unsigned long port;
	struct in_addr ia;

	buf[0] = 0;
	str_field(x, o, "listen", "report.listen", buf, sizeof(buf));
	if (!buf[0])
		return;
	colon = strrchr(buf, ':');
	if (!colon) {
		fail(x, "report.listen", "'%s' must be ADDRESS:PORT (IPv4)", buf);
		return;
	}
	*colon = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || strspn(colon + 1, "0123456789") != strlen(colon + 1) || !colon[1] ||
	    port < 1 || port > 65535) {
		fail(x, "report.listen", "port '%s' must be 1-65535", colon + 1);
		return;
	}
	/* inet_pton is strict ("127.0.0.01", "127.1" refused): the address
	 * bound is the one validated here, never a fallback to 0.0.0.0 */
	if (inet_pton(AF_INET, buf, &ia) != 1) {
		fail(x, "report.listen",
		     "address '%s' must be an IPv4 address (dotted, no leading zeros)", buf);
		return;
	}
	c->report.listen_ip = ia.s_addr;
	/* at most 15 characters once parsed */
	snprintf(c->report.listen_addr, sizeof(c->report.listen_addr), "%.63s", buf);
	c->report.listen_port = port;
}

static void interference(struct ctx *x, json_t *o, struct tm_config *c)
{
	static const char *const keys[] = {"enabled",	       "dry_run",	"sample_ms",
					   "warmup_samples",   "baseline_span", "sigma",
					   "min_rise_pct",     "need_n",	"of_m",
					   "corr_samples",     "min_corr_pct",	"min_active_mcpu",
					   "cooldown_s",       "recover_s",	"suppress_step_pct",
					   "suppress_min_pct", "throttle_mcpu", NULL};
	typeof(c->interfere) *f = &c->interfere;

	known_keys(x, "interference", o, keys);
	bool_field(x, o, "enabled", "interference.enabled", &f->enabled);
	bool_field(x, o, "dry_run", "interference.dry_run", &f->dry_run);
	u32_field(x, o, "sample_ms", "interference.sample_ms", 100, 60000, &f->sample_ms);
	u32_field(x, o, "warmup_samples", "interference.warmup_samples", 3, 3600,
		  &f->warmup_samples);
	u32_field(x, o, "baseline_span", "interference.baseline_span", 2, 3600, &f->baseline_span);
	num_field(x, o, "sigma", "interference.sigma", 0.5, 20, &f->sigma);
	u32_field(x, o, "min_rise_pct", "interference.min_rise_pct", 0, 10000, &f->min_rise_pct);
	u32_field(x, o, "need_n", "interference.need_n", 1, 32, &f->need_n);
	u32_field(x, o, "of_m", "interference.of_m", 1, 32, &f->of_m);
	u32_field(x, o, "corr_samples", "interference.corr_samples", 4, 64, &f->corr_samples);
	u32_field(x, o, "min_corr_pct", "interference.min_corr_pct", 1, 100, &f->min_corr_pct);
	u32_field(x, o, "min_active_mcpu", "interference.min_active_mcpu", 0, TM_MCPU_MAX,
		  &f->min_active_mcpu);
	u32_field(x, o, "cooldown_s", "interference.cooldown_s", 1, 3600, &f->cooldown_s);
	u32_field(x, o, "recover_s", "interference.recover_s", 1, 86400, &f->recover_s);
	u32_field(x, o, "suppress_step_pct", "interference.suppress_step_pct", 1, 99,
		  &f->suppress_step_pct);
	u32_field(x, o, "suppress_min_pct", "interference.suppress_min_pct", 1, 100,
		  &f->suppress_min_pct);
	u32_field(x, o, "throttle_mcpu", "interference.throttle_mcpu", 1, TM_MCPU_MAX,
		  &f->throttle_mcpu);
	if (x->failed)
		return;
	if (f->need_n > f->of_m)
		fail(x, "interference.need_n", "%u must not be above of_m (%u)", f->need_n,
		     f->of_m);
}

/* A node name as Kubernetes allows one: a DNS subdomain (RFC 1123). */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && ch != '-' && ch != '.')
			return false;
		/* each label starts and ends with a letter or digit */
		if (!alnum && (i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.'))
			return false;
	}
	return true;
}

/* A taint key as Kubernetes validates one: an optional DNS-subdomain
 * prefix and '/', then a name of at most 63 letters, digits, '-', '_', '.'
 * that starts and ends with a letter or digit. */
static bool taint_key_ok(const char *k)
{
	const char *slash = strchr(k, '/'), *name = slash ? slash + 1 : k;
	char prefix[254];
	size_t n = strlen(name);

	if (slash) {
		if (slash - k > 253 || slash == k)
			return false;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - k), k);
		if (!dns_subdomain(prefix) || strchr(name, '/'))
			return false;
	}
	if (!n || n > 63 || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return false;
	return true;
}

static void kube_url(struct ctx *x, const char *field, const char *url)
{
	char why[384];

	if (tm_httpc_url_check(url, why, sizeof(why)))
		fail(x, field, "%s", why);
	else if (strncmp(url, "https://", 8))
		fail(x, field, "'%s' must be https (a bearer token goes with every request)", url);
}

/* api kubeconfig: the file found as kubectl finds it (one file, not a
 * merged list), and read now, so that --check says what is wrong in it. */
static void kubeconfig(struct ctx *x, json_t *o, struct tm_config *c)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	static const char *const own[] = {"server", "token_file", "ca_file"};
	char *p = c->kube.kubeconfig, err[768];
	size_t len = sizeof(c->kube.kubeconfig);
	struct tm_kubeconf kc;
	int n = 0;

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (json_object_get(o, own[i])) {
			char f[48];

			snprintf(f, sizeof(f), "kubernetes.%s", own[i]);
			fail(x, f, "the kubeconfig gives it (kubernetes.api is kubeconfig)");
			return;
		}
	if (!p[0] && env && *env && strchr(env, ':')) {
		fail(x, "kubernetes.kubeconfig",
		     "not given, and $KUBECONFIG lists several files (%s): name one", env);
		return;
	}
	if (!p[0] && env && *env)
		n = snprintf(p, len, "%s", env);
	else if (!p[0] && home && *home)
		n = snprintf(p, len, "%s/.kube/config", home);
	else if (!p[0]) {
		fail(x, "kubernetes.kubeconfig",
		     "not given, and neither $KUBECONFIG nor $HOME is set");
		return;
	}
	if (n < 0 || (size_t)n >= len) {
		fail(x, "kubernetes.kubeconfig", "the path is longer than %zu bytes", len - 1);
		return;
	}
	if (tm_kubeconfig_load(p, c->kube.context, &kc, err, sizeof(err))) {
		fail(x, "kubernetes.kubeconfig", "%s", err);
		return;
	}
	tm_kubeconfig_free(&kc);
}

static void kubernetes(struct ctx *x, json_t *o, struct tm_config *c)
{
	str_field(x, o, "api", "kubernetes.api", c->kube.api, sizeof(c->kube.api));
	if (strcmp(c->kube.api, "none") && strcmp(c->kube.api, "in-cluster") &&
	    strcmp(c->kube.api, "kubeconfig"))
		fail(x, "kubernetes.api", "'%s' must be none, in-cluster or kubeconfig",
		     c->kube.api);
	else if (strcmp(c->kube.api, "none") && tm_cluster_missing())
		fail(x, "kubernetes.api", "'%s' needs the cluster wing: %s", c->kube.api,
		     tm_cluster_missing());
	str_field(x, o, "kubeconfig", "kubernetes.kubeconfig", c->kube.kubeconfig,
		  sizeof(c->kube.kubeconfig));
	str_field(x, o, "context", "kubernetes.context", c->kube.context, sizeof(c->kube.context));
	if (!strcmp(c->kube.api, "kubeconfig"))
		kubeconfig(x, o, c);
	else if (c->kube.kubeconfig[0] || c->kube.context[0])
		fail(x, c->kube.kubeconfig[0] ? "kubernetes.kubeconfig" : "kubernetes.context",
		     "given, but kubernetes.api is %s (kubeconfig would use it)", c->kube.api);
	str_field(x, o, "node_name", "kubernetes.node_name", c->kube.node_name,
		  sizeof(c->kube.node_name));
	if (c->kube.node_name[0] && !dns_subdomain(c->kube.node_name))
		fail(x, "kubernetes.node_name",
		     "'%s' is not a node name (lower-case letters, digits, '-' and '.')",
		     c->kube.node_name);
	str_field(x, o, "server", "kubernetes.server", c->kube.server, sizeof(c->kube.server));
	if (c->kube.server[0])
		kube_url(x, "kubernetes.server", c->kube.server);
	str_field(x, o, "token_file", "kubernetes.token_file", c->kube.token_file,
		  sizeof(c->kube.token_file));
	str_field(x, o, "ca_file", "kubernetes.ca_file", c->kube.ca_file, sizeof(c->kube.ca_file));
	str_field(x, o, "pods", "kubernetes.pods", c->kube.pods, sizeof(c->kube.pods));
	if (c->kube.pods[0] && strcmp(c->kube.pods, "api") && strcmp(c->kube.pods, "kubelet") &&
	    strcmp(c->kube.pods, "none"))
		fail(x, "kubernetes.pods", "'%s' must be api, kubelet or none", c->kube.pods);
	else if (!strcmp(c->kube.pods, "api") && !strcmp(c->kube.api, "none"))
		fail(x, "kubernetes.pods", "'api' needs kubernetes.api (it is none)");
	else if (!strcmp(c->kube.pods, "kubelet") && tm_cluster_missing())
		fail(x, "kubernetes.pods", "'kubelet' needs the cluster wing: %s",
		     tm_cluster_missing());
	str_field(x, o, "kubelet_url", "kubernetes.kubelet_url", c->kube.kubelet_url,
		  sizeof(c->kube.kubelet_url));
	kube_url(x, "kubernetes.kubelet_url", c->kube.kubelet_url);
	u32_field(x, o, "pods_refresh_s", "kubernetes.pods_refresh_s", 1, 600,
		  &c->kube.pods_refresh_s);
	u32_field(x, o, "timeout_ms", "kubernetes.timeout_ms", 100, 60000, &c->kube.timeout_ms);
	u32_field(x, o, "retries", "kubernetes.retries", 0, 10, &c->kube.retries);
	bool_field(x, o, "update_nodemetric", "kubernetes.update_nodemetric",
		   &c->kube.update_nodemetric);
	bool_field(x, o, "nodeslo", "kubernetes.nodeslo", &c->kube.nodeslo);
	bool_field(x, o, "evict_via_api", "kubernetes.evict_via_api", &c->kube.evict_via_api);
	u32_field(x, o, "eviction_timeout_s", "kubernetes.eviction_timeout_s", 1, 3600,
		  &c->kube.eviction_timeout_s);
	str_field(x, o, "eviction_fallback", "kubernetes.eviction_fallback",
		  c->kube.eviction_fallback, sizeof(c->kube.eviction_fallback));
	if (strcmp(c->kube.eviction_fallback, "kill") && strcmp(c->kube.eviction_fallback, "none"))
		fail(x, "kubernetes.eviction_fallback", "'%s' must be kill or none",
		     c->kube.eviction_fallback);
	str_field(x, o, "taint_key", "kubernetes.taint_key", c->kube.taint_key,
		  sizeof(c->kube.taint_key));
	if (c->kube.taint_key[0] && !taint_key_ok(c->kube.taint_key))
		fail(x, "kubernetes.taint_key",
		     "'%s' is not a taint key ([prefix/]name: letters, digits, '-', '_', '.')",
		     c->kube.taint_key);
	u32_field(x, o, "taint_after_s", "kubernetes.taint_after_s", 0, 3600,
		  &c->kube.taint_after_s);
	u32_field(x, o, "untaint_after_s", "kubernetes.untaint_after_s", 0, 3600,
		  &c->kube.untaint_after_s);
}

static void check_order(struct ctx *x, const struct tm_config *c)
{
	/* Koordinator issue 2477: a wrong order makes suppress and evict fight */
	if (c->cpu.forbid_pct > c->cpu.suppress_pct)
		fail(x, "watermarks.cpu.forbid_pct", "%u must not be above suppress_pct (%u)",
		     c->cpu.forbid_pct, c->cpu.suppress_pct);
	else if (c->cpu.suppress_pct >= c->cpu.evict_pct)
		fail(x, "watermarks.cpu.suppress_pct", "%u must be below evict_pct (%u)",
		     c->cpu.suppress_pct, c->cpu.evict_pct);
	else if (c->cpu.evict_lower_pct < c->cpu.suppress_pct)
		fail(x, "watermarks.cpu.evict_lower_pct", "%u must not be below suppress_pct (%u)",
		     c->cpu.evict_lower_pct, c->cpu.suppress_pct);
	else if (c->cpu.evict_lower_pct >= c->cpu.evict_pct)
		fail(x, "watermarks.cpu.evict_lower_pct", "%u must be below evict_pct (%u)",
		     c->cpu.evict_lower_pct, c->cpu.evict_pct);
	else if (c->memory.forbid_pct > c->memory.evict_lower_pct)
		fail(x, "watermarks.memory.forbid_pct", "%u must not be above evict_lower_pct (%u)",
		     c->memory.forbid_pct, c->memory.evict_lower_pct);
	else if (c->memory.evict_lower_pct >= c->memory.evict_pct)
		fail(x, "watermarks.memory.evict_lower_pct", "%u must be below evict_pct (%u)",
		     c->memory.evict_lower_pct, c->memory.evict_pct);
	else if (c->interfere.suppress_min_pct > c->cpu.suppress_pct)
		fail(x, "interference.suppress_min_pct", "%u must not be above suppress_pct (%u)",
		     c->interfere.suppress_min_pct, c->cpu.suppress_pct);
	else if (c->be_floor_mcpu > 0 && c->cpu.suppress_pct == 0)
		fail(x, "watermarks.cpu.suppress_pct", "must be at least 1");
}

int tm_config_parse(const char *text, struct tm_config *out, char *err, size_t errlen)
{
	static const char *const top[] = {"version",	     "watermarks",   "scheduler",
					  "memory_eviction", "cpu_eviction", "interference",
					  "eviction",	     "fallback",     "cgroups",
					  "report",	     "kubernetes",   NULL};
	static const char *const wm[] = {"cpu", "memory", NULL};
	static const char *const kube[] = {"api",
					   "kubeconfig",
					   "context",
					   "node_name",
					   "server",
					   "token_file",
					   "ca_file",
					   "pods",
					   "kubelet_url",
					   "pods_refresh_s",
					   "timeout_ms",
					   "retries",
					   "update_nodemetric",
					   "nodeslo",
					   "evict_via_api",
					   "eviction_timeout_s",
					   "eviction_fallback",
					   "taint_key",
					   "taint_after_s",
					   "untaint_after_s",
					   NULL};
	static const char *const wcpu[] = {"forbid_pct", "suppress_pct",   "evict_lower_pct",
					   "evict_pct",	 "evict_window_s", NULL};
	static const char *const wmem[] = {"forbid_pct", "evict_lower_pct", "evict_pct", NULL};
	static const char *const sch[] = {"pin_dir", "max_be_wait_ms", "be_floor_mcpu", NULL};
	static const char *const ce[] = {"enabled",
					 "dry_run",
					 "window_s",
					 "min_coverage_pct",
					 "lower_pct",
					 "upper_pct",
					 "usage_gate_pct",
					 "cooldown_s",
					 "max_per_round",
					 "default_request_mcpu",
					 NULL};
	static const char *const fb[] = {"enabled", "dry_run", NULL};
	static const char *const ev[] = {"backoff_initial_s", "backoff_max_s", "backoff_cap_mcpu",
					 NULL};
	static const char *const me[] = {"enabled", "dry_run",	   "throttle_first",
					 "poll_ms", "cooldown_ms", NULL};
	static const char *const rep[] = {"listen",
					  "sample_s",
					  "reclaim_pct",
					  "system_reserved_mcpu",
					  "system_reserved_mib",
					  "push_url",
					  "push_interval_s",
					  NULL};
	struct ctx x = {err, errlen, 0};
	struct tm_config *c;
	char why[384];
	json_error_t je;
	json_t *root, *o, *w;
	int ret = -1;

	c = malloc(sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tm_config_defaults(c);
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "line %d column %d: %s", je.line, je.column, je.text);
		goto out;
	}
	if (!json_is_object(root)) {
		fail(&x, "(top level)", "must be a JSON object");
		goto out;
	}
	known_keys(&x, "", root, top);
	o = json_object_get(root, "version");
	if (!o)
		fail(&x, "version", "missing (this tidemarkd reads version %d)", TM_CONFIG_VERSION);
	else if (!json_is_integer(o) || json_integer_value(o) != TM_CONFIG_VERSION)
		fail(&x, "version", "must be %d", TM_CONFIG_VERSION);
	if ((w = object(&x, root, "watermarks", "watermarks"))) {
		known_keys(&x, "watermarks", w, wm);
		if ((o = object(&x, w, "cpu", "watermarks.cpu"))) {
			known_keys(&x, "watermarks.cpu", o, wcpu);
			u32_field(&x, o, "forbid_pct", "watermarks.cpu.forbid_pct", 1, 100,
				  &c->cpu.forbid_pct);
			u32_field(&x, o, "suppress_pct", "watermarks.cpu.suppress_pct", 1, 100,
				  &c->cpu.suppress_pct);
			u32_field(&x, o, "evict_pct", "watermarks.cpu.evict_pct", 1, 100,
				  &c->cpu.evict_pct);
			u32_field(&x, o, "evict_lower_pct", "watermarks.cpu.evict_lower_pct", 1,
				  100, &c->cpu.evict_lower_pct);
			u32_field(&x, o, "evict_window_s", "watermarks.cpu.evict_window_s", 1, 600,
				  &c->cpu.evict_window_s);
		}
		if ((o = object(&x, w, "memory", "watermarks.memory"))) {
			known_keys(&x, "watermarks.memory", o, wmem);
			u32_field(&x, o, "forbid_pct", "watermarks.memory.forbid_pct", 1, 100,
				  &c->memory.forbid_pct);
			u32_field(&x, o, "evict_lower_pct", "watermarks.memory.evict_lower_pct", 1,
				  100, &c->memory.evict_lower_pct);
			u32_field(&x, o, "evict_pct", "watermarks.memory.evict_pct", 1, 100,
				  &c->memory.evict_pct);
		}
	}
	if ((o = object(&x, root, "scheduler", "scheduler"))) {
		known_keys(&x, "scheduler", o, sch);
		str_field(&x, o, "pin_dir", "scheduler.pin_dir", c->pin_dir, sizeof(c->pin_dir));
		u32_field(&x, o, "max_be_wait_ms", "scheduler.max_be_wait_ms",
			  TM_MAX_BE_WAIT_MS_MIN, TM_MAX_BE_WAIT_MS_MAX, &c->max_be_wait_ms);
		u32_field(&x, o, "be_floor_mcpu", "scheduler.be_floor_mcpu", 0, TM_MCPU_MAX,
			  &c->be_floor_mcpu);
	}
	if ((o = object(&x, root, "memory_eviction", "memory_eviction"))) {
		known_keys(&x, "memory_eviction", o, me);
		bool_field(&x, o, "enabled", "memory_eviction.enabled", &c->memevict.enabled);
		bool_field(&x, o, "dry_run", "memory_eviction.dry_run", &c->memevict.dry_run);
		bool_field(&x, o, "throttle_first", "memory_eviction.throttle_first",
			   &c->memevict.throttle_first);
		u32_field(&x, o, "poll_ms", "memory_eviction.poll_ms", 10, 1000,
			  &c->memevict.poll_ms);
		u32_field(&x, o, "cooldown_ms", "memory_eviction.cooldown_ms", 0, 600000,
			  &c->memevict.cooldown_ms);
	}
	if ((o = object(&x, root, "cpu_eviction", "cpu_eviction"))) {
		known_keys(&x, "cpu_eviction", o, ce);
		bool_field(&x, o, "enabled", "cpu_eviction.enabled", &c->cpuevict.enabled);
		bool_field(&x, o, "dry_run", "cpu_eviction.dry_run", &c->cpuevict.dry_run);
		u32_field(&x, o, "window_s", "cpu_eviction.window_s", 10, 3600,
			  &c->cpuevict.window_s);
		u32_field(&x, o, "min_coverage_pct", "cpu_eviction.min_coverage_pct", 1, 100,
			  &c->cpuevict.min_coverage_pct);
		u32_field(&x, o, "lower_pct", "cpu_eviction.lower_pct", 1, 100,
			  &c->cpuevict.lower_pct);
		u32_field(&x, o, "upper_pct", "cpu_eviction.upper_pct", 1, 100,
			  &c->cpuevict.upper_pct);
		u32_field(&x, o, "usage_gate_pct", "cpu_eviction.usage_gate_pct", 1, 100,
			  &c->cpuevict.usage_gate_pct);
		u32_field(&x, o, "cooldown_s", "cpu_eviction.cooldown_s", 0, 3600,
			  &c->cpuevict.cooldown_s);
		u32_field(&x, o, "max_per_round", "cpu_eviction.max_per_round", 1, 100,
			  &c->cpuevict.max_per_round);
		u32_field(&x, o, "default_request_mcpu", "cpu_eviction.default_request_mcpu", 1,
			  TM_MCPU_MAX, &c->cpuevict.default_request_mcpu);
		if (!x.failed && c->cpuevict.lower_pct >= c->cpuevict.upper_pct)
			fail(&x, "cpu_eviction.lower_pct", "%u must be below upper_pct (%u)",
			     c->cpuevict.lower_pct, c->cpuevict.upper_pct);
	}
	if ((o = object(&x, root, "fallback", "fallback"))) {
		known_keys(&x, "fallback", o, fb);
		bool_field(&x, o, "enabled", "fallback.enabled", &c->fallback.enabled);
		bool_field(&x, o, "dry_run", "fallback.dry_run", &c->fallback.dry_run);
	}
	if ((o = object(&x, root, "eviction", "eviction"))) {
		known_keys(&x, "eviction", o, ev);
		u32_field(&x, o, "backoff_initial_s", "eviction.backoff_initial_s", 1, 86400,
			  &c->eviction.backoff_initial_s);
		u32_field(&x, o, "backoff_max_s", "eviction.backoff_max_s", 1, 604800,
			  &c->eviction.backoff_max_s);
		u32_field(&x, o, "backoff_cap_mcpu", "eviction.backoff_cap_mcpu", 0, TM_MCPU_MAX,
			  &c->eviction.backoff_cap_mcpu);
		if (!x.failed && c->eviction.backoff_max_s < c->eviction.backoff_initial_s)
			fail(&x, "eviction.backoff_max_s",
			     "%u must not be below backoff_initial_s (%u)",
			     c->eviction.backoff_max_s, c->eviction.backoff_initial_s);
	}
	if ((o = object(&x, root, "interference", "interference")))
		interference(&x, o, c);
	if ((o = object(&x, root, "cgroups", "cgroups")))
		cgroups(&x, o, c);
	if ((o = object(&x, root, "report", "report"))) {
		known_keys(&x, "report", o, rep);
		listen_field(&x, o, c);
		u32_field(&x, o, "sample_s", "report.sample_s", 1, 600, &c->report.sample_s);
		u32_field(&x, o, "reclaim_pct", "report.reclaim_pct", 0, 100,
			  &c->report.reclaim_pct);
		u32_field(&x, o, "system_reserved_mcpu", "report.system_reserved_mcpu", 0,
			  TM_MCPU_MAX, &c->report.system_reserved_mcpu);
		u32_field(&x, o, "system_reserved_mib", "report.system_reserved_mib", 0, 1 << 24,
			  &c->report.system_reserved_mib);
		str_field(&x, o, "push_url", "report.push_url", c->report.push_url,
			  sizeof(c->report.push_url));
		if (c->report.push_url[0] && tm_cluster_missing())
			fail(&x, "report.push_url", "a push needs the HTTP client: %s",
			     tm_cluster_missing());
		else if (c->report.push_url[0] &&
			 tm_httpc_url_check(c->report.push_url, why, sizeof(why)))
			fail(&x, "report.push_url", "%s", why);
		u32_field(&x, o, "push_interval_s", "report.push_interval_s", 1, 3600,
			  &c->report.push_interval_s);
	}
	if ((o = object(&x, root, "kubernetes", "kubernetes"))) {
		known_keys(&x, "kubernetes", o, kube);
		kubernetes(&x, o, c);
	}
	if (!c->kube.pods[0])
		snprintf(c->kube.pods, sizeof(c->kube.pods), "%s",
			 strcmp(c->kube.api, "none") ? "api" : "none");
	/* unless given, CPU eviction stops at the scheduler's line */
	if (!c->cpu.evict_lower_pct)
		c->cpu.evict_lower_pct = c->cpu.suppress_pct;
	if (!x.failed)
		check_order(&x, c);
	if (!x.failed) {
		*out = *c;
		ret = 0;
	}
out:
	json_decref(root);
	free(c);
	return ret;
}

/* Does BE pattern @pat (normalised, "/a/b*") take in a cgroup the daemon
 * must never act on? "/" itself, anything in the system's own slices, the
 * daemon's cgroup or one of its ancestors (a kill there would kill it). */
static const char *be_pattern_unsafe(const char *pat, const char *self)
{
	static const char *const sys[] = {"system.slice", "user.slice", "init.scope", NULL};
	char first[TM_CFG_PATH_MAX], anc[TM_CFG_PATH_MAX];
	const char *p = pat + 1, *slash;

	if (!strcmp(pat, "/"))
		return "is the root cgroup (every process of the node)";
	slash = strchr(p, '/');
	snprintf(first, sizeof(first), "%.*s", slash ? (int)(slash - p) : (int)strlen(p), p);
	for (int i = 0; sys[i]; i++)
		if (!fnmatch(first, sys[i], 0))
			return sys[i][0] == 's'	  ? "takes in /system.slice (the node's services)"
			       : sys[i][0] == 'u' ? "takes in /user.slice (login sessions)"
						  : "takes in /init.scope (systemd itself)";
	if (!self || !self[0] || !strcmp(self, "/"))
		return NULL;
	/* every ancestor of the daemon's cgroup, itself included */
	for (const char *q = self + 1;; q++) {
		if (*q == '/' || !*q) {
			snprintf(anc, sizeof(anc), "%.*s", (int)(q - self), self);
			if (!fnmatch(pat, anc, FNM_PATHNAME))
				return "takes in tidemarkd's own cgroup or one of its parents";
		}
		if (!*q)
			break;
	}
	return NULL;
}

int tm_config_check_node(const struct tm_config *c, const struct tm_node_facts *n, char *err,
			 size_t errlen)
{
	struct ctx x = {.err = err, .errlen = errlen};
	struct tm_tunables t;
	const char *why;
	char f[64];

	/* the others as they default: tidemarkd sets only these three */
	tm_tunables_default(&t);
	t.suppress_pct = c->cpu.suppress_pct;
	t.max_be_wait_ms = c->max_be_wait_ms;
	t.be_floor_mcpu = c->be_floor_mcpu;

	/* the scheduler refuses a set whose floor is above its line; the
	 * interference ladder may lower the line to suppress_min_pct */
	if ((why = tm_tunables_check(&t, n->nr_cpus)))
		return fail(&x, "scheduler.be_floor_mcpu", "%u with %u online CPUs: %s",
			    c->be_floor_mcpu, n->nr_cpus, why),
		       -1;
	if (c->interfere.enabled) {
		t.suppress_pct = c->interfere.suppress_min_pct;
		if ((why = tm_tunables_check(&t, n->nr_cpus)))
			return fail(&x, "scheduler.be_floor_mcpu",
				    "%u with %u online CPUs: %s when interference lowers it to "
				    "suppress_min_pct (%u)",
				    c->be_floor_mcpu, n->nr_cpus, why,
				    c->interfere.suppress_min_pct),
			       -1;
	}
	for (int i = 0; i < c->nr_be; i++) {
		if (!(why = be_pattern_unsafe(c->be[i].path, n->self_cgroup)))
			continue;
		snprintf(f, sizeof(f), "cgroups.be[%d]", i);
		return fail(&x, f, "'%s' %s: never a BE cgroup", c->be[i].path, why), -1;
	}
	return 0;
}

int tm_node_facts_read(struct tm_node_facts *n)
{
	char line[TM_CFG_PATH_MAX + 8];
	FILE *f;

	memset(n, 0, sizeof(*n));
	n->nr_cpus = tm_nr_cpus();
	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return 0; /* no cgroup: nothing to protect */
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			if (strlen(line + 3) < sizeof(n->self_cgroup))
				memcpy(n->self_cgroup, line + 3, strlen(line + 3) + 1);
		}
	fclose(f);
	return 0;
}

int tm_config_parse_node(const char *text, struct tm_config *c, const struct tm_node_facts *n,
			 char *err, size_t errlen)
{
	struct tm_node_facts here;
	struct tm_config *nc = malloc(sizeof(*nc));
	int ret = -1;

	if (!nc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!n) {
		tm_node_facts_read(&here);
		n = &here;
	}
	/* *c changes only when both stages accept */
	if (!tm_config_parse(text, nc, err, errlen) && !tm_config_check_node(nc, n, err, errlen)) {
		*c = *nc;
		ret = 0;
	}
	free(nc);
	return ret;
}

/* Set "a.b.c" in @root to @v, making the objects on the way. */
static int json_set_path(json_t *root, const char *path, int64_t v)
{
	char buf[128], *save = NULL, *tok, *next;
	json_t *o = root;

	snprintf(buf, sizeof(buf), "%s", path);
	tok = strtok_r(buf, ".", &save);
	while (tok) {
		next = strtok_r(NULL, ".", &save);
		if (!next)
			return json_object_set_new(o, tok, json_integer(v));
		json_t *c = json_object_get(o, tok);

		if (!json_is_object(c)) {
			c = json_object();
			if (json_object_set_new(o, tok, c))
				return -1;
		}
		o = c;
		tok = next;
	}
	return -1;
}

int tm_config_load_overlay(const char *path, const struct tm_slo_overlay *o, struct tm_config *c,
			   char *err, size_t errlen)
{
	json_error_t je;
	json_t *root;
	char *text, e2[512];
	bool any = false;
	int ret;

	for (int i = 0; i < TM_NR_SLO; i++)
		any |= o && o->has[i];
	if (!any)
		return tm_config_load(path, c, err, errlen);
	/* the file first, alone: its own errors are its own (*c untouched) */
	{
		struct tm_config *alone = malloc(sizeof(*alone));

		if (!alone) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		ret = tm_config_load(path, alone, err, errlen);
		free(alone);
		if (ret)
			return -1;
	}
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "%s: line %d: %s", path, je.line, je.text);
		return -1;
	}
	for (int i = 0; i < TM_NR_SLO; i++)
		if (o->has[i] && json_set_path(root, tm_slo_cfg_field[i], o->v[i])) {
			snprintf(err, errlen, "out of memory");
			json_decref(root);
			return -1;
		}
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ret = tm_config_parse_node(text, c, NULL, e2, sizeof(e2));
	free(text);
	if (ret) {
		/* an overlaid field's error names the NodeSLO's field too */
		for (int i = 0; i < TM_NR_SLO; i++) {
			size_t l = strlen(tm_slo_cfg_field[i]);

			if (o->has[i] && !strncmp(e2, tm_slo_cfg_field[i], l) && e2[l] == ':') {
				snprintf(err, errlen,
					 "NodeSLO resourceUsedThresholdWithBE.%s (%s)%s",
					 tm_slo_field[i], tm_slo_cfg_field[i], e2 + l);
				return -1;
			}
		}
		snprintf(err, errlen, "NodeSLO with the file: %s", e2);
	}
	return ret;
}

int tm_config_load(const char *path, struct tm_config *c, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f = fopen(path, "r");
	int ret;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* a configuration is small: refuse anything over 1 MiB */
	buf = malloc(1 << 20);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	n = fread(buf, 1, (1 << 20) - 1, f);
	len = n;
	if (!feof(f)) {
		snprintf(err, errlen, "%s: larger than 1 MiB", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	buf[len] = 0;
	ret = tm_config_parse_node(buf, c, NULL, err, errlen);
	free(buf);
	return ret;
}
