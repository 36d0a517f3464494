// SPDX-License-Identifier: GPL-2.0
/*
 * scx_tidemark: loads the tidemark sched_ext scheduler, prints its counters,
 * and restarts it when the kernel asks for a restart (CPU hotplug).
 *
 * Options are parsed once into struct tm_opts and applied to every fresh
 * skeleton, so a restart never loses them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <scx/common.h>
#include <sys/stat.h>

#include "tidemark_policy.h"
#include "tidemark.skel.h"
#include "buf.h"
#include "rules.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "place.h"
#include "topo.h"

struct tm_opts {
	__u64 slice_us;
	__u64 window_us;
	__u32 timeout_ms; /* 0: kernel default (30 s) */
	__u32 stats_s;	  /* 0: no periodic counters */
	__u32 rescan_ms;  /* how often rules are matched against new cgroups */
	struct tm_tunables tun;
	struct tm_ruleset rules;
	struct tm_place_cfg place; /* placement in cache domains */
	__u32 home_wait_us;
	bool be_avoid_homes;
	int kubelet;
	bool json;
	bool verbose;
};

static volatile sig_atomic_t exit_req;

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTIONS]\n"
		"Load the tidemark sched_ext scheduler until SIGINT/SIGTERM.\n\n"
		"  -s, --slice-us US     time slice in microseconds (default %d, range %d-%d)\n"
		"  -t, --timeout-ms MS   sched_ext watchdog timeout (default 30000, range 1-%d)\n"
		"  -p, --suppress-pct P  BE may use P%% of the node minus ONLINE/SYSTEM use "
		"(default %d, 1-100)\n"
		"  -w, --max-be-wait-ms MS  a queued BE task runs at least every MS (default %d, "
		"%d-%d)\n"
		"  -f, --be-floor-mcpu M CPU kept for BE whatever ONLINE does, milli-CPUs (default "
		"%d)\n"
		"      --window-us US    BE budget window (default %d, range %d-%d)\n"
		"      --online PATH     cgroup PATH and its descendants are ONLINE (repeatable)\n"
		"      --be PATH         cgroup PATH and its descendants are best-effort "
		"(repeatable)\n"
		"      --system PATH     cgroup PATH is SYSTEM, e.g. inside a BE subtree "
		"(repeatable)\n"
		"                        PATH is under /sys/fs/cgroup and may be a glob (* ? "
		"[...]);\n"
		"                        globs also match cgroups created later; the last rule "
		"wins\n"
		"      --kubelet MODE    built-in kubelet rules: auto (default), systemd, "
		"cgroupfs, off\n"
		"                        (Guaranteed and Burstable pods ONLINE, BestEffort pods "
		"BE)\n"
		"      --rescan-ms MS    match rules against new cgroups every MS (default %d, "
		"%d-%d)\n"
		"Placement in cache domains (L3 / CCX); off on machines with one domain:\n"
		"      --placement on|off  give ONLINE cgroups a home domain (default on)\n"
		"      --home PATH=strict|soft[,MCPU]  home mode of ONLINE cgroups matching PATH\n"
		"                        (glob ok) and their CPU demand in milli-CPUs "
		"(repeatable)\n"
		"      --home-mode strict|soft  mode of the others (default strict)\n"
		"      --home-slack-pct P  hysteresis: keep a home while demand and fit move\n"
		"                        less than P%% (default %d, 0-100)\n"
		"      --home-wait-us US soft homes: wait for a home CPU this long before running\n"
		"                        elsewhere (default %d, %d-%d)\n"
		"      --peak-window-s S demand measured as the peak usage over S seconds\n"
		"                        (default %d, %d-%d) when no cpu.max/cpuset/--home gives "
		"one\n"
		"      --be-avoid-homes on|off  start BE away from domains hosting homes while\n"
		"                        other domains have idle CPUs (default on)\n"
		"      --stats SECONDS   print the counters every SECONDS (default: off)\n"
		"      --json            print counters as one JSON object per line\n"
		"  -v, --verbose         libbpf debug output\n"
		"  -h, --help            this text\n",
		prog, TM_SLICE_US_DFL, TM_SLICE_US_MIN, TM_SLICE_US_MAX, TM_TIMEOUT_MS_MAX,
		TM_SUPPRESS_PCT_DFL, TM_MAX_BE_WAIT_MS_DFL, TM_MAX_BE_WAIT_MS_MIN,
		TM_MAX_BE_WAIT_MS_MAX, TM_BE_FLOOR_MCPU_DFL, TM_WINDOW_US_DFL, TM_WINDOW_US_MIN,
		TM_WINDOW_US_MAX, TM_RESCAN_MS_DFL, TM_RESCAN_MS_MIN, TM_RESCAN_MS_MAX,
		TM_HOME_SLACK_PCT_DFL, TM_HOME_WAIT_US_DFL, TM_HOME_WAIT_US_MIN,
		TM_HOME_WAIT_US_MAX, TM_PEAK_WINDOW_S_DFL, TM_PEAK_WINDOW_S_MIN,
		TM_PEAK_WINDOW_S_MAX);
}

