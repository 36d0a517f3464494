/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The saved-value store: cgroup values tidemarkd replaced, on disk before
 * they are overwritten, put back exactly (also after a kill -9).
 */
#ifndef __TM_SAVED_H
#define __TM_SAVED_H
#include <stddef.h>

struct tm_daemon;

/*
 * Cgroup writes that must not outlive their reason (a CFS fallback, a
 * lowered memory.high). The first write of @owner to @file of @rel records
 * the value it replaces, in memory and in <state_dir>/saved.json (written
 * whole, then renamed into place), before writing: tm_cg_restore puts back
 * exactly that value, also after tidemarkd was killed and started again.
 * @val NULL only records (a value the kernel changes as a side effect).
 * Restored last first. 0, or -1 with errno (nothing written).
 */
int tm_cg_write_saved(struct tm_daemon *d, const char *owner, const char *rel, const char *file,
		      const char *val);
/* Many at once: tm_cg_record each value about to be replaced (in memory),
 * then tm_saved_sync once (to disk) before any of the writes; a record set
 * that cannot be stored is dropped again, so nothing is written unrecorded. */
int tm_cg_record(struct tm_daemon *d, const char *owner, const char *rel, const char *file);
int tm_saved_sync(struct tm_daemon *d);
/* Put back what @owner changed, in @rel only or everywhere (@rel NULL), and
 * drop those records. Returns how many values were put back; *@gone (may be
 * NULL) gets how many records were dropped because their cgroup is gone. */
int tm_cg_restore(struct tm_daemon *d, const char *owner, const char *rel, int *gone);
/* Records @owner holds (loaded at start too). */
int tm_saved_count(const char *owner);
/* Load what a previous tidemarkd recorded; -1 with a message if unreadable. */
int tm_saved_load(struct tm_daemon *d, char *err, size_t len);
#endif
