// SPDX-License-Identifier: GPL-2.0
/*
 * The saved-value store (saved.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "actuate.h"
#include "saved.h"
#include "tmlib.h"
#include "log.h"

/* Saved cgroup values (tm_cg_write_saved): as many as there are cgroups
 * (the fallback records three values of every BE cgroup). */
struct saved {
	char owner[32];
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
		tm_log(TM_LOG_ERR, "tidemarkd: cannot write %s: %s\n", path, strerror(errno));
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
			tm_log(TM_LOG_WARNING, "tidemarkd: %s gone, %s not restored\n", r->rel,
			       r->file);
			drop[i] = true;
			g++;
		} else {
			/* the cgroup is still there: kept, tried again next time */
			tm_log(TM_LOG_WARNING, "tidemarkd: %s %s not restored to %s: %s (kept)\n",
			       r->rel, r->file, r->orig, strerror(errno));
		}
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

/* Owners by the names tidemark 0.6.0 and earlier gave them: their records
 * are the same strategies' under the names they have now. */
static const char *owner_now(const char *ow)
{
	static const char *const renamed[][2] = {
		{"memevict", "memory_eviction"}, {"cpuevict", "cpu_eviction"},
		{"cpuhigh", "cpu_high"},	 {"interfere", "interference"},
		{"cpusuppress", "cpu_suppress"},
	};

	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (!strcmp(ow, renamed[i][0]))
			return renamed[i][1];
	return ow;
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
		snprintf(r->owner, sizeof(r->owner), "%s", owner_now(ow));
		snprintf(r->rel, sizeof(r->rel), "%s", rel);
		snprintf(r->file, sizeof(r->file), "%s", file);
		snprintf(r->orig, sizeof(r->orig), "%s", val);
	}
	nr_stored = nr_saved;
	json_decref(o);
	return 0;
}
