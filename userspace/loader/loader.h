/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_tidemark, the loader, split by concern: options.c (the command line,
 * parsed once), sync.c (keeping the scheduler's maps in line with the rules
 * and the placement, and pinning them), stats.c (--stats), main.c (one
 * scheduler lifetime after another).
 */
#ifndef __TM_LOADER_H
#define __TM_LOADER_H
#include <stdbool.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#include "tidemark_abi.h"
#include "tidemark.skel.h"
#include "demand.h"
#include "rules.h"
#include "topo.h"

struct tm_opts {
	__u32 timeout_ms;	/* 0: kernel default (30 s) */
	__u32 stats_s;		/* 0: no periodic counters */
	__u32 rescan_ms;	/* how often rules are matched against new cgroups */
	struct tm_tunables tun; /* the first instance's (later: the running one's) */
	struct tm_ruleset rules;
	/* placement in cache domains; enabled and slack_pct follow the
	 * tunables map (placement, home_slack_pct) at every round */
	struct tm_place_cfg place;
	int kubelet;
	bool json;
	bool verbose;
	bool version; /* --version: print it and exit */
};

/* Class entries the loader wrote into the classes map (sorted by id). */
struct tm_owned {
	struct tm_class_entry *v;
	size_t n;
};

/* The cpu.max each cgroup had when last given to the scheduler (sorted by id). */
struct tm_bw_applied {
	__u64 id, quota_us, period_us, burst_us;
};

struct tm_bw_state {
	struct tm_bw_applied *v;
	size_t n;
	bool full_said; /* the map-full error was said (once per lifetime) */
};

/* Placement state of one scheduler lifetime. */
struct tm_place_run {
	struct tm_placer pl; /* pl.nd == 0: placement off */
	struct tm_topology *topo;
	/* per-domain run time at the last report, for load since then */
	__u64 last_run[TM_MAX_DOMS][TM_NR_CLASSES];
	__u64 last_at_ns;
};

/* options.c */
void tm_usage(FILE *f, const char *prog);
/* Returns 0 to run, 1 for --help, -1 on a bad command line. */
int tm_opts_parse(int argc, char **argv, struct tm_opts *o);
int tm_nr_cpus_possible(void);
/* The tunables against the CPUs online now: 0, or -1 said on stderr. */
int tm_check_tunables(const struct tm_tunables *t);

/* sync.c */
extern struct tm_cg_path *tm_cg_paths;
extern size_t tm_nr_cg_paths;
void tm_refresh_cg_paths(struct tidemark *skel);
void tm_bump_class_gen(struct tidemark *skel);
int tm_sync_rules(struct tidemark *skel, const struct tm_opts *o, struct tm_owned *own, bool first);
void tm_setup_domains(struct tidemark *skel, const struct tm_opts *o, const struct tm_tunables *t,
		      struct tm_place_run *pr);
const char *tm_domain_kind(const struct tm_place_run *pr);
void tm_format_doms(__u64 m, char *buf, size_t len);
int tm_place_sync(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr,
		  const struct tm_owned *own, bool first);
int tm_bw_sync(struct tidemark *skel, struct tm_bw_state *bs);
void tm_unpin_maps(void);
int tm_pin_maps(struct tidemark *skel);

/* stats.c */
int tm_read_stats(struct tidemark *skel, struct tm_cpu_stats *sum);
void tm_print_stats(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr);
void tm_print_domains(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr);
#endif
