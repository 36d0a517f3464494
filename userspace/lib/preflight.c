// SPDX-License-Identifier: GPL-2.0
/*
 * Preflight: what tidemark needs from the running kernel and node. Each
 * check reads what the running kernel shows (sysfs, procfs, its BTF, the
 * mounts) first; the kernel's config (/proc/config.gz, /boot/config-R) only
 * says why a piece is missing, and stands in where nothing else can tell.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include <bpf/btf.h>
#include <jansson.h>

#include "preflight.h"
#include "tmlib.h"

struct pf_ctx {
	const char *root;
	char *config; /* the whole config text, NULL if none was read */
};

static void __attribute__((format(printf, 4, 5)))
pf_path(const struct pf_ctx *x, char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(out, len, "%s", x->root);

	va_start(ap, fmt);
	vsnprintf(out + n, len - n, fmt, ap);
	va_end(ap);
}

static struct tm_pf_check *pf_add(struct tm_preflight *pf, const char *name, bool required,
				  const char *needs)
{
	struct tm_pf_check *c = &pf->c[pf->nr++];

	c->name = name;
	c->required = required;
	c->needs = needs;
	c->state = TM_PF_OK;
	return c;
}

static void __attribute__((format(printf, 4, 5)))
pf_set(struct tm_pf_check *c, enum tm_pf_state s, const char *fix, const char *fmt, ...)
{
	va_list ap;

	c->state = s;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", s == TM_PF_OK ? "" : fix);
}

/* The whole of a gzip or plain file (gzread reads both), NUL-terminated. */
static char *slurp(const char *path)
{
	gzFile g = gzopen(path, "rb");
	size_t len = 0, cap = 1 << 16;
	char *buf;
	int n;

	if (!g)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = gzread(g, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	gzclose(g);
	if (buf)
		buf[len] = 0;
	return buf;
}

/* 'y', 'm' or 'n' for CONFIG_@opt in the config read; 0 when none was. */
static char cfg(const struct pf_ctx *x, const char *opt)
{
	char key[96];
	const char *p;
	size_t kl;

	if (!x->config)
		return 0;
	kl = snprintf(key, sizeof(key), "CONFIG_%s=", opt);
	for (p = x->config; (p = strstr(p, key)); p += kl)
		if (p == x->config || p[-1] == '\n')
			return p[kl] == 'y' || p[kl] == 'm' ? p[kl] : 'n';
	return 'n'; /* "is not set", or not offered by this kernel at all */
}

/* " (CONFIG_X=y)" or " (CONFIG_X is not set)" for a detail; "" with no config. */
static const char *cfg_says(const struct pf_ctx *x, const char *opt, char *buf, size_t len)
{
	char v = cfg(x, opt);

	if (!v)
		return "";
	if (v == 'n')
		snprintf(buf, len, "; CONFIG_%s is not set", opt);
	else
		snprintf(buf, len, "; CONFIG_%s=%c", opt, v);
	return buf;
}

/* Is @fstype mounted at @dir (as the mount table of this process says)? */
static int mounted(const struct pf_ctx *x, const char *dir, const char *fstype, char *found,
		   size_t flen)
{
	char path[512], line[1024], dev[256], mnt[512], type[64];
	FILE *f;
	int ret = 0;

	pf_path(x, path, sizeof(path), "/proc/self/mounts");
	f = fopen(path, "r");
	if (!f)
		return -1;
	found[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, mnt, type) == 3 && !strcmp(mnt, dir)) {
			snprintf(found, flen, "%s", type); /* the last mount on top wins */
			ret = !strcmp(type, fstype);
		}
	fclose(f);
	return ret;
}

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

