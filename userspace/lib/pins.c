// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "pins.h"
#include "tidemark_policy.h"
#include "tmlib.h"

const struct tm_pin_desc tm_pins[TM_NR_PINS] = {
	[TM_PIN_ABI] = {"abi", 4, sizeof(struct tm_abi)},
	[TM_PIN_CLASSES] = {"classes", 8, 4},
	[TM_PIN_TUNABLES] = {"tunables", 4, sizeof(struct tm_tunables)},
	[TM_PIN_STATS] = {"stats", 4, sizeof(struct tm_cpu_stats)},
	[TM_PIN_CG_WAITS] = {"cg_waits", 8, sizeof(struct tm_cg_wait)},
	[TM_PIN_HOMES] = {"homes", 8, sizeof(struct tm_home)},
	[TM_PIN_BE_CAPS] = {"be_caps", 8, sizeof(struct tm_be_cap)},
	[TM_PIN_TUNABLES_UPDATE] = {"tunables_update", 0, 0},
	[TM_PIN_CG_BW] = {"cg_bw", 8, sizeof(struct tm_cg_bw)},
	[TM_PIN_BW_UPDATE] = {"bw_update", 0, 0},
	[TM_PIN_TRACE] = {"trace", 0, 0},
	[TM_PIN_TRACE_CTL] = {"trace_ctl", 4, sizeof(struct tm_trace_ctl)},
};

static int pin_get(const char *dir, enum tm_pin which)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, tm_pins[which].name);
	return bpf_obj_get(path);
}

bool tm_sched_running(long *seq, char *why, size_t len)
{
	char state[32] = "", ops[64] = "", buf[32] = "";
	long n = -1;

	if (!tm_read_line("/sys/kernel/sched_ext/enable_seq", buf, sizeof(buf)))
		n = strtol(buf, NULL, 10);
	if (seq)
		*seq = n;
	if (tm_read_line("/sys/kernel/sched_ext/state", state, sizeof(state))) {
		snprintf(why, len, "no sched_ext in this kernel");
		return false;
	}
	if (strcmp(state, "enabled")) {
		snprintf(why, len, "sched_ext state %s, enable_seq %ld", state, n);
		return false;
	}
	if (tm_read_line("/sys/kernel/sched_ext/root/ops", ops, sizeof(ops)) ||
	    strcmp(ops, "tidemark")) {
		snprintf(why, len, "sched_ext runs '%s', enable_seq %ld", ops, n);
		return false;
	}
	return true;
}

/* The maps under @dir belong to the scheduler running now: 0; -1 with
 * errno ESTALE and a message. */
static int live_check(const char *dir, const struct tm_abi *abi, char *err, size_t len)
{
	char why[128];
	long seq;

	if (!tm_sched_running(&seq, why, sizeof(why))) {
		snprintf(err, len,
			 "the scheduler that pinned %s is gone (%s): its maps are left over, "
			 "refused (start scx_tidemark)",
			 dir, why);
		errno = ESTALE;
		return -1;
	}
	/* a tidemark runs, but maybe a newer instance that has not pinned yet */
	if (abi->enable_seq && seq >= 0 && abi->enable_seq != (__u32)seq) {
		snprintf(err, len,
			 "the maps under %s are from scheduler instance %u, instance %ld runs "
			 "(it has not pinned its own yet): refused, try again",
			 dir, abi->enable_seq, seq);
		errno = ESTALE;
		return -1;
	}
	return 0;
}

/* The scheduler's ABI: 0 when it is ours; -1 with errno and a message. */
static int abi_check(const char *dir, const char *who, char *err, size_t len)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info), zero = 0;
	struct tm_abi abi = {};
	int fd, e;

	fd = pin_get(dir, TM_PIN_ABI);
	if (fd < 0) {
		e = errno;
		/* maps but no "abi": a scheduler from before the ABI had a version */
		int cfd = pin_get(dir, TM_PIN_CLASSES);

		if (cfd >= 0) {
			close(cfd);
			snprintf(
				err, len,
				"the scheduler pinned at %s publishes no ABI version (it predates "
				"version 2); %s is built for ABI version %d: run matching versions",
				dir, who, TM_ABI_VERSION);
			errno = EPROTO;
			return -1;
		}
		snprintf(err, len, "%s/%s: %s (is scx_tidemark running?)", dir,
			 tm_pins[TM_PIN_ABI].name, strerror(e));
		errno = e;
		return -1;
	}
	if (bpf_map_get_info_by_fd(fd, &info, &ilen) || info.value_size != sizeof(abi) ||
	    bpf_map_lookup_elem(fd, &zero, &abi)) {
		close(fd);
		snprintf(err, len, "%s/%s is not a tidemark ABI map (value size %u, want %zu)", dir,
			 tm_pins[TM_PIN_ABI].name, info.value_size, sizeof(abi));
		errno = EPROTO;
		return -1;
	}
	close(fd);
	if (abi.version != TM_ABI_VERSION) {
		snprintf(
			err, len,
			"the running scheduler has map ABI version %u, %s is built for version %d: "
			"run matching versions of scx_tidemark and %s",
			abi.version, who, TM_ABI_VERSION, who);
		errno = EPROTO;
		return -1;
	}
	return live_check(dir, &abi, err, len);
}

