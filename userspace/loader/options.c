// SPDX-License-Identifier: GPL-2.0
/* scx_tidemark: the command line, parsed and checked once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <inttypes.h>

#include <scx/common.h>

#include "tidemark_policy.h"
#include "loader.h"
#include "log.h"

void tm_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTIONS]\n"
		"Load the tidemark sched_ext scheduler until SIGINT/SIGTERM.\n\n"
		"  -s, --slice-us US     time slice in microseconds (default %d, range %d-%d)\n"
		"      --wake-gran-us US a waking ONLINE/SYSTEM task preempts one that ran US and "
		"is\n"
		"                        US ahead of it in weighted time; 0 is off (default %d, "
		"range %d-%d)\n"
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
		"      --peak-window-s S demand measured as the peak tm_usage over S seconds\n"
		"                        (default %d, %d-%d) when no cpu.max/cpuset/--home gives "
		"one\n"
		"      --be-avoid-homes on|off  start BE away from domains hosting homes while\n"
		"                        other domains have idle CPUs (default on)\n"
		"SMT (hardware threads of one core, from the topology):\n"
		"      --smt-expel on|off  keep regular BE runs off the siblings of threads\n"
		"                        running ONLINE (default on; no effect without SMT)\n"
		"      --stats SECONDS   print the counters every SECONDS (default: off)\n"
		"      --json            print counters as one JSON object per line\n"
		"      --log-level LEVEL error, warning, notice, info (default) or debug\n"
		"  -v, --verbose         libbpf debug output (and --log-level debug)\n"
		"  -h, --help            this text\n"
		"      --version         print the release and the map ABI version\n",
		prog, TM_SLICE_US_DFL, TM_SLICE_US_MIN, TM_SLICE_US_MAX, TM_WAKE_GRAN_US_DFL,
		TM_WAKE_GRAN_US_MIN, TM_WAKE_GRAN_US_MAX, TM_TIMEOUT_MS_MAX, TM_SUPPRESS_PCT_DFL,
		TM_MAX_BE_WAIT_MS_DFL, TM_MAX_BE_WAIT_MS_MIN, TM_MAX_BE_WAIT_MS_MAX,
		TM_BE_FLOOR_MCPU_DFL, TM_WINDOW_US_DFL, TM_WINDOW_US_MIN, TM_WINDOW_US_MAX,
		TM_RESCAN_MS_DFL, TM_RESCAN_MS_MIN, TM_RESCAN_MS_MAX, TM_HOME_SLACK_PCT_DFL,
		TM_HOME_WAIT_US_DFL, TM_HOME_WAIT_US_MIN, TM_HOME_WAIT_US_MAX, TM_PEAK_WINDOW_S_DFL,
		TM_PEAK_WINDOW_S_MIN, TM_PEAK_WINDOW_S_MAX);
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
		tm_log(TM_LOG_ERR, "scx_tidemark: %s %s is out of range %" PRIu64 "-%" PRIu64 "\n",
		       opt, s, (uint64_t)min, (uint64_t)max);
		return -1;
	}
	*out = v;
	return 0;
bad:
	tm_log(TM_LOG_ERR, "scx_tidemark: %s needs a whole number, got '%s'\n", opt, s ? s : "");
	return -1;
}

int tm_nr_cpus_possible(void)
{
	return libbpf_num_possible_cpus();
}

/* The tunables against the CPUs online now (the watermark's capacity). */
int tm_check_tunables(const struct tm_tunables *t)
{
	const char *why = tm_tunables_check(t, tm_nr_cpus());

	if (why) {
		tm_log(TM_LOG_ERR, "scx_tidemark: %s (%d online CPUs)\n", why, tm_nr_cpus());
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

	if (tm_nr_cpus_possible() > TM_MAX_CPUS) {
		tm_log(TM_LOG_ERR, "scx_tidemark: %d possible CPUs, this build supports %d\n",
		       tm_nr_cpus_possible(), TM_MAX_CPUS);
		return -1;
	}
	if (tm_check_tunables(&o->tun))
		return -1;
	if (tm_rules_add_kubelet(&o->rules, o->kubelet, err, sizeof(err))) {
		tm_log(TM_LOG_ERR, "scx_tidemark: %s\n", err);
		return -1;
	}
	if (tm_rules_resolve(&o->rules, TM_CGROUP_ROOT, true, false, &v, &n, err, sizeof(err))) {
		tm_log(TM_LOG_ERR, "scx_tidemark: class rules: %s\n", err);
		return -1;
	}
	free(v);
	return 0;
}

/* Returns 0 to run, 1 for --help, -1 on a bad command line. */
int tm_opts_parse(int argc, char **argv, struct tm_opts *o)
{
	enum {
		OPT_STATS = 256,
		OPT_JSON,
		OPT_WINDOW,
		OPT_WAKE_GRAN,
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
		OPT_BE_AVOID,
		OPT_SMT_EXPEL,
		OPT_LOG_LEVEL,
		OPT_VERSION
	};
	static const struct option longopts[] = {
		{"slice-us", required_argument, NULL, 's'},
		{"timeout-ms", required_argument, NULL, 't'},
		{"suppress-pct", required_argument, NULL, 'p'},
		{"max-be-wait-ms", required_argument, NULL, 'w'},
		{"be-floor-mcpu", required_argument, NULL, 'f'},
		{"window-us", required_argument, NULL, OPT_WINDOW},
		{"wake-gran-us", required_argument, NULL, OPT_WAKE_GRAN},
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
		{"smt-expel", required_argument, NULL, OPT_SMT_EXPEL},
		{"stats", required_argument, NULL, OPT_STATS},
		{"json", no_argument, NULL, OPT_JSON},
		{"verbose", no_argument, NULL, 'v'},
		{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{}};
	char err[512];
	__u64 v;
	int c;

	*o = (struct tm_opts){
		.rescan_ms = TM_RESCAN_MS_DFL,
		.kubelet = TM_KUBELET_AUTO,
		/* enabled and slack_pct come from the tunables (tm_setup_domains) */
		.place = {.peak_window_s = TM_PEAK_WINDOW_S_DFL},
	};
	/* the runtime tunables start here; tidemarkctl set changes them later */
	tm_tunables_default(&o->tun);
	while ((c = getopt_long(argc, argv, "s:t:p:w:f:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64("--suppress-pct", optarg, TM_SUPPRESS_PCT_MIN,
				      TM_SUPPRESS_PCT_MAX, &v))
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
			if (parse_u64("--be-floor-mcpu", optarg, TM_BE_FLOOR_MCPU_MIN,
				      TM_BE_FLOOR_MCPU_MAX, &v))
				return -1;
			o->tun.be_floor_mcpu = v;
			break;
		case OPT_WINDOW:
			if (parse_u64("--window-us", optarg, TM_WINDOW_US_MIN, TM_WINDOW_US_MAX,
				      &v))
				return -1;
			o->tun.window_us = v;
			break;
		case OPT_WAKE_GRAN:
			if (parse_u64("--wake-gran-us", optarg, TM_WAKE_GRAN_US_MIN,
				      TM_WAKE_GRAN_US_MAX, &v))
				return -1;
			o->tun.wake_gran_us = v;
			break;
		case OPT_ONLINE:
		case OPT_BE:
		case OPT_SYSTEM:
			if (tm_rules_add(&o->rules, optarg,
					 c == OPT_ONLINE ? TM_CLASS_ONLINE
					 : c == OPT_BE	 ? TM_CLASS_BE
							 : TM_CLASS_SYSTEM,
					 err, sizeof(err))) {
				tm_log(TM_LOG_ERR, "scx_tidemark: %s\n", err);
				return -1;
			}
			break;
		case OPT_KUBELET:
			o->kubelet = tm_kubelet_parse(optarg);
			if (o->kubelet < 0) {
				tm_log(TM_LOG_ERR,
				       "scx_tidemark: --kubelet '%s': use auto, systemd, cgroupfs "
				       "or off\n",
				       optarg);
				return -1;
			}
			break;
		case OPT_PLACEMENT:
		case OPT_BE_AVOID:
		case OPT_SMT_EXPEL:
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				tm_log(TM_LOG_ERR, "scx_tidemark: --%s '%s': use on or off\n",
				       c == OPT_PLACEMENT  ? "placement"
				       : c == OPT_BE_AVOID ? "be-avoid-homes"
							   : "smt-expel",
				       optarg);
				return -1;
			}
			if (c == OPT_PLACEMENT)
				o->tun.placement = !strcmp(optarg, "on");
			else if (c == OPT_BE_AVOID)
				o->tun.be_avoid_homes = !strcmp(optarg, "on");
			else
				o->tun.smt_expel = !strcmp(optarg, "on");
			break;
		case OPT_HOME:
			if (tm_home_rule_add(&o->place, optarg, err, sizeof(err))) {
				tm_log(TM_LOG_ERR, "scx_tidemark: %s\n", err);
				return -1;
			}
			break;
		case OPT_HOME_MODE:
			if (strcmp(optarg, "strict") && strcmp(optarg, "soft")) {
				tm_log(TM_LOG_ERR,
				       "scx_tidemark: --home-mode '%s': use strict or soft\n",
				       optarg);
				return -1;
			}
			o->place.soft_default = !strcmp(optarg, "soft");
			break;
		case OPT_HOME_SLACK:
			if (parse_u64("--home-slack-pct", optarg, TM_HOME_SLACK_PCT_MIN,
				      TM_HOME_SLACK_PCT_MAX, &v))
				return -1;
			o->tun.home_slack_pct = v;
			break;
		case OPT_HOME_WAIT:
			if (parse_u64("--home-wait-us", optarg, TM_HOME_WAIT_US_MIN,
				      TM_HOME_WAIT_US_MAX, &v))
				return -1;
			o->tun.home_wait_us = v;
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
			o->tun.slice_us = v;
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
			tm_log_set_level(TM_LOG_DEBUG);
			break;
		case OPT_LOG_LEVEL: {
			int l = tm_log_level_parse(optarg);

			if (l < 0) {
				tm_log(TM_LOG_ERR,
				       "scx_tidemark: --log-level '%s': use error, warning, "
				       "notice, "
				       "info or debug\n",
				       optarg);
				return -1;
			}
			tm_log_set_level(l);
			break;
		}
		case 'h':
			return 1;
		case OPT_VERSION:
			o->version = true;
			return 0;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		tm_log(TM_LOG_ERR, "scx_tidemark: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return check_opts(o);
}
