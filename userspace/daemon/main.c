// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkd: the tidemark node daemon. Runs in the foreground, logs to
 * stderr (one "audit" line per action), runs every strategy of
 * strategies/ in one loop, each at its own period (strategy.h), and serves
 * node-load reports over HTTP (/metrics, /report; http.c).
 *
 * Ownership: scx_tidemark owns the scheduler and pins its maps; tidemarkd
 * attaches to the pinned maps. If tidemarkd dies, the scheduler keeps
 * enforcing the last policy it was given; a restarted tidemarkd re-attaches
 * and re-applies its configuration (see tidemarkd.service).
 *
 * SIGHUP reloads the configuration, and so does a change of the file
 * (confwatch.h: a ConfigMap update reaches it without a restart); an invalid
 * one is refused and the last good one stays. SIGINT/SIGTERM stop it.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "actuate.h"
#include "confwatch.h"
#include "daemon.h"
#include "evictor.h"
#include "http.h"
#include "httpc.h"
#include "kube.h"
#include "nodemetric.h"
#include "report.h"
#include "strategy.h"
#include "tmlib.h"
#include "log.h"

#define TM_MAX_STRATEGIES 16

static volatile sig_atomic_t exit_req, reload_req;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_req = 1;
	else
		exit_req = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tidemarkd --config FILE [--check|--cleanup] [--cgroup-root DIR] "
		"[--state-dir DIR] [--log-level LEVEL]\n"
		"The tidemark node daemon (foreground; logs and audit lines to stderr).\n\n"
		"  -c, --config FILE     JSON configuration (see tidemarkd.json.sample)\n"
		"      --check           validate the configuration and exit (0 valid, 2 not)\n"
		"      --cleanup         with the daemon stopped for good: put back every cgroup\n"
		"                        value it recorded, remove its taint from the node, exit\n"
		"      --config-reference  print every configuration field (markdown) and exit\n"
		"      --config-sample   print a complete configuration file and exit\n"
		"      --cgroup-root DIR cgroup v2 mount (default /sys/fs/cgroup)\n"
		"      --state-dir DIR   where cgroup values it changed are recorded, to be\n"
		"                        restored after a restart (default /run/tidemark)\n"
		"      --log-level LEVEL error, warning, notice, info (default) or debug; audit\n"
		"                        lines are always written. Under journald each line has\n"
		"                        its priority, on a terminal the message alone, elsewhere\n"
		"                        logfmt (level=... msg=\"...\")\n"
		"  -h, --help            this text\n"
		"      --version         print the release and the map ABI version\n"
		"Under systemd (Type=notify) it reports readiness once its endpoints listen, and\n"
		"pings the watchdog every round when the unit sets WatchdogSec.\n"
		"SIGHUP reloads the configuration (an invalid one is refused, the last good one\n"
		"stays); SIGINT/SIGTERM stop.\n");
}

/*
 * One round: every strategy whose period is due, or that an event raised
 * this round wakes, ticks; its next turn is a period later. Strategies run
 * in table order, so one that applies a change another made runs after it.
 */
static void run_due(struct tm_daemon *d, uint64_t now, uint64_t *due)
{
	unsigned int ev = d->events;

	tm_pins_round();
	tm_sample_round();
	tm_evict_maintain(d, now);
	d->events = 0;
	for (int i = 0; i < tm_nr_strategies; i++) {
		const struct tm_strategy *s = tm_strategies[i];

		/* an event raised by an earlier strategy of this round counts */
		ev |= d->events;
		if (now < due[i] && !(ev & s->wake_on))
			continue;
		s->tick(d, now);
		due[i] = now + s->period_ms(d);
		if (ev & s->wake_on)
			d->events &= ~s->wake_on;
	}
}

/*
 * The file, with the NodeSLO's values over it, as the configuration in
 * effect: every strategy configured again. Nothing changes when refused
 * (counted in tidemark_config_rejects_total).
 */
static int apply_config(struct tm_daemon *d, const struct tm_slo_overlay *slo, char *err,
			size_t errlen)
{
	struct tm_config nc;
	bool moved;

	if (tm_config_load_overlay(d->config_path, slo, &nc, err, errlen)) {
		pthread_mutex_lock(&d->lock);
		d->config_rejects++;
		pthread_mutex_unlock(&d->lock);
		return -1;
	}
	moved = strcmp(nc.report.listen_addr, d->cfg.report.listen_addr) ||
		nc.report.listen_port != d->cfg.report.listen_port;
	pthread_mutex_lock(&d->lock);
	d->cfg = nc;
	d->config_reloads++;
	pthread_mutex_unlock(&d->lock);
	if (moved)
		tm_log(TM_LOG_WARNING, "tidemarkd: report.listen changes at restart only\n");
	for (int i = 0; i < tm_nr_strategies; i++)
		tm_strategies[i]->configure(d);
	return 0;
}

