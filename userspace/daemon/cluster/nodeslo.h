/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __TM_NODESLO_H
#define __TM_NODESLO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/*
 * The node's NodeSLO as a configuration source: the fields of Koordinator's
 * spec.resourceUsedThresholdWithBE tidemark has a counterpart for, each
 * present or not. Applied over the file's values and validated with them,
 * exactly as the file is.
 */
enum {
	TM_SLO_CPU_SUPPRESS,	/* cpuSuppressThresholdPercent -> watermarks.cpu.suppress_pct */
	TM_SLO_MEM_EVICT,	/* memoryEvictThresholdPercent -> watermarks.memory.evict_pct */
	TM_SLO_MEM_EVICT_LOWER, /* memoryEvictLowerPercent -> watermarks.memory.evict_lower_pct */
	TM_SLO_SAT_UPPER,	/* cpuEvictBESatisfactionUpperPercent -> cpu_eviction.upper_pct */
	TM_SLO_SAT_LOWER,	/* cpuEvictBESatisfactionLowerPercent -> cpu_eviction.lower_pct */
	TM_SLO_BE_USAGE,	/* cpuEvictBEUsageThresholdPercent -> cpu_eviction.usage_gate_pct */
	TM_SLO_EVICT_WINDOW,	/* cpuEvictTimeWindowSeconds -> cpu_eviction.window_s */
	TM_NR_SLO,
};

struct tm_slo_overlay {
	bool has[TM_NR_SLO];
	int64_t v[TM_NR_SLO];
};

/* The NodeSLO field and the configuration field of each. */
extern const char *const tm_slo_field[TM_NR_SLO];
extern const char *const tm_slo_cfg_field[TM_NR_SLO];

/*
 * From a NodeSLO's spec (NULL, or resourceUsedThresholdWithBE absent or
 * "enable": false: an empty overlay). -1 with the NodeSLO field named when
 * a value is not an integer.
 */
int tm_slo_overlay_from_spec(json_t *spec, struct tm_slo_overlay *o, char *err, size_t errlen);
#endif
