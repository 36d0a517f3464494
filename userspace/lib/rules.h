/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Class rules: cgroup path, prefix or glob -> class, plus built-in rules for
 * kubelet's cgroup layouts. A rule classifies the cgroups it matches; their
 * descendants follow (the scheduler uses the nearest classified ancestor),
 * so a rule on a QoS-level cgroup covers every pod created under it later.
 * No exit(): errors come back with a message in the caller's buffer.
 */
#ifndef __TM_RULES_H
#define __TM_RULES_H
#include <stdbool.h>
#include <stddef.h>
#include "tidemark_abi.h"

#define TM_MAX_RULES 256

enum tm_rescan {
	TM_RESCAN_MS_DFL = 1000,
	TM_RESCAN_MS_MIN = 10,
	TM_RESCAN_MS_MAX = 60000,
};

enum tm_kubelet {
	TM_KUBELET_OFF,
	TM_KUBELET_AUTO, /* both layouts, whichever exists (now or later) */
	TM_KUBELET_SYSTEMD,
	TM_KUBELET_CGROUPFS,
};

struct tm_rule {
	const char *path; /* relative to the cgroup root; may hold * ? [ ] */
	__u32 cls;
	bool optional; /* may match nothing (e.g. kubelet not started yet) */
	bool builtin;  /* from the kubelet layouts, not from the user */
};

struct tm_ruleset {
	struct tm_rule r[TM_MAX_RULES];
	int n;
};

struct tm_class_entry {
	__u64 id; /* cgroup id (cgroup2 inode number) */
	__u32 cls;
	int rule; /* index of the rule that decided it */
};

/* "off", "auto", "systemd", "cgroupfs" -> enum; -1 if unknown. */
int tm_kubelet_parse(const char *s);

/* Append a user rule; -1 with a message when full or the path is unusable. */
int tm_rules_add(struct tm_ruleset *rs, const char *path, __u32 cls, char *err, size_t errlen);

/*
 * Append the built-in rules for kubelet's layouts (cgroup v2):
 *   systemd:  kubepods.slice                          -> online (Guaranteed)
 *             kubepods.slice/kubepods-burstable.slice -> online (Burstable)
 *             kubepods.slice/kubepods-besteffort.slice -> be    (BestEffort)
 *   cgroupfs: kubepods, kubepods/burstable -> online; kubepods/besteffort -> be
 * Built-in rules go first, so user rules given for the same cgroup win.
 */
int tm_rules_add_kubelet(struct tm_ruleset *rs, enum tm_kubelet k, char *err, size_t errlen);

/*
 * The UID of the Kubernetes pod cgroup @rel is, or is inside, from kubelet's
 * naming: "kubepods-besteffort-pod<uid>.slice" (systemd driver, '-' of the
 * UID written '_') or "pod<uid>" (cgroupfs). @uid gets it with '-' (36
 * characters); 0 when @rel is no pod's (1 when found).
 */
int tm_pod_uid(const char *rel, char *uid, size_t len);

static inline bool tm_path_is_glob(const char *p)
{
	for (; *p; p++)
		if (*p == '*' || *p == '?' || *p == '[')
			return true;
	return false;
}

/*
 * Match every rule against the cgroup tree under @root. For each matched
 * cgroup the last matching rule wins (built-in rules come first). A plain
 * (non-glob) user rule whose cgroup is missing is an error; globs and
 * built-in rules may match nothing (@lenient: no rule is an error). With
 * @check_cgroup2 a root that is not a cgroup v2 mount is refused. On success *out (malloc'd, sorted
 * by id) holds *n entries.
 */
int tm_rules_resolve(const struct tm_ruleset *rs, const char *root, bool check_cgroup2,
		     bool lenient, struct tm_class_entry **out, size_t *n, char *err,
		     size_t errlen);
#endif
