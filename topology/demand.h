/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placement of ONLINE cgroups in cache domains, the userspace half: which
 * cgroups get a home (units), what CPU each one needs (demand), and the
 * homes that result (userspace/policy/homes.h decides). The loader pushes the
 * homes to the scheduler's "homes" map. No exit(): errors come back with a
 * message in the caller's buffer.
 *
 * Units: every cgroup an ONLINE user rule matches, and every pod under a
 * built-in (kubelet) ONLINE cgroup.
 * Demand, first source that gives one: cpu.max quota, the cgroup's own
 * cpuset.cpus, a --home rule, measured peak over peak_window_s of usage
 * (cpu.stat) plus one CPU for the share of time its tasks waited for a CPU
 * (cpu.pressure some avg10), so a home too small to show the need does
 * not hide it.
 */
#ifndef __TM_DEMAND_H
#define __TM_DEMAND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "homes.h"
#include "rules.h"
#include "tmlib.h"

enum tm_place_defaults {
	TM_PEAK_WINDOW_S_DFL = 300,
	TM_PEAK_WINDOW_S_MIN = 10,
	TM_PEAK_WINDOW_S_MAX = 3600,
	/* demand of a cgroup nothing is known about yet: one CPU */
	TM_DEMAND_UNKNOWN_MCPU = 1000,
	TM_PEAK_BUCKETS = 30,
};

enum tm_demand_src {
	TM_DEMAND_CPU_MAX,
	TM_DEMAND_CPUSET,
	TM_DEMAND_RULE,
	TM_DEMAND_PEAK,
	TM_DEMAND_UNKNOWN,
};

const char *tm_demand_src_name(enum tm_demand_src s);

/* --home PATH=strict|soft[,MCPU] */
struct tm_home_rule {
	const char *path; /* relative to the cgroup root; may be a glob */
	bool soft;
	uint32_t demand_mcpu; /* 0: none given */
};

struct tm_place_cfg {
	bool enabled;
	bool soft_default; /* units without a --home rule */
	uint32_t slack_pct;
	uint32_t peak_window_s;
	struct tm_home_rule r[TM_MAX_RULES];
	int n;
};

/* Parse "PATH=strict|soft[,MCPU]" into the config; -1 with a message. */
int tm_home_rule_add(struct tm_place_cfg *c, const char *arg, char *err, size_t errlen);

struct tm_unit {
	uint64_t id;
	char *path; /* "/a/b" relative to the cgroup root */
	bool soft;
	bool alive; /* seen at the last update */
	enum tm_demand_src src;
	uint32_t demand_mcpu;
	uint32_t last_demand_mcpu; /* demand when the home was chosen */
	uint64_t home;		   /* domain mask */
	bool moved;		   /* home changed at the last update */
	/* usage: last cpu.stat reading and per-bucket peaks of the rate */
	uint64_t usage_us, usage_at_us;
	uint32_t peak[TM_PEAK_BUCKETS];
	uint64_t peak_epoch[TM_PEAK_BUCKETS];
};

struct tm_placer {
	struct tm_place_cfg cfg;
	struct tm_pl_domain d[TM_PL_MAX_DOMAINS];
	int nd;
	struct tm_unit *u;
	size_t n, cap;
};

/*
 * Work out units, demands and homes again. @cls (sorted by id, from
 * tm_rules_resolve) and @paths (from tm_cgroup_walk of @root) describe the
 * tree now; @now_us is a monotonic clock. Returns how many units changed
 * home, appeared or vanished (the caller then rewrites the map), -1 on
 * allocation failure.
 */
int tm_placer_update(struct tm_placer *pl, const char *root, const struct tm_ruleset *rs,
		     const struct tm_class_entry *cls, size_t ncls, const struct tm_cg_path *paths,
		     size_t npaths, uint64_t now_us);

/* Demand of one unit from its cgroup files (and @rule, may be NULL). */
uint32_t tm_unit_demand(struct tm_unit *u, const char *root, const struct tm_home_rule *rule,
			uint32_t peak_window_s, uint64_t now_us, enum tm_demand_src *src);

/* Domains hosting at least one home. */
uint64_t tm_placer_home_doms(const struct tm_placer *pl);

/* Frees the units; the config (and its rule paths) belongs to the caller. */
void tm_placer_free(struct tm_placer *pl);
#endif
