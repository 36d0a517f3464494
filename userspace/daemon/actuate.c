// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkd's actuators, shared by every strategy: the audit trail and
 * action metric, the scheduler's pins, which cgroups are protected, cgroup
 * writes, the one evictor and the BE-line arbiter. A leaf: it knows the
 * daemon's state and the libraries, never a strategy or the reports.
 */
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>

#include "actuate.h"
#include "kube.h"
#include "evict.h"
#include "rules.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "strategy.h"

uint64_t tm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

bool tm_audit(struct tm_daemon *d, const char *strategy, const char *action, bool dry_run,
	      const char *fmt, ...)
{
	struct timespec ts;
	char line[4096]; /* a path (511) and a strategy's details (1500) fit */
	va_list ap;
	int i, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(line, sizeof(line), "audit ts=%lld.%03ld strategy=%s action=%s dry_run=%s ",
		     (long long)ts.tv_sec, ts.tv_nsec / 1000000, strategy, action,
		     dry_run ? "true" : "false");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* one write per line: the cluster thread audits too */
	fprintf(stderr, "%s\n", line);
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nr_actions; i++)
		if (!strcmp(d->actions[i].strategy, strategy) &&
		    !strcmp(d->actions[i].action, action) && d->actions[i].dry_run == dry_run)
			break;
	if (i == d->nr_actions && i < TM_MAX_ACTION_KINDS)
		d->actions[d->nr_actions++] =
			(struct tm_action_count){strategy, action, dry_run, 0};
	if (i < TM_MAX_ACTION_KINDS)
		d->actions[i].n++;
	pthread_mutex_unlock(&d->lock);
	return !dry_run;
}

/*
 * Pins are opened (and their ABI checked) once per round of the main loop,
 * not at every lookup: protection alone asks for "classes" once per BE
 * cgroup, and memevict runs every poll_ms.
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
		fprintf(stderr, "tidemarkd: %s; scheduler maps left alone\n", err);
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

void tm_limit_hit(struct tm_daemon *d, const char *what, unsigned int limit)
{
	int i;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nr_limits && strcmp(d->limits[i].what, what); i++)
		;
	if (i == d->nr_limits && i < TM_MAX_LIMITS) {
		d->limits[i].what = what;
		d->limits[i].limit = limit;
		d->nr_limits++;
	}
	if (i < d->nr_limits)
		d->limits[i].hits++;
	pthread_mutex_unlock(&d->lock);
	if (i < d->nr_limits && d->limits[i].hits == 1)
		fprintf(stderr,
			"tidemarkd: %s holds at most %u cgroups and more were found: the rest "
			"are not considered (said once; counted in tidemark_limit_hits_total)\n",
			what, limit);
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

/*
 * What the evictor remembers of each cgroup or pod it killed: kubelet
 * restarts a killed pod's containers in place (new container cgroups, same
 * pod UID), so a kill alone loops. Until its back-off ends, one that comes
 * back is capped, not killed; each kill doubles the next back-off.
 */
#define TM_EVICT_RECS 256

static struct evict_rec {
	char key[TM_CFG_PATH_MAX]; /* "pod:<uid>" */
	char rel[TM_CFG_PATH_MAX]; /* the cgroup capped meanwhile */
	uint32_t kills;
	uint64_t until_ms; /* no kill before this */
	uint64_t backoff_ms;
	bool capped, told;
} recs[TM_EVICT_RECS];
static int nr_recs;

/* A pod's key, "pod:<uid>"; false for a cgroup that is no pod's: outside
 * Kubernetes new tasks in a killed cgroup are a new job, not a restart. */
static bool evict_key(const char *rel, char *key, size_t len)
{
	char uid[40];

	if (!tm_pod_uid(rel, uid, sizeof(uid)))
		return false;
	snprintf(key, len, "pod:%s", uid);
	return true;
}

static struct evict_rec *rec_find(const char *key)
{
	for (int i = 0; i < nr_recs; i++)
		if (!strcmp(recs[i].key, key))
			return &recs[i];
	return NULL;
}

