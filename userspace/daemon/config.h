/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tidemarkd configuration: one versioned JSON file (jansson), validated as a
 * whole before anything is applied. Errors name the field and the rule
 * ("watermarks.cpu.suppress_pct: must be below evict_pct (70)"). No exit().
 */
#ifndef __TM_CONFIG_H
#define __TM_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#define TM_CONFIG_VERSION  1
#define TM_CFG_MAX_CGROUPS 64
#define TM_CFG_PATH_MAX	   512

struct tm_cfg_cgroup {
	char path[TM_CFG_PATH_MAX]; /* relative to the cgroup root, may be a glob */
	int priority;		    /* BE: lower is evicted first (default 0) */
	uint32_t request_mcpu;	    /* 0: from cpu.max, else cpu.weight */
};

struct tm_config {
	int version;
	/* watermarks, % of the node; forbid <= suppress <= evict_lower < evict */
	struct {
		uint32_t forbid_pct;	  /* report: the node takes no new BE above this */
		uint32_t suppress_pct;	  /* the scheduler's BE line */
		uint32_t evict_lower_pct; /* cpu_high evicts down to this (default suppress_pct) */
		uint32_t evict_pct;	  /* cpu_high evicts BE when the node is above this */
		uint32_t evict_window_s;  /* ... on average over this many seconds */
	} cpu;
	struct {
		uint32_t forbid_pct;
		uint32_t evict_lower_pct; /* eviction stops at or below this */
		uint32_t evict_pct;	  /* eviction starts at or above this */
	} memory;
	/* scheduler tunables the daemon keeps in the pinned map */
	uint32_t max_be_wait_ms;
	uint32_t be_floor_mcpu;
	/* memory eviction strategy */
	struct {
		bool enabled;
		bool dry_run;
		bool throttle_first; /* memory.high / memory.reclaim before cgroup.kill */
		uint32_t poll_ms;
		uint32_t cooldown_ms;
	} memory_eviction;
	/* CFS fallback while tidemark is not the running scheduler (fallback.c) */
	struct {
		bool enabled;
		bool dry_run;
		bool ready; /* /readyz counts the fallback as ready */
	} fallback;
	/* every eviction: a cgroup (or pod, by UID) that comes back after a
	 * kill is not killed again before its back-off, only capped */
	struct {
		uint32_t backoff_initial_s; /* after the first kill */
		uint32_t backoff_max_s;	    /* doubled after each further kill, up to this */
		uint32_t backoff_cap_mcpu;  /* its BE cap meanwhile (0: none) */
	} eviction;
	/* satisfaction-based CPU eviction (strategies/cpu_eviction.c) */
	struct {
		bool enabled;
		bool dry_run;
		uint32_t window_s;	   /* averaging window */
		uint32_t min_coverage_pct; /* samples needed in the window */
		uint32_t lower_pct;	   /* evict below this satisfaction */
		uint32_t upper_pct;	   /* release enough to get back to this */
		uint32_t usage_gate_pct;   /* only while BE uses this much of what it may */
		uint32_t cooldown_s;
		uint32_t max_per_round;
		/* request of a BE cgroup that states none (no request_mcpu, no
		 * cpu.max quota, cpu.weight 1 as kubelet gives BestEffort pods) */
		uint32_t default_request_mcpu;
	} cpu_eviction;
	/* interference detection and its action ladder (strategies/interference.c) */
	struct {
		bool enabled;
		bool dry_run;
		uint32_t sample_ms;	    /* one sample of every signal */
		uint32_t warmup_samples;    /* before a baseline is trusted */
		uint32_t baseline_span;	    /* EWMA span of the baselines, samples */
		double sigma;		    /* outlier: above mean + sigma x spread */
		uint32_t min_rise_pct;	    /* ... and above mean x (1 + this/100) */
		uint32_t need_n, of_m;	    /* interfered: n outliers in the last m samples */
		uint32_t corr_samples;	    /* samples the culprit correlation looks at */
		uint32_t min_corr_pct;	    /* culprit: correlation at least this / 100 */
		uint32_t min_active_mcpu;   /* culprit: using at least this now */
		uint32_t cooldown_s;	    /* between two steps of the ladder */
		uint32_t recover_s;	    /* calm this long: steps undone */
		uint32_t suppress_step_pct; /* step 1 lowers the BE line by this */
		uint32_t suppress_min_pct;  /* ... never below this */
		uint32_t throttle_mcpu;	    /* step 2 caps the culprit at this */
	} interference;
	/* BE cgroups the daemon may act on (globs); ONLINE/SYSTEM never */
	struct tm_cfg_cgroup be[TM_CFG_MAX_CGROUPS];
	int nr_be;
	char online[TM_CFG_MAX_CGROUPS][TM_CFG_PATH_MAX]; /* never touched */
	int nr_online;
	/* node-load report */
	struct {
		char listen_addr[64]; /* IPv4 address, 127.0.0.1 by default */
		uint32_t listen_ip;   /* ... as validated, network order: what is bound */
		uint16_t listen_port;
		uint32_t sample_s;    /* usage sampling period for the windows */
		uint32_t reclaim_pct; /* BE allocatable = capacity x this ... */
		uint32_t system_reserved_mcpu;
		uint32_t system_reserved_mib;
		char push_url[256]; /* "" = no push */
		uint32_t push_interval_s;
	} report;
	char pin_dir[256];
	/* the cluster (kube.c): pod identity, NodeMetric's status and spec */
	struct {
		char api[16];	       /* "none", "in-cluster" or "kubeconfig" */
		char kubeconfig[1024]; /* api kubeconfig: the file ("": $KUBECONFIG,
					* else $HOME/.kube/config), as resolved */
		char context[256];     /* its context; "": its current-context */
		char node_name[254];   /* "": $NODE_NAME, else the host name */
		char server[256];      /* "": https://$KUBERNETES_SERVICE_HOST:PORT */
		char token_file[256];
		char ca_file[256];
		char pods[16]; /* where pod identity comes from: api, kubelet, none */
		char kubelet_url[256];
		uint32_t pods_refresh_s;  /* the kubelet's list */
		uint32_t watch_timeout_s; /* a watch's renewal, jittered */
		uint32_t start_jitter_s;  /* before the first list */
		uint32_t timeout_ms;	  /* one request, connecting included */
		uint32_t retries;	  /* after a failed request, with back-off */
		bool update_nodemetric;
		bool nodeslo;	    /* the NodeSLO's resourceUsedThresholdWithBE drives the lines */
		bool evict_via_api; /* a pod is evicted through policy/v1 Eviction */
		uint32_t eviction_timeout_s; /* refused (PDB) this long: the fallback */
		char eviction_fallback[8];   /* "kill" (cgroup.kill) or "none" */
		char taint_key[128];	     /* opt-in taint above a forbid line; "" none */
		char taint_effect[24];	     /* NoSchedule or PreferNoSchedule */
		uint32_t taint_after_s;	     /* above that long: tainted */
		uint32_t untaint_after_s;    /* below that long: untainted */
	} kubernetes;
};