/* What the NodeSLO set, in the log and /report. */
static void slo_said(const struct tm_slo_overlay *o)
{
	char buf[400] = "";
	size_t n = 0;

	for (int i = 0; i < TM_NR_SLO && n < sizeof(buf); i++)
		if (o->has[i])
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s=%lld", n ? ", " : "",
				      tm_slo_cfg_field[i], (long long)o->v[i]);
	if (n) {
		tm_log(TM_LOG_NOTICE, "tidemarkd: NodeSLO applied: %s\n", buf);
		tm_kube_slo_said("applied: %s", buf);
	} else {
		tm_log(TM_LOG_INFO,
		       "tidemarkd: no NodeSLO values for this node: the file's apply\n");
		tm_kube_slo_said("none for this node (none, or resourceUsedThresholdWithBE off): "
				 "the file's values");
	}
}

/*
 * tidemarkd --cleanup, for tidemark's removal (package purge, DaemonSet
 * deletion): every cgroup value a tidemarkd changed and recorded put back,
 * and the node's taint removed. Run with the daemon stopped. 0 when all is
 * done, 1 when something could not be.
 */
static int clean_up(struct tm_daemon *d)
{
	char err[512];
	int ret = 0;

	pthread_mutex_init(&d->lock, NULL);
	if (tm_saved_load(d, err, sizeof(err))) {
		tm_log(TM_LOG_ERR, "tidemarkd: cleanup: %s\n", err);
		ret = 1;
	} else {
		for (int i = 0; i < tm_nr_strategies; i++) {
			const char *who = tm_strategies[i]->name;
			int n = tm_saved_count(who), gone = 0;

			if (!n)
				continue;
			n = tm_cg_restore(d, who, NULL, &gone);
			tm_log(TM_LOG_NOTICE,
			       "tidemarkd: cleanup: %s: %d value(s) put back, %d cgroup(s) gone\n",
			       who, n, gone);
			if (tm_saved_count(who))
				ret = 1;
		}
	}
	tm_nm_init(d);
	if (tm_kube_cleanup(d))
		ret = 1;
	tm_log(TM_LOG_INFO, "tidemarkd: cleanup %s\n", ret ? "left something: see above" : "done");
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
						 {"check", no_argument, NULL, 'k'},
						 {"config-reference", no_argument, NULL, 'R'},
						 {"config-sample", no_argument, NULL, 'S'},
						 {"cleanup", no_argument, NULL, 'C'},
						 {"cgroup-root", required_argument, NULL, 'r'},
						 {"help", no_argument, NULL, 'h'},
						 {"state-dir", required_argument, NULL, 's'},
						 {"version", no_argument, NULL, 'V'},
						 {"log-level", required_argument, NULL, 'L'},
						 {}};
	static struct tm_daemon d = {.cgroup_root = "/sys/fs/cgroup", .state_dir = "/run/tidemark"};
	uint64_t next_sample = 0, now;
	struct tm_http *http;
	struct tm_kube *kube;
	struct tm_slo_overlay slo = {};
	struct tm_confwatch cw = {.fd = -1};
	struct pollfd pfd = {.events = POLLIN};
	int kube_failed;
	bool check = false, cleanup = false;
	uint64_t due[TM_MAX_STRATEGIES] = {}, wait_ms, wd_ms = 0, wd_usec;
	char err[512];
	int c;

	tm_log_init();
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'L': {
			int l = tm_log_level_parse(optarg);

			if (l < 0) {
				tm_log(TM_LOG_ERR,
				       "tidemarkd: --log-level '%s': use error, warning, notice, "
				       "info or "
				       "debug",
				       optarg);
				return 2;
			}
			tm_log_set_level(l);
			break;
		}
		case 'c':
			d.config_path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 'C':
			cleanup = true;
			break;
		case 'r':
			d.cgroup_root = optarg;
			break;
		case 's':
			d.state_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			tm_version_print("tidemarkd");
			return 0;
		case 'R':
			tm_config_reference(stdout);
			return 0;
		case 'S': {
			char *t = tm_config_sample();

			if (!t) {
				tm_log(TM_LOG_ERR, "tidemarkd: out of memory\n");
				return 1;
			}
			printf("%s\n", t);
			free(t);
			return 0;
		}
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !d.config_path) {
		tm_log(TM_LOG_ERR,
		       optind < argc ? "tidemarkd: unexpected argument '%s'\n"
				     : "tidemarkd: --config FILE is required\n",
		       argv[optind]);
		usage(stderr);
		return 2;
	}
	if (tm_httpc_global_init(err, sizeof(err))) {
		tm_log(TM_LOG_ERR, "tidemarkd: %s\n", err);
		return 1;
	}
	if (tm_config_load(d.config_path, &d.cfg, err, sizeof(err))) {
		tm_log(TM_LOG_ERR, "tidemarkd: %s: %s\n", d.config_path, err);
		return 2;
	}
	if (check) {
		printf("%s: valid\n", d.config_path);
		return 0;
	}
	if (cleanup)
		return clean_up(&d);
	if (tm_nr_strategies > TM_MAX_STRATEGIES) {
		tm_log(TM_LOG_ERR, "tidemarkd: %d strategies, at most %d\n", tm_nr_strategies,
		       TM_MAX_STRATEGIES);
		return 1;
	}
	/* values a killed tidemarkd changed: the strategies that own them decide */
	if (tm_saved_load(&d, err, sizeof(err))) {
		tm_log(TM_LOG_ERR, "tidemarkd: %s\n", err);
		return 1;
	}
	pthread_mutex_init(&d.lock, NULL);
	signal(SIGHUP, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	tm_nm_init(&d);
	tm_report_sample(&d, tm_now_ms());
	http = tm_http_start(&d);
	if (!http)
		return 1;
	kube = tm_kube_start(&d, &kube_failed);
	if (kube_failed) {
		tm_http_stop(http);
		return 1;
	}
	/* evictions of pods through the API where the wing is built in (it
	 * says itself whether kubernetes.evict_via_api asks for it) */
	tm_evictor_backend(tm_cluster_eviction());
	for (int i = 0; i < tm_nr_strategies; i++)
		tm_strategies[i]->configure(&d);
	tm_log(TM_LOG_NOTICE, "tidemarkd: running (config %s, http %s:%u, memory eviction %s%s)\n",
	       d.config_path, d.cfg.report.listen_addr, d.cfg.report.listen_port,
	       d.cfg.memory_eviction.enabled ? "on" : "off",
	       d.cfg.memory_eviction.dry_run ? ", dry-run" : "");
	/* systemd (Type=notify): ready once the endpoints listen; with
	 * WatchdogSec, a ping every round and rounds at least twice per period */
	if (sd_watchdog_enabled(0, &wd_usec) > 0)
		wd_ms = wd_usec / 2000 ? wd_usec / 2000 : 1;
	if (tm_confwatch_open(&cw, d.config_path, err, sizeof(err)))
		tm_log(TM_LOG_WARNING, "tidemarkd: %s is not watched (SIGHUP reloads it): %s\n",
		       d.config_path, err);
	sd_notifyf(0, "READY=1\nSTATUS=running, config %s", d.config_path);

	while (!exit_req) {
		if (tm_kube_slo_take(&slo)) {
			/* the cluster's lines over the file's: refused whole if
			 * any fails, with the NodeSLO's field named */
			if (apply_config(&d, &slo, err, sizeof(err))) {
				tm_log(TM_LOG_WARNING,
				       "tidemarkd: NodeSLO refused, keeping the configuration in "
				       "effect: %s\n",
				       err);
				tm_kube_slo_said("refused: %.400s", err);
			} else {
				slo_said(&slo);
			}
		}
		if (reload_req) {
			reload_req = 0;
			tm_confwatch_sync(&cw, d.config_path);
			sd_notify(0, "RELOADING=1");
			tm_kube_slo_current(&slo);
			if (apply_config(&d, &slo, err, sizeof(err)))
				tm_log(TM_LOG_WARNING,
				       "tidemarkd: reload refused, keeping the last good "
				       "configuration: %s: %s\n",
				       d.config_path, err);
			else
				tm_log(TM_LOG_NOTICE, "tidemarkd: configuration reloaded\n");
			sd_notify(0, "READY=1");
		}
		if (wd_ms)
			sd_notify(0, "WATCHDOG=1");
		now = tm_now_ms();
		__atomic_store_n(&d.round_ms, now, __ATOMIC_RELAXED);
		run_due(&d, now, due);
		if (now >= next_sample) {
			tm_report_sample(&d, now);
			next_sample = now + d.cfg.report.sample_s * 1000ULL;
		}
		if (d.events)
			continue; /* raised this round: served at once */
		wait_ms = next_sample - now;
		for (int i = 0; i < tm_nr_strategies; i++)
			if (due[i] - now < wait_ms)
				wait_ms = due[i] - now;
		if (wd_ms && wait_ms > wd_ms)
			wait_ms = wd_ms;
		/* a signal or a change of the configuration file ends it early */
		pfd.fd = cw.fd;
		if (poll(&pfd, 1, (int)wait_ms) > 0 && tm_confwatch_changed(&cw, d.config_path)) {
			tm_log(TM_LOG_NOTICE, "tidemarkd: %s changed: reloading\n", d.config_path);
			reload_req = 1;
		}
	}
	tm_confwatch_close(&cw);
	tm_log(TM_LOG_NOTICE, "tidemarkd: stopping\n");
	sd_notify(0, "STOPPING=1");
	for (int i = 0; i < tm_nr_strategies; i++)
		if (tm_strategies[i]->stop)
			tm_strategies[i]->stop(&d);
	tm_pins_round();
	tm_sample_round();
	/* what the stops gave back (a lowered BE line) is applied before leaving */
	for (int i = 0; i < tm_nr_strategies; i++)
		if (d.events & tm_strategies[i]->wake_on)
			tm_strategies[i]->tick(&d, tm_now_ms());
	tm_kube_stop(kube);
	tm_http_stop(http);
	return 0;
}
