// SPDX-License-Identifier: GPL-2.0
/* tidemarkd configuration: see config.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "strategy.h"
#include "httpc.h"
#include "kube.h"
#include "kubeconfig.h"
#include "tidemark_policy.h"
#include "tmlib.h"
#include "log.h"

/* Every key of @obj must be one of @keys (NULL-terminated). */
static void known_keys(struct tm_cfg_ctx *x, const char *where, json_t *obj,
		       const char *const *keys)
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
			tm_cfg_fail(x, f, "unknown field");
			return;
		}
	}
}

static json_t *object(struct tm_cfg_ctx *x, json_t *parent, const char *key, const char *field)
{
	json_t *o = json_object_get(parent, key);

	if (o && !json_is_object(o)) {
		tm_cfg_fail(x, field, "must be an object");
		return NULL;
	}
	return o;
}

static void u32_field(struct tm_cfg_ctx *x, json_t *obj, const char *key, const char *field,
		      uint32_t min, uint32_t max, uint32_t *out)
{
	json_t *v = json_object_get(obj, key);
	json_int_t n;

	if (!v)
		return;
	if (!json_is_integer(v)) {
		tm_cfg_fail(x, field, "must be a whole number");
		return;
	}
	n = json_integer_value(v);
	if (n < min || n > max) {
		tm_cfg_fail(x, field, "%lld is out of range %u-%u", (long long)n, min, max);
		return;
	}
	*out = (uint32_t)n;
}

static void bool_field(struct tm_cfg_ctx *x, json_t *obj, const char *key, const char *field,
		       bool *out)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_boolean(v)) {
		tm_cfg_fail(x, field, "must be true or false");
		return;
	}
	*out = json_is_true(v);
}

static void num_field(struct tm_cfg_ctx *x, json_t *obj, const char *key, const char *field,
		      double min, double max, double *out)
{
	json_t *v = json_object_get(obj, key);
	double n;

	if (!v)
		return;
	if (!json_is_number(v)) {
		tm_cfg_fail(x, field, "must be a number");
		return;
	}
	n = json_number_value(v);
	if (n < min || n > max) {
		tm_cfg_fail(x, field, "%g is out of range %g-%g", n, min, max);
		return;
	}
	*out = n;
}

static void str_field(struct tm_cfg_ctx *x, json_t *obj, const char *key, const char *field,
		      char *out, size_t len)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return;
	if (!json_is_string(v)) {
		tm_cfg_fail(x, field, "must be a string");
		return;
	}
	if (strlen(json_string_value(v)) >= len) {
		tm_cfg_fail(x, field, "longer than %zu bytes", len - 1);
		return;
	}
	snprintf(out, len, "%s", json_string_value(v));
}

/* Every configured path in its one form ("/x/y", tm_cg_rel_norm), in place,
 * so that all strategies compare like with like. */
static bool path_ok(struct tm_cfg_ctx *x, const char *field, char *p)
{
	char norm[TM_CFG_PATH_MAX];
	const char *why;

	if (tm_cg_rel_norm(p, norm, sizeof(norm), &why))
		return tm_cfg_fail(x, field, "%s", why), false;
	memcpy(p, norm, strlen(norm) + 1);
	return true;
}

