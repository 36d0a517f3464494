// SPDX-License-Identifier: GPL-2.0
/* scx_tidemark --stats: counters, wait histograms and per-domain load. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <time.h>

#include <scx/common.h>

#include "buf.h"
#include "tmmaps.h"
#include "loader.h"
#include "log.h"

int tm_read_stats(struct tidemark *skel, struct tm_cpu_stats *sum)
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
		path = tm_cgroup_path_of(tm_cg_paths, tm_nr_cg_paths, key);
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

void tm_print_stats(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr)
{
	struct tm_cpu_stats sum;
	int i, k;

	if (tm_read_stats(skel, &sum)) {
		tm_log(TM_LOG_WARNING, "scx_tidemark: cannot read counters: %s\n", strerror(errno));
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
		tm_print_domains(skel, o, pr);
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
		tm_print_domains(skel, o, pr);
	}
	fflush(stdout);
}

/* Per-domain load since the last report (from each CPU's run time per
 * class) and the homes: text or JSON. */
void tm_print_domains(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr)
{
	__u64 run[TM_MAX_DOMS][TM_NR_CLASSES] = {}, now, dt;
	int fd = bpf_map__fd(skel->maps.cpu_ctxs), nd = pr->pl.nd;
	struct timespec ts;
	char dl[256];

	if (!nd)
		return;
	for (__u32 cpu = 0; cpu < (__u32)tm_nr_cpus_possible(); cpu++) {
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
	       tm_domain_kind(pr));
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

		tm_format_doms(u->home, dl, sizeof(dl));
		if (!o->json) {
			printf("  %-40s -> %s %s (%s, demand %u mCPU from %s)\n", u->path,
			       tm_domain_kind(pr), dl, u->soft ? "soft" : "strict", u->demand_mcpu,
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