int tm_pin_dir_check(const char *dir, char *err, size_t len)
{
	struct stat st;
	int e;

	if (lstat(dir, &st)) {
		e = errno;
		snprintf(err, len, "%s: %s", dir, strerror(e));
		errno = e;
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, len, "%s is not a directory (a link or file put there): refused",
			 dir);
		errno = EPERM;
		return -1;
	}
	/* whoever owns it, or may write in it, can swap the scheduler's maps
	 * for their own: only root's, writable by root alone, is trusted */
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		snprintf(err, len,
			 "%s is owned by uid %u with mode %04o; it must be root's and writable "
			 "by root only: refused (remove it; scx_tidemark creates it 0700)",
			 dir, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
		errno = EPERM;
		return -1;
	}
	return 0;
}

int tm_pin_open(const char *dir, enum tm_pin which, const char *who, char *err, size_t len)
{
	const struct tm_pin_desc *p = &tm_pins[which];
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	int fd, e;

	if (!dir)
		dir = TM_PIN_DIR;
	if (tm_pin_dir_check(dir, err, len) && errno != ENOENT)
		return -1;
	if (abi_check(dir, who, err, len))
		return -1;
	fd = pin_get(dir, which);
	if (fd < 0) {
		e = errno;
		snprintf(err, len, "%s/%s: %s (is scx_tidemark running?)", dir, p->name,
			 strerror(e));
		errno = e;
		return -1;
	}
	if (!p->value_size)
		return fd;
	if (bpf_map_get_info_by_fd(fd, &info, &ilen) || info.key_size != p->key_size ||
	    info.value_size != p->value_size) {
		close(fd);
		snprintf(err, len,
			 "%s/%s: key/value size %u/%u, %s (ABI version %d) expects %u/%u: run "
			 "matching versions of scx_tidemark and %s",
			 dir, p->name, info.key_size, info.value_size, who, TM_ABI_VERSION,
			 p->key_size, p->value_size, who);
		errno = EPROTO;
		return -1;
	}
	return fd;
}

int tm_tunables_update(int prog_fd, __u32 set, const struct tm_tunables *val, bool bump_class_gen,
		       struct tm_tunables *after, struct tm_tunables *before, char *err, size_t len)
{
	struct tm_tunables_req req = {.set = set, .bump_class_gen = bump_class_gen};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &req, .ctx_size_in = sizeof(req));
	const char *why;

	if (val)
		req.val = *val;
	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		snprintf(err, len, "cannot run the scheduler's tunables_update: %s",
			 strerror(errno));
		return -1;
	}
	if (req.ret == -EINVAL) {
		/* req.val is the set the kernel refused: say what is wrong with it */
		why = tm_tunables_check(&req.val, req.cap_cpus);
		snprintf(err, len, "%s", why ? why : "the scheduler refused the tunables");
		errno = EINVAL;
		return -1;
	}
	if (req.ret) {
		snprintf(err, len, "tunables_update failed: %s", strerror(-req.ret));
		errno = -req.ret;
		return -1;
	}
	if (after)
		*after = req.val;
	if (before)
		*before = req.prev;
	return 0;
}

int tm_bw_update(int prog_fd, struct tm_bw_req *req, char *err, size_t len)
{
	/* a syscall program's context is copied back to ctx_in */
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = req, .ctx_size_in = sizeof(*req));
	const char *why;

	if (bpf_prog_test_run_opts(prog_fd, &opts)) {
		snprintf(err, len, "cannot run the scheduler's bw_update: %s", strerror(errno));
		return -1;
	}
	if (!req->ret)
		return 0;
	why = req->ret == -EINVAL && (req->set & TM_BW_SET_MAX)
		      ? tm_bw_check(req->quota_us, req->period_us, req->burst_us)
		      : NULL;
	snprintf(err, len, "cgroup %llu: CPU limit not applied: %s", (unsigned long long)req->cgid,
		 why		      ? why
		 : req->ret == -E2BIG ? "the scheduler's cg_bw map is full"
				      : strerror(-req->ret));
	errno = -req->ret;
	return -1;
}

int tm_class_of(int classes_fd, const char *root, const char *rel, char *from, size_t fromlen)
{
	char path[PATH_MAX];
	size_t rl = strlen(root), n;

	if (tm_cg_path(path, sizeof(path), root, rel, NULL))
		return TM_CLASS_SYSTEM;
	n = strlen(path);
	for (;;) {
		struct stat st;
		__u64 id;
		__u32 c;

		/* on cgroup2 the inode number is the id the scheduler keys on */
		if (!stat(path, &st)) {
			id = st.st_ino;
			if (!bpf_map_lookup_elem(classes_fd, &id, &c)) {
				snprintf(from, fromlen, "%s", n > rl ? path + rl : "/");
				return c;
			}
		}
		if (n <= rl)
			break;
		while (n > rl && path[n] != '/')
			n--;
		path[n] = 0; /* the parent; at n == rl, the root itself */
	}
	if (fromlen)
		*from = 0;
	return TM_CLASS_SYSTEM;
}
