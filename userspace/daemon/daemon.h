/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tidemarkd: shared state and the strategy interface. Each strategy (one
 * file each, like Koordinator's qosmanager plugins) decides from what the
 * daemon samples and acts through the daemon's helpers, so every action is
 * one audit line and one metric, and dry-run is honoured in one place.
 */
#ifndef __TM_DAEMON_H
#define __TM_DAEMON_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "nodeload.h"
#include "tidemark_abi.h"
#include "pins.h"

#define TM_MAX_ACTION_KINDS 16

/* One row of the action metric: strategy x action x dry_run. */
struct tm_action_count {
	const char *strategy;
	const char *action;
	bool dry_run;
	uint64_t n;
};


/* What the reports show; written by the sampler under @lock. */
#define TM_REPORT_MAX_CGROUPS 64
#define TM_REPORT_MAX_DOMS 64

struct tm_cg_usage {
	char path[160];
	int cls;	/* TM_CLASS_*, from the scheduler when it runs, else the config */
	double cpu_mcpu;
	uint64_t mem;
};

struct tm_dom_usage {
	char cpus[96];	/* online CPUs, "0-3" */
	uint32_t cap_mcpu;
	double used_mcpu;
};

struct tm_snapshot {
	uint64_t at_ms;
	double cpu_used_mcpu;	/* node, all classes */
	double cpu_system_mcpu;	/* outside ONLINE and BE cgroups */
	double cpu_online_mcpu, cpu_be_mcpu;
	uint64_t mem_total, mem_used;
	uint64_t mem_online, mem_be;
	uint32_t nr_cpus;
	struct tm_wstat cpu_win[3], mem_win[3];	/* 5, 10, 30 min */
	double online_peak_mcpu;	/* max of the 30 min window */
	uint64_t online_peak_mem;
	double be_alloc_mcpu;
	int64_t be_alloc_mem;
	bool forbid;	/* node above a forbid-scheduling watermark */
	bool sched_up;
	struct tm_tunables tun;
	uint64_t sched_stats[TM_NR_STATS];
	struct tm_cg_usage cg[TM_REPORT_MAX_CGROUPS];
	int nr_cg;
	char dom_kind[8];	/* "L3", "L2", "package"; "" when unknown */
	struct tm_dom_usage dom[TM_REPORT_MAX_DOMS];
	int nr_dom;
};

/* What the interference detector shows per ONLINE cgroup (reports). */
#define TM_IF_SIGNALS 5
#define TM_IF_MAX_VICTIMS 32
struct tm_if_row {
	char path[160];
	double value[TM_IF_SIGNALS];	/* last sample; NAN when not measured */
	double baseline[TM_IF_SIGNALS];	/* baseline mean */
	bool interfered;
};

struct tm_if_state {
	struct tm_if_row row[TM_IF_MAX_VICTIMS];
	int nr;
	int step;	/* enum tm_if_step */
	char culprit[160];	/* last culprit named, "" if none */
	uint64_t detections;	/* times a victim turned interfered */
	const char *delay_source;	/* "taskstats", "schedstat" */
	bool cpi;	/* a PMU counts cycles */
};

struct tm_daemon {
	struct tm_config cfg;
	const char *config_path;
	const char *cgroup_root;
	pthread_mutex_t lock;	/* guards snap and actions (HTTP thread reads them) */
	struct tm_snapshot snap;
	struct tm_action_count actions[TM_MAX_ACTION_KINDS];
	int nr_actions;
	uint64_t config_reloads, config_rejects;
	/* the interference ladder's lowered BE line, 0 if none; cpusuppress
	 * applies the lower of it and the configuration */
	uint32_t suppress_override_pct;
	bool tunables_dirty;	/* apply the tunables now, not at the next second */
	struct tm_if_state ifs;	/* under @lock */
};

struct tm_strategy {
	const char *name;
	/* a new configuration was accepted (also at start) */
	void (*configure)(struct tm_daemon *d);
	/* called every poll_ms (memory) or sample period; @now_ms monotonic */
	void (*tick)(struct tm_daemon *d, uint64_t now_ms);
	/* the daemon stops: give back temporary limits (may be NULL) */
	void (*stop)(struct tm_daemon *d);
};

extern const struct tm_strategy tm_strategy_cpusuppress;
extern const struct tm_strategy tm_strategy_memevict;
extern const struct tm_strategy tm_strategy_cpuevict;
extern const struct tm_strategy tm_strategy_interfere;
extern const char *const tm_if_signal_names[TM_IF_SIGNALS];
/* "none", "lower_line", "throttle", "evict" */
const char *tm_if_step_name(int step);

/*
 * Record an action: one audit line on stderr ("audit strategy=... action=...
 * dry_run=... <details>") and the action metric. Returns true when the
 * caller must really act (false in dry-run).
 */
bool tm_audit(struct tm_daemon *d, const char *strategy, const char *action, bool dry_run,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

uint64_t tm_now_ms(void);

/* A pinned object of the running scheduler (tm_pin_open, ABI checked): an fd,
 * or -1 when none runs or its ABI differs (said once on stderr). */
int tm_pin(const struct tm_daemon *d, enum tm_pin which);

/* The class the scheduler gives cgroup @rel (path under the cgroup root),
 * from the pinned classes map; -1 when no scheduler is running. */
int tm_sched_class_of(const struct tm_daemon *d, const char *rel);

/* Is @rel configured ONLINE, or classified ONLINE/SYSTEM by the scheduler?
 * Such cgroups are never acted on. */
bool tm_protected(const struct tm_daemon *d, const char *rel);

/* Write @val to @file of cgroup @rel (under the cgroup root): 0, or -1 with
 * errno. */
int tm_cg_write(const struct tm_daemon *d, const char *rel, const char *file, const char *val);

/* A BE cgroup the configuration names, globs expanded; never a protected one. */
struct tm_be_cg {
	char path[TM_CFG_PATH_MAX];	/* "/x/y", relative to the cgroup root */
	const struct tm_cfg_cgroup *cfg;	/* the entry that named it (first match) */
};

/* Every BE cgroup of the configuration, at most @max, without duplicates. */
int tm_be_cgroups(struct tm_daemon *d, struct tm_be_cg *out, int max);

/* Sampler and reports (report.c). */
void tm_report_sample(struct tm_daemon *d, uint64_t now_ms);
/* Render into a malloc'd buffer; NULL on allocation failure. */
char *tm_report_prometheus(struct tm_daemon *d);
char *tm_report_json(struct tm_daemon *d);
#endif