bool tm_evict(struct tm_daemon *d, const char *strategy, const char *action, const char *rel,
	      bool dry_run, const char *fmt, ...)
{
	const struct tm_config *cfg = &d->cfg;
	char details[1500], key[TM_CFG_PATH_MAX] = "";
	uint64_t now = tm_now_ms();
	struct evict_rec *r;
	bool via_api;
	int via;
	va_list ap;

	if (tm_protected(d, rel)) {
		fprintf(stderr, "tidemarkd: %s: %s is ONLINE or SYSTEM: not evicted\n", strategy,
			rel);
		return false;
	}
	r = evict_key(rel, key, sizeof(key)) ? rec_find(key) : NULL;
	if (r && now < r->until_ms) {
		/* back within its back-off: capped (again: kubelet makes new
		 * container cgroups), and said once per back-off */
		bool capped = cfg->eviction.backoff_cap_mcpu && !dry_run &&
			      tm_be_cap(d, rel, cfg->eviction.backoff_cap_mcpu);

		if (capped && !r->capped) {
			r->capped = true;
			snprintf(r->rel, sizeof(r->rel), "%s", rel);
		}
		if (!r->told) {
			r->told = true;
			tm_audit(d, strategy, "backoff", dry_run,
				 "cgroup=%s key=%s kills=%u kill_again_in_ms=%" PRIu64
				 " cap_mcpu=%u capped=%s wanted=%s",
				 rel, key, r->kills, r->until_ms - now,
				 cfg->eviction.backoff_cap_mcpu, capped ? "true" : "false", action);
		}
		return false;
	}
	va_start(ap, fmt);
	vsnprintf(details, sizeof(details), fmt, ap);
	va_end(ap);
	/* a pod the cluster names is evicted through the API (kubelet would
	 * restart a killed one in place); capped meanwhile, so it frees the
	 * CPU at once, and its memory.high already throttles it */
	via = key[0] ? tm_kube_evict_ready(rel) : TM_EVICT_KILL;
	if (via == TM_EVICT_WAIT) {
		/* a pod killed in place comes back: capped until it has a name */
		if (cfg->eviction.backoff_cap_mcpu && !dry_run)
			tm_be_cap(d, rel, cfg->eviction.backoff_cap_mcpu);
		tm_audit(d, strategy, "wait_pod_list", dry_run,
			 "cgroup=%s wanted=%s why=\"eviction through the API: no pod list yet\"",
			 rel, action);
		return false;
	}
	via_api = via == TM_EVICT_API;
	if (!tm_audit(d, strategy, action, dry_run, "cgroup=%s via=%s %s", rel,
		      via_api ? "eviction-api" : "cgroup.kill", details))
		return false;
	if (via_api) {
		if (cfg->eviction.backoff_cap_mcpu)
			tm_be_cap(d, rel, cfg->eviction.backoff_cap_mcpu);
		tm_kube_evict(rel, strategy, action);
	} else if (tm_cg_write(d, rel, "cgroup.kill", "1")) {
		fprintf(stderr, "tidemarkd: %s: cannot kill %s: %s\n", strategy, rel,
			strerror(errno));
		return false;
	}
	if (!r && key[0] && nr_recs < TM_EVICT_RECS) {
		r = &recs[nr_recs++];
		memset(r, 0, sizeof(*r));
		snprintf(r->key, sizeof(r->key), "%s", key);
	}
	if (r) {
		r->kills++;
		r->backoff_ms =
			tm_evict_backoff_ms(r->kills, cfg->eviction.backoff_initial_s * 1000ULL,
					    cfg->eviction.backoff_max_s * 1000ULL);
		r->until_ms = now + r->backoff_ms;
		r->told = false;
	}
	return true;
}

