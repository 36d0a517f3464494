// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkctl: change a running tidemark scheduler through its pinned maps.
 *
 *   tidemarkctl class PATH online|be|system|none
 *   tidemarkctl class PATH             (the class PATH gets, and from where)
 *   tidemarkctl set NAME=VALUE...      (any runtime tunable: tidemarkctl tunables)
 *   tidemarkctl show
 *   tidemarkctl tunables [--markdown]  (the table: unit, default, range, effect)
 *   tidemarkctl cap PATH MCPU|off      (CPU cap of a cgroup and those below it)
 *   tidemarkctl bw [--json]            (CPU limits the scheduler enforces, counters)
 *   tidemarkctl topology [--input XML_OR_SYNTHETIC] [--json]
 *   tidemarkctl stats [--interval S] [--once] [--json]   (stats.c)
 *   tidemarkctl preflight [--json] [--root DIR]            (preflight.c in lib)
 *   tidemarkctl trace --seconds N [--format text|perfetto] [--output FILE]
 *                     [--kinds K,...]                      (trace.c)
 *
 * Every change is validated in full before anything is written.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <jansson.h>

#include "ctl.h"
#include "httpc.h"
#include "preflight.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "topo.h"
#include "runtime.h"

static int usage(FILE *f)
{
	fprintf(f,
		"usage: tidemarkctl class PATH online|be|system|none\n"
		"       tidemarkctl class PATH          (effective class and the cgroup it "
		"comes from)\n"
		"       tidemarkctl set NAME=VALUE...  (the runtime tunables: tidemarkctl "
		"tunables)\n"
		"       tidemarkctl show\n"
		"       tidemarkctl tunables [--markdown]  (every tunable: unit, default, range, "
		"effect)\n"
		"       tidemarkctl cap PATH MCPU|off  (cap PATH and below to MCPU milli-CPUs, "
		"as cpu.max would)\n"
		"       tidemarkctl bw [--json]        (cgroup CPU limits enforced: cpu.max, caps, "
		"counters)\n"
		"       tidemarkctl topology [--input XML_OR_SYNTHETIC] [--json]\n"
		"       tidemarkctl stats [--interval S] [--once] [--json]  (the running "
		"scheduler, live)\n"
		"       tidemarkctl trace --seconds N [--format text|perfetto] [--output FILE] "
		"[--kinds K,...]\n"
		"                                      (what the scheduler decided, event by "
		"event)\n"
		"       tidemarkctl progs [--json] [--seconds S | [--] CMD [ARGS...]]  (what each "
		"sched_ext callback costs, over S seconds or while CMD runs)\n"
		"       tidemarkctl status [--addr IP:PORT] [--json]  (tidemarkd's report; "
		"default 127.0.0.1:9477)\n"
		"       tidemarkctl preflight [--json] [--root DIR]  (what this node lacks for "
		"tidemark; exit 1 if a required piece is missing)\n"
		"       tidemarkctl --version\n");
	return f == stdout ? 0 : 2;
}

/* A pinned object of the running scheduler, its ABI checked first. */
static int open_pinned(enum tm_pin which)
{
	char err[512];
	int fd = tm_pin_open(NULL, which, "tidemarkctl", err, sizeof(err));

	if (fd < 0)
		fprintf(stderr, "tidemarkctl: %s\n", err);
	return fd;
}

/*
 * The class the scheduler gives tasks of PATH: that of the nearest
 * classified ancestor (PATH included), SYSTEM when none is.
 */