/* Strict unsigned parse: the whole string, in range, or an error naming it. */
static int parse_u64(const char *opt, const char *s, __u64 min, __u64 max, __u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || !*s || *s == '-')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		goto bad;
	if (v < min || v > max) {
		fprintf(stderr, "scx_tidemark: %s %s is out of range %" PRIu64 "-%" PRIu64 "\n",
			opt, s, (uint64_t)min, (uint64_t)max);
		return -1;
	}
	*out = v;
	return 0;
bad:
	fprintf(stderr, "scx_tidemark: %s needs a whole number, got '%s'\n", opt, s ? s : "");
	return -1;
}

static int nr_cpus_possible(void)
{
	return libbpf_num_possible_cpus();
}

/* The tunables against the CPUs online now (the watermark's capacity). */
static int check_tunables(const struct tm_tunables *t)
{
	const char *why = tm_tunables_check(t, tm_nr_cpus());

	if (why) {
		fprintf(stderr, "scx_tidemark: %s (%d online CPUs)\n", why, tm_nr_cpus());
		return -1;
	}
	return 0;
}

/* Everything that can be checked before loading, so nothing is half-applied. */
static int check_opts(struct tm_opts *o)
{
	struct tm_class_entry *v;
	char err[512];
	size_t n;

	if (nr_cpus_possible() > TM_MAX_CPUS) {
		fprintf(stderr, "scx_tidemark: %d possible CPUs, this build supports %d\n",
			nr_cpus_possible(), TM_MAX_CPUS);
		return -1;
	}
	if (check_tunables(&o->tun))
		return -1;
	if (tm_rules_add_kubelet(&o->rules, o->kubelet, err, sizeof(err))) {
		fprintf(stderr, "scx_tidemark: %s\n", err);
		return -1;
	}
	if (tm_rules_resolve(&o->rules, TM_CGROUP_ROOT, true, false, &v, &n, err, sizeof(err))) {
		fprintf(stderr, "scx_tidemark: class rules: %s\n", err);
		return -1;
	}
	free(v);
	return 0;
}