/* "be": ["/be", {"path": "/be/low", "priority": -1, "request_mcpu": 500}] */
static void cgroups_be(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	json_t *be, *v;
	size_t i;
	char f[64];

	be = json_object_get(o, "be");
	if (be && !json_is_array(be))
		tm_cfg_fail(x, "cgroups.be", "must be an array");
	else if (be) {
		c->nr_be = 0;
		json_array_foreach(be, i, v)
		{
			struct tm_cfg_cgroup *g = &c->be[c->nr_be];

			snprintf(f, sizeof(f), "cgroups.be[%zu]", i);
			if (c->nr_be >= TM_CFG_MAX_CGROUPS) {
				tm_cfg_fail(x, f, "more than %d BE cgroups", TM_CFG_MAX_CGROUPS);
				return;
			}
			memset(g, 0, sizeof(*g));
			if (json_is_string(v)) {
				if (strlen(json_string_value(v)) >= sizeof(g->path)) {
					tm_cfg_fail(x, f, "path longer than %zu bytes",
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
					tm_cfg_fail(x, f, "needs a \"path\" string");
					return;
				}
				if (strlen(json_string_value(json_object_get(v, "path"))) >=
				    sizeof(g->path)) {
					tm_cfg_fail(x, f, "path longer than %zu bytes",
						    sizeof(g->path) - 1);
					return;
				}
				snprintf(g->path, sizeof(g->path), "%s",
					 json_string_value(json_object_get(v, "path")));
				if (pr && (!json_is_integer(pr) || json_integer_value(pr) < -1000 ||
					   json_integer_value(pr) > 1000)) {
					tm_cfg_fail(
						x, f,
						"priority must be a whole number in -1000..1000");
					return;
				}
				g->priority = pr ? (int)json_integer_value(pr) : 0;
				if (rq && (!json_is_integer(rq) || json_integer_value(rq) < 1 ||
					   json_integer_value(rq) > TM_MCPU_MAX)) {
					tm_cfg_fail(x, f,
						    "request_mcpu must be a whole number in 1..%d",
						    TM_MCPU_MAX);
					return;
				}
				g->request_mcpu = rq ? (uint32_t)json_integer_value(rq) : 0;
			} else {
				tm_cfg_fail(x, f, "must be a path or {\"path\", \"priority\"}");
				return;
			}
			if (!path_ok(x, f, g->path))
				return;
			c->nr_be++;
		}
	}
}

/* "online": ["/online"] */
static void cgroups_online(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	json_t *on, *v;
	size_t i;
	char f[64];

	on = json_object_get(o, "online");
	if (on && !json_is_array(on))
		tm_cfg_fail(x, "cgroups.online", "must be an array");
	else if (on) {
		c->nr_online = 0;
		json_array_foreach(on, i, v)
		{
			snprintf(f, sizeof(f), "cgroups.online[%zu]", i);
			if (c->nr_online >= TM_CFG_MAX_CGROUPS) {
				tm_cfg_fail(x, f, "more than %d ONLINE cgroups",
					    TM_CFG_MAX_CGROUPS);
				return;
			}
			if (!json_is_string(v) || strlen(json_string_value(v)) >= TM_CFG_PATH_MAX) {
				tm_cfg_fail(x, f, "must be a cgroup path string");
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

static void listen_field(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
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
		tm_cfg_fail(x, "report.listen", "'%s' must be ADDRESS:PORT (IPv4)", buf);
		return;
	}
	*colon = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || strspn(colon + 1, "0123456789") != strlen(colon + 1) || !colon[1] ||
	    port < 1 || port > 65535) {
		tm_cfg_fail(x, "report.listen", "port '%s' must be 1-65535", colon + 1);
		return;
	}
	/* inet_pton is strict ("127.0.0.01", "127.1" refused): the address
	 * bound is the one validated here, never a fallback to 0.0.0.0 */
	if (inet_pton(AF_INET, buf, &ia) != 1) {
		tm_cfg_fail(x, "report.listen",
			    "address '%s' must be an IPv4 address (dotted, no leading zeros)", buf);
		return;
	}
	c->report.listen_ip = ia.s_addr;
	/* at most 15 characters once parsed */
	snprintf(c->report.listen_addr, sizeof(c->report.listen_addr), "%.63s", buf);
	c->report.listen_port = port;
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

static void kube_url(struct tm_cfg_ctx *x, const char *field, const char *url)
{
	char why[384];

	if (tm_httpc_url_check(url, why, sizeof(why)))
		tm_cfg_fail(x, field, "%s", why);
	else if (strncmp(url, "https://", 8))
		tm_cfg_fail(x, field, "'%s' must be https (a bearer token goes with every request)",
			    url);
}

/* api kubeconfig: the file found as kubectl finds it (one file, not a
 * merged list), and read now, so that --check says what is wrong in it. */
static void kubeconfig(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	static const char *const own[] = {"server", "token_file", "ca_file"};
	char *p = c->kubernetes.kubeconfig, err[768];
	size_t len = sizeof(c->kubernetes.kubeconfig);
	struct tm_kubeconf kc;
	int n = 0;

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (json_object_get(o, own[i])) {
			char f[48];

			snprintf(f, sizeof(f), "kubernetes.%s", own[i]);
			tm_cfg_fail(x, f, "the kubeconfig gives it (kubernetes.api is kubeconfig)");
			return;
		}
	if (!p[0] && env && *env && strchr(env, ':')) {
		tm_cfg_fail(x, "kubernetes.kubeconfig",
			    "not given, and $KUBECONFIG lists several files (%s): name one", env);
		return;
	}
	if (!p[0] && env && *env)
		n = snprintf(p, len, "%s", env);
	else if (!p[0] && home && *home)
		n = snprintf(p, len, "%s/.kube/config", home);
	else if (!p[0]) {
		tm_cfg_fail(x, "kubernetes.kubeconfig",
			    "not given, and neither $KUBECONFIG nor $HOME is set");
		return;
	}
	if (n < 0 || (size_t)n >= len) {
		tm_cfg_fail(x, "kubernetes.kubeconfig", "the path is longer than %zu bytes",
			    len - 1);
		return;
	}
	if (tm_kubeconfig_load(p, c->kubernetes.context, &kc, err, sizeof(err))) {
		tm_cfg_fail(x, "kubernetes.kubeconfig", "%s", err);
		return;
	}
	tm_kubeconfig_free(&kc);
}

static void check_order(struct tm_cfg_ctx *x, const struct tm_config *c)
{
	/* Koordinator issue 2477: a wrong order makes suppress and evict fight */
	if (c->cpu.forbid_pct > c->cpu.suppress_pct)
		tm_cfg_fail(x, "watermarks.cpu.forbid_pct",
			    "%u must not be above suppress_pct (%u)", c->cpu.forbid_pct,
			    c->cpu.suppress_pct);
	else if (c->cpu.suppress_pct >= c->cpu.evict_pct)
		tm_cfg_fail(x, "watermarks.cpu.suppress_pct", "%u must be below evict_pct (%u)",
			    c->cpu.suppress_pct, c->cpu.evict_pct);
	else if (c->cpu.evict_lower_pct < c->cpu.suppress_pct)
		tm_cfg_fail(x, "watermarks.cpu.evict_lower_pct",
			    "%u must not be below suppress_pct (%u)", c->cpu.evict_lower_pct,
			    c->cpu.suppress_pct);
	else if (c->cpu.evict_lower_pct >= c->cpu.evict_pct)
		tm_cfg_fail(x, "watermarks.cpu.evict_lower_pct", "%u must be below evict_pct (%u)",
			    c->cpu.evict_lower_pct, c->cpu.evict_pct);
	else if (c->memory.forbid_pct > c->memory.evict_lower_pct)
		tm_cfg_fail(x, "watermarks.memory.forbid_pct",
			    "%u must not be above evict_lower_pct (%u)", c->memory.forbid_pct,
			    c->memory.evict_lower_pct);
	else if (c->memory.evict_lower_pct >= c->memory.evict_pct)
		tm_cfg_fail(x, "watermarks.memory.evict_lower_pct",
			    "%u must be below evict_pct (%u)", c->memory.evict_lower_pct,
			    c->memory.evict_pct);
	else if (c->interference.suppress_min_pct > c->cpu.suppress_pct)
		tm_cfg_fail(x, "interference.suppress_min_pct",
			    "%u must not be above suppress_pct (%u)",
			    c->interference.suppress_min_pct, c->cpu.suppress_pct);
	else if (c->be_floor_mcpu > 0 && c->cpu.suppress_pct == 0)
		tm_cfg_fail(x, "watermarks.cpu.suppress_pct", "must be at least 1");
}

/* ---- the field table: the core's sections (strategies own theirs) ---- */

static const struct tm_cfg_row wm_cpu_rows[] = {
	TM_CFG_U32_ROW("forbid_pct", cpu.forbid_pct, 1, 100, "60", "%",
		       "above it the report says forbidScheduling (no new BE)"),
	TM_CFG_U32_ROW("suppress_pct", cpu.suppress_pct, 1, 100, "65", "%",
		       "the scheduler's BE line, written to its pinned tunables and kept there"),
	{.key = "evict_lower_pct",
	 .type = TM_CFG_U32,
	 TM_CFG_FIELD(cpu.evict_lower_pct),
	 .min = 1,
	 .max = 100,
	 .dflt_note = "suppress_pct",
	 .example = "65",
	 .unit = "%",
	 .help = "the CPU evict watermark kills BE down to this line"},
	TM_CFG_U32_ROW(
		"evict_pct", cpu.evict_pct, 1, 100, "70", "%",
		"CPU evict watermark (cpu_high, a policy of cpu_eviction): node CPU above it on "
		"average over evict_window_s with BE running, BE cgroups are killed"),
	TM_CFG_U32_ROW("evict_window_s", cpu.evict_window_s, 1, 600, "10", "s",
		       "the averaging window of the evict watermark"),
};

static const struct tm_cfg_row wm_mem_rows[] = {
	TM_CFG_U32_ROW("forbid_pct", memory.forbid_pct, 1, 100, "65", "%",
		       "forbid-scheduling line for memory"),
	TM_CFG_U32_ROW("evict_lower_pct", memory.evict_lower_pct, 1, 100, "68", "%",
		       "memory eviction stops at or below it"),
	TM_CFG_U32_ROW("evict_pct", memory.evict_pct, 1, 100, "70", "%",
		       "memory eviction starts at or above it"),
};

static const struct tm_cfg_row sched_rows[] = {
	{.key = "pin_dir",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(pin_dir),
	 .dflt = "\"/sys/fs/bpf/tidemark\"",
	 .help = "where the scheduler pins its maps"},
	TM_CFG_U32_ROW(
		"max_be_wait_ms", max_be_wait_ms, TM_MAX_BE_WAIT_MS_MIN, TM_MAX_BE_WAIT_MS_MAX,
		"1000", "ms",
		"a queued BE task runs at least this often (kept in the scheduler's tunables)"),
	TM_CFG_U32_ROW("be_floor_mcpu", be_floor_mcpu, 0, TM_MCPU_MAX, "100", "mCPU",
		       "CPU BE keeps on average even when ONLINE wants everything (kept in the "
		       "scheduler's "
		       "tunables)"),
};

static void eviction_check(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	if (c->eviction.backoff_max_s < c->eviction.backoff_initial_s)
		tm_cfg_fail(x, "eviction.backoff_max_s",
			    "%u must not be below backoff_initial_s (%u)",
			    c->eviction.backoff_max_s, c->eviction.backoff_initial_s);
}

static const struct tm_cfg_row eviction_rows[] = {
	TM_CFG_U32_ROW("backoff_initial_s", eviction.backoff_initial_s, 1, 86400, "60", "s",
		       "no second kill of a cgroup or pod before this (every evicting strategy)"),
	TM_CFG_U32_ROW("backoff_max_s", eviction.backoff_max_s, 1, 604800, "1800", "s",
		       "the back-off doubles after each kill, up to this"),
	TM_CFG_U32_ROW("backoff_cap_mcpu", eviction.backoff_cap_mcpu, 0, TM_MCPU_MAX, "100", "mCPU",
		       "what a cgroup or pod back within its back-off may use (a cap enforced as "
		       "cpu.max; 0: "
		       "none)"),
};

static const struct tm_cfg_row cgroups_rows[] = {
	{.key = "be",
	 .type = TM_CFG_OWN,
	 .parse = cgroups_be,
	 .dflt = "[]",
	 .example = "[\"/kubepods.slice/kubepods-besteffort.slice/*\", \"/kubepods/besteffort/*\", "
		    "{\"path\": \"/batch/*\", \"priority\": -1, \"request_mcpu\": 2000}]",
	 .help = "BE cgroups the daemon may act on: paths or globs, or {path, priority (lower is "
		 "evicted first, -1000..1000), request_mcpu}; never an ONLINE or SYSTEM one"},
	{.key = "online",
	 .type = TM_CFG_OWN,
	 .parse = cgroups_online,
	 .dflt = "[]",
	 .example = "[\"/kubepods.slice/kubepods-burstable.slice\", \"/kubepods/burstable\", "
		    "\"/online\"]",
	 .help = "ONLINE cgroups (paths or globs): never touched, watched by interference"},
};

static void report_check(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	char why[384];

	if (c->report.push_url[0] && tm_cluster_missing())
		tm_cfg_fail(x, "report.push_url", "a push needs the HTTP client: %s",
			    tm_cluster_missing());
	else if (c->report.push_url[0] && tm_httpc_url_check(c->report.push_url, why, sizeof(why)))
		tm_cfg_fail(x, "report.push_url", "%s", why);
}

static const struct tm_cfg_row report_rows[] = {
	{.key = "listen",
	 .type = TM_CFG_OWN,
	 .parse = listen_field,
	 .dflt = "\"127.0.0.1:9477\"",
	 .help = "HTTP address: dotted IPv4 as inet_pton reads it, bound exactly as validated"},
	TM_CFG_U32_ROW("sample_s", report.sample_s, 1, 600, "10", "s",
		       "usage sampling period for the report's windows"),
	TM_CFG_U32_ROW("reclaim_pct", report.reclaim_pct, 0, 100, "100", "%",
		       "BE allocatable: capacity x this ..."),
	{.key = "system_reserved_mcpu",
	 .type = TM_CFG_U32,
	 TM_CFG_FIELD(report.system_reserved_mcpu),
	 .min = 0,
	 .max = TM_MCPU_MAX,
	 .dflt = "0",
	 .example = "1000",
	 .unit = "mCPU",
	 .help = "... less what the system keeps"},
	{.key = "system_reserved_mib",
	 .type = TM_CFG_U32,
	 TM_CFG_FIELD(report.system_reserved_mib),
	 .min = 0,
	 .max = 1 << 24,
	 .dflt = "0",
	 .example = "1024",
	 .unit = "MiB",
	 .help = "memory the system keeps"},
	{.key = "push_url",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(report.push_url),
	 .dflt = "\"\"",
	 .help = "POST the JSON report there (http or https; \"\": no push)"},
	TM_CFG_U32_ROW("push_interval_s", report.push_interval_s, 1, 3600, "60", "s",
		       "how often it is pushed"),
};

static void kubernetes_check(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	if (strcmp(c->kubernetes.api, "none") && tm_cluster_missing())
		tm_cfg_fail(x, "kubernetes.api", "'%s' needs the cluster wing: %s",
			    c->kubernetes.api, tm_cluster_missing());
	if (!strcmp(c->kubernetes.api, "kubeconfig"))
		kubeconfig(x, o, c);
	else if (c->kubernetes.kubeconfig[0] || c->kubernetes.context[0])
		tm_cfg_fail(x,
			    c->kubernetes.kubeconfig[0] ? "kubernetes.kubeconfig"
							: "kubernetes.context",
			    "given, but kubernetes.api is %s (kubeconfig would use it)",
			    c->kubernetes.api);
	if (c->kubernetes.node_name[0] && !dns_subdomain(c->kubernetes.node_name))
		tm_cfg_fail(x, "kubernetes.node_name",
			    "'%s' is not a node name (lower-case letters, digits, '-' and '.')",
			    c->kubernetes.node_name);
	if (c->kubernetes.server[0])
		kube_url(x, "kubernetes.server", c->kubernetes.server);
	if (!strcmp(c->kubernetes.pods, "api") && !strcmp(c->kubernetes.api, "none"))
		tm_cfg_fail(x, "kubernetes.pods", "'api' needs kubernetes.api (it is none)");
	else if (!strcmp(c->kubernetes.pods, "kubelet") && tm_cluster_missing())
		tm_cfg_fail(x, "kubernetes.pods", "'kubelet' needs the cluster wing: %s",
			    tm_cluster_missing());
	kube_url(x, "kubernetes.kubelet_url", c->kubernetes.kubelet_url);
	if (c->kubernetes.taint_key[0] && !taint_key_ok(c->kubernetes.taint_key))
		tm_cfg_fail(
			x, "kubernetes.taint_key",
			"'%s' is not a taint key ([prefix/]name: letters, digits, '-', '_', '.')",
			c->kubernetes.taint_key);
}

static const struct tm_cfg_row kube_rows[] = {
	TM_CFG_STR_ROW("api", kubernetes.api, "\"none\"", "none|in-cluster|kubeconfig",
		       "in-cluster: the pod's service account; kubeconfig: a kubeconfig file"),
	{.key = "kubeconfig",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(kubernetes.kubeconfig),
	 .dflt_note = "$KUBECONFIG, else $HOME/.kube/config",
	 .help = "with api kubeconfig: the file (one, not a merged list)"},
	{.key = "context",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(kubernetes.context),
	 .dflt_note = "its current-context",
	 .help = "with api kubeconfig: the context used"},
	{.key = "node_name",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(kubernetes.node_name),
	 .dflt_note = "$NODE_NAME, else the host name",
	 .help = "the NodeMetric's name and the pods listed (a DNS subdomain)"},
	{.key = "server",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(kubernetes.server),
	 .dflt_note = "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT",
	 .help = "in-cluster: an explicit API server (https only)"},
	TM_CFG_STR_ROW("token_file", kubernetes.token_file,
		       "\"/var/run/secrets/kubernetes.io/serviceaccount/token\"", NULL,
		       "in-cluster: the bearer token, read before every request"),
	TM_CFG_STR_ROW("ca_file", kubernetes.ca_file,
		       "\"/var/run/secrets/kubernetes.io/serviceaccount/ca.crt\"", NULL,
		       "in-cluster: the CA the server is verified with"),
	{.key = "pods",
	 .type = TM_CFG_STR,
	 TM_CFG_FIELD(kubernetes.pods),
	 .choices = "api|kubelet|none",
	 .dflt_note = "api with an API, else none",
	 .help = "where pod names come from"},
	TM_CFG_STR_ROW("kubelet_url", kubernetes.kubelet_url, "\"https://127.0.0.1:10250/pods\"",
		       NULL, "pods kubelet: the kubelet's pod list (same token and CA)"),
	TM_CFG_U32_ROW("pods_refresh_s", kubernetes.pods_refresh_s, 1, 600, "10", "s",
		       "pods kubelet: how often its pod list is read (the API server's pods, "
		       "NodeSLO and NodeMetric come by watch)"),
	TM_CFG_U32_ROW("watch_timeout_s", kubernetes.watch_timeout_s, 10, 3600, "600", "s",
		       "a watch is renewed after this long plus up to as much again (random)"),
	TM_CFG_U32_ROW("start_jitter_s", kubernetes.start_jitter_s, 0, 600, "10", "s",
		       "the first list waits up to this long (random), so nodes restarted "
		       "together do not reach the API server together"),
	TM_CFG_U32_ROW("timeout_ms", kubernetes.timeout_ms, 100, 60000, "5000", "ms",
		       "one request's deadline, connecting included"),
	TM_CFG_U32_ROW("retries", kubernetes.retries, 0, 10, "3", "",
		       "tries after a time-out, a refused connection, 429 or 5xx"),
	TM_CFG_BOOL_ROW("update_nodemetric", kubernetes.update_nodemetric, "true",
			"merge-patch the NodeMetric's status every reportIntervalSeconds (left to "
			"another writer that wrote it within two intervals)"),
	TM_CFG_BOOL_ROW("nodeslo", kubernetes.nodeslo, "true",
			"the NodeSLO's resourceUsedThresholdWithBE sets the lines"),
	TM_CFG_BOOL_ROW("evict_via_api", kubernetes.evict_via_api, "true",
			"evict a pod through policy/v1 Eviction instead of cgroup.kill"),
	TM_CFG_U32_ROW("eviction_timeout_s", kubernetes.eviction_timeout_s, 1, 3600, "60", "s",
		       "how long a disruption budget's refusal is asked again before the fallback"),
	TM_CFG_STR_ROW(
		"eviction_fallback", kubernetes.eviction_fallback, "\"kill\"", "kill|none",
		"when the API does not evict: kill (cgroup.kill) or none (the pod stays, capped)"),
	TM_CFG_STR_ROW(
		"taint_key", kubernetes.taint_key, "\"\"", NULL,
		"opt-in: a taint put on the node while it is above a forbid line (\"\", the "
		"default: none; a taint keeps every new pod off the node, ONLINE and "
		"DaemonSet pods too, unless they tolerate it; tidemarkd --cleanup removes it)"),
	TM_CFG_STR_ROW("taint_effect", kubernetes.taint_effect, "\"NoSchedule\"",
		       "NoSchedule|PreferNoSchedule",
		       "the taint's effect (NoExecute is refused: it would evict running pods)"),
	TM_CFG_U32_ROW("taint_after_s", kubernetes.taint_after_s, 0, 3600, "10", "s",
		       "above a forbid line this long: tainted"),
	TM_CFG_U32_ROW("untaint_after_s", kubernetes.untaint_after_s, 0, 3600, "60", "s",
		       "below every forbid line this long: untainted"),
};

static const struct tm_cfg_section core_first[] = {
	{.name = "watermarks.cpu", .help = "CPU lines, % of the node", TM_CFG_ROWS(wm_cpu_rows)},
	{.name = "watermarks.memory",
	 .help = "memory lines, % of the node",
	 TM_CFG_ROWS(wm_mem_rows)},
	{.name = "scheduler",
	 .help = "what the daemon keeps in the scheduler's tunables",
	 TM_CFG_ROWS(sched_rows)},
};

static const struct tm_cfg_section core_last[] = {
	{.name = "eviction",
	 .help = "every eviction: the back-off of what comes back",
	 TM_CFG_ROWS(eviction_rows),
	 .check = eviction_check},
	{.name = "cgroups",
	 .help = "which cgroups are BE and which ONLINE",
	 TM_CFG_ROWS(cgroups_rows)},
	{.name = "report",
	 .help = "reports: HTTP, the push, BE allocatable",
	 TM_CFG_ROWS(report_rows),
	 .check = report_check},
	{.name = "kubernetes",
	 .help = "the cluster: pod names, NodeMetric, NodeSLO, eviction, taint",
	 TM_CFG_ROWS(kube_rows),
	 .check = kubernetes_check},
};

int tm_cfg_sections(const struct tm_cfg_section **out, int max)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(core_first) / sizeof(core_first[0]); i++)
		if (n < max)
			out[n++] = &core_first[i];
	for (int i = 0; i < tm_nr_strategies; i++)
		if (tm_strategies[i]->config && n < max)
			out[n++] = tm_strategies[i]->config;
	for (size_t i = 0; i < sizeof(core_last) / sizeof(core_last[0]); i++)
		if (n < max)
			out[n++] = &core_last[i];
	return n;
}

/* "a|b|c" as "a, b or c" */
static void choices_text(const char *ch, char *out, size_t len)
{
	int n = 1, k = 0;
	size_t o = 0;

	for (const char *p = ch; *p; p++)
		n += *p == '|';
	out[0] = 0;
	for (const char *p = ch; o < len;) {
		const char *e = strchr(p, '|');
		int l = e ? (int)(e - p) : (int)strlen(p);

		o += snprintf(out + o, len - o, "%s%.*s",
			      !k	   ? ""
			      : k == n - 1 ? " or "
					   : ", ",
			      l, p);
		k++;
		if (!e)
			break;
		p = e + 1;
	}
}

static bool is_choice(const char *ch, const char *v)
{
	size_t l = strlen(v);

	for (const char *p = ch;;) {
		const char *e = strchr(p, '|');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == l && !strncmp(p, v, l))
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

/* One row from section object @o (absent: left as it is). */
static void read_row(struct tm_cfg_ctx *x, const char *sect, const struct tm_cfg_row *r, json_t *o,
		     struct tm_config *c)
{
	char *base = (char *)c + r->off, f[128], ch[128];

	snprintf(f, sizeof(f), "%s.%s", sect, r->key);
	switch (r->type) {
	case TM_CFG_BOOL:
		bool_field(x, o, r->key, f, (bool *)base);
		break;
	case TM_CFG_U32:
		u32_field(x, o, r->key, f, (uint32_t)r->min, (uint32_t)r->max, (uint32_t *)base);
		break;
	case TM_CFG_NUM:
		num_field(x, o, r->key, f, r->min, r->max, (double *)base);
		break;
	case TM_CFG_STR:
		str_field(x, o, r->key, f, base, r->size);
		if (r->choices && json_object_get(o, r->key) && !is_choice(r->choices, base)) {
			choices_text(r->choices, ch, sizeof(ch));
			tm_cfg_fail(x, f, "'%s' must be %s", base, ch);
		}
		break;
	case TM_CFG_OWN:
		if (json_object_get(o, r->key))
			r->parse(x, o, c);
		break;
	}
}

/* Section @s's JSON object in @root ("a.b": root.a.b); NULL when absent. */
static json_t *section_obj(struct tm_cfg_ctx *x, json_t *root, const char *name)
{
	char buf[64], f[64] = "", *save = NULL;
	json_t *o = root;

	snprintf(buf, sizeof(buf), "%s", name);
	for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save)) {
		snprintf(f + strlen(f), sizeof(f) - strlen(f), "%s%s", f[0] ? "." : "", t);
		o = object(x, o, t, f);
	}
	return o;
}

/* Every key of object @o (at @where: "" the top, "watermarks", ...) is a
 * section, a part of one, or a row of the section @where names. */
static void known_keys_at(struct tm_cfg_ctx *x, const char *where, json_t *o,
			  const struct tm_cfg_section *const *secs, int ns)
{
	size_t wl = strlen(where);
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		bool ok = !wl && !strcmp(k, "version");
		char f[256];

		for (int i = 0; i < ns && !ok; i++) {
			const char *n = secs[i]->name, *rest;

			if (!strcmp(n, where)) {
				for (int j = 0; j < secs[i]->nr_rows && !ok; j++)
					ok = !strcmp(secs[i]->rows[j].key, k);
				continue;
			}
			if (wl && (strncmp(n, where, wl) || n[wl] != '.'))
				continue;
			rest = wl ? n + wl + 1 : n;
			ok = !strncmp(rest, k, strlen(k)) &&
			     (!rest[strlen(k)] || rest[strlen(k)] == '.');
		}
		if (!ok) {
			snprintf(f, sizeof(f), "%s%s%s", where, wl ? "." : "", k);
			tm_cfg_fail(x, f, "unknown field");
			return;
		}
	}
}