void tm_evict_round(struct tm_daemon *d, uint64_t now)
{
	char rel[TM_CFG_PATH_MAX], strategy[32], why[256];
	int k = 0;

	/* pods the API did not evict in time, whose fallback is a kill */
	while (tm_kube_evict_fallback(rel, sizeof(rel), strategy, sizeof(strategy), why,
				      sizeof(why))) {
		if (tm_protected(d, rel))
			continue;
		tm_audit(d, "evictor", "kill_fallback", false, "cgroup=%s for=%s why=\"%s\"", rel,
			 strategy, why);
		if (tm_cg_write(d, rel, "cgroup.kill", "1") && errno != ENOENT)
			fprintf(stderr, "tidemarkd: cannot kill %s: %s\n", rel, strerror(errno));
	}

	for (int i = 0; i < nr_recs; i++) {
		struct evict_rec *r = &recs[i];

		if (r->capped && now >= r->until_ms) {
			r->capped = false;
			tm_audit(d, "evictor", "backoff_end", false,
				 "cgroup=%s key=%s kills=%u cap=%s", r->rel, r->key, r->kills,
				 tm_be_cap(d, r->rel, 0) ? "removed"
							 : "gone (no cgroup or scheduler)");
		}
		/* forgotten after a quiet back-off as long again: counts restart */
		if (now >= r->until_ms + r->backoff_ms)
			continue;
		recs[k++] = *r;
	}
	nr_recs = k;
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

/* Saved cgroup values (tm_cg_write_saved): as many as there are cgroups
 * (the fallback records three values of every BE cgroup). */
struct saved {
	char owner[16];
	char rel[TM_CFG_PATH_MAX];
	char file[32];
	char orig[128];
};
static struct saved *saved;
static int nr_saved, cap_saved;
/* records [nr_stored, nr_saved) are in memory only (tm_cg_record) */
static int nr_stored;

/* Room for one more record. */
static int saved_grow(void)
{
	int n = cap_saved ? cap_saved * 2 : 64;
	struct saved *p;

	if (nr_saved < cap_saved)
		return 0;
	p = realloc(saved, n * sizeof(*p));
	if (!p)
		return -1;
	saved = p;
	cap_saved = n;
	return 0;
}

static int saved_find(const char *owner, const char *rel, const char *file)
{
	for (int i = 0; i < nr_saved; i++)
		if (!strcmp(saved[i].owner, owner) && !strcmp(saved[i].rel, rel) &&
		    !strcmp(saved[i].file, file))
			return i;
	return -1;
}

/* The whole record set to <state_dir>/saved.json, atomically. */
static int saved_store(const struct tm_daemon *d)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *a = json_array(), *o;
	int ret;

	if (!a)
		return -1;
	for (int i = 0; i < nr_saved; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s}", "owner", saved[i].owner,
						   "cgroup", saved[i].rel, "file", saved[i].file,
						   "value", saved[i].orig));
	o = json_pack("{s:i,s:o}", "version", 1, "saved", a);
	if (!o)
		return -1;
	snprintf(path, sizeof(path), "%s/saved.json", d->state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	mkdir(d->state_dir, 0700);
	ret = json_dump_file(o, tmp, JSON_INDENT(1)) || rename(tmp, path) ? -1 : 0;
	if (ret)
		fprintf(stderr, "tidemarkd: cannot write %s: %s\n", path, strerror(errno));
	json_decref(o);
	return ret;
}

static int cg_read_line(const struct tm_daemon *d, const char *rel, const char *file, char *out,
			size_t len)
{
	char p[PATH_MAX];

	if (tm_cg_path(p, sizeof(p), d->cgroup_root, rel, file))
		return -1;
	return tm_read_line(p, out, len);
}

int tm_cg_record(struct tm_daemon *d, const char *owner, const char *rel, const char *file)
{
	struct saved *r;

	if (saved_find(owner, rel, file) >= 0)
		return 0;
	if (saved_grow())
		return -1;
	r = &saved[nr_saved];
	memset(r, 0, sizeof(*r));
	if (cg_read_line(d, rel, file, r->orig, sizeof(r->orig)))
		return -1;
	snprintf(r->owner, sizeof(r->owner), "%s", owner);
	snprintf(r->rel, sizeof(r->rel), "%s", rel);
	snprintf(r->file, sizeof(r->file), "%s", file);
	nr_saved++;
	return 0;
}

