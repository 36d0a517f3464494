// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup and proc file readers: cpu.max (+ cpu.max.burst), cpu.stat,
 * memory.stat, memory.current and pressure files, fed whatever a file
 * could hold. The first byte picks the file.
 */
#include <stdio.h>
#include <unistd.h>
#include "fuzz.h"
#include "../unit/fakecg.h"
#include "interference_signals.h"
#include "tmlib.h"

static char dir[64];

static void put(const char *name, const uint8_t *data, size_t size)
{
	if (fakecg_put_bytes(dir, "", name, data, size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = {"cpu.max",	   "cpu.max.burst",  "cpu.stat",
					    "memory.stat", "memory.current", "cpu.pressure"};
	__u64 q, per, burst, v;
	uint64_t us;
	__u32 mcpu;
	int r;

	if (!dir[0]) {
		if (fakecg_root(dir, sizeof(dir)))
			abort();
		put("cpu.max", (const uint8_t *)"max 100000\n", 11);
	}
	if (!size)
		return 0;
	put(files[data[0] % 6], data + 1, size - 1);
	r = tm_cg_bw_read("/", dir, &q, &per, &burst);
	if (r == 1 && !per)
		abort(); /* a quota with no period */
	tm_cg_cpu_max("/", dir, &mcpu);
	tm_cg_read_u64(dir, "cpu.stat", "usage_usec", &v);
	tm_cg_read_u64(dir, "memory.stat", "anon", &v);
	tm_cg_read_u64(dir, "memory.current", NULL, &v);
	tm_psi_some_us(dir, "cpu", &us);
	return 0;
}
