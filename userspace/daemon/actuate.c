// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkd's actuators, shared by every strategy: the scheduler's pins,
 * which cgroups are protected, the BE set, cgroup writes and caps, and the
 * BE-line arbiter. Below it only the leaf (audit.c) and the libraries; the
 * evictor and the saved-value store sit above it.
 */
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actuate.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "strategy.h"
#include "log.h"

/*
 * Pins are opened (and their ABI checked) once per round of the main loop,
 * not at every lookup: protection alone asks for "classes" once per BE
 * cgroup, and memory_eviction runs every poll_ms.
 */
static struct {
	bool tried;
	int fd;
	int err;
} pin_cache[TM_NR_PINS];

void tm_pins_round(void)
{
	for (int i = 0; i < TM_NR_PINS; i++) {
		if (pin_cache[i].tried && pin_cache[i].fd >= 0)
			close(pin_cache[i].fd);
		pin_cache[i].tried = false;
	}
}

static int pin_open(const struct tm_daemon *d, enum tm_pin which)
{
	static char said[512];
	char err[512];
	int fd = tm_pin_open(d->cfg.pin_dir, which, "tidemarkd", err, sizeof(err));

	if (fd >= 0) {
		said[0] = 0;
		return fd;
	}
	/* no scheduler is a normal state; a mismatch is said once, not per tick */
	if (errno != ENOENT && strcmp(err, said)) {
		tm_log(TM_LOG_WARNING, "tidemarkd: %s; scheduler maps left alone\n", err);
		snprintf(said, sizeof(said), "%s", err);
	}
	return -1;
}

int tm_pin(const struct tm_daemon *d, enum tm_pin which)
{
	if (!pin_cache[which].tried) {
		pin_cache[which].fd = pin_open(d, which);
		pin_cache[which].err = errno;
		pin_cache[which].tried = true;
	}
	if (pin_cache[which].fd < 0) {
		errno = pin_cache[which].err;
		return -1;
	}
	return dup(pin_cache[which].fd);
}

int tm_sched_class_of(const struct tm_daemon *d, const char *rel)
{
	char from[8];
	int fd, cls;

	fd = tm_pin(d, TM_PIN_CLASSES);
	if (fd < 0)
		return -1;
	cls = tm_class_of(fd, d->cgroup_root, rel, from, sizeof(from));
	close(fd);
	return cls;
}

bool tm_cfg_online(const struct tm_daemon *d, const char *rel)
{
	for (int i = 0; i < d->cfg.nr_online; i++)
		if (!fnmatch(d->cfg.online[i], rel, FNM_PATHNAME))
			return true;
	return false;
}

bool tm_protected(const struct tm_daemon *d, const char *rel)
{
	char anc[PATH_MAX];
	int cls;

	/* configured ONLINE, or below a configured ONLINE cgroup */
	snprintf(anc, sizeof(anc), "%s", rel);
	for (;;) {
		if (tm_cfg_online(d, anc))
			return true;
		char *s = strrchr(anc, '/');

		if (!s || s == anc)
			break;
		*s = 0;
	}
	/* whatever the configuration says, the scheduler's class decides too */
	cls = tm_sched_class_of(d, rel);
	return cls >= 0 && cls != TM_CLASS_BE;
}

/* tm_be_cgroups' dedupe: by path, then by position (the first match wins) */
static int by_path_then_pos(const void *a, const void *b, void *base)
{
	const struct tm_be_cg *v = base;
	int x = *(const int *)a, y = *(const int *)b;
	int c = strcmp(v[x].path, v[y].path);

	return c ? c : (x > y) - (x < y);
}

/* Drop later duplicates from @v (@n), keeping the order: O(n log n), where
 * comparing each against all kept before was O(n^2) (a node of 1,000 pods
 * under two overlapping globs: a million comparisons per strategy tick). */
static int dedupe(struct tm_be_cg *v, int n)
{
	int *ix = malloc(sizeof(*ix) * n), k = 0;
	bool *drop = calloc(n, sizeof(*drop));

	if (!ix || !drop) {
		free(ix);
		free(drop);
		return -1;
	}
	for (int i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), by_path_then_pos, v);
	for (int i = 1; i < n; i++)
		drop[ix[i]] = !strcmp(v[ix[i]].path, v[ix[i - 1]].path);
	for (int i = 0; i < n; i++)
		if (!drop[i])
			v[k++] = v[i];
	free(ix);
	free(drop);
	return k;
}