static void check_kernel(struct tm_preflight *pf, struct pf_ctx *x)
{
	struct tm_pf_check *c = pf_add(pf, "kernel", true, "sched_ext as tidemark uses it: 6.12");
	char path[512];
	int maj = 0, min = 0;

	pf_path(x, path, sizeof(path), "/proc/sys/kernel/osrelease");
	if (tm_read_line(path, pf->kernel, sizeof(pf->kernel))) {
		snprintf(pf->kernel, sizeof(pf->kernel), "unknown");
		pf_set(c, TM_PF_UNKNOWN, "mount procfs at /proc", "%s: %s", path, strerror(errno));
		return;
	}
	if (sscanf(pf->kernel, "%d.%d", &maj, &min) != 2)
		pf_set(c, TM_PF_UNKNOWN, "boot Linux 6.12 or later",
		       "release \"%s\" is not MAJOR.MINOR", pf->kernel);
	else if (maj < 6 || (maj == 6 && min < 12))
		pf_set(c, TM_PF_MISSING,
		       "boot Linux 6.12 or later with sched_ext (make kernel-deb builds Debian's "
		       "6.12 with it)",
		       "Linux %d.%d is older than 6.12", maj, min);
	else
		pf_set(c, TM_PF_OK, "", "Linux %s (6.12 or later)", pf->kernel);
}

static void read_config(struct tm_preflight *pf, struct pf_ctx *x)
{
	char path[512];

	pf_path(x, path, sizeof(path), "/proc/config.gz");
	x->config = slurp(path);
	if (!x->config) {
		pf_path(x, path, sizeof(path), "/boot/config-%s", pf->kernel);
		x->config = slurp(path);
	}
	/* the config named is the node's own path, not the test root's */
	snprintf(pf->config, sizeof(pf->config), "%s", x->config ? path + strlen(x->root) : "");
}

static void check_btf(struct tm_preflight *pf, struct pf_ctx *x, struct btf **btf)
{
	struct tm_pf_check *c = pf_add(pf, "btf", true, "loading any BPF scheduler (CO-RE)");
	char path[512], cs[64];

	pf_path(x, path, sizeof(path), "/sys/kernel/btf/vmlinux");
	*btf = btf__parse(path, NULL);
	if (*btf) {
		pf_set(c, TM_PF_OK, "", "/sys/kernel/btf/vmlinux, %u types", btf__type_cnt(*btf));
		return;
	}
	pf_set(c, TM_PF_MISSING, "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y",
	       "/sys/kernel/btf/vmlinux: %s%s", errno == ENOENT ? "absent" : strerror(errno),
	       cfg_says(x, "DEBUG_INFO_BTF", cs, sizeof(cs)));
	*btf = NULL;
}

/* Does struct @name in the kernel's BTF exist (1), and have @member (2)? */
static int btf_struct(const struct btf *btf, const char *name, const char *member)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id, i;

	id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	if (id < 0)
		return 0;
	if (!member)
		return 1;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return 2;
	return 1;
}

static const char *KERNEL_FIX = "boot a kernel with CONFIG_SCHED_CLASS_EXT=y and "
				"CONFIG_EXT_GROUP_SCHED=y (Debian's own 6.12 has neither: make "
				"kernel-deb builds it with them, see docs/kernel.md)";

