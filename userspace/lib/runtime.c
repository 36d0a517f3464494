// SPDX-License-Identifier: GPL-2.0
/* Runtime class changes and operator caps kept across scheduler restarts. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>

#include "runtime.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "log.h"

const char *tm_state_dir(void)
{
	const char *d = getenv("TIDEMARK_STATE_DIR");

	return d && *d ? d : TM_STATE_DIR;
}

static json_t *load(const char *path, char *err, size_t len)
{
	json_error_t je;
	json_t *o;

	if (access(path, F_OK))
		return json_pack("{s:i,s:{},s:{}}", "version", 1, "classes", "caps");
	o = json_load_file(path, 0, &je);
	if (!o) {
		snprintf(err, len, "%s: %s", path, je.text);
		return NULL;
	}
	if (json_integer_value(json_object_get(o, "version")) != 1 ||
	    !json_is_object(json_object_get(o, "classes")) ||
	    !json_is_object(json_object_get(o, "caps"))) {
		snprintf(err, len, "%s: not a version 1 record of runtime changes", path);
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Change one member of the record, under the lock, written whole. */
static int update(const char *section, const char *path, json_t *val, char *err, size_t len)
{
	char file[PATH_MAX], tmp[PATH_MAX + 8], lockf[PATH_MAX + 8], rel[PATH_MAX];
	const char *why, *dir = tm_state_dir();
	json_t *o;
	int lk, ret = -1;

	if (tm_cg_rel_norm(path, rel, sizeof(rel), &why)) {
		snprintf(err, len, "%s: %s", path, why);
		json_decref(val);
		return -1;
	}
	snprintf(file, sizeof(file), "%s/runtime.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	snprintf(lockf, sizeof(lockf), "%s.lock", file);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, len, "%s: %s", dir, strerror(errno));
		json_decref(val);
		return -1;
	}
	lk = open(lockf, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lk < 0 || flock(lk, LOCK_EX)) {
		snprintf(err, len, "%s: %s", lockf, strerror(errno));
		if (lk >= 0)
			close(lk);
		json_decref(val);
		return -1;
	}
	o = load(file, err, len);
	if (o) {
		json_t *sec = json_object_get(o, section);

		if (val)
			json_object_set_new(sec, rel, val);
		else
			json_object_del(sec, rel);
		val = NULL;
		if (json_dump_file(o, tmp, JSON_INDENT(1) | JSON_SORT_KEYS) || rename(tmp, file))
			snprintf(err, len, "%s: %s", file, strerror(errno));
		else
			ret = 0;
		json_decref(o);
	}
	json_decref(val);
	close(lk);
	return ret;
}

int tm_runtime_set_class(const char *path, int cls, char *err, size_t len)
{
	return update("classes", path, json_string(cls < 0 ? "none" : tm_class_name(cls)), err,
		      len);
}

int tm_runtime_set_cap(const char *path, __u32 mcpu, char *err, size_t len)
{
	return update("caps", path, mcpu ? json_integer(mcpu) : NULL, err, len);
}

int tm_runtime_apply(int classes_fd, int bw_fd, char *err, size_t len)
{
	char file[PATH_MAX], dir[PATH_MAX];
	const char *rel;
	json_t *o, *v;
	int n = 0;

	snprintf(file, sizeof(file), "%s/runtime.json", tm_state_dir());
	o = load(file, err, len);
	if (!o)
		return -1;
	json_object_foreach(json_object_get(o, "classes"), rel, v)
	{
		const char *name = json_string_value(v);
		int cls = name && strcmp(name, "none") ? tm_class_parse(name) : -1;
		char e[256];
		__u64 id;

		if (!name || (strcmp(name, "none") && cls < 0)) {
			tm_log(TM_LOG_WARNING, "scx_tidemark: %s: class of %s is not a class\n",
			       file, rel);
			continue;
		}
		if (tm_cgroup_id(rel, &id, e, sizeof(e))) {
			tm_log(TM_LOG_WARNING,
			       "scx_tidemark: runtime class of %s not applied: %s\n", rel, e);
			continue;
		}
		if (cls < 0) {
			if (bpf_map_delete_elem(classes_fd, &id) && errno != ENOENT)
				continue;
		} else {
			__u32 c = cls;

			if (bpf_map_update_elem(classes_fd, &id, &c, BPF_ANY))
				continue;
		}
		n++;
	}
	json_object_foreach(json_object_get(o, "caps"), rel, v)
	{
		json_int_t m = json_integer_value(v);

		if (m < 1 || m > TM_MCPU_MAX) {
			tm_log(TM_LOG_WARNING, "scx_tidemark: %s: cap of %s is not 1-%d\n", file,
			       rel, TM_MCPU_MAX);
			continue;
		}
		if (tm_cg_path(dir, sizeof(dir), TM_CGROUP_ROOT, rel, NULL) ||
		    tm_be_cap_set(bw_fd, dir, (__u32)m, TM_CAP_OPERATOR) < 0) {
			tm_log(TM_LOG_WARNING, "scx_tidemark: operator cap of %s not applied: %s\n",
			       rel, strerror(errno ? errno : ENOENT));
			continue;
		}
		n++;
	}
	json_decref(o);
	return n;
}
