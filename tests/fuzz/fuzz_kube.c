// SPDX-License-Identifier: GPL-2.0
/*
 * What the cluster sends tidemarkd: a pod list (the API server's or the
 * kubelet's), a NodeMetric's spec and a NodeSLO's, as JSON; and quantities and
 * durations as text. The first byte picks the parser. Contracts: a parsed
 * list holds only pods with a UID, namespace and name, sorted by UID, with
 * a Koordinator QoS and priority class; a policy either parses whole with
 * every value in range or leaves the old one untouched; a quantity that
 * parses prints back to the same amount.
 */
#include <stdio.h>
#include <jansson.h>
#include "fuzz.h"
#include "config.h"
#include "nodemetric.h"
#include "quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tm_nm_policy p, before;
	struct tm_pod *pods;
	char err[512], buf[64], *s;
	uint64_t v, w;
	uint32_t secs;
	json_t *j;
	int n;

	if (!size)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	if (!s)
		return 0;
	switch (data[0] % 5) {
	case 0:
		j = json_loads(s, JSON_DECODE_ANY, NULL);
		n = j ? tm_pods_parse(j, &pods, err, sizeof(err)) : -1;
		for (int i = 0; i < n; i++) {
			if (!pods[i].uid[0] || !pods[i].ns[0] || !pods[i].name[0] ||
			    !pods[i].qos[0] || !pods[i].prio[0])
				abort();
			if (i && strcmp(pods[i - 1].uid, pods[i].uid) > 0)
				abort();
		}
		if (n >= 0)
			free(pods);
		json_decref(j);
		break;
	case 1:
		j = json_loads(s, JSON_DECODE_ANY, NULL);
		memset(&p, 0x5a, sizeof(p));
		before = p;
		if (j && !tm_nm_policy_from_spec(j, &p, err, sizeof(err))) {
			if (!p.aggregate_s || !p.report_s || p.nr_durations < 0 ||
			    p.nr_durations > TM_NM_MAX_DURATIONS || p.mem < 0 || p.mem > 2)
				abort();
		} else if (j && memcmp(&p, &before, sizeof(p))) {
			abort(); /* refused: nothing half-applied */
		}
		json_decref(j);
		break;
	case 2:
		if (!tm_qty_parse(s, 1, &v)) {
			tm_qty_bytes(buf, sizeof(buf), v);
			if (tm_qty_parse(buf, 1, &w) || w != v)
				abort();
		}
		if (!tm_qty_parse(s, 1000, &v)) {
			tm_qty_cpu(buf, sizeof(buf), v);
			if (tm_qty_parse(buf, 1000, &w) || w != v)
				abort();
		}
		break;
	case 4: {
		struct tm_slo_overlay o, o0;

		j = json_loads(s, JSON_DECODE_ANY, NULL);
		memset(&o, 0x5a, sizeof(o));
		o0 = o;
		if (j && tm_slo_overlay_from_spec(j, &o, err, sizeof(err)) &&
		    memcmp(&o, &o0, sizeof(o)))
			abort(); /* refused: nothing half-applied */
		json_decref(j);
		break;
	}
	default:
		if (!tm_duration_parse(s, &secs)) {
			if (!secs || secs > 30 * 86400)
				abort();
			tm_duration_fmt(buf, sizeof(buf), secs);
			if (tm_duration_parse(buf, &secs) || !secs)
				abort();
		}
		break;
	}
	free(s);
	return 0;
}