static void check_sched_ext(struct tm_preflight *pf, struct pf_ctx *x, const struct btf *btf)
{
	struct tm_pf_check *c =
		pf_add(pf, "sched_ext", true, "the scheduler (CONFIG_SCHED_CLASS_EXT)");
	struct tm_pf_check *g =
		pf_add(pf, "ext_group_sched", true,
		       "classes by cgroup, cpu.weight and cpu.max in the scheduler");
	struct tm_pf_check *b =
		pf_add(pf, "sched_ext_free", true, "attaching: one sched_ext scheduler at a time");
	char path[512], state[64], ops[64] = "", cs[64];
	int s;

	pf_path(x, path, sizeof(path), "/sys/kernel/sched_ext/state");
	if (tm_read_line(path, state, sizeof(state))) {
		pf_set(c, TM_PF_MISSING, KERNEL_FIX, "/sys/kernel/sched_ext absent%s",
		       cfg_says(x, "SCHED_CLASS_EXT", cs, sizeof(cs)));
		pf_set(b, TM_PF_UNKNOWN, "see sched_ext", "no sched_ext");
	} else {
		pf_set(c, TM_PF_OK, "", "/sys/kernel/sched_ext, state %s", state);
		pf_path(x, path, sizeof(path), "/sys/kernel/sched_ext/root/ops");
		if (strcmp(state, "disabled") && !tm_read_line(path, ops, sizeof(ops)) &&
		    strcmp(ops, "tidemark"))
			pf_set(b, TM_PF_MISSING,
			       "stop it first (systemctl disable --now scx.service "
			       "scx_loader.service, "
			       "or whatever started it)",
			       "another sched_ext scheduler, %s, is %s", ops, state);
		else if (ops[0])
			pf_set(b, TM_PF_OK, "", "tidemark is the one loaded (%s)", state);
		else
			pf_set(b, TM_PF_OK, "", "none loaded");
	}
	/* the cgroup callbacks of sched_ext_ops exist only with EXT_GROUP_SCHED */
	s = btf ? btf_struct(btf, "sched_ext_ops", "cgroup_init") : -1;
	if (s == 2)
		pf_set(g, TM_PF_OK, "", "sched_ext_ops has its cgroup callbacks (kernel BTF)");
	else if (s >= 0)
		pf_set(g, TM_PF_MISSING, KERNEL_FIX, "%s (kernel BTF)%s",
		       s ? "sched_ext_ops has no cgroup callbacks" : "no sched_ext_ops",
		       cfg_says(x, "EXT_GROUP_SCHED", cs, sizeof(cs)));
	else if (cfg(x, "EXT_GROUP_SCHED") == 'y')
		pf_set(g, TM_PF_OK, "", "CONFIG_EXT_GROUP_SCHED=y in %s (no BTF to confirm)",
		       pf->config);
	else
		pf_set(g, cfg(x, "EXT_GROUP_SCHED") ? TM_PF_MISSING : TM_PF_UNKNOWN, KERNEL_FIX,
		       "no BTF to tell by%s", cfg_says(x, "EXT_GROUP_SCHED", cs, sizeof(cs)));
}

static void check_cgroup(struct tm_preflight *pf, struct pf_ctx *x)
{
	struct tm_pf_check *c =
		pf_add(pf, "cgroup2", true, "classes, limits and eviction by cgroup");
	struct tm_pf_check *k = pf_add(pf, "cgroup_controllers", true,
				       "cpu.weight, cpu.max (cpu) and memory.high (memory)");
	static const char *const need[] = {"cpu", "memory"};
	char path[512], type[64], ctl[512], miss[64] = "";
	unsigned int i;
	int m = mounted(x, "/sys/fs/cgroup", "cgroup2", type, sizeof(type));

	if (m < 0) {
		pf_set(c, TM_PF_UNKNOWN, "mount procfs at /proc", "no mount table to read");
	} else if (!m && mounted(x, "/sys/fs/cgroup/unified", "cgroup2", ctl, sizeof(ctl)) > 0) {
		pf_set(c, TM_PF_MISSING,
		       "boot with the unified hierarchy only (systemd.unified_cgroup_hierarchy=1, "
		       "the default since Debian 11)",
		       "hybrid hierarchy: /sys/fs/cgroup is %s, cgroup2 only at "
		       "/sys/fs/cgroup/unified without controllers",
		       type);
	} else if (!m) {
		pf_set(c, TM_PF_MISSING,
		       "boot with the unified hierarchy (systemd.unified_cgroup_hierarchy=1, the "
		       "default since Debian 11); kubelet's cgroupDriver stays systemd",
		       "/sys/fs/cgroup is %s%s, not cgroup2", type[0] ? type : "not mounted",
		       type[0] ? "" : " at all");
	} else {
		pf_set(c, TM_PF_OK, "", "cgroup2 at /sys/fs/cgroup");
	}
	pf_path(x, path, sizeof(path), "/sys/fs/cgroup/cgroup.controllers");
	if (m <= 0 || tm_read_line(path, ctl, sizeof(ctl))) {
		pf_set(k, TM_PF_UNKNOWN, "see cgroup2", "no cgroup v2 root to read");
		return;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!has_word(ctl, need[i]))
			snprintf(miss + strlen(miss), sizeof(miss) - strlen(miss), "%s%s",
				 miss[0] ? ", " : "", need[i]);
	if (miss[0])
		pf_set(k, TM_PF_MISSING,
		       "build the kernel with CONFIG_CGROUP_SCHED and CONFIG_MEMCG, and do not "
		       "disable them at boot (cgroup_disable=)",
		       "cgroup.controllers lacks %s (has: %s)", miss, ctl);
	else
		pf_set(k, TM_PF_OK, "", "cpu and memory available (%s)", ctl);
}