/* Returns 0 to run, 1 for --help, -1 on a bad command line. */
static int parse_opts(int argc, char **argv, struct tm_opts *o)
{
	enum {
		OPT_STATS = 256,
		OPT_JSON,
		OPT_WINDOW,
		OPT_ONLINE,
		OPT_BE,
		OPT_SYSTEM,
		OPT_KUBELET,
		OPT_RESCAN,
		OPT_PLACEMENT,
		OPT_HOME,
		OPT_HOME_MODE,
		OPT_HOME_SLACK,
		OPT_HOME_WAIT,
		OPT_PEAK_WINDOW,
		OPT_BE_AVOID
	};
	static const struct option longopts[] = {
		{"slice-us", required_argument, NULL, 's'},
		{"timeout-ms", required_argument, NULL, 't'},
		{"suppress-pct", required_argument, NULL, 'p'},
		{"max-be-wait-ms", required_argument, NULL, 'w'},
		{"be-floor-mcpu", required_argument, NULL, 'f'},
		{"window-us", required_argument, NULL, OPT_WINDOW},
		{"online", required_argument, NULL, OPT_ONLINE},
		{"be", required_argument, NULL, OPT_BE},
		{"system", required_argument, NULL, OPT_SYSTEM},
		{"kubelet", required_argument, NULL, OPT_KUBELET},
		{"rescan-ms", required_argument, NULL, OPT_RESCAN},
		{"placement", required_argument, NULL, OPT_PLACEMENT},
		{"home", required_argument, NULL, OPT_HOME},
		{"home-mode", required_argument, NULL, OPT_HOME_MODE},
		{"home-slack-pct", required_argument, NULL, OPT_HOME_SLACK},
		{"home-wait-us", required_argument, NULL, OPT_HOME_WAIT},
		{"peak-window-s", required_argument, NULL, OPT_PEAK_WINDOW},
		{"be-avoid-homes", required_argument, NULL, OPT_BE_AVOID},
		{"stats", required_argument, NULL, OPT_STATS},
		{"json", no_argument, NULL, OPT_JSON},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{}};
	char err[512];
	__u64 v;
	int c;

	*o = (struct tm_opts){
		.slice_us = TM_SLICE_US_DFL,
		.window_us = TM_WINDOW_US_DFL,
		.rescan_ms = TM_RESCAN_MS_DFL,
		.kubelet = TM_KUBELET_AUTO,
		.place =
			{
				.enabled = true,
				.slack_pct = TM_HOME_SLACK_PCT_DFL,
				.peak_window_s = TM_PEAK_WINDOW_S_DFL,
			},
		.home_wait_us = TM_HOME_WAIT_US_DFL,
		.be_avoid_homes = true,
		.tun =
			{
				.suppress_pct = TM_SUPPRESS_PCT_DFL,
				.max_be_wait_ms = TM_MAX_BE_WAIT_MS_DFL,
				.be_floor_mcpu = TM_BE_FLOOR_MCPU_DFL,
			},
	};
	while ((c = getopt_long(argc, argv, "s:t:p:w:f:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64("--suppress-pct", optarg, 1, 100, &v))
				return -1;
			o->tun.suppress_pct = v;
			break;
		case 'w':
			if (parse_u64("--max-be-wait-ms", optarg, TM_MAX_BE_WAIT_MS_MIN,
				      TM_MAX_BE_WAIT_MS_MAX, &v))
				return -1;
			o->tun.max_be_wait_ms = v;
			break;
		case 'f':
			if (parse_u64("--be-floor-mcpu", optarg, 0, TM_MAX_CPUS * 1000, &v))
				return -1;
			o->tun.be_floor_mcpu = v;
			break;
		case OPT_WINDOW:
			if (parse_u64("--window-us", optarg, TM_WINDOW_US_MIN, TM_WINDOW_US_MAX,
				      &v))
				return -1;
			o->window_us = v;
			break;
		case OPT_ONLINE:
		case OPT_BE:
		case OPT_SYSTEM:
			if (tm_rules_add(&o->rules, optarg,
					 c == OPT_ONLINE ? TM_CLASS_ONLINE
					 : c == OPT_BE	 ? TM_CLASS_BE
							 : TM_CLASS_SYSTEM,
					 err, sizeof(err))) {
				fprintf(stderr, "scx_tidemark: %s\n", err);
				return -1;
			}
			break;
		case OPT_KUBELET:
			o->kubelet = tm_kubelet_parse(optarg);
			if (o->kubelet < 0) {
				fprintf(stderr,
					"scx_tidemark: --kubelet '%s': use auto, systemd, cgroupfs "
					"or off\n",
					optarg);
				return -1;
			}
			break;
		case OPT_PLACEMENT:
		case OPT_BE_AVOID:
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				fprintf(stderr, "scx_tidemark: --%s '%s': use on or off\n",
					c == OPT_PLACEMENT ? "placement" : "be-avoid-homes",
					optarg);
				return -1;
			}
			if (c == OPT_PLACEMENT)
				o->place.enabled = !strcmp(optarg, "on");
			else
				o->be_avoid_homes = !strcmp(optarg, "on");
			break;
		case OPT_HOME:
			if (tm_home_rule_add(&o->place, optarg, err, sizeof(err))) {
				fprintf(stderr, "scx_tidemark: %s\n", err);
				return -1;
			}
			break;
		case OPT_HOME_MODE:
			if (strcmp(optarg, "strict") && strcmp(optarg, "soft")) {
				fprintf(stderr,
					"scx_tidemark: --home-mode '%s': use strict or soft\n",
					optarg);
				return -1;
			}
			o->place.soft_default = !strcmp(optarg, "soft");
			break;
		case OPT_HOME_SLACK:
			if (parse_u64("--home-slack-pct", optarg, 0, 100, &v))
				return -1;
			o->place.slack_pct = v;
			break;
		case OPT_HOME_WAIT:
			if (parse_u64("--home-wait-us", optarg, TM_HOME_WAIT_US_MIN,
				      TM_HOME_WAIT_US_MAX, &v))
				return -1;
			o->home_wait_us = v;
			break;
		case OPT_PEAK_WINDOW:
			if (parse_u64("--peak-window-s", optarg, TM_PEAK_WINDOW_S_MIN,
				      TM_PEAK_WINDOW_S_MAX, &v))
				return -1;
			o->place.peak_window_s = v;
			break;
		case OPT_RESCAN:
			if (parse_u64("--rescan-ms", optarg, TM_RESCAN_MS_MIN, TM_RESCAN_MS_MAX,
				      &v))
				return -1;
			o->rescan_ms = v;
			break;
		case 's':
			if (parse_u64("--slice-us", optarg, TM_SLICE_US_MIN, TM_SLICE_US_MAX, &v))
				return -1;
			o->slice_us = v;
			break;
		case 't':
			if (parse_u64("--timeout-ms", optarg, 1, TM_TIMEOUT_MS_MAX, &v))
				return -1;
			o->timeout_ms = v;
			break;
		case OPT_STATS:
			if (parse_u64("--stats", optarg, 1, 3600, &v))
				return -1;
			o->stats_s = v;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scx_tidemark: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return check_opts(o);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void on_signal(int sig)
{
	exit_req = 1;
}

static int read_stats(struct tidemark *skel, struct tm_cpu_stats *sum)
{
	return tm_stats_sum(bpf_map__fd(skel->maps.stats), sum);
}

/* A JSON string: cgroup names may hold any byte but '/' and NUL. */
static void print_json_str(const char *s)
{
	struct tm_buf b = {};
	char *t;

	tm_bjson_str(&b, s);
	t = tm_buf_done(&b);
	if (t)
		fputs(t, stdout);
	free(t);
}

/* Cgroup paths, refreshed at every rescan, to name cgroups in the stats. */
static struct tm_cg_path *cg_paths;
static size_t nr_cg_paths;

/* Drop the wait histograms of cgroups that no longer exist. */
static void refresh_cg_paths(struct tidemark *skel)
{
	int fd = bpf_map__fd(skel->maps.cg_waits);
	struct tm_cg_path *v;
	__u64 key, next, *prev = NULL;
	size_t n;

	if (tm_cgroup_walk(TM_CGROUP_ROOT, &v, &n))
		return;
	tm_cgroup_paths_free(cg_paths, nr_cg_paths);
	cg_paths = v;
	nr_cg_paths = n;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		if (!tm_cgroup_path_of(cg_paths, nr_cg_paths, key) &&
		    !bpf_map_delete_elem(fd, &key))
			continue; /* deleted: iterate from the previous key again */
		prev = &key;
	}
}

static void print_cg_waits(struct tidemark *skel, const struct tm_opts *o)
{
	int fd = bpf_map__fd(skel->maps.cg_waits);
	__u64 key, next, *prev = NULL, total;
	struct tm_cg_wait w;
	bool first = true;

	if (o->json)
		printf(",\"online_cgroups\":[");
	else
		printf("ONLINE run-queue wait per cgroup (us, log2 bucket upper bounds):\n");
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		const char *path;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &w))
			continue;
		total = 0;
		for (int k = 0; k < TM_HIST_BUCKETS; k++)
			total += w.hist[k];
		if (!total)
			continue;
		path = tm_cgroup_path_of(cg_paths, nr_cg_paths, key);
		if (o->json) {
			printf("%s{\"id\":%llu,\"cgroup\":", first ? "" : ",",
			       (unsigned long long)key);
			print_json_str(path ? path : "");
			printf(",\"n\":%llu,\"p50_us\":%llu,\"p99_us\":%llu,\"wait_hist_log2_us\":"
			       "[",
			       (unsigned long long)total,
			       (unsigned long long)tm_hist_pct_us(w.hist, TM_HIST_BUCKETS, 50),
			       (unsigned long long)tm_hist_pct_us(w.hist, TM_HIST_BUCKETS, 99));
			for (int k = 0; k < TM_HIST_BUCKETS; k++)
				printf("%s%llu", k ? "," : "", (unsigned long long)w.hist[k]);
			printf("]}");
		} else {
			printf("  %-40s n %-8llu p50 <= %-8llu p99 <= %-8llu max <= %llu\n",
			       path ? path : "(unknown)", (unsigned long long)total,
			       (unsigned long long)tm_hist_pct_us(w.hist, TM_HIST_BUCKETS, 50),
			       (unsigned long long)tm_hist_pct_us(w.hist, TM_HIST_BUCKETS, 99),
			       (unsigned long long)tm_hist_pct_us(w.hist, TM_HIST_BUCKETS, 100));
		}
		first = false;
	}
	if (o->json)
		printf("]");
}

