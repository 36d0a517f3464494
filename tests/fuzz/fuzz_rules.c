// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line inputs: class rules and their globs, pod UIDs from cgroup
 * names, --home rules, cgroup path forms, and tidemarkctl's class and
 * NAME=VALUE arguments. The first byte picks the parser.
 */
#include <stdio.h>
#include "fuzz.h"
#include "demand.h"
#include "rules.h"
#include "tmlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tm_ruleset rs;
	static struct tm_place_cfg pc;
	char err[512], out[4096], uid[64], *s;
	struct tm_tunables t = {};
	const char *why;
	__u32 set = 0;

	if (!size)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	if (!s)
		return 0;
	err[0] = 0;
	switch (data[0] % 6) {
	case 0:
		memset(&rs, 0, sizeof(rs));
		if (tm_rules_add(&rs, s, TM_CLASS_BE, err, sizeof(err)) && !err[0])
			abort();
		break;
	case 1:
		if (tm_pod_uid(s, uid, sizeof(uid)) == 1 && strlen(uid) != 36)
			abort();
		break;
	case 2:
		memset(&pc, 0, sizeof(pc));
		if (tm_home_rule_add(&pc, s, err, sizeof(err)) && !err[0])
			abort();
		for (int i = 0; i < pc.n; i++)
			free((char *)pc.r[i].path); /* the options own them for the run */
		break;
	case 3:
		/* the one form is a fixed point */
		if (!tm_cg_rel_norm(s, out, sizeof(out), &why)) {
			char again[4096];

			if (tm_cg_rel_norm(out, again, sizeof(again), &why) || strcmp(out, again))
				abort();
		}
		break;
	case 4:
		if (tm_tunable_set(&t, &set, s, err, sizeof(err)) && !err[0])
			abort();
		break;
	case 5:
		tm_class_parse(s);
		tm_kubelet_parse(s);
		break;
	}
	free(s);
	return 0;
}