static void check_bpffs(struct tm_preflight *pf, struct pf_ctx *x)
{
	struct tm_pf_check *c =
		pf_add(pf, "bpffs", true,
		       "the scheduler's pinned maps, shared with tidemarkd and tidemarkctl");
	char type[64];
	int m = mounted(x, "/sys/fs/bpf", "bpf", type, sizeof(type));

	if (m > 0)
		pf_set(c, TM_PF_OK, "", "bpf at /sys/fs/bpf");
	else if (m < 0)
		pf_set(c, TM_PF_UNKNOWN, "mount procfs at /proc", "no mount table to read");
	else
		pf_set(c, TM_PF_MISSING,
		       "mount -t bpf bpf /sys/fs/bpf (systemd does at boot; in a pod, the "
		       "DaemonSet's bpffs hostPath volume)",
		       "/sys/fs/bpf is %s", type[0] ? type : "not mounted");
}

static void check_accounting(struct tm_preflight *pf, struct pf_ctx *x)
{
	struct tm_pf_check *p =
		pf_add(pf, "psi", false, "tidemarkd's interference signals (cpu/memory.pressure)");
	struct tm_pf_check *t = pf_add(pf, "taskstats", false,
				       "tidemarkd's CPU delay per ONLINE task (else schedstat)");
	struct tm_pf_check *d = pf_add(pf, "delayacct", false,
				       "tidemarkd's CPU delay per ONLINE task (else schedstat)");
	char path[512], line[256], cs[64];
	FILE *f;
	char v;

	pf_path(x, path, sizeof(path), "/proc/pressure/cpu");
	f = fopen(path, "r");
	errno = 0;
	if (!f)
		pf_set(p, TM_PF_MISSING, "build the kernel with CONFIG_PSI=y",
		       "/proc/pressure/cpu absent%s", cfg_says(x, "PSI", cs, sizeof(cs)));
	else if (!fgets(line, sizeof(line), f))
		pf_set(p, TM_PF_MISSING, "boot with psi=1",
		       "/proc/pressure/cpu unreadable (%s): PSI is off at boot",
		       strerror(errno ? errno : EOPNOTSUPP));
	else
		pf_set(p, TM_PF_OK, "", "/proc/pressure/cpu");
	if (f)
		fclose(f);

	/* the netlink family has no file; the config is all that can tell */
	v = cfg(x, "TASKSTATS");
	if (v == 'y')
		pf_set(t, TM_PF_OK, "", "CONFIG_TASKSTATS=y in %s", pf->config);
	else if (v)
		pf_set(t, TM_PF_MISSING, "build the kernel with CONFIG_TASKSTATS=y",
		       "CONFIG_TASKSTATS is not set in %s", pf->config);
	else
		pf_set(t, TM_PF_UNKNOWN,
		       "nothing to do if tidemarkd's interference strategy reports delay_source "
		       "taskstats",
		       "no kernel config (/proc/config.gz, /boot/config-%s) to tell by",
		       pf->kernel);

	pf_path(x, path, sizeof(path), "/proc/sys/kernel/task_delayacct");
	if (tm_read_line(path, line, sizeof(line)))
		pf_set(d, TM_PF_MISSING, "build the kernel with CONFIG_TASK_DELAY_ACCT=y",
		       "kernel.task_delayacct absent%s",
		       cfg_says(x, "TASK_DELAY_ACCT", cs, sizeof(cs)));
	else if (strcmp(line, "1"))
		pf_set(d, TM_PF_MISSING,
		       "sysctl -w kernel.task_delayacct=1 (or boot with delayacct)",
		       "kernel.task_delayacct is %s (off)", line);
	else
		pf_set(d, TM_PF_OK, "", "kernel.task_delayacct is 1");
}