struct tm_place_run;
static void print_domains(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr);

static void print_stats(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr)
{
	struct tm_cpu_stats sum;
	int i, k;

	if (read_stats(skel, &sum)) {
		fprintf(stderr, "scx_tidemark: cannot read counters: %s\n", strerror(errno));
		return;
	}
	if (o->json) {
		struct timespec ts;

		/* CLOCK_MONOTONIC, as bpf_ktime_get_ns(): tools derive rates */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("{\"scheduler\":\"tidemark\",\"t_ns\":%" PRIu64,
		       (uint64_t)(ts.tv_sec * 1000000000LL + ts.tv_nsec));
		for (i = 0; i < TM_NR_STATS; i++)
			printf(",\"%s\":%" PRIu64, tm_stat_names[i], (uint64_t)sum.cnt[i]);
		printf(",\"wait_hist_log2_us\":{");
		for (i = 0; i < TM_NR_CLASSES; i++) {
			printf("%s\"%s\":[", i ? "," : "", tm_class_name(i));
			for (k = 0; k < TM_HIST_BUCKETS; k++)
				printf("%s%" PRIu64, k ? "," : "", (uint64_t)sum.wait_hist[i][k]);
			printf("]");
		}
		printf("}");
		print_cg_waits(skel, o);
		print_domains(skel, o, pr);
		printf("}\n");
	} else {
		printf("%-18s %14s  %s\n", "counter", "value", "meaning");
		for (i = 0; i < TM_NR_STATS; i++)
			printf("%-18s %14" PRIu64 "  %s\n", tm_stat_names[i], (uint64_t)sum.cnt[i],
			       tm_stat_help[i]);
		printf("run-queue wait (us, log2 bucket upper bounds):\n");
		for (i = 0; i < TM_NR_CLASSES; i++)
			printf("  %-7s p50 <= %-8" PRIu64 " p99 <= %-8" PRIu64 " max <= %" PRIu64
			       "\n",
			       tm_class_name(i),
			       (uint64_t)tm_hist_pct_us(sum.wait_hist[i], TM_HIST_BUCKETS, 50),
			       (uint64_t)tm_hist_pct_us(sum.wait_hist[i], TM_HIST_BUCKETS, 99),
			       (uint64_t)tm_hist_pct_us(sum.wait_hist[i], TM_HIST_BUCKETS, 100));
		print_cg_waits(skel, o);
		print_domains(skel, o, pr);
	}
	fflush(stdout);
}

