// SPDX-License-Identifier: GPL-2.0
/* /report: the sampler's snapshot as a JSON document modelled on
 * Koordinator's NodeMetric (report.h); each strategy adds its own section. */
#include <inttypes.h>
#include <math.h>
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

/* A figure measured as a double, given as a whole number, as before */
static json_t *jint(double v)
{
	return json_integer((json_int_t)llround(v));
}

/* {"cpu_mcpu", "memory_bytes"}: a use, a peak or room */
static json_t *use(double mcpu, json_int_t bytes)
{
	return json_pack("{s:o,s:I}", "cpu_mcpu", jint(mcpu), "memory_bytes", bytes);
}

static json_t *jwin(const struct tm_wstat *w)
{
	json_t *o = json_object();
	char key[16];

	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "%us", tm_win_s[i]);
		json_object_set_new(o, key,
				    json_pack("{s:I,s:o,s:o,s:o,s:o,s:o}", "n", (json_int_t)w[i].n,
					      "avg", jint(w[i].avg), "p50", jint(w[i].p50), "p90",
					      jint(w[i].p90), "p95", jint(w[i].p95), "p99",
					      jint(w[i].p99)));
	}
	return o;
}

static json_t *cgroups(const struct tm_cg_usage *cg, int ncg)
{
	json_t *a = json_array();

	for (int i = 0; i < ncg; i++)
		json_array_append_new(
			a, json_pack("{s:o,s:s,s:o,s:I}", "cgroup", tm_json_str(cg[i].path),
				     "class", tm_class_name(cg[i].cls), "cpu_mcpu",
				     jint(cg[i].cpu_mcpu), "memory_bytes", (json_int_t)cg[i].mem));
	return a;
}

static json_t *domains(const struct tm_snapshot *s)
{
	json_t *a = json_array();

	for (int k = 0; k < s->nr_dom; k++) {
		double free_mcpu = s->dom[k].cap_mcpu - s->dom[k].used_mcpu;

		json_array_append_new(a, json_pack("{s:i,s:s,s:I,s:o,s:o}", "id", k, "cpus",
						   s->dom[k].cpus, "capacity_mcpu",
						   (json_int_t)s->dom[k].cap_mcpu, "used_mcpu",
						   jint(s->dom[k].used_mcpu), "free_mcpu",
						   jint(free_mcpu > 0 ? free_mcpu : 0)));
	}
	return json_pack("{s:s,s:o}", "kind", s->dom_kind, "list", a);
}

static json_t *watermarks(const struct tm_config *c)
{
	return json_pack(
		"{s:{s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I}}", "cpu", "forbid_pct",
		(json_int_t)c->cpu.forbid_pct, "suppress_pct", (json_int_t)c->cpu.suppress_pct,
		"evict_lower_pct", (json_int_t)c->cpu.evict_lower_pct, "evict_pct",
		(json_int_t)c->cpu.evict_pct, "evict_window_s", (json_int_t)c->cpu.evict_window_s,
		"memory", "forbid_pct", (json_int_t)c->memory.forbid_pct, "evict_lower_pct",
		(json_int_t)c->memory.evict_lower_pct, "evict_pct",
		(json_int_t)c->memory.evict_pct);
}

static json_t *scheduler(const struct tm_snapshot *s)
{
	json_t *counters = json_object();

	for (int i = 0; i < TM_NR_STATS; i++)
		json_object_set_new(counters, tm_stat_names[i],
				    json_integer((json_int_t)s->sched_stats[i]));
	return json_pack("{s:b,s:I,s:{s:I,s:s},s:o}", "up", s->sched_up, "suppress_pct",
			 (json_int_t)s->tun.suppress_pct, "line", "pct", (json_int_t)s->line_pct,
			 "owner", s->line_owner, "counters", counters);
}

static int to_buf(const char *p, size_t n, void *b)
{
	tm_bprintf(b, "%.*s", (int)n, p);
	return 0;
}

char *tm_report_json(struct tm_daemon *d)
{
	struct tm_cg_usage *cg;
	struct tm_snapshot s;
	uint64_t mem_system;
	json_t *r;
	struct tm_buf b = {};
	int ncg;

	pthread_mutex_lock(&d->lock);
	s = d->snap;
	ncg = tm_sample_cgroups(d, &cg);
	pthread_mutex_unlock(&d->lock);

	mem_system =
		s.mem_used > s.mem_online + s.mem_be ? s.mem_used - s.mem_online - s.mem_be : 0;
	/* json_pack gives NULL, and frees what it was given, if any part
	 * failed: the document is whole or not at all */
	r = json_pack("{s:s,s:i,s:I,s:{s:{s:I,s:o},s:{s:I,s:I}},s:o,s:{s:o,s:o},s:{s:o,s:o},"
		      "s:o,s:o,s:b,s:o,s:o,s:o}",
		      "kind", "NodeMetric", "version", 1, "at_ms", (json_int_t)s.at_ms,
		      "nodeMetric", "cpu", "capacity_mcpu", (json_int_t)s.nr_cpus * 1000,
		      "used_mcpu", jint(s.cpu_used_mcpu), "memory", "total_bytes",
		      (json_int_t)s.mem_total, "used_bytes", (json_int_t)s.mem_used, "systemUsage",
		      use(s.cpu_system_mcpu, mem_system), "classUsage", "online",
		      use(s.cpu_online_mcpu, s.mem_online), "be", use(s.cpu_be_mcpu, s.mem_be),
		      "aggregated", "cpu_mcpu", jwin(s.cpu_win), "memory_bytes", jwin(s.mem_win),
		      "onlinePeak", use(s.online_peak_mcpu, s.online_peak_mem), "beAllocatable",
		      use(s.be_alloc_mcpu, s.be_alloc_mem), "forbidScheduling", s.forbid, "cgroups",
		      cgroups(cg, ncg), "domains", domains(&s), "watermarks", watermarks(&d->cfg));
	free(cg);
	if (!r)
		return NULL;
	tm_kube_json(r);
	for (int i = 0; i < tm_nr_strategies; i++)
		if (tm_strategies[i]->report_json)
			tm_strategies[i]->report_json(d, r);
	json_object_set_new(r, "scheduler", scheduler(&s));
	json_dump_callback(r, to_buf, &b, JSON_COMPACT);
	json_decref(r);
	tm_bprintf(&b, "\n"); /* one line, as curl and the tests read it */
	return tm_buf_done(&b);
}