int tm_preflight_run(struct tm_preflight *pf, const char *root)
{
	struct pf_ctx x = {.root = root ? root : ""};
	struct btf *btf = NULL;
	int i;

	memset(pf, 0, sizeof(*pf));
	check_kernel(pf, &x);
	read_config(pf, &x);
	check_btf(pf, &x, &btf);
	check_sched_ext(pf, &x, btf);
	check_cgroup(pf, &x);
	check_bpffs(pf, &x);
	check_accounting(pf, &x);
	btf__free(btf);
	free(x.config);
	for (i = 0; i < pf->nr; i++) {
		if (pf->c[i].state == TM_PF_OK)
			continue;
		if (pf->c[i].required)
			pf->missing++;
		else
			pf->optional_missing++;
	}
	return pf->missing;
}

const char *tm_pf_state_name(enum tm_pf_state s)
{
	return s == TM_PF_OK ? "ok" : s == TM_PF_MISSING ? "missing" : "unknown";
}

void tm_preflight_print(FILE *f, const struct tm_preflight *pf)
{
	int i;

	fprintf(f, "tidemark preflight: Linux %s, kernel config %s\n", pf->kernel,
		pf->config[0] ? pf->config : "not found");
	for (i = 0; i < pf->nr; i++) {
		const struct tm_pf_check *c = &pf->c[i];

		fprintf(f, "  %-8s %-18s %s\n",
			c->state == TM_PF_OK	    ? "ok"
			: c->state == TM_PF_MISSING ? "MISSING"
						    : "UNKNOWN",
			c->name, c->detail);
		if (c->state != TM_PF_OK)
			fprintf(f, "  %-8s %-18s %s: %s\n           %-18s fix: %s\n", "", "",
				c->required ? "required for" : "optional, for", c->needs, "",
				c->fix);
	}
	if (pf->missing)
		fprintf(f,
			"%d required piece%s missing: tidemark's scheduler cannot run on this "
			"node\n",
			pf->missing, pf->missing == 1 ? "" : "s");
	else
		fprintf(f, "everything the scheduler needs is present%s\n",
			pf->optional_missing ? "; see the optional pieces above" : "");
}

char *tm_preflight_json(const struct tm_preflight *pf)
{
	json_t *doc, *arr;
	char *s;
	int i;

	arr = json_array();
	for (i = 0; arr && i < pf->nr; i++) {
		const struct tm_pf_check *c = &pf->c[i];

		json_array_append_new(arr, json_pack("{s:s, s:s, s:b, s:s, s:s, s:s}", "name",
						     c->name, "state", tm_pf_state_name(c->state),
						     "required", c->required, "needs", c->needs,
						     "detail", c->detail, "fix", c->fix));
	}
	doc = json_pack("{s:s, s:s?, s:b, s:i, s:i, s:o}", "kernel", pf->kernel, "config",
			pf->config[0] ? pf->config : NULL, "ready", !pf->missing, "missing",
			pf->missing, "optional_missing", pf->optional_missing, "checks", arr);
	if (!doc)
		return NULL;
	s = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	return s;
}