/* Walk the objects of @root, checking their keys against the table. */
static void known_tree(struct tm_cfg_ctx *x, const char *where, json_t *o,
		       const struct tm_cfg_section *const *secs, int ns)
{
	const char *k;
	json_t *v;

	known_keys_at(x, where, o, secs, ns);
	json_object_foreach(o, k, v)
	{
		char sub[128];
		bool is_row = false;

		if (!json_is_object(v) || x->failed)
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", where, *where ? "." : "", k);
		for (int i = 0; i < ns && !is_row; i++)
			is_row = !strcmp(secs[i]->name, where);
		if (!is_row) /* rows own what is inside them (a cgroup's object) */
			known_tree(x, sub, v, secs, ns);
	}
}

#define TM_CFG_MAX_SECTIONS 32

/* The defaults: each row's default through its own reader. */
static int apply_defaults(struct tm_config *c, char *err, size_t errlen)
{
	const struct tm_cfg_section *secs[TM_CFG_MAX_SECTIONS];
	int ns = tm_cfg_sections(secs, TM_CFG_MAX_SECTIONS);
	struct tm_cfg_ctx x = {err, errlen, 0};

	memset(c, 0, sizeof(*c));
	c->version = TM_CONFIG_VERSION;
	for (int i = 0; i < ns; i++)
		for (int j = 0; j < secs[i]->nr_rows; j++) {
			const struct tm_cfg_row *r = &secs[i]->rows[j];
			json_t *v, *o;

			if (!r->dflt)
				continue;
			v = json_loads(r->dflt, JSON_DECODE_ANY, NULL);
			o = json_object();
			if (!v || !o) {
				tm_cfg_fail(&x, r->key, "default '%s' is not JSON", r->dflt);
				json_decref(v);
				json_decref(o);
				continue;
			}
			json_object_set_new(o, r->key, v);
			read_row(&x, secs[i]->name, r, o, c);
			json_decref(o);
		}
	return x.failed ? -1 : 0;
}

