/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runtime changes that outlive the scheduler: class changes and operator caps
 * made with tidemarkctl are recorded by cgroup path in
 * <dir>/runtime.json (TM_STATE_DIR unless the environment's
 * TIDEMARK_STATE_DIR says otherwise), and scx_tidemark applies them again to
 * every fresh scheduler (a restart, a reload after CPU hotplug) after its
 * class rules. Written whole under a lock, renamed into place. No exit().
 */
#ifndef __TM_RUNTIME_H
#define __TM_RUNTIME_H
#include <stddef.h>
#include <linux/types.h>

#define TM_STATE_DIR "/run/tidemark"

/* The state directory in use. */
const char *tm_state_dir(void);

/* Record the class of cgroup @path ("/x/y" or under /sys/fs/cgroup): @cls a
 * TM_CLASS_*, or -1 for "none" (no class of its own, whatever a rule says). */
int tm_runtime_set_class(const char *path, int cls, char *err, size_t len);
/* Record an operator cap of @mcpu on @path and below (0: no cap any more). */
int tm_runtime_set_cap(const char *path, __u32 mcpu, char *err, size_t len);

/*
 * Apply every record to a scheduler: classes to its "classes" map, caps
 * through its bw_update program @bw_fd. Records
 * of cgroups that no longer exist are reported on stderr and kept. Returns
 * how many were applied, -1 with a message when the file is unreadable.
 */
int tm_runtime_apply(int classes_fd, int bw_fd, char *err, size_t len);
#endif
