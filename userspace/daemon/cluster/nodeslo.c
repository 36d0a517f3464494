// SPDX-License-Identifier: GPL-2.0
/*
 * The NodeSLO's resourceUsedThresholdWithBE as an overlay over the
 * configuration file (nodeslo.h): what the API client reads, and what the
 * configuration applies and validates as its own values.
 */
#include <stdio.h>

#include "nodeslo.h"

const char *const tm_slo_field[TM_NR_SLO] = {"cpuSuppressThresholdPercent",
					     "memoryEvictThresholdPercent",
					     "memoryEvictLowerPercent",
					     "cpuEvictBESatisfactionUpperPercent",
					     "cpuEvictBESatisfactionLowerPercent",
					     "cpuEvictBEUsageThresholdPercent",
					     "cpuEvictTimeWindowSeconds"};
const char *const tm_slo_cfg_field[TM_NR_SLO] = {"watermarks.cpu.suppress_pct",
						 "watermarks.memory.evict_pct",
						 "watermarks.memory.evict_lower_pct",
						 "cpu_eviction.upper_pct",
						 "cpu_eviction.lower_pct",
						 "cpu_eviction.usage_gate_pct",
						 "cpu_eviction.window_s"};

int tm_slo_overlay_from_spec(json_t *spec, struct tm_slo_overlay *o, char *err, size_t errlen)
{
	json_t *r = spec ? json_object_get(spec, "resourceUsedThresholdWithBE") : NULL, *v;
	struct tm_slo_overlay n = {};

	if (r && !json_is_null(r) && !json_is_object(r)) {
		snprintf(err, errlen, "NodeSLO resourceUsedThresholdWithBE: must be an object");
		return -1;
	}
	v = r ? json_object_get(r, "enable") : NULL;
	if (v && !json_is_boolean(v) && !json_is_null(v)) {
		snprintf(err, errlen,
			 "NodeSLO resourceUsedThresholdWithBE.enable: must be true or false");
		return -1;
	}
	/* off: the strategy is not the cluster's to drive here; the file's values */
	if (json_is_object(r) && !json_is_false(v)) {
		for (int i = 0; i < TM_NR_SLO; i++) {
			v = json_object_get(r, tm_slo_field[i]);
			if (!v || json_is_null(v))
				continue;
			if (!json_is_integer(v)) {
				snprintf(err, errlen,
					 "NodeSLO resourceUsedThresholdWithBE.%s: must be an "
					 "integer",
					 tm_slo_field[i]);
				return -1;
			}
			n.has[i] = true;
			n.v[i] = json_integer_value(v);
		}
		/* Koordinator's default lower line: the threshold less 2 */
		if (n.has[TM_SLO_MEM_EVICT] && !n.has[TM_SLO_MEM_EVICT_LOWER]) {
			n.has[TM_SLO_MEM_EVICT_LOWER] = true;
			n.v[TM_SLO_MEM_EVICT_LOWER] = n.v[TM_SLO_MEM_EVICT] - 2;
		}
	}
	*o = n;
	return 0;
}
