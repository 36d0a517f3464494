/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers on the scheduler's maps, for the programs that link libbpf. */
#ifndef __TMMAPS_H
#define __TMMAPS_H
#include <bpf/bpf.h>
#include "tidemark.h"

/* A class change bumps class_gen so cached per-task lookups are redone. */
static inline int tm_bump_class_gen(int tunables_fd)
{
	struct tm_tunables t;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(tunables_fd, &zero, &t))
		return -1;
	t.class_gen++;
	return bpf_map_update_elem(tunables_fd, &zero, &t, BPF_ANY);
}
#endif
