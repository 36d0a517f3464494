// SPDX-License-Identifier: GPL-2.0
/*
 * CPU suppress: the scheduler enforces the BE line in-kernel; this strategy
 * keeps the scheduler's pinned tunables (suppress_pct, max_be_wait_ms,
 * be_floor_mcpu) equal to the configuration (the BE line lowered while the
 * interference ladder holds it down), checked every tick, so a
 * restarted scheduler (a new map behind the pin) and a reload are followed.
 * When no scheduler runs, it waits: the node is then not protected, which
 * the report says (scheduler_up 0).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "daemon.h"
#include "tidemark_policy.h"
#include "tmmaps.h"

#define NAME "cpusuppress"

static struct {
	__u32 map_id; /* the tunables map last written */
	bool dirty;   /* configuration changed since */
} st;

static int nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : 1;
}

static void configure(struct tm_daemon *d)
{
	st.dirty = true;
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	struct tm_tunables t, want;
	char path[300];
	const char *why;
	int fd;

	snprintf(path, sizeof(path), "%s/tunables", d->cfg.pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		st.map_id = 0; /* no scheduler: apply when one comes */
		return;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || bpf_map_lookup_elem(fd, &zero, &t))
		goto out;
	/* compared every tick: the loader's class_gen bump is a read-modify-write
	 * of the same map and could put old values back */
	want = t;
	want.suppress_pct = d->cfg.cpu.suppress_pct;
	if (d->suppress_override_pct && d->suppress_override_pct < want.suppress_pct)
		want.suppress_pct = d->suppress_override_pct;
	want.max_be_wait_ms = d->cfg.max_be_wait_ms;
	want.be_floor_mcpu = d->cfg.be_floor_mcpu;
	why = tm_tunables_check(&want, nr_cpus());
	if (why) {
		/* e.g. a floor above this node's line: refuse, keep what runs */
		if (st.dirty || info.id != st.map_id)
			fprintf(stderr, "tidemarkd: %s: not applied: %s\n", NAME, why);
		st.dirty = false;
		st.map_id = info.id;
		goto out;
	}
	/* a change of ours also makes the scheduler look classes up again, so a
	 * class_gen bump lost to a concurrent write costs nothing */
	want.class_gen = t.class_gen + 1;
	if (want.suppress_pct != t.suppress_pct || want.max_be_wait_ms != t.max_be_wait_ms ||
	    want.be_floor_mcpu != t.be_floor_mcpu) {
		if (tm_audit(d, NAME, "set", false,
			     "suppress_pct=%u->%u max_be_wait_ms=%u->%u be_floor_mcpu=%u->%u "
			     "map_id=%u",
			     t.suppress_pct, want.suppress_pct, t.max_be_wait_ms,
			     want.max_be_wait_ms, t.be_floor_mcpu, want.be_floor_mcpu, info.id) &&
		    bpf_map_update_elem(fd, &zero, &want, BPF_ANY)) {
			fprintf(stderr, "tidemarkd: %s: cannot write %s: %s\n", NAME, path,
				strerror(errno));
			goto out;
		}
	}
	st.map_id = info.id;
	st.dirty = false;
out:
	close(fd);
}

const struct tm_strategy tm_strategy_cpusuppress = {
	.name = NAME,
	.configure = configure,
	.tick = tick,
};
