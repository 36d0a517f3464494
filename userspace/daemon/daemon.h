/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tidemarkd's shared state: the configuration, the last snapshot the reports
 * show, the action counters and the BE-line requests. Strategies
 * (strategy.h) act on it only through the actuators (actuate.h).
 */
#ifndef __TM_DAEMON_H
#define __TM_DAEMON_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "nodeload.h"
#include "tidemark_abi.h"

#define TM_MAX_ACTION_KINDS 16
#define TM_MAX_LINE_REQS    8
#define TM_MAX_LIMITS	    16

/* A request to hold the BE line at or below @pct, by strategy @owner. */
struct tm_line_req {
	const char *owner;
	uint32_t pct;
};

/* One row of the action metric: strategy x action x dry_run. */
struct tm_action_count {
	const char *strategy;
	const char *action;
	bool dry_run;
	uint64_t n;
};

/* What the reports show; written by the sampler under @lock. */
#define TM_REPORT_MAX_DOMS 64

struct tm_cg_usage {
	char path[TM_CFG_PATH_MAX];
	int cls; /* TM_CLASS_*, from the scheduler when it runs, else the config */
	double cpu_mcpu;
	uint64_t mem;
	uint64_t usage_us, at_us; /* cpu.stat at the sample, for the next rate */
};

struct tm_dom_usage {
	char cpus[96]; /* online CPUs, "0-3" */
	uint32_t cap_mcpu;
	double used_mcpu;
};

struct tm_snapshot {
	uint64_t at_ms;
	double cpu_used_mcpu;	/* node, all classes */
	double cpu_system_mcpu; /* outside ONLINE and BE cgroups */
	double cpu_online_mcpu, cpu_be_mcpu;
	uint64_t mem_total, mem_used;
	uint64_t mem_online, mem_be;
	uint32_t nr_cpus;
	struct tm_wstat cpu_win[3], mem_win[3]; /* 5, 10, 30 min */
	double online_peak_mcpu;		/* max of the 30 min window */
	uint64_t online_peak_mem;
	double be_alloc_mcpu;
	int64_t be_alloc_mem;
	bool forbid; /* node above a forbid-scheduling watermark */
	bool sched_up;
	uint32_t line_pct;	/* the BE line the arbiter holds */
	const char *line_owner; /* "config" or the strategy that lowered it */
	struct tm_tunables tun;
	uint64_t sched_stats[TM_NR_STATS];
	__u64 wait_hist[TM_NR_CLASSES][TM_HIST_BUCKETS]; /* run-queue wait */
	__u64 wait_sum_ns[TM_NR_CLASSES];
	uint64_t enable_seq;		   /* sched_ext's, at the sample */
	double cpu_total_s[TM_NR_CLASSES]; /* CPU time by class since start */
	int64_t at_realtime;		   /* the sample's wall-clock time, s */
	char dom_kind[8];		   /* "L3", "L2", "package"; "" when unknown */
	struct tm_dom_usage dom[TM_REPORT_MAX_DOMS];
	int nr_dom;
};

struct tm_daemon {
	struct tm_config cfg;
	const char *config_path;
	const char *cgroup_root;
	const char *state_dir; /* records that outlive the process (/run/tidemark) */
	pthread_mutex_t lock;  /* guards snap and actions (HTTP thread reads them) */
	struct tm_snapshot snap;
	struct tm_cg_usage *cg; /* every reported cgroup at the last sample (grows) */
	int nr_cg;
	struct tm_action_count actions[TM_MAX_ACTION_KINDS];
	int nr_actions;
	uint64_t config_reloads, config_rejects;
	uint64_t http_cut;	       /* connections shut down past their deadline */
	uint64_t http_log_lines;       /* libmicrohttpd messages logged (rate-limited) */
	uint64_t push_ok, push_failed; /* report pushes to report.push_url */
	struct {
		const char *what; /* a table: "interference.be" */
		unsigned int limit;
		uint64_t hits; /* rounds that found more than it holds */
	} limits[TM_MAX_LIMITS];
	int nr_limits;
	char *bw_prom;	 /* the CPU limits' counters, as /metrics text (last sample) */
	char *wait_prom; /* the ONLINE cgroups' wait histograms, the same */
	/* BE-line requests (actuate.h: tm_line_request); main thread only */
	struct tm_line_req line_req[TM_MAX_LINE_REQS];
	int nr_line_req;
	unsigned int events;  /* TM_EV_* raised since the last round */
	bool fallback_active; /* the CFS fallback holds BE (under @lock) */
	uint64_t round_ms;    /* the main loop's last round (atomic): /healthz */
};

#endif