/* Flag values come from the running kernel's BTF: they moved after 6.12. */
/* Class entries the loader wrote into the classes map (sorted by id). */
/* A class change bumps class_gen so cached per-task lookups are redone;
 * through the scheduler's tunables_update, like every other writer. */
static void bump_class_gen(struct tidemark *skel)
{
	char err[256];

	if (tm_tunables_update(bpf_program__fd(skel->progs.tunables_update), 0, NULL, true, NULL,
			       err, sizeof(err)))
		fprintf(stderr, "scx_tidemark: cannot bump class_gen: %s\n", err);
}

struct tm_owned {
	struct tm_class_entry *v;
	size_t n;
};

/*
 * Match the rules against the cgroup tree and bring the classes map in line:
 * new and changed cgroups are written, vanished ones removed, then class_gen
 * is bumped so cached lookups are redone. The first time, a missing cgroup
 * named by a plain rule is an error and nothing is written; later (rescans,
 * restarts) it is a warning, so the rest of the node stays protected.
 */
static int sync_rules(struct tidemark *skel, const struct tm_opts *o, struct tm_owned *own,
		      bool strict)
{
	int fd = bpf_map__fd(skel->maps.classes);
	struct tm_class_entry *nv;
	size_t nn, i = 0, j = 0;
	bool changed = false;
	char err[512];

	if (tm_rules_resolve(&o->rules, TM_CGROUP_ROOT, true, !strict, &nv, &nn, err,
			     sizeof(err))) {
		fprintf(stderr, "scx_tidemark: class rules: %s\n", err);
		return strict ? -1 : 0;
	}
	while (i < own->n || j < nn) {
		if (j >= nn || (i < own->n && own->v[i].id < nv[j].id)) {
			/* the cgroup is gone (or no rule matches it any more) */
			if (bpf_map_delete_elem(fd, &own->v[i].id) && errno != ENOENT)
				goto map_err;
			changed = true;
			i++;
		} else if (i >= own->n || nv[j].id < own->v[i].id || nv[j].cls != own->v[i].cls) {
			if (bpf_map_update_elem(fd, &nv[j].id, &nv[j].cls, BPF_ANY))
				goto map_err;
			changed = true;
			if (i < own->n && own->v[i].id == nv[j].id)
				i++;
			j++;
		} else {
			i++;
			j++;
		}
	}
	free(own->v);
	own->v = nv;
	own->n = nn;
	if (changed)
		bump_class_gen(skel);
	return 0;
map_err:
	fprintf(stderr, "scx_tidemark: class map update: %s\n", strerror(errno));
	free(nv);
	return -1;
}

/* Placement state of one scheduler lifetime. */
struct tm_place_run {
	struct tm_placer pl; /* pl.nd == 0: placement off */
	struct tm_topology *topo;
	/* per-domain run time at the last report, for load since then */
	__u64 last_run[TM_MAX_DOMS][TM_NR_CLASSES];
	__u64 last_at_ns;
};

/*
 * Cache domains for the scheduler: CPU -> domain and the domain capacities
 * placement works with. One domain (or no topology): placement stays off.
 */
static void setup_domains(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr)
{
	struct tm_topology *t;
	char err[256];
	int nd;

	memset((void *)skel->rodata->cpu_dom, TM_NO_DOM, sizeof(skel->rodata->cpu_dom));
	skel->rodata->nr_doms = 0;
	skel->rodata->home_wait_ns = (__u64)o->home_wait_us * 1000;
	skel->rodata->be_avoid_homes = o->be_avoid_homes;
	pr->pl.cfg = o->place;
	pr->pl.nd = 0;
	if (!o->place.enabled)
		return;
	t = calloc(1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "scx_tidemark: placement off: out of memory\n");
		return;
	}
	if (tm_topo_load(NULL, t, err, sizeof(err))) {
		fprintf(stderr, "scx_tidemark: placement off: %s\n", err);
		free(t);
		return;
	}
	if (t->nr_domains < 2) {
		fprintf(stderr, "scx_tidemark: placement off: one cache domain\n");
		free(t);
		return;
	}
	nd = t->nr_domains;
	if (nd > TM_MAX_DOMS) {
		fprintf(stderr, "scx_tidemark: %d cache domains, placing in the first %d only\n",
			nd, TM_MAX_DOMS);
		nd = TM_MAX_DOMS;
	}
	for (int d = 0; d < nd; d++) {
		for (unsigned int cpu = 0; cpu < TM_MAX_CPUS && cpu < TM_TOPO_MAX_CPUS; cpu++)
			if (tm_cpuset_test(&t->d[d].cpus, cpu))
				skel->rodata->cpu_dom[cpu] = d;
		pr->pl.d[d].cap_mcpu = tm_cpuset_count(&t->d[d].online) * 1000;
		pr->pl.d[d].package = t->d[d].package;
	}
	skel->rodata->nr_doms = nd;
	pr->pl.nd = nd;
	pr->topo = t;
}

