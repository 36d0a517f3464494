// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "rules.h"

int tm_kubelet_parse(const char *s)
{
	static const char *const names[] = {
		[TM_KUBELET_OFF] = "off",
		[TM_KUBELET_AUTO] = "auto",
		[TM_KUBELET_SYSTEMD] = "systemd",
		[TM_KUBELET_CGROUPFS] = "cgroupfs",
	};

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int add(struct tm_ruleset *rs, const char *path, __u32 cls, bool optional, bool builtin,
	       char *err, size_t errlen)
{
	if (rs->n >= TM_MAX_RULES) {
		snprintf(err, errlen, "more than %d class rules", TM_MAX_RULES);
		return -1;
	}
	rs->r[rs->n++] = (struct tm_rule){path, cls, optional, builtin};
	return 0;
}

int tm_rules_add(struct tm_ruleset *rs, const char *path, __u32 cls, char *err, size_t errlen)
{
	if (!path || !*path) {
		snprintf(err, errlen, "empty cgroup path");
		return -1;
	}
	if (strstr(path, "..")) {
		snprintf(err, errlen, "'%s': '..' is not allowed in a cgroup path", path);
		return -1;
	}
	if (strlen(path) >= PATH_MAX - 64) {
		snprintf(err, errlen, "'%.40s...': path too long", path);
		return -1;
	}
	if (cls >= TM_NR_CLASSES) {
		snprintf(err, errlen, "'%s': unknown class", path);
		return -1;
	}
	return add(rs, path, cls, false, false, err, errlen);
}

int tm_rules_add_kubelet(struct tm_ruleset *rs, enum tm_kubelet k, char *err, size_t errlen)
{
	static const struct {
		const char *path;
		__u32 cls;
	} systemd[] =
		{
			{"kubepods.slice", TM_CLASS_ONLINE},
			{"kubepods.slice/kubepods-burstable.slice", TM_CLASS_ONLINE},
			{"kubepods.slice/kubepods-besteffort.slice", TM_CLASS_BE},
		},
	  cgroupfs[] = {
		  {"kubepods", TM_CLASS_ONLINE},
		  {"kubepods/burstable", TM_CLASS_ONLINE},
		  {"kubepods/besteffort", TM_CLASS_BE},
	  };
	struct tm_ruleset tmp = {.n = 0};

	if (k == TM_KUBELET_AUTO || k == TM_KUBELET_SYSTEMD)
		for (int i = 0; i < 3; i++)
			if (add(&tmp, systemd[i].path, systemd[i].cls, true, true, err, errlen))
				return -1;
	if (k == TM_KUBELET_AUTO || k == TM_KUBELET_CGROUPFS)
		for (int i = 0; i < 3; i++)
			if (add(&tmp, cgroupfs[i].path, cgroupfs[i].cls, true, true, err, errlen))
				return -1;
	if (rs->n + tmp.n > TM_MAX_RULES) {
		snprintf(err, errlen, "more than %d class rules", TM_MAX_RULES);
		return -1;
	}
	/* built-in rules first: a user rule for the same cgroup comes later and wins */
	memmove(&rs->r[tmp.n], &rs->r[0], rs->n * sizeof(rs->r[0]));
	memcpy(&rs->r[0], tmp.r, tmp.n * sizeof(tmp.r[0]));
	rs->n += tmp.n;
	return 0;
}

/* by id, then by rule: the last rule for an id ends its run */
static int cmp_entry(const void *a, const void *b)
{
	const struct tm_class_entry *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->rule - y->rule;
}

static int put(struct tm_class_entry **v, size_t *n, size_t *cap, __u64 id, __u32 cls, int rule)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct tm_class_entry *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct tm_class_entry){id, cls, rule};
	return 0;
}

/* Sort and keep, for each cgroup, the entry of the last rule that matched it. */
static size_t compact(struct tm_class_entry *v, size_t n)
{
	size_t w = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_entry);
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && v[i + 1].id == v[i].id)
			continue;
		v[w++] = v[i];
	}
	return w;
}

