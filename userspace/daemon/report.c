// SPDX-License-Identifier: GPL-2.0
/* /report: the sampler's snapshot as a JSON document modelled on
 * Koordinator's NodeMetric (report.h); each strategy adds its own section. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "actuate.h"
#include "daemon.h"
#include "kube.h"
#include "report.h"
#include "strategy.h"
#include "tmlib.h"

static void jwin(struct tm_buf *b, const char *name, const struct tm_wstat *w)
{
	tm_bprintf(b, "\"%s\":{", name);
	for (int i = 0; i < 3; i++)
		tm_bprintf(
			b,
			"%s\"%us\":{\"n\":%u,\"avg\":%.0f,\"p50\":%.0f,\"p90\":%.0f,\"p95\":%.0f,"
			"\"p99\":%.0f}",
			i ? "," : "", tm_win_s[i], w[i].n, w[i].avg, w[i].p50, w[i].p90, w[i].p95,
			w[i].p99);
	tm_bprintf(b, "}");
}

char *tm_report_json(struct tm_daemon *d)
{
	struct tm_buf b = {};
	struct tm_cg_usage *cg;
	struct tm_snapshot s;
	int ncg;

	pthread_mutex_lock(&d->lock);
	s = d->snap;
	ncg = tm_sample_cgroups(d, &cg);
	pthread_mutex_unlock(&d->lock);

	tm_bprintf(&b, "{\"kind\":\"NodeMetric\",\"version\":1,\"at_ms\":%" PRIu64 ",", s.at_ms);
	tm_bprintf(&b,
		   "\"nodeMetric\":{\"cpu\":{\"capacity_mcpu\":%u,\"used_mcpu\":%.0f},"
		   "\"memory\":{\"total_bytes\":%" PRIu64 ",\"used_bytes\":%" PRIu64 "}},",
		   s.nr_cpus * 1000, s.cpu_used_mcpu, s.mem_total, s.mem_used);
	tm_bprintf(&b, "\"systemUsage\":{\"cpu_mcpu\":%.0f,\"memory_bytes\":%" PRIu64 "},",
		   s.cpu_system_mcpu,
		   s.mem_used > s.mem_online + s.mem_be ? s.mem_used - s.mem_online - s.mem_be : 0);
	tm_bprintf(&b,
		   "\"classUsage\":{\"online\":{\"cpu_mcpu\":%.0f,\"memory_bytes\":%" PRIu64 "},"
		   "\"be\":{\"cpu_mcpu\":%.0f,\"memory_bytes\":%" PRIu64 "}},",
		   s.cpu_online_mcpu, s.mem_online, s.cpu_be_mcpu, s.mem_be);
	tm_bprintf(&b, "\"aggregated\":{");
	jwin(&b, "cpu_mcpu", s.cpu_win);
	tm_bprintf(&b, ",");
	jwin(&b, "memory_bytes", s.mem_win);
	tm_bprintf(&b, "},");
	tm_bprintf(&b, "\"onlinePeak\":{\"cpu_mcpu\":%.0f,\"memory_bytes\":%" PRIu64 "},",
		   s.online_peak_mcpu, s.online_peak_mem);
	tm_bprintf(&b, "\"beAllocatable\":{\"cpu_mcpu\":%.0f,\"memory_bytes\":%" PRId64 "},",
		   s.be_alloc_mcpu, s.be_alloc_mem);
	tm_bprintf(&b, "\"forbidScheduling\":%s,", s.forbid ? "true" : "false");
	tm_bprintf(&b, "\"cgroups\":[");
	for (int i = 0; i < ncg; i++) {
		tm_bprintf(&b, "%s{\"cgroup\":", i ? "," : "");
		tm_bjson_str(&b, cg[i].path);
		tm_bprintf(&b, ",\"class\":\"%s\",\"cpu_mcpu\":%.0f,\"memory_bytes\":%" PRIu64 "}",
			   tm_class_name(cg[i].cls), cg[i].cpu_mcpu, cg[i].mem);
	}
	tm_bprintf(&b, "],\"domains\":{\"kind\":\"%s\",\"list\":[", s.dom_kind);
	for (int k = 0; k < s.nr_dom; k++) {
		double free_mcpu = s.dom[k].cap_mcpu - s.dom[k].used_mcpu;

		tm_bprintf(&b,
			   "%s{\"id\":%d,\"cpus\":\"%s\",\"capacity_mcpu\":%u,\"used_mcpu\":%.0f,"
			   "\"free_mcpu\":%.0f}",
			   k ? "," : "", k, s.dom[k].cpus, s.dom[k].cap_mcpu, s.dom[k].used_mcpu,
			   free_mcpu > 0 ? free_mcpu : 0);
	}
	tm_bprintf(&b, "]},");
	tm_bprintf(&b,
		   "\"watermarks\":{\"cpu\":{\"forbid_pct\":%u,\"suppress_pct\":%u,"
		   "\"evict_lower_pct\":%u,\"evict_pct\":%u,\"evict_window_s\":%u},"
		   "\"memory\":{\"forbid_pct\":%u,\"evict_lower_pct\":%u,\"evict_pct\":%u}},",
		   d->cfg.cpu.forbid_pct, d->cfg.cpu.suppress_pct, d->cfg.cpu.evict_lower_pct,
		   d->cfg.cpu.evict_pct, d->cfg.cpu.evict_window_s, d->cfg.memory.forbid_pct,
		   d->cfg.memory.evict_lower_pct, d->cfg.memory.evict_pct);
	tm_kube_slo_json(&b);
	for (int i = 0; i < tm_nr_strategies; i++)
		if (tm_strategies[i]->report_json)
			tm_strategies[i]->report_json(d, &b);
	tm_bprintf(&b,
		   "\"scheduler\":{\"up\":%s,\"suppress_pct\":%u,\"line\":{\"pct\":%u,\"owner\":\"%"
		   "s\"},\"counters\":{",
		   s.sched_up ? "true" : "false", s.tun.suppress_pct, s.line_pct, s.line_owner);
	for (int i = 0; i < TM_NR_STATS; i++)
		tm_bprintf(&b, "%s\"%s\":%" PRIu64, i ? "," : "", tm_stat_names[i],
			   s.sched_stats[i]);
	tm_bprintf(&b, "}}}\n");
	free(cg);
	return tm_buf_done(&b);
}
