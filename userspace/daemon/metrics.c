// SPDX-License-Identifier: GPL-2.0
/* /metrics: the sampler's snapshot and the scheduler's counters as
 * Prometheus text (report.h); each strategy adds its own part. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "actuate.h"
#include "daemon.h"
#include "kube.h"
#include "nodemetric.h"
#include "report.h"
#include "strategy.h"
#include "tmlib.h"

/*
 * The scheduler's counters in base units, a class in a label: "run_ns_be"
 * is tidemark_sched_run_seconds_total{class="be"} (every counter named
 * <x>_system, <x>_online and <x>_be is one family), "be_throttled_ns"
 * tidemark_sched_be_throttled_seconds_total.
 */
static void sched_counters(struct tm_buf *b, const uint64_t *v)
{
	static const char *const cls[] = {"system", "online", "be"};

	for (int i = 0; i < TM_NR_STATS; i++) {
		const char *n = tm_stat_names[i], *p;
		char fam[96], name[128], help[256];
		int c = -1, sib = 0;
		size_t fl = strlen(n);

		for (int k = 0; k < 3 && c < 0; k++) {
			size_t l = strlen(cls[k]);

			if (fl > l + 1 && n[fl - l - 1] == '_' && !strcmp(n + fl - l, cls[k]))
				c = k, fl -= l + 1;
		}
		/* a family only when all three classes are there */
		for (int j = 0; c >= 0 && j < TM_NR_STATS; j++)
			for (int k = 0; k < 3; k++)
				if (strlen(tm_stat_names[j]) == fl + 1 + strlen(cls[k]) &&
				    !strncmp(tm_stat_names[j], n, fl) &&
				    !strcmp(tm_stat_names[j] + fl + 1, cls[k]))
					sib++;
		if (sib != 3) {
			c = -1;
			fl = strlen(n);
		}
		snprintf(fam, sizeof(fam), "%.*s", (int)fl, n);
		p = strstr(fam, "_ns");
		bool ns = p && (!p[3] || p[3] == '_');

		if (ns)
			snprintf(name, sizeof(name), "tidemark_sched_%.*s_seconds%s_total",
				 (int)(p - fam), fam, p + 3);
		else
			snprintf(name, sizeof(name), "tidemark_sched_%s_total", fam);
		/* HELP and TYPE once per family: at its first member */
		if (c <= 0) {
			snprintf(help, sizeof(help), "%s%s%s", tm_stat_help[i],
				 c == 0 ? " (by class)" : "", ns ? "; in seconds here" : "");
			if (c == 0) {
				/* "CPU time of SYSTEM tasks, ns" -> the family's */
				char *t = strstr(help, "SYSTEM ");

				if (t)
					memmove(t, t + 7, strlen(t + 7) + 1);
			}
			tm_prom_help(b, "counter", name, help);
		}
		tm_bprintf(b, "%s", name);
		if (c >= 0)
			tm_bprintf(b, "{class=\"%s\"}", cls[c]);
		if (ns)
			tm_bprintf(b, " %.9f\n", v[i] / 1e9);
		else
			tm_bprintf(b, " %" PRIu64 "\n", v[i]);
	}
}