/*
 * The field table. Every field of the file is a row: where it lives in
 * struct tm_config, its type and range, its default, unit and meaning. A
 * section ("watermarks.cpu", "cpu_eviction") is a set of rows and an optional
 * cross-check; the core's sections are config.c's, each strategy owns its
 * own (strategy.h's config). Defaults, parsing, the unknown-key checks, the
 * sample file and docs/config.md all come from it.
 */
/* A parse in progress: where its first error goes (config_ctx.c). */
struct tm_cfg_ctx {
	char *err;
	size_t errlen;
	int failed;
};

enum tm_cfg_type { TM_CFG_BOOL, TM_CFG_U32, TM_CFG_NUM, TM_CFG_STR, TM_CFG_OWN };

struct tm_cfg_row {
	const char *key; /* within its section */
	enum tm_cfg_type type;
	size_t off, size;      /* in struct tm_config (TM_CFG_FIELD) */
	double min, max;       /* TM_CFG_U32, TM_CFG_NUM */
	const char *choices;   /* TM_CFG_STR: "a|b|c"; NULL: any string */
	const char *dflt;      /* the default as JSON text; NULL: found at run time */
	const char *dflt_note; /* ... how, for the reference */
	const char *example;   /* JSON text the sample file shows instead of the default */
	const char *unit;      /* "%", "ms", "s", "mCPU", "MiB", "" */
	const char *help;
	/* TM_CFG_OWN: reads its own key from section object @o */
	void (*parse)(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c);
};

