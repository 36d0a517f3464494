// SPDX-License-Identifier: GPL-2.0
/* tidemarkd's configuration: parse and node checks, as --check runs them. */
#include <stdio.h>
#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tm_node_facts n = {.nr_cpus = 2};
	struct tm_config c;
	char err[512], *s = fuzz_str(data, size);

	if (!s)
		return 0;
	snprintf(n.self_cgroup, sizeof(n.self_cgroup), "/system.slice/tidemarkd.service");
	tm_config_defaults(&c);
	if (!tm_config_parse_node(s, &c, &n, err, sizeof(err))) {
		/* what was accepted must pass the node checks again */
		if (tm_config_check_node(&c, &n, err, sizeof(err)))
			abort();
	} else if (!err[0]) {
		abort(); /* refused without saying why */
	}
	free(s);
	return 0;
}