int tm_saved_sync(struct tm_daemon *d)
{
	if (nr_stored == nr_saved)
		return 0;
	if (saved_store(d)) {
		nr_saved = nr_stored; /* not on disk: as if never recorded */
		errno = EIO;
		return -1;
	}
	nr_stored = nr_saved;
	return 0;
}

int tm_cg_write_saved(struct tm_daemon *d, const char *owner, const char *rel, const char *file,
		      const char *val)
{
	/* recorded on disk before the value it saves is overwritten */
	if (tm_cg_record(d, owner, rel, file) || tm_saved_sync(d))
		return -1;
	return val ? tm_cg_write(d, rel, file, val) : 0;
}

int tm_cg_restore(struct tm_daemon *d, const char *owner, const char *rel, int *gone)
{
	bool *drop;
	int n = 0, k = 0, g = 0;

	if (gone)
		*gone = 0;

	/* records not yet stored are not restored: nothing was written for them */
	nr_saved = nr_stored;
	drop = calloc(nr_saved ? nr_saved : 1, sizeof(*drop));
	if (!drop)
		return 0;

	/* last saved, first restored: an undo (cpu.idle 0 resets cpu.weight,
	 * so the weight saved before it goes back after it) */
	for (int i = nr_saved - 1; i >= 0; i--) {
		struct saved *r = &saved[i];

		if (strcmp(r->owner, owner) || (rel && strcmp(r->rel, rel)))
			continue;
		if (!tm_cg_write(d, r->rel, r->file, r->orig)) {
			n++;
			drop[i] = true;
		} else if (errno == ENOENT) {
			fprintf(stderr, "tidemarkd: %s gone, %s not restored\n", r->rel, r->file);
			drop[i] = true;
			g++;
		} /* else the cgroup is still there: kept, tried again next time */
	}
	for (int i = 0; i < nr_saved; i++)
		if (!drop[i])
			saved[k++] = saved[i];
	free(drop);
	if (k != nr_saved) {
		nr_saved = nr_stored = k;
		saved_store(d);
	}
	if (gone)
		*gone = g;
	return n;
}

int tm_saved_count(const char *owner)
{
	int n = 0;

	for (int i = 0; i < nr_saved; i++)
		n += !strcmp(saved[i].owner, owner);
	return n;
}

int tm_saved_load(struct tm_daemon *d, char *err, size_t len)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *o, *a, *e;
	size_t i;

	snprintf(path, sizeof(path), "%s/saved.json", d->state_dir);
	o = json_load_file(path, 0, &je);
	if (!o) {
		if (access(path, F_OK))
			return 0; /* nothing was left */
		snprintf(err, len, "%s: %s", path, je.text);
		return -1;
	}
	a = json_object_get(o, "saved");
	if (json_integer_value(json_object_get(o, "version")) != 1 || !json_is_array(a)) {
		snprintf(err, len, "%s: not a version 1 record of saved cgroup values", path);
		json_decref(o);
		return -1;
	}
	nr_saved = nr_stored = 0;
	json_array_foreach(a, i, e)
	{
		const char *ow, *rel, *file, *val;
		struct saved *r;

		if (json_unpack(e, "{s:s,s:s,s:s,s:s}", "owner", &ow, "cgroup", &rel, "file", &file,
				"value", &val)) {
			snprintf(err, len, "%s: entry %zu is not {owner,cgroup,file,value}", path,
				 i);
			nr_saved = 0;
			json_decref(o);
			return -1;
		}
		if (saved_grow()) {
			snprintf(err, len, "%s: out of memory at entry %zu", path, i);
			nr_saved = 0;
			json_decref(o);
			return -1;
		}
		r = &saved[nr_saved++];
		snprintf(r->owner, sizeof(r->owner), "%s", ow);
		snprintf(r->rel, sizeof(r->rel), "%s", rel);
		snprintf(r->file, sizeof(r->file), "%s", file);
		snprintf(r->orig, sizeof(r->orig), "%s", val);
	}
	nr_stored = nr_saved;
	json_decref(o);
	return 0;
}