int tm_be_cgroups(struct tm_daemon *d, struct tm_be_cg **out)
{
	size_t rl = strlen(d->cgroup_root);
	struct tm_be_cg *v = NULL;
	int n = 0, cap = 0, k = 0;

	*out = NULL;
	for (int i = 0; i < d->cfg.nr_be; i++) {
		char pat[PATH_MAX];
		glob_t g;

		if (tm_cg_path(pat, sizeof(pat), d->cgroup_root, d->cfg.be[i].path, NULL) ||
		    glob(pat, GLOB_ONLYDIR, NULL, &g))
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++) {
			const char *p = g.gl_pathv[j] + rl;

			if (!*p || strlen(p) >= TM_CFG_PATH_MAX)
				continue;
			if (n == cap) {
				struct tm_be_cg *nv = realloc(v, sizeof(*v) * (cap ? cap * 2 : 64));

				if (!nv) {
					globfree(&g);
					free(v);
					return -1;
				}
				v = nv;
				cap = cap ? cap * 2 : 64;
			}
			snprintf(v[n].path, sizeof(v[n].path), "%s", p);
			v[n++].cfg = &d->cfg.be[i];
		}
		globfree(&g);
	}
	/* one glob lists a directory once; several may list it again */
	if (d->cfg.nr_be > 1 && n > 1 && (n = dedupe(v, n)) < 0) {
		free(v);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (!tm_protected(d, v[i].path)) /* ONLINE/SYSTEM: never touched */
			v[k++] = v[i];
	if (!k) {
		free(v);
		v = NULL;
	}
	*out = v;
	return k;
}

/* Paths with '/' before every other byte: a cgroup's descendants follow it
 * at once ("/a", "/a/b", "/a-x"), so nesting is a look at the last kept. */
static int path_cmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct tm_be_cg *)a)->path;
	const unsigned char *y = (const unsigned char *)((const struct tm_be_cg *)b)->path;

	for (;; x++, y++) {
		int cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;

		if (cx != cy || !cx)
			return cx - cy;
	}
}

int tm_be_top_level(struct tm_be_cg *be, int nb)
{
	int n = 0;

	if (nb <= 0)
		return 0;
	qsort(be, nb, sizeof(*be), path_cmp);
	for (int i = 0; i < nb; i++) {
		size_t l = n ? strlen(be[n - 1].path) : 0;

		if (n && !strncmp(be[i].path, be[n - 1].path, l) &&
		    (be[i].path[l] == '/' || !strcmp(be[n - 1].path, "/")))
			continue;
		be[n++] = be[i];
	}
	return n;
}

int tm_cg_write(const struct tm_daemon *d, const char *rel, const char *file, const char *val)
{
	char p[PATH_MAX];
	FILE *f;
	int ret;

	if (tm_cg_path(p, sizeof(p), d->cgroup_root, rel, file)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(p, "w");
	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

bool tm_be_cap(struct tm_daemon *d, const char *rel, uint32_t mcpu)
{
	char dir[PATH_MAX];
	int fd, n;

	if (tm_cg_path(dir, sizeof(dir), d->cgroup_root, rel, NULL))
		return false;
	fd = tm_pin(d, TM_PIN_BW_UPDATE);
	if (fd < 0)
		return false;
	n = tm_be_cap_set(fd, dir, mcpu, TM_CAP_TIDEMARKD);
	close(fd);
	return n > 0;
}

void tm_line_request(struct tm_daemon *d, const char *owner, uint32_t pct)
{
	int i;

	for (i = 0; i < d->nr_line_req; i++)
		if (!strcmp(d->line_req[i].owner, owner))
			break;
	if (i == TM_MAX_LINE_REQS)
		return; /* as many owners as strategies: cannot happen */
	pthread_mutex_lock(&d->lock);
	d->line_req[i] = (struct tm_line_req){owner, pct};
	if (i == d->nr_line_req)
		d->nr_line_req++;
	pthread_mutex_unlock(&d->lock);
	d->events |= TM_EV_LINE;
}

void tm_line_withdraw(struct tm_daemon *d, const char *owner)
{
	for (int i = 0; i < d->nr_line_req; i++) {
		if (strcmp(d->line_req[i].owner, owner))
			continue;
		pthread_mutex_lock(&d->lock);
		d->line_req[i] = d->line_req[--d->nr_line_req];
		pthread_mutex_unlock(&d->lock);
		d->events |= TM_EV_LINE;
		return;
	}
}

uint32_t tm_line_pct(const struct tm_daemon *d, const char **owner)
{
	uint32_t pct = d->cfg.cpu.suppress_pct;
	const char *who = "config";

	for (int i = 0; i < d->nr_line_req; i++)
		if (d->line_req[i].pct < pct) {
			pct = d->line_req[i].pct;
			who = d->line_req[i].owner;
		}
	if (owner)
		*owner = who;
	return pct;
}