/* The table's defaults, read once (every parse and reload starts from them). */
static struct tm_config defaults;
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

static void defaults_init(void)
{
	char err[256];

	if (apply_defaults(&defaults, err, sizeof(err)))
		tm_log(TM_LOG_ERR,
		       "tidemarkd: a default of the configuration table is refused: %s\n", err);
}

void tm_config_defaults(struct tm_config *c)
{
	pthread_once(&defaults_once, defaults_init);
	*c = defaults;
}

int tm_config_defaults_check(char *err, size_t errlen)
{
	struct tm_config *c = malloc(sizeof(*c));
	int ret;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ret = apply_defaults(c, err, errlen);
	free(c);
	return ret;
}

int tm_config_parse(const char *text, struct tm_config *out, char *err, size_t errlen)
{
	const struct tm_cfg_section *secs[TM_CFG_MAX_SECTIONS];
	int ns = tm_cfg_sections(secs, TM_CFG_MAX_SECTIONS);
	struct tm_cfg_ctx x = {err, errlen, 0};
	struct tm_config *c;
	json_error_t je;
	json_t *root, *o;
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
		tm_cfg_fail(&x, "(top level)", "must be a JSON object");
		goto out;
	}
	known_tree(&x, "", root, secs, ns);
	o = json_object_get(root, "version");
	if (!o)
		tm_cfg_fail(&x, "version", "missing (this tidemarkd reads version %d)",
			    TM_CONFIG_VERSION);
	else if (!json_is_integer(o) || json_integer_value(o) != TM_CONFIG_VERSION)
		tm_cfg_fail(&x, "version", "must be %d", TM_CONFIG_VERSION);
	for (int i = 0; i < ns; i++) {
		const struct tm_cfg_section *s = secs[i];

		o = section_obj(&x, root, s->name);
		for (int j = 0; o && j < s->nr_rows; j++)
			read_row(&x, s->name, &s->rows[j], o, c);
		if (s->check && !x.failed)
			s->check(&x, o, c);
	}
	if (!c->kubernetes.pods[0])
		snprintf(c->kubernetes.pods, sizeof(c->kubernetes.pods), "%s",
			 strcmp(c->kubernetes.api, "none") ? "api" : "none");
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

