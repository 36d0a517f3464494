/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Actuators: the only way strategies act on the node or the scheduler, so
 * every action is one audit line and one metric, dry-run is honoured in one
 * place, and protected (ONLINE/SYSTEM) cgroups are never touched.
 */
#ifndef __TM_ACTUATE_H
#define __TM_ACTUATE_H
#include <stdbool.h>
#include <stdint.h>
#include "daemon.h"
#include "pins.h"
#include "audit.h"
#include "evictor.h"
#include "saved.h"

/* Cap the BE tasks of @rel and every cgroup below at @mcpu in the running
 * scheduler (0 removes the cap), as tidemarkd's. False when no scheduler
 * runs or @rel is gone. */
bool tm_be_cap(struct tm_daemon *d, const char *rel, uint32_t mcpu);

/*
 * The BE line. The configuration sets it (watermarks.cpu.suppress_pct); a
 * strategy may ask for it lower, as @owner. The lowest request wins; each
 * owner withdraws only its own. A change raises TM_EV_LINE, so the
 * strategy that applies the line runs in the same round.
 */
void tm_line_request(struct tm_daemon *d, const char *owner, uint32_t pct);
void tm_line_withdraw(struct tm_daemon *d, const char *owner);
/* The line to apply, and who holds it ("config" when no request is lower). */
uint32_t tm_line_pct(const struct tm_daemon *d, const char **owner);

/* A pinned object of the running scheduler (tm_pin_open, ABI checked): an fd
 * the caller closes, or -1 when none runs or its ABI differs (said once on
 * stderr). Opened once per round of the main loop (tm_pins_round). */
int tm_pin(const struct tm_daemon *d, enum tm_pin which);
/* A new round: pins are looked up again (a restarted scheduler pins anew). */
void tm_pins_round(void);

/* The class the scheduler gives cgroup @rel (path under the cgroup root),
 * from the pinned classes map; -1 when no scheduler is running. */
int tm_sched_class_of(const struct tm_daemon *d, const char *rel);

/* Does a configured ONLINE path (or glob) name @rel itself? Paths are in
 * their one form ("/x/y", tm_cg_rel_norm) since the configuration was parsed. */
bool tm_cfg_online(const struct tm_daemon *d, const char *rel);

/* Is @rel configured ONLINE, or classified ONLINE/SYSTEM by the scheduler?
 * Such cgroups are never acted on. */
bool tm_protected(const struct tm_daemon *d, const char *rel);

/* Write @val to @file of cgroup @rel (under the cgroup root): 0, or -1 with
 * errno. */
int tm_cg_write(const struct tm_daemon *d, const char *rel, const char *file, const char *val);

/* A BE cgroup the configuration names, globs expanded; never a protected one. */
struct tm_be_cg {
	char path[TM_CFG_PATH_MAX];	 /* "/x/y", relative to the cgroup root */
	const struct tm_cfg_cgroup *cfg; /* the entry that named it (first match) */
};

/* Keep the cgroups of @be not inside another of them (a nested one is held
 * by its ancestor's cpu.max, and in its usage): sorts @be, returns how many
 * are kept at its start. O(n log n). */
int tm_be_top_level(struct tm_be_cg *be, int nb);

/* Every BE cgroup of the configuration, without duplicates, in a malloc'd
 * array (*out, caller frees; NULL when none). Returns how many; -1 when out
 * of memory. Nothing is left out: it grows with the node. */
int tm_be_cgroups(struct tm_daemon *d, struct tm_be_cg **out);

#endif