static int cmd_class_query(const char *path)
{
	char rel[PATH_MAX], from[PATH_MAX], err[512];
	const char *why;
	__u64 id;
	int cfd, cls;

	if (tm_cgroup_id(path, &id, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: %s\n", err);
		return 1;
	}
	cfd = open_pinned(TM_PIN_CLASSES);
	if (cfd < 0)
		return 1;
	if (tm_cg_rel_norm(path, rel, sizeof(rel), &why)) {
		fprintf(stderr, "tidemarkctl: %s: %s\n", path, why);
		return 2;
	}
	cls = tm_class_of(cfd, TM_CGROUP_ROOT, rel, from, sizeof(from));
	if (from[0])
		printf("%s %s (from %s)\n", rel, tm_class_name(cls), from);
	else
		printf("%s system (no classified ancestor)\n", rel);
	return 0;
}

static int cmd_class(int argc, char **argv)
{
	char err[512];
	int cfd, tfd, cls = -1, ret;
	__u64 id;

	if (argc == 1)
		return cmd_class_query(argv[0]);
	if (argc != 2)
		return usage(stderr);
	if (strcmp(argv[1], "none")) {
		cls = tm_class_parse(argv[1]);
		if (cls < 0) {
			fprintf(stderr,
				"tidemarkctl: unknown class '%s' (online, be, system, none)\n",
				argv[1]);
			return 2;
		}
	}
	if (tm_cgroup_id(argv[0], &id, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: %s\n", err);
		return 1;
	}
	cfd = open_pinned(TM_PIN_CLASSES);
	if (cfd < 0)
		return 1;
	tfd = open_pinned(TM_PIN_TUNABLES_UPDATE);
	if (tfd < 0)
		return 1;
	if (cls < 0) {
		ret = bpf_map_delete_elem(cfd, &id);
		if (ret && errno == ENOENT)
			ret = 0;
	} else {
		__u32 v = cls;

		ret = bpf_map_update_elem(cfd, &id, &v, BPF_ANY);
	}
	if (ret) {
		fprintf(stderr, "tidemarkctl: map update failed: %s\n", strerror(errno));
		return 1;
	}
	/* cached per-task lookups are redone at the next class_gen */
	if (tm_tunables_update(tfd, 0, NULL, true, NULL, NULL, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: %s\n", err);
		return 1;
	}
	/* kept for the next scheduler too (a restart would lose it) */
	if (tm_runtime_set_class(argv[0], cls, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: applied, but not recorded for a restart: %s\n", err);
		return 1;
	}
	printf("%s -> %s\n", argv[0], cls < 0 ? "none (inherits)" : tm_class_name(cls));
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	struct tm_tunables t = {}, before;
	char err[512], line[512];
	__u32 set = 0;
	int tfd;

	if (argc < 1)
		return usage(stderr);
	for (int i = 0; i < argc; i++) {
		if (tm_tunable_set(&t, &set, argv[i], err, sizeof(err))) {
			fprintf(stderr, "tidemarkctl: %s\n", err);
			return 2;
		}
	}
	tfd = open_pinned(TM_PIN_TUNABLES_UPDATE);
	if (tfd < 0)
		return 1;
	/* only the named fields change, checked against the others as they are now */
	if (tm_tunables_update(tfd, set, &t, false, &t, &before, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: %s; nothing changed\n", err);
		return errno == EINVAL ? 2 : 1;
	}
	/* what changed, and from what: the others as they are */
	for (size_t i = 0; i < TM_NR_TUNABLES; i++) {
		const struct tm_tunable_info *ti = &tm_tunable_infos[i];
		__u32 a = tm_tunable_get(&before, i), b = tm_tunable_get(&t, i);

		if (!(set & ti->bit))
			continue;
		if (a == b)
			printf("%s %u (unchanged)\n", ti->name, b);
		else
			printf("%s %u -> %u (%s)\n", ti->name, a, b,
			       !strcmp(ti->who, "loader")
				       ? "scx_tidemark applies it within --rescan-ms"
				       : "from the next window");
	}
	tm_tunables_format(&t, line, sizeof(line));
	printf("%s\n", line);
	return 0;
}

/* The table of tunables, for people (and, with --markdown, the README). */
static int cmd_tunables(int argc, char **argv)
{
	bool md = argc == 1 && !strcmp(argv[0], "--markdown");

	if (argc > 1 || (argc == 1 && !md))
		return usage(stderr);
	if (md)
		printf("| tunable | unit | default | range | changed | effect |\n"
		       "|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < tm_nr_tunable_infos; i++) {
		const struct tm_tunable_info *ti = &tm_tunable_infos[i];
		char when[256];

		if (ti->why)
			snprintf(when, sizeof(when), "at load (%s)", ti->why);
		else
			snprintf(when, sizeof(when), "at runtime (%s)",
				 !strcmp(ti->who, "loader") ? "scx_tidemark, within --rescan-ms"
							    : "next window");
		if (md)
			printf("| `%s` | %s | %llu | %llu-%llu | %s | %s |\n", ti->name, ti->unit,
			       (unsigned long long)ti->dfl, (unsigned long long)ti->min,
			       (unsigned long long)ti->max, when, ti->effect);
		else
			printf("%-16s %-5s default %-6llu range %llu-%llu, %s\n    %s\n", ti->name,
			       ti->unit, (unsigned long long)ti->dfl, (unsigned long long)ti->min,
			       (unsigned long long)ti->max, when, ti->effect);
	}
	return 0;
}

static int cmd_cap(int argc, char **argv)
{
	char dir[PATH_MAX], err[512], *end;
	unsigned long v = 0;
	__u64 id;
	int fd, n;

	if (argc != 2)
		return usage(stderr);
	if (strcmp(argv[1], "off")) {
		errno = 0;
		v = strtoul(argv[1], &end, 10);
		if (errno || end == argv[1] || *end || argv[1][0] == '-' || v < 1 ||
		    v > TM_MCPU_MAX) {
			fprintf(stderr, "tidemarkctl: cap '%s' must be 1-%d milli-CPUs or off\n",
				argv[1], TM_MCPU_MAX);
			return 2;
		}
	}
	if (tm_cgroup_id(argv[0], &id, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: %s\n", err);
		return 1;
	}
	if (argv[0][0] == '/' && strncmp(argv[0], TM_CGROUP_ROOT "/", sizeof(TM_CGROUP_ROOT)))
		snprintf(dir, sizeof(dir), TM_CGROUP_ROOT "%s", argv[0]);
	else if (argv[0][0] != '/')
		snprintf(dir, sizeof(dir), TM_CGROUP_ROOT "/%s", argv[0]);
	else
		snprintf(dir, sizeof(dir), "%s", argv[0]);
	fd = open_pinned(TM_PIN_BW_UPDATE);
	if (fd < 0)
		return 1;
	n = tm_be_cap_set(fd, dir, v, TM_CAP_OPERATOR);
	if (n < 0) {
		fprintf(stderr, "tidemarkctl: cannot walk %s\n", dir);
		return 1;
	}
	if (tm_runtime_set_cap(argv[0], v, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: applied, but not recorded for a restart: %s\n", err);
		return 1;
	}
	if (v)
		printf("%s: capped at %lu mCPU (%d cgroup%s)\n", argv[0], v, n, n == 1 ? "" : "s");
	else
		printf("%s: cap removed (%d cgroup%s)\n", argv[0], n, n == 1 ? "" : "s");
	return 0;
}

/*
 * The CPU limits the scheduler enforces (cpu.max and caps) with cpu.stat-like
 * counters, one cgroup per line, or one JSON object.
 */
static int cmd_bw(int argc, char **argv)
{
	struct tm_cg_path *paths = NULL;
	__u64 key, at, *prev = NULL;
	bool json = argc == 1 && !strcmp(argv[0], "--json");
	json_t *o = NULL, *arr = NULL;
	size_t np = 0;
	__u64 now_ns;
	struct timespec ts;
	int fd;

	if (argc && !json)
		return usage(stderr);
	/* the scheduler's clock (bpf_ktime_get_ns) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	fd = open_pinned(TM_PIN_CG_BW);
	if (fd < 0)
		return 1;
	if (tm_cgroup_walk(TM_CGROUP_ROOT, &paths, &np))
		np = 0;
	if (json) {
		o = json_object();
		arr = json_array();
	} else {
		printf("%-48s %9s %9s %9s %10s %10s %12s %12s\n", "cgroup", "quota_us", "period_us",
		       "cap_mcpu", "nr_periods", "throttled", "thr_usec", "usage_usec");
	}
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		struct tm_cg_bw b;
		const char *path;

		at = key;
		prev = &at;
		if (bpf_map_lookup_elem(fd, &key, &b))
			continue;
		path = tm_cgroup_path_of(paths, np, key);
		if (!path)
			path = "?";
		if (json) {
			json_array_append_new(
				arr,
				json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:"
					  "I,s:b,s:I}",
					  "path", path, "id", (json_int_t)key, "quota_us",
					  (json_int_t)(b.quota_ns / 1000), "period_us",
					  (json_int_t)(b.period_ns / 1000), "burst_us",
					  (json_int_t)(b.burst_ns / 1000), "cap_mcpu",
					  (json_int_t)b.cap_mcpu, "limit_us",
					  (json_int_t)(b.eff_ns / 1000), "runtime_us",
					  (json_int_t)(b.runtime_ns / 1000), "nr_periods",
					  (json_int_t)b.nr_periods, "nr_throttled",
					  (json_int_t)b.nr_throttled, "throttled_usec",
					  (json_int_t)(b.throttled_ns / 1000), "nr_bursts",
					  (json_int_t)b.nr_bursts, "burst_usec",
					  (json_int_t)(b.burst_ns_used / 1000), "usage_usec",
					  (json_int_t)(b.usage_ns / 1000), "refill_armed",
					  b.armed != 0, "next_refill_us",
					  (json_int_t)(b.armed ? (__s64)(b.next_at - now_ns) / 1000
							       : 0)));
		} else {
			char q[24];

			if (b.quota_ns)
				snprintf(q, sizeof(q), "%llu",
					 (unsigned long long)b.quota_ns / 1000);
			else
				snprintf(q, sizeof(q), "max");
			printf("%-48s %9s %9llu %9u %10llu %10llu %12llu %12llu\n", path, q,
			       (unsigned long long)b.period_ns / 1000, b.cap_mcpu,
			       (unsigned long long)b.nr_periods, (unsigned long long)b.nr_throttled,
			       (unsigned long long)b.throttled_ns / 1000,
			       (unsigned long long)b.usage_ns / 1000);
		}
	}
	close(fd);
	tm_cgroup_paths_free(paths, np);
	if (json) {
		json_object_set_new(o, "cgroups", arr);
		json_dumpf(o, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(o);
	}
	return 0;
}

static int cmd_show(void)
{
	struct tm_tunables t;
	char line[512];
	__u64 key, next, *prev = NULL;
	__u32 zero = 0, cls;
	int tfd = open_pinned(TM_PIN_TUNABLES), cfd = open_pinned(TM_PIN_CLASSES);

	if (tfd < 0 || cfd < 0)
		return 1;
	if (bpf_map_lookup_elem(tfd, &zero, &t))
		return 1;
	tm_tunables_format(&t, line, sizeof(line));
	printf("%s class_gen=%u\n", line, t.class_gen);
	while (!bpf_map_get_next_key(cfd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(cfd, &key, &cls))
			printf("cgroup %llu %s\n", (unsigned long long)key, tm_class_name(cls));
	}
	return 0;
}

/* The L3 domain map: this machine (cross-checked with sysfs), an hwloc XML
 * export or an hwloc synthetic description. Needs no running scheduler. */
static int cmd_topology(int argc, char **argv)
{
	static struct tm_topology t;
	const char *input = NULL;
	char err[512], report[4096];
	bool json = false;
	int bad;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--input") && i + 1 < argc) {
			input = argv[++i];
		} else {
			fprintf(stderr, "tidemarkctl: topology: unexpected '%s'\n", argv[i]);
			return usage(stderr);
		}
	}
	if (tm_topo_load(input, &t, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: %s\n", err);
		return 1;
	}
	tm_topo_print(&t, json, stdout);
	if (!input) {
		bad = tm_topo_check_sysfs(&t, "/sys/devices/system/cpu", report, sizeof(report));
		if (bad > 0)
			fprintf(stderr, "tidemarkctl: hwloc and sysfs disagree on %d CPUs:\n%s",
				bad, report);
		else if (bad < 0 && t.kind == TM_DOMAIN_L3)
			fprintf(stderr,
				"tidemarkctl: sysfs has no L3 or thread sibling information to "
				"cross-check\n");
	}
	return 0;
}

static double jnum(json_t *root, const char *path)
{
	char buf[256], *save, *k;
	json_t *v = root;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_object_get(v, k);
	return v && json_is_number(v) ? json_number_value(v) : 0;
}

/* tidemarkd's JSON report, at a glance. */
static int cmd_status(int argc, char **argv)
{
	char addr[64] = "127.0.0.1", err[512], url[128], *resp, *colon;
	unsigned long port = 9477;
	struct in_addr ia;
	bool json = false;
	json_error_t je;
	long status;
	json_t *r;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--addr") && i + 1 < argc) {
			char *end;

			snprintf(addr, sizeof(addr), "%s", argv[++i]);
			colon = strrchr(addr, ':');
			if (!colon || (*colon = 0, port = strtoul(colon + 1, &end, 10), *end) ||
			    !colon[1] || port < 1 || port > 65535 ||
			    inet_pton(AF_INET, addr, &ia) != 1) {
				fprintf(stderr, "tidemarkctl: --addr '%s': expected IPv4:PORT\n",
					argv[i]);
				return 2;
			}
		} else {
			return usage(stderr);
		}
	}
	snprintf(url, sizeof(url), "http://%s:%lu/report", addr, port);
	if (tm_httpc_global_init(err, sizeof(err)) ||
	    tm_httpc_request(url, "GET", NULL, 3000, &resp, &status, err, sizeof(err))) {
		fprintf(stderr, "tidemarkctl: cannot reach tidemarkd: %s\n", err);
		return 1;
	}
	if (status != 200) {
		fprintf(stderr, "tidemarkctl: tidemarkd answered HTTP %ld\n", status);
		free(resp);
		return 1;
	}
	if (json) {
		fputs(resp, stdout);
		free(resp);
		return 0;
	}
	r = json_loads(resp, 0, &je);
	free(resp);
	if (!r) {
		fprintf(stderr, "tidemarkctl: bad report from tidemarkd: %s\n", je.text);
		return 1;
	}
	printf("scheduler     %s, suppress line %.0f%%\n",
	       json_is_true(json_object_get(json_object_get(r, "scheduler"), "up")) ? "up" : "DOWN",
	       jnum(r, "scheduler.suppress_pct"));
	printf("cpu           %.2f of %.0f CPUs used (online %.2f, be %.2f, system %.2f)\n",
	       jnum(r, "nodeMetric.cpu.used_mcpu") / 1000,
	       jnum(r, "nodeMetric.cpu.capacity_mcpu") / 1000,
	       jnum(r, "classUsage.online.cpu_mcpu") / 1000,
	       jnum(r, "classUsage.be.cpu_mcpu") / 1000, jnum(r, "systemUsage.cpu_mcpu") / 1000);
	printf("memory        %.0f of %.0f MiB used (online %.0f, be %.0f)\n",
	       jnum(r, "nodeMetric.memory.used_bytes") / 1048576,
	       jnum(r, "nodeMetric.memory.total_bytes") / 1048576,
	       jnum(r, "classUsage.online.memory_bytes") / 1048576,
	       jnum(r, "classUsage.be.memory_bytes") / 1048576);
	printf("cpu p99       5m %.2f  10m %.2f  30m %.2f CPUs\n",
	       jnum(r, "aggregated.cpu_mcpu.300s.p99") / 1000,
	       jnum(r, "aggregated.cpu_mcpu.600s.p99") / 1000,
	       jnum(r, "aggregated.cpu_mcpu.1800s.p99") / 1000);
	printf("be allocatable %.2f CPUs, %.0f MiB\n", jnum(r, "beAllocatable.cpu_mcpu") / 1000,
	       jnum(r, "beAllocatable.memory_bytes") / 1048576);
	printf("forbid new BE %s\n",
	       json_is_true(json_object_get(r, "forbidScheduling")) ? "YES" : "no");
	{
		json_t *nm = json_object_get(r, "nodeMetricStatus");
		const char *w = json_string_value(json_object_get(nm, "writer"));
		const char *at = json_string_value(json_object_get(nm, "otherWriteAt"));
		const char *why = json_string_value(json_object_get(nm, "why"));

		if (!w)
			printf("nodemetric    ? (not in the report)\n");
		else if (!strcmp(w, "tidemarkd"))
			printf("nodemetric    status written by tidemarkd every %.0f s\n",
			       jnum(r, "nodeMetricStatus.reportIntervalSeconds"));
		else if (!strcmp(w, "none"))
			printf("nodemetric    status not written (%s)\n", why ? why : "?");
		else
			printf("nodemetric    status left to %s, which wrote it at %s\n", w,
			       at ? at : "?");
	}
	{
		json_t *itf = json_object_get(r, "interference"), *cgs, *c;
		const char *step = json_string_value(json_object_get(itf, "step"));
		const char *culprit = json_string_value(json_object_get(itf, "culprit"));
		int interfered = 0;
		size_t i;

		cgs = json_object_get(itf, "cgroups");
		json_array_foreach(cgs, i, c) interfered +=
			json_is_true(json_object_get(c, "interfered"));
		printf("interference  %d of %zu ONLINE cgroups interfered, ladder step %s%s%s\n",
		       interfered, json_array_size(cgs), step ? step : "?",
		       culprit && *culprit ? ", last culprit " : "", culprit ? culprit : "");
	}
	json_decref(r);
	return 0;
}

/* What the node lacks for tidemark: exit 0 when nothing required is missing. */
static int cmd_preflight(int argc, char **argv)
{
	const char *root = "";
	struct tm_preflight pf;
	bool json = false;
	char *s;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--root") && i + 1 < argc) {
			root = argv[++i];
		} else {
			fprintf(stderr, "tidemarkctl: preflight: unknown argument '%s'\n", argv[i]);
			return usage(stderr);
		}
	}
	tm_preflight_run(&pf, root);
	if (!json) {
		tm_preflight_print(stdout, &pf);
		return pf.missing ? 1 : 0;
	}
	s = tm_preflight_json(&pf);
	if (!s) {
		fprintf(stderr, "tidemarkctl: preflight: out of memory\n");
		return 1;
	}
	printf("%s\n", s);
	free(s);
	return pf.missing ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version")) {
		tm_version_print("tidemarkctl");
		return 0;
	}
	if (!strcmp(argv[1], "class"))
		return cmd_class(argc - 2, argv + 2);
	if (!strcmp(argv[1], "set"))
		return cmd_set(argc - 2, argv + 2);
	if (!strcmp(argv[1], "cap"))
		return cmd_cap(argc - 2, argv + 2);
	if (!strcmp(argv[1], "tunables"))
		return cmd_tunables(argc - 2, argv + 2);
	if (!strcmp(argv[1], "show"))
		return cmd_show();
	if (!strcmp(argv[1], "bw"))
		return cmd_bw(argc - 2, argv + 2);
	if (!strcmp(argv[1], "topology"))
		return cmd_topology(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stats"))
		return tm_ctl_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace"))
		return tm_ctl_trace(argc - 1, argv + 1);
	if (!strcmp(argv[1], "progs"))
		return tm_ctl_progs(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return cmd_status(argc - 2, argv + 2);
	if (!strcmp(argv[1], "preflight"))
		return cmd_preflight(argc - 2, argv + 2);
	fprintf(stderr, "tidemarkctl: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