char *tm_report_prometheus(struct tm_daemon *d)
{
	struct tm_buf b = {};
	struct tm_cg_usage *cg;
	struct tm_snapshot s;
	int ncg;
	struct tm_action_count a[TM_MAX_ACTION_KINDS];
	uint64_t reloads, rejects, http_cut, http_log, push_ok, push_failed;
	int na;

	pthread_mutex_lock(&d->lock);
	s = d->snap;
	ncg = tm_sample_cgroups(d, &cg);
	na = d->nr_actions;
	memcpy(a, d->actions, sizeof(a));
	reloads = d->config_reloads;
	rejects = d->config_rejects;
	http_cut = d->http_cut;
	http_log = d->http_log_lines;
	push_ok = d->push_ok;
	push_failed = d->push_failed;
	if (d->bw_prom)
		tm_bprintf(&b, "%s", d->bw_prom);
	pthread_mutex_unlock(&d->lock);

	tm_prom_help(&b, "gauge", "tidemark_build_info",
		     "The running tidemarkd: version and map ABI version.");
	tm_bprintf(&b, "tidemark_build_info{version=");
	tm_bprom_label(&b, tm_version());
	tm_bprintf(&b, ",abi_version=\"%d\"} 1\n", TM_ABI_VERSION);
	tm_prom_help(&b, "gauge", "tidemark_last_sample_timestamp_seconds",
		     "When the figures below were sampled (Unix time; every report.sample_s).");
	tm_bprintf(&b, "tidemark_last_sample_timestamp_seconds %" PRId64 "\n", s.at_realtime);
	tm_prom_help(&b, "gauge", "tidemark_node_cpu_capacity_cores", "Online CPUs of the node.");
	tm_bprintf(&b, "tidemark_node_cpu_capacity_cores %u\n", s.nr_cpus);
	tm_prom_help(&b, "counter", "tidemark_node_cpu_seconds_total",
		     "CPU time used since tidemarkd started, by class: online and be from the "
		     "configured cgroups' cpu.stat, system the rest of /proc/stat's busy time.");
	for (int k = 0; k < TM_NR_CLASSES; k++)
		tm_bprintf(&b, "tidemark_node_cpu_seconds_total{class=\"%s\"} %.6f\n",
			   tm_class_name(k), s.cpu_total_s[k]);
	tm_prom_help(&b, "gauge", "tidemark_node_memory_total_bytes", "MemTotal of the node.");
	tm_bprintf(&b, "tidemark_node_memory_total_bytes %" PRIu64 "\n", s.mem_total);
	tm_prom_help(&b, "gauge", "tidemark_node_memory_used_bytes",
		     "MemTotal - MemAvailable of the node.");
	tm_bprintf(&b, "tidemark_node_memory_used_bytes %" PRIu64 "\n", s.mem_used);
	tm_prom_help(&b, "gauge", "tidemark_class_memory_used_bytes",
		     "memory.current of the configured cgroups of a class.");
	tm_bprintf(&b, "tidemark_class_memory_used_bytes{class=\"online\"} %" PRIu64 "\n",
		   s.mem_online);
	tm_bprintf(&b, "tidemark_class_memory_used_bytes{class=\"be\"} %" PRIu64 "\n", s.mem_be);
	tm_prom_help(&b, "counter", "tidemark_cgroup_cpu_seconds_total",
		     "cpu.stat usage_usec of a configured cgroup (class: the scheduler's, else the "
		     "configuration's).");
	for (int i = 0; i < ncg; i++) {
		tm_bprintf(&b, "tidemark_cgroup_cpu_seconds_total{cgroup=");
		tm_bprom_label(&b, cg[i].path);
		tm_bprintf(&b, ",class=\"%s\"} %.6f\n", tm_class_name(cg[i].cls),
			   cg[i].usage_us / 1e6);
	}
	tm_prom_help(&b, "gauge", "tidemark_cgroup_memory_used_bytes",
		     "memory.current of a configured cgroup.");
	for (int i = 0; i < ncg; i++) {
		tm_bprintf(&b, "tidemark_cgroup_memory_used_bytes{cgroup=");
		tm_bprom_label(&b, cg[i].path);
		tm_bprintf(&b, ",class=\"%s\"} %" PRIu64 "\n", tm_class_name(cg[i].cls), cg[i].mem);
	}
	tm_nm_pod_prom(&b);
	tm_prom_help(&b, "gauge", "tidemark_domain_info",
		     "A cache domain of the node (kind L3, L2 or package) and its online CPUs.");
	for (int k = 0; k < s.nr_dom; k++)
		tm_bprintf(&b, "tidemark_domain_info{domain=\"%d\",kind=\"%s\",cpus=\"%s\"} 1\n", k,
			   s.dom_kind, s.dom[k].cpus);
	tm_prom_help(&b, "gauge", "tidemark_domain_cpu_free_cores",
		     "CPU a cache domain left unused over the last sample period, in CPUs.");
	for (int k = 0; k < s.nr_dom; k++) {
		double f = s.dom[k].cap_mcpu - s.dom[k].used_mcpu;

		tm_bprintf(&b, "tidemark_domain_cpu_free_cores{domain=\"%d\"} %.3f\n", k,
			   f > 0 ? f / 1000 : 0);
	}
	tm_prom_help(&b, "gauge", "tidemark_be_allocatable_cores",
		     "CPU the node can give BE: capacity x reclaim - max(system used, reserved) - "
		     "ONLINE "
		     "peak, in CPUs.");
	tm_bprintf(&b, "tidemark_be_allocatable_cores %.3f\n", s.be_alloc_mcpu / 1000);
	tm_prom_help(&b, "gauge", "tidemark_be_allocatable_bytes",
		     "Memory the node can give BE, same formula.");
	tm_bprintf(&b, "tidemark_be_allocatable_bytes %" PRId64 "\n", s.be_alloc_mem);
	tm_prom_help(&b, "gauge", "tidemark_forbid_scheduling",
		     "1 when the node is above a forbid-scheduling watermark (CPU or memory).");
	tm_bprintf(&b, "tidemark_forbid_scheduling %d\n", s.forbid);
	tm_prom_help(&b, "gauge", "tidemark_scheduler_up",
		     "1 when the tidemark sched_ext scheduler is loaded and its maps are pinned.");
	tm_bprintf(&b, "tidemark_scheduler_up %d\n", s.sched_up);
	tm_prom_help(
		&b, "counter", "tidemark_sched_ext_enables_total",
		"sched_ext schedulers loaded since boot (enable_seq): a rise without a restart "
		"you made is the scheduler ejected and loaded again.");
	tm_bprintf(&b, "tidemark_sched_ext_enables_total %" PRIu64 "\n", s.enable_seq);
	/* the scheduler's own figures only while it runs: absent, not 0 */
	if (s.sched_up) {
		tm_prom_help(
			&b, "gauge", "tidemark_scheduler_be_line_ratio",
			"The scheduler's BE line (suppress_pct), as a fraction of the node's CPU.");
		tm_bprintf(&b, "tidemark_scheduler_be_line_ratio %.2f\n",
			   s.tun.suppress_pct / 100.0);
		sched_counters(&b, s.sched_stats);
		tm_bprintf(
			&b,
			"# HELP tidemark_sched_wait_seconds Run-queue wait (wakeup to running) "
			"of the scheduler's tasks, by class.\n# TYPE tidemark_sched_wait_seconds "
			"histogram\n");
		for (int k = 0; k < TM_NR_CLASSES; k++)
			tm_wait_hist_lines(&b, "tidemark_sched_wait_seconds", "class",
					   tm_class_name(k), s.wait_hist[k], s.wait_sum_ns[k]);
		pthread_mutex_lock(&d->lock);
		if (d->wait_prom)
			tm_bprintf(&b, "%s", d->wait_prom);
		pthread_mutex_unlock(&d->lock);
	}
	for (int i = 0; i < tm_nr_strategies; i++)
		if (tm_strategies[i]->report_prom)
			tm_strategies[i]->report_prom(d, &b);
	tm_bprintf(&b,
		   "# HELP tidemark_actions_total Actions taken (or, dry_run=\"true\", decided) "
		   "by the daemon's strategies.\n# TYPE tidemark_actions_total counter\n");
	for (int i = 0; i < na; i++)
		tm_bprintf(&b,
			   "tidemark_actions_total{strategy=\"%s\",action=\"%s\",dry_run=\"%s\"} "
			   "%" PRIu64 "\n",
			   a[i].strategy, a[i].action, a[i].dry_run ? "true" : "false", a[i].n);
	tm_bprintf(&b, "# HELP tidemark_config_reloads_total Configurations accepted (SIGHUP, the "
		       "file changed, or the node's NodeSLO changed).\n# "
		       "TYPE tidemark_config_reloads_total counter\n");
	tm_bprintf(&b, "tidemark_config_reloads_total %" PRIu64 "\n", reloads);
	tm_bprintf(&b, "# HELP tidemark_config_rejects_total Configurations refused (SIGHUP, file "
		       "or NodeSLO; "
		       "the last good one stays).\n# TYPE tidemark_config_rejects_total counter\n");
	tm_bprintf(&b, "tidemark_config_rejects_total %" PRIu64 "\n", rejects);
	tm_prom_help(&b, "counter", "tidemark_http_connections_cut_total",
		     "Report connections shut down for not sending a request within 2 s or not "
		     "taking the answer within 10 s.");
	tm_bprintf(&b, "tidemark_http_connections_cut_total %" PRIu64 "\n", http_cut);
	tm_prom_help(
		&b, "counter", "tidemark_http_log_messages_total",
		"Messages of the HTTP server (at most 5 per 10 s are printed, the rest counted).");
	tm_bprintf(&b, "tidemark_http_log_messages_total %" PRIu64 "\n", http_log);
	tm_prom_help(
		&b, "counter", "tidemark_limit_hits_total",
		"Rounds in which a fixed-size table had no room for a cgroup found (each table "
		"said once in the log).");
	{
		/* the fixed-size tables, at 0 until hit; every other list grows */
		static const char *const tables[] = {"interference.online", "interference.be",
						     "eviction.backoff"};

		for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
			uint64_t hits = 0;

			pthread_mutex_lock(&d->lock);
			for (int i = 0; i < d->nr_limits; i++)
				if (!strcmp(d->limits[i].what, tables[t]))
					hits = d->limits[i].hits;
			pthread_mutex_unlock(&d->lock);
			tm_bprintf(&b, "tidemark_limit_hits_total{table=\"%s\"} %" PRIu64 "\n",
				   tables[t], hits);
		}
	}
	tm_prom_help(&b, "counter", "tidemark_report_pushes_total",
		     "JSON reports pushed to report.push_url, by result (error: not sent or not "
		     "answered 2xx).");
	tm_bprintf(&b, "tidemark_report_pushes_total{result=\"ok\"} %" PRIu64 "\n", push_ok);
	tm_bprintf(&b, "tidemark_report_pushes_total{result=\"error\"} %" PRIu64 "\n", push_failed);
	tm_kube_prom(&b);
	free(cg);
	return tm_buf_done(&b);
}
