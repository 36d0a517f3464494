// SPDX-License-Identifier: GPL-2.0
/*
 * Topology inputs: kernel CPU lists (sysfs, cpuset.cpus) and hwloc
 * synthetic descriptions given to --topology. A parsed list printed and
 * parsed again is the same set.
 */
#include <stdio.h>
#include "fuzz.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tm_topology t;
	struct tm_cpuset a, b;
	char buf[8192], err[512], *s;

	if (!size)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	if (!s)
		return 0;
	if (data[0] & 1) {
		if (!tm_cpuset_parse(s, &a)) {
			tm_cpuset_format(&a, buf, sizeof(buf));
			if (tm_cpuset_parse(buf, &b) || memcmp(&a, &b, sizeof(a)))
				abort();
		}
	} else if (size < 200 && !strchr(s, '/')) {
		/* never a file name: a synthetic description only */
		if (tm_topo_load(s, &t, err, sizeof(err)) && !err[0])
			abort();
	}
	free(s);
	return 0;
}
