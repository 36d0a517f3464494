// SPDX-License-Identifier: GPL-2.0
/*
 * CPU suppress: the scheduler enforces the BE line in-kernel; this strategy
 * keeps the scheduler's pinned tunables (suppress_pct, max_be_wait_ms,
 * be_floor_mcpu) equal to the configuration, the BE line being the lowest
 * the arbiter holds (tm_line_pct), checked every 250 ms and at once when the
 * line changes, so a restarted scheduler (a new map behind the pin: after a
 * kill -9 it starts at its command line's line) has tidemarkd's within
 * 250 ms of pinning its maps, and a reload is followed.
 * When no scheduler runs, it waits: the node is then not protected, which
 * the report says (scheduler_up 0).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "actuate.h"
#include "strategy.h"
#include "tidemark_policy.h"
#include "tmmaps.h"
#include "log.h"

#define NAME "cpu_suppress"

static struct {
	__u32 map_id; /* the tunables map last written */
	bool dirty;   /* configuration changed since */
	bool refused; /* the scheduler refused @refused_want */
	struct tm_tunables refused_want;
} st;

static void configure(struct tm_daemon *d)
{
	st.dirty = true;
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	struct tm_tunables t, want;
	const char *owner;
	int fd, ufd = -1;
	char err[512];

	fd = tm_pin(d, TM_PIN_TUNABLES);
	if (fd < 0) {
		st.map_id = 0; /* no scheduler: apply when one comes */
		return;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || bpf_map_lookup_elem(fd, &zero, &t))
		goto out;
	want = t;
	want.suppress_pct = tm_line_pct(d, &owner);
	want.max_be_wait_ms = d->cfg.max_be_wait_ms;
	want.be_floor_mcpu = d->cfg.be_floor_mcpu;
	if (want.suppress_pct == t.suppress_pct && want.max_be_wait_ms == t.max_be_wait_ms &&
	    want.be_floor_mcpu == t.be_floor_mcpu) {
		st.map_id = info.id;
		st.dirty = false;
		goto out;
	}
	/* refused before: try again only on a new configuration, scheduler or line */
	if (st.refused && !st.dirty && info.id == st.map_id &&
	    st.refused_want.suppress_pct == want.suppress_pct &&
	    st.refused_want.max_be_wait_ms == want.max_be_wait_ms &&
	    st.refused_want.be_floor_mcpu == want.be_floor_mcpu)
		goto out;
	ufd = tm_pin(d, TM_PIN_TUNABLES_UPDATE);
	if (ufd < 0)
		goto out;
	/* the scheduler validates the whole set against its own CPU count */
	if (tm_audit(d, NAME, "set", false,
		     "suppress_pct=%u->%u line_owner=%s max_be_wait_ms=%u->%u be_floor_mcpu=%u->%u "
		     "map_id=%u",
		     t.suppress_pct, want.suppress_pct, owner, t.max_be_wait_ms,
		     want.max_be_wait_ms, t.be_floor_mcpu, want.be_floor_mcpu, info.id) &&
	    tm_tunables_update(ufd,
			       TM_TUN_SUPPRESS_PCT | TM_TUN_MAX_BE_WAIT_MS | TM_TUN_BE_FLOOR_MCPU,
			       &want, false, NULL, NULL, err, sizeof(err))) {
		/* e.g. a floor above this node's line: refused, what runs is kept */
		tm_log(TM_LOG_WARNING, "tidemarkd: %s: not applied: %s\n", NAME, err);
		st.refused = true;
		st.refused_want = want;
	} else {
		st.refused = false;
	}
	st.map_id = info.id;
	st.dirty = false;
out:
	if (ufd >= 0)
		close(ufd);
	close(fd);
}

static uint32_t period_ms(const struct tm_daemon *d)
{
	return 250;
}

const struct tm_strategy tm_strategy_cpusuppress = {
	.name = NAME,
	.wake_on = TM_EV_LINE,
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
};