static const char *const type_name[] = {"bool", "integer", "number", "string", "see meaning"};

void tm_config_reference(FILE *f)
{
	const struct tm_cfg_section *secs[TM_CFG_MAX_SECTIONS];
	int ns = tm_cfg_sections(secs, TM_CFG_MAX_SECTIONS);

	fprintf(f,
		"# tidemarkd configuration\n\n"
		"Generated by `tidemarkd --config-reference` from the daemon's field table\n"
		"(`userspace/daemon/config.c` and each strategy's own rows); "
		"`tests/host/config-doc.sh` checks\nthat this copy is current. One JSON file, "
		"`{\"version\": 1, ...}`; a field left out keeps its\ndefault, an unknown one is "
		"an error. `tidemarkd --config-sample` prints a complete file.\n");
	for (int i = 0; i < ns; i++) {
		const struct tm_cfg_section *s = secs[i];

		fprintf(f,
			"\n## `%s`\n\n%c%s.\n\n| field | type | default | range | unit | meaning "
			"|\n"
			"|---|---|---|---|---|---|\n",
			s->name, toupper((unsigned char)s->help[0]), s->help + 1);
		for (int j = 0; j < s->nr_rows; j++) {
			const struct tm_cfg_row *r = &s->rows[j];
			char range[160] = "", ch[128];

			if (r->type == TM_CFG_U32)
				snprintf(range, sizeof(range), "%.0f-%.0f", r->min, r->max);
			else if (r->type == TM_CFG_NUM)
				snprintf(range, sizeof(range), "%g-%g", r->min, r->max);
			else if (r->choices) {
				choices_text(r->choices, ch, sizeof(ch));
				snprintf(range, sizeof(range), "%s", ch);
			}
			fprintf(f, "| `%s` | %s | %s%s%s | %s | %s | %s |\n", r->key,
				type_name[r->type], r->dflt ? "`" : "",
				r->dflt	       ? r->dflt
				: r->dflt_note ? r->dflt_note
					       : "",
				r->dflt ? "`" : "", range, r->unit ? r->unit : "", r->help);
		}
	}
}

