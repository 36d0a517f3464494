/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stand-in cgroup files: a plain directory under /tmp in place of the cgroup
 * root, its cgroups made as they are written to. Shared by the unit tests
 * and the fuzz targets (tests/fuzz includes it as "../unit/fakecg.h").
 */
#ifndef __TM_FAKECG_H
#define __TM_FAKECG_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Make a fresh root: @root (of @len bytes) gets its path. 0, or -1. */
static inline int fakecg_root(char *root, size_t len)
{
	snprintf(root, len, "/tmp/tm-fakecg.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

/* Write @size bytes of @data to cgroup @rel's @file (@rel "" or "/a/b"),
 * making the cgroup and its parents first. 0, or -1. */
static inline int fakecg_put_bytes(const char *root, const char *rel, const char *file,
				   const void *data, size_t size)
{
	char p[4096];
	size_t n;
	FILE *f;

	n = (size_t)snprintf(p, sizeof(p), "%s%s", root, rel);
	if (n >= sizeof(p))
		return -1;
	for (char *s = p + strlen(root) + 1; s <= p + n; s++)
		if (*s == '/' || !*s) {
			char c = *s;

			*s = 0;
			mkdir(p, 0755);
			*s = c;
		}
	snprintf(p + n, sizeof(p) - n, "/%s", file);
	f = fopen(p, "w");
	if (!f)
		return -1;
	n = fwrite(data, 1, size, f);
	return fclose(f) || n != size ? -1 : 0;
}

static inline int fakecg_put(const char *root, const char *rel, const char *file, const char *text)
{
	return fakecg_put_bytes(root, rel, file, text, strlen(text));
}

/* The first line of cgroup @rel's @file, its newline cut ("" when it
 * cannot be read), in a buffer the next call reuses. */
static inline const char *fakecg_get(const char *root, const char *rel, const char *file)
{
	static char buf[256];
	char p[4096];
	FILE *f;

	buf[0] = 0;
	snprintf(p, sizeof(p), "%s%s/%s", root, rel, file);
	f = fopen(p, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static inline void fakecg_remove(const char *root)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
}
#endif