static const char *domain_kind(const struct tm_place_run *pr)
{
	return pr->topo ? tm_domain_kind_name(pr->topo->kind) : "domain";
}

static void format_doms(__u64 m, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int d = 0; d < 64 && off < len; d++)
		if (m >> d & 1)
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", d);
}

/*
 * Work out homes again and bring the homes map in line; bump class_gen when
 * anything changed so tasks look their home up again. The first time, a
 * plain --home path that names no placed cgroup is an error.
 */
static int place_sync(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr,
		      const struct tm_owned *own, bool strict)
{
	int fd = bpf_map__fd(skel->maps.homes);
	struct tm_placer *pl = &pr->pl;
	__u64 key, next, *prev = NULL, doms;
	struct timespec ts;
	bool changed = false;
	char dl[256];
	int r;

	if (!pl->nd)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = tm_placer_update(pl, TM_CGROUP_ROOT, &o->rules, own->v, own->n, cg_paths, nr_cg_paths,
			     ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000);
	if (r < 0) {
		fprintf(stderr, "scx_tidemark: placement: out of memory\n");
		return strict ? -1 : 0;
	}
	if (strict) {
		for (int i = 0; i < o->place.n; i++) {
			const char *rp = o->place.r[i].path;
			bool hit = false;

			if (tm_path_is_glob(rp))
				continue;
			for (size_t k = 0; k < pl->n && !hit; k++)
				hit = !strcmp(pl->u[k].path, rp);
			if (!hit) {
				fprintf(stderr,
					"scx_tidemark: --home %s: not an ONLINE cgroup that gets a "
					"home (those named by --online rules, and kubelet pods)\n",
					rp);
				return -1;
			}
		}
	}
	for (size_t i = 0; i < pl->n; i++) {
		struct tm_unit *u = &pl->u[i];
		struct tm_home h = {.doms = u->home, .soft = u->soft}, cur;

		if (!bpf_map_lookup_elem(fd, &u->id, &cur) && cur.doms == h.doms &&
		    cur.soft == h.soft)
			continue;
		if (bpf_map_update_elem(fd, &u->id, &h, BPF_ANY)) {
			fprintf(stderr, "scx_tidemark: homes map update for %s: %s\n", u->path,
				strerror(errno));
			continue;
		}
		changed = true;
		format_doms(u->home, dl, sizeof(dl));
		fprintf(stderr, "scx_tidemark: home %s -> %s %s (%s, demand %u mCPU from %s)\n",
			u->path, domain_kind(pr), dl, u->soft ? "soft" : "strict", u->demand_mcpu,
			tm_demand_src_name(u->src));
	}
	/* homes of cgroups that are gone, or no longer placed */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool live = false;

		key = next;
		for (size_t k = 0; k < pl->n && !live; k++)
			live = pl->u[k].id == key;
		if (!live && !bpf_map_delete_elem(fd, &key)) {
			changed = true;
			continue; /* deleted: iterate from the previous key again */
		}
		prev = &key;
	}
	doms = tm_placer_home_doms(pl);
	if (skel->bss->home_doms != doms) {
		skel->bss->home_doms = doms;
		changed = true;
	}
	if (changed)
		bump_class_gen(skel);
	return 0;
}

/* Per-domain load since the last report (from each CPU's run time per
 * class) and the homes: text or JSON. */