int tm_rules_resolve(const struct tm_ruleset *rs, const char *root, bool check_cgroup2,
		     bool lenient, struct tm_class_entry **out, size_t *n, char *err, size_t errlen)
{
	struct tm_class_entry *v = NULL;
	size_t nv = 0, cap = 0;
	size_t rl = strlen(root);
	struct statfs sfs;

	if (check_cgroup2 && (statfs(root, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)) {
		snprintf(err, errlen,
			 "%s is not a cgroup v2 mount (cgroup v1-only hosts are not supported)",
			 root);
		return -1;
	}
	for (int i = 0; i < rs->n; i++) {
		const struct tm_rule *r = &rs->r[i];
		const char *rel = r->path;
		char pat[PATH_MAX];
		glob_t g;
		int gr;

		/* accept "/x", "x" and "<root>/x" alike */
		if (!strncmp(rel, root, rl) && (rel[rl] == '/' || !rel[rl]))
			rel += rl;
		while (*rel == '/')
			rel++;
		snprintf(pat, sizeof(pat), "%s/%s", root, rel);

		if (!tm_path_is_glob(rel)) {
			struct stat st;

			if (stat(pat, &st)) {
				if (r->optional || lenient)
					continue;
				snprintf(err, errlen, "cgroup %s: %s", pat, strerror(errno));
				goto fail;
			}
			if (!S_ISDIR(st.st_mode)) {
				if (r->optional || lenient)
					continue;
				snprintf(err, errlen, "%s is not a cgroup directory", pat);
				goto fail;
			}
			if (put(&v, &nv, &cap, st.st_ino, r->cls, i))
				goto oom;
			continue;
		}
		gr = glob(pat, GLOB_NOSORT | GLOB_ONLYDIR, NULL, &g);
		if (gr == GLOB_NOMATCH)
			continue;
		if (gr) {
			snprintf(err, errlen, "%s: cannot expand the pattern", r->path);
			goto fail;
		}
		for (size_t k = 0; k < g.gl_pathc; k++) {
			struct stat st;

			/* GLOB_ONLYDIR is a hint: check, and skip files such as cgroup.procs */
			if (stat(g.gl_pathv[k], &st) || !S_ISDIR(st.st_mode))
				continue;
			if (put(&v, &nv, &cap, st.st_ino, r->cls, i)) {
				globfree(&g);
				goto oom;
			}
		}
		globfree(&g);
	}
	nv = compact(v, nv);
	*out = v;
	*n = nv;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free(v);
	return -1;
}

/* A UID as kubelet names it: 32 hex digits in 8-4-4-4-12, '-' or '_' between. */
static bool uid_at(const char *s, char *uid)
{
	static const int groups[] = {8, 4, 4, 4, 12};
	int k = 0;

	for (int g = 0; g < 5; g++) {
		for (int i = 0; i < groups[g]; i++, s++) {
			if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
				return false;
			uid[k++] = *s;
		}
		if (g < 4) {
			if (*s != '-' && *s != '_')
				return false;
			uid[k++] = '-';
			s++;
		}
	}
	uid[k] = 0;
	return true;
}

int tm_pod_uid(const char *rel, char *uid, size_t len)
{
	char u[37];

	if (len < sizeof(u))
		return 0;
	for (const char *seg = rel; seg && *seg; seg = strchr(seg, '/')) {
		const char *end, *p;

		while (*seg == '/')
			seg++;
		end = strchrnul(seg, '/');
		/* cgroupfs: "pod<uid>" is the whole segment */
		if (end - seg == 3 + 36 && !strncmp(seg, "pod", 3) && uid_at(seg + 3, u)) {
			memcpy(uid, u, sizeof(u));
			return 1;
		}
		/* systemd: "kubepods[-qos]-pod<uid>.slice" */
		if (end - seg > 6 && !strncmp(end - 6, ".slice", 6) &&
		    !strncmp(seg, "kubepods", 8)) {
			p = end - 6 - 36 - 3;
			if (p >= seg && !strncmp(p, "pod", 3) && p > seg && p[-1] == '-' &&
			    uid_at(p + 3, u)) {
				memcpy(uid, u, sizeof(u));
				return 1;
			}
		}
	}
	return 0;
}