struct tm_cfg_section {
	const char *name; /* "a" or "a.b": the object in the file */
	const char *help;
	const struct tm_cfg_row *rows;
	int nr_rows;
	/* after its rows, when none failed; @o is its object (NULL: absent) */
	void (*check)(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c);
};

#define TM_CFG_FIELD(m) \
	.off = offsetof(struct tm_config, m), .size = sizeof(((struct tm_config *)0)->m)
/* The common rows: a whole number in [lo, hi], a switch, a string (of
 * choices "a|b", or any: NULL). */
#define TM_CFG_U32_ROW(k, m, lo, hi, d, u, h)                                                   \
	{                                                                                       \
		.key = k, .type = TM_CFG_U32, TM_CFG_FIELD(m), .min = lo, .max = hi, .dflt = d, \
		.unit = u, .help = h                                                            \
	}
#define TM_CFG_BOOL_ROW(k, m, d, h)                                                  \
	{                                                                            \
		.key = k, .type = TM_CFG_BOOL, TM_CFG_FIELD(m), .dflt = d, .help = h \
	}
#define TM_CFG_STR_ROW(k, m, d, ch, h)                                                             \
	{                                                                                          \
		.key = k, .type = TM_CFG_STR, TM_CFG_FIELD(m), .dflt = d, .choices = ch, .help = h \
	}
#define TM_CFG_ROWS(a) .rows = a, .nr_rows = sizeof(a) / sizeof((a)[0])

/* The first failure is the one reported: "field: what is wrong". -1. */
int tm_cfg_fail(struct tm_cfg_ctx *x, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool tm_cfg_failed(const struct tm_cfg_ctx *x);

/* Every section, in the order they are read: the core's first ones, the
 * strategies' (tm_strategies' order), the core's last ones. */
int tm_cfg_sections(const struct tm_cfg_section **out, int max);

/* Defaults for every field (a config file may give only what differs). */
void tm_config_defaults(struct tm_config *c);
/* Do the table's defaults pass their own rows? 0, or -1 naming the row. */
int tm_config_defaults_check(char *err, size_t errlen);
/* The reference (docs/config.md), and a complete sample file (malloc'd). */
void tm_config_reference(FILE *f);
char *tm_config_sample(void);

/*
 * Parse and validate @text (JSON). On success *c is the complete new
 * configuration; on failure *c is untouched and @err names the field.
 */
int tm_config_parse(const char *text, struct tm_config *c, char *err, size_t errlen);

/* What the checks that depend on the node need: its online CPUs and the
 * daemon's own cgroup ("/system.slice/tidemarkd.service"). */
struct tm_node_facts {
	uint32_t nr_cpus;
	char self_cgroup[TM_CFG_PATH_MAX];
};

/* This node's facts; 0 (an unreadable /proc/self/cgroup leaves "" ). */
int tm_node_facts_read(struct tm_node_facts *n);

/*
 * What the daemon would refuse or misapply on node @n: a BE floor above the
 * line (or above the lowest line interference may set), a BE pattern that
 * takes in "/", the system's slices or the daemon's own cgroup. 0, or -1
 * with the field named in @err.
 */
int tm_config_check_node(const struct tm_config *c, const struct tm_node_facts *n, char *err,
			 size_t errlen);

/* tm_config_parse then tm_config_check_node (@n NULL: this node); *c is
 * untouched unless both accept. The one validation --check, start and
 * SIGHUP share. */
int tm_config_parse_node(const char *text, struct tm_config *c, const struct tm_node_facts *n,
			 char *err, size_t errlen);

/* Read @path and parse it (tm_config_parse_node on this node). */
int tm_config_load(const char *path, struct tm_config *c, char *err, size_t errlen);

#include "nodeslo.h"

/*
 * tm_config_load with @o over the file's values: the same checks, an error
 * naming the NodeSLO field ("NodeSLO resourceUsedThresholdWithBE.
 * cpuSuppressThresholdPercent (watermarks.cpu.suppress_pct): ...") when it
 * is an overlaid value that fails.
 */
int tm_config_load_overlay(const char *path, const struct tm_slo_overlay *o, struct tm_config *c,
			   char *err, size_t errlen);
#endif