static void print_domains(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr)
{
	__u64 run[TM_MAX_DOMS][TM_NR_CLASSES] = {}, now, dt;
	int fd = bpf_map__fd(skel->maps.cpu_ctxs), nd = pr->pl.nd;
	struct timespec ts;
	char dl[256];

	if (!nd)
		return;
	for (__u32 cpu = 0; cpu < (__u32)nr_cpus_possible(); cpu++) {
		struct tm_cpu_ctx c;
		__u8 d = skel->rodata->cpu_dom[cpu];

		if (d == TM_NO_DOM || d >= nd || bpf_map_lookup_elem(fd, &cpu, &c))
			continue;
		for (int k = 0; k < TM_NR_CLASSES; k++)
			run[d][k] += c.run_ns[k];
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	dt = pr->last_at_ns && now > pr->last_at_ns ? now - pr->last_at_ns : 0;
	printf(o->json ? ",\"domains\":[" : "cache domains (%s), load since the last report:\n",
	       domain_kind(pr));
	for (int d = 0; d < nd; d++) {
		double cap = (double)dt * (pr->pl.d[d].cap_mcpu / 1000), pct[TM_NR_CLASSES];

		for (int k = 0; k < TM_NR_CLASSES; k++) {
			pct[k] = cap > 0 && run[d][k] >= pr->last_run[d][k]
					 ? 100.0 * (run[d][k] - pr->last_run[d][k]) / cap
					 : 0;
			pr->last_run[d][k] = run[d][k];
		}
		tm_cpuset_format(&pr->topo->d[d].online, dl, sizeof(dl));
		if (o->json)
			printf("%s{\"id\":%d,\"cpus\":\"%s\",\"system_pct\":%.1f,\"online_pct\":%."
			       "1f,\"be_pct\":%.1f}",
			       d ? "," : "", d, dl, pct[TM_CLASS_SYSTEM], pct[TM_CLASS_ONLINE],
			       pct[TM_CLASS_BE]);
		else
			printf("  %d  cpus %-12s system %5.1f%%  online %5.1f%%  be %5.1f%%\n", d,
			       dl, pct[TM_CLASS_SYSTEM], pct[TM_CLASS_ONLINE], pct[TM_CLASS_BE]);
	}
	pr->last_at_ns = now;
	printf(o->json ? "],\"homes\":[" : "homes:\n");
	for (size_t i = 0; i < pr->pl.n; i++) {
		const struct tm_unit *u = &pr->pl.u[i];

		format_doms(u->home, dl, sizeof(dl));
		if (!o->json) {
			printf("  %-40s -> %s %s (%s, demand %u mCPU from %s)\n", u->path,
			       domain_kind(pr), dl, u->soft ? "soft" : "strict", u->demand_mcpu,
			       tm_demand_src_name(u->src));
			continue;
		}
		printf("%s{\"id\":%llu,\"cgroup\":", i ? "," : "", (unsigned long long)u->id);
		print_json_str(u->path);
		printf(",\"domains\":[%s],\"soft\":%s,\"demand_mcpu\":%u,\"demand_from\":\"%s\"}",
		       dl, u->soft ? "true" : "false", u->demand_mcpu, tm_demand_src_name(u->src));
	}
	if (o->json)
		printf("]");
}

/* Pinned so tidemarkctl (and the daemon) can change classes and tunables. */
static void unpin_maps(void)
{
	char path[256];

	for (int i = 0; i < TM_NR_PINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", TM_PIN_DIR, tm_pins[i].name);
		unlink(path);
	}
	rmdir(TM_PIN_DIR);
}

static int pin_maps(struct tidemark *skel)
{
	/* in enum tm_pin order; the ABI map is pinned last, so a reader that
	 * finds it finds every other pin */
	struct bpf_map *maps[TM_NR_PINS] = {
		[TM_PIN_CLASSES] = skel->maps.classes,	 [TM_PIN_TUNABLES] = skel->maps.tunables,
		[TM_PIN_STATS] = skel->maps.stats,	 [TM_PIN_CG_WAITS] = skel->maps.cg_waits,
		[TM_PIN_HOMES] = skel->maps.homes,	 [TM_PIN_BE_CAPS] = skel->maps.be_caps,
	};
	char path[256];

	unpin_maps();
	if (mkdir(TM_PIN_DIR, 0700) && errno != EEXIST)
		goto fail;
	for (int i = 0; i < TM_NR_PINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", TM_PIN_DIR, tm_pins[i].name);
		if (i == TM_PIN_ABI)
			continue;
		if (i == TM_PIN_TUNABLES_UPDATE ? bpf_program__pin(skel->progs.tunables_update, path)
						: bpf_map__pin(maps[i], path))
			goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s", TM_PIN_DIR, tm_pins[TM_PIN_ABI].name);
	if (bpf_map__pin(skel->maps.abi, path))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "scx_tidemark: cannot pin maps under %s: %s (is bpffs mounted?)\n",
		TM_PIN_DIR, strerror(errno));
	unpin_maps();
	return -1;
}

/*
 * One scheduler lifetime: open, configure, load, attach, wait for a signal
 * or an exit from the kernel. Returns the exit code the kernel recorded (or a
 * negative errno when loading failed); *restart says whether to go again.
 */
static int run_once(const struct tm_opts *o, bool first, bool *restart)
{
	struct tidemark *skel;
	struct bpf_link *link = NULL;
	struct tm_owned own = {};
	struct tm_place_run *pr;
	struct timespec now;
	__u64 next_rescan, now_ms;
	time_t next_stats;
	__s64 ecode = 0;
	u64 flag = 0;
	long hp;
	__u32 zero = 0;
	int err;

	*restart = false;
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		fprintf(stderr, "scx_tidemark: out of memory\n");
		return -ENOMEM;
	}
	skel = tidemark__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "scx_tidemark: cannot open BPF object: %s\n", strerror(errno));
		free(pr);
		return err;
	}
	/* the kernel bumps hotplug_seq on CPU hotplug; passing it in makes a
	 * hotplug that races with loading end in a restartable exit */
	hp = scx_hotplug_seq();
	if (hp >= 0)
		skel->struct_ops.tidemark_ops->hotplug_seq = hp;
	skel->struct_ops.tidemark_ops->timeout_ms = o->timeout_ms;
	/* a throttle needs the last task re-enqueued, or it would run on */
	if (!__COMPAT_read_enum("scx_ops_flags", "SCX_OPS_ENQ_LAST", &flag)) {
		fprintf(stderr,
			"scx_tidemark: kernel BTF lacks SCX_OPS_ENQ_LAST (no sched_ext?)\n");
		err = -ENOTSUP;
		goto out;
	}
	skel->struct_ops.tidemark_ops->flags |= flag;
	/* cgroup cpu.weight is honoured: say so, or the kernel warns on writes */
	if (__COMPAT_read_enum("scx_ops_flags", "SCX_OPS_HAS_CGROUP_WEIGHT", &flag))
		skel->struct_ops.tidemark_ops->flags |= flag;
	skel->rodata->slice_ns = o->slice_us * 1000;
	skel->rodata->window_ns = o->window_us * 1000;
	skel->rodata->nr_cpus = nr_cpus_possible();
	skel->rodata->cap_cpus = tm_nr_cpus();
	/* a restart after CPU hotplug: the same options, fewer CPUs */
	if (check_tunables(&o->tun)) {
		err = -EINVAL;
		goto out;
	}
	/* a hotplug restart reads the topology again */
	setup_domains(skel, o, pr);
	UEI_SET_SIZE(skel, tidemark_ops, uei);

	err = tidemark__load(skel);
	if (err) {
		fprintf(stderr, "scx_tidemark: load failed: %s\n", strerror(-err));
		goto out;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.tunables), &zero, &o->tun, BPF_ANY) ||
	    sync_rules(skel, o, &own, first)) {
		err = -EINVAL;
		goto out;
	}
	/* homes before attaching, so tasks start in them */
	refresh_cg_paths(skel);
	if (place_sync(skel, o, pr, &own, first)) {
		err = -EINVAL;
		goto out;
	}
	link = bpf_map__attach_struct_ops(skel->maps.tidemark_ops);
	if (!link) {
		err = -errno;
		fprintf(stderr, "scx_tidemark: attach failed: %s%s\n", strerror(errno),
			errno == EBUSY ? " (another sched_ext scheduler is loaded)" : "");
		goto out;
	}
	if (pin_maps(skel)) {
		err = -EIO;
		goto out;
	}
	fprintf(stderr,
		"scx_tidemark: loaded (slice %" PRIu64
		" us, suppress %u%%, max BE wait %u ms, BE floor %u mCPU, %d class rules, %d cache "
		"domains for placement)\n",
		(uint64_t)o->slice_us, o->tun.suppress_pct, o->tun.max_be_wait_ms,
		o->tun.be_floor_mcpu, (int)own.n, pr->pl.nd);

	next_stats = time(NULL) + o->stats_s;
	clock_gettime(CLOCK_MONOTONIC, &now);
	next_rescan = now.tv_sec * 1000ULL + now.tv_nsec / 1000000 + o->rescan_ms;
	while (!exit_req && !UEI_EXITED(skel, uei)) {
		usleep(o->rescan_ms < 100 ? o->rescan_ms * 1000 : 100 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		now_ms = now.tv_sec * 1000ULL + now.tv_nsec / 1000000;
		if (now_ms >= next_rescan) {
			sync_rules(skel, o, &own, false);
			refresh_cg_paths(skel);
			place_sync(skel, o, pr, &own, false);
			next_rescan = now_ms + o->rescan_ms;
		}
		if (o->stats_s && time(NULL) >= next_stats) {
			print_stats(skel, o, pr);
			next_stats += o->stats_s;
		}
	}
	/* Detaching waits for the kernel to finish disabling. */
	unpin_maps();
	bpf_link__destroy(link);
	link = NULL;
	if (o->stats_s)
		print_stats(skel, o, pr);
	ecode = UEI_REPORT(skel, uei);
	fprintf(stderr, "scx_tidemark: exit kind %d\n", skel->data->uei.kind);
	if (skel->data->uei.kind >= TM_EXIT_KIND_ERROR)
		err = -EIO;
	*restart = !exit_req && UEI_ECODE_RESTART(ecode);
out:
	if (link) {
		unpin_maps();
		bpf_link__destroy(link);
	}
	tidemark__destroy(skel);
	free(own.v);
	tm_placer_free(&pr->pl);
	free(pr->topo);
	free(pr);
	return err;
}

int main(int argc, char **argv)
{
	struct tm_opts opts;
	bool restart;
	int ret;

	ret = parse_opts(argc, argv, &opts);
	if (ret) {
		usage(ret > 0 ? stdout : stderr, argv[0]);
		return ret > 0 ? 0 : 2;
	}
	libbpf_set_print(opts.verbose ? libbpf_print : libbpf_print_quiet);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	bool first = true;

	do {
		ret = run_once(&opts, first, &restart);
		first = false;
		if (restart)
			fprintf(stderr, "scx_tidemark: kernel asked for a restart; reloading\n");
	} while (restart);
	return ret ? 1 : 0;
}