/* Set "a.b" of @root to @v (taken over), making the objects on the way. */
static void json_put(json_t *root, const char *path, json_t *v)
{
	char buf[128], *dot;
	json_t *o = root;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf; (dot = strchr(p, '.')); p = dot + 1) {
		json_t *n;

		*dot = 0;
		n = json_object_get(o, p);
		if (!n) {
			n = json_object();
			json_object_set_new(o, p, n);
		}
		o = n;
	}
	json_object_set_new(o, strrchr(path, '.') ? strrchr(path, '.') + 1 : path, v);
}

char *tm_config_sample(void)
{
	const struct tm_cfg_section *secs[TM_CFG_MAX_SECTIONS];
	int ns = tm_cfg_sections(secs, TM_CFG_MAX_SECTIONS);
	json_t *root = json_pack("{s:i}", "version", TM_CONFIG_VERSION);
	char *text;

	for (int i = 0; root && i < ns; i++)
		for (int j = 0; j < secs[i]->nr_rows; j++) {
			const struct tm_cfg_row *r = &secs[i]->rows[j];
			const char *t = r->example ? r->example : r->dflt;
			char path[128];
			json_t *v;

			if (!t)
				continue; /* found at run time: left out */
			v = json_loads(t, JSON_DECODE_ANY, NULL);
			if (!v)
				continue;
			snprintf(path, sizeof(path), "%s.%s", secs[i]->name, r->key);
			json_put(root, path, v);
		}
	text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	return text;
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
	struct tm_cfg_ctx x = {.err = err, .errlen = errlen};
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
		return tm_cfg_fail(&x, "scheduler.be_floor_mcpu", "%u with %u online CPUs: %s",
				   c->be_floor_mcpu, n->nr_cpus, why),
		       -1;
	if (c->interference.enabled) {
		t.suppress_pct = c->interference.suppress_min_pct;
		if ((why = tm_tunables_check(&t, n->nr_cpus)))
			return tm_cfg_fail(
				       &x, "scheduler.be_floor_mcpu",
				       "%u with %u online CPUs: %s when interference lowers it to "
				       "suppress_min_pct (%u)",
				       c->be_floor_mcpu, n->nr_cpus, why,
				       c->interference.suppress_min_pct),
			       -1;
	}
	for (int i = 0; i < c->nr_be; i++) {
		if (!(why = be_pattern_unsafe(c->be[i].path, n->self_cgroup)))
			continue;
		snprintf(f, sizeof(f), "cgroups.be[%d]", i);
		return tm_cfg_fail(&x, f, "'%s' %s: never a BE cgroup", c->be[i].path, why), -1;
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
