// SPDX-License-Identifier: GPL-2.0
/* Placement units, their demand, and their homes: see demand.h. */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demand.h"
#include "tmlib.h"
#include "topo.h"

const char *tm_demand_src_name(enum tm_demand_src s)
{
	switch (s) {
	case TM_DEMAND_CPU_MAX:
		return "cpu.max";
	case TM_DEMAND_CPUSET:
		return "cpuset";
	case TM_DEMAND_RULE:
		return "rule";
	case TM_DEMAND_PEAK:
		return "peak";
	default:
		return "unknown";
	}
}

/* "/x/y" form of a rule or cgroup path, relative to the cgroup root. */
static void norm_path(const char *in, char *out, size_t len)
{
	size_t rl = strlen(TM_CGROUP_ROOT);

	if (!strncmp(in, TM_CGROUP_ROOT, rl) && (in[rl] == '/' || !in[rl]))
		in += rl;
	while (*in == '/')
		in++;
	size_t n = strlen(in);

	if (len < 2)
		return;
	if (n > len - 2)
		n = len - 2; /* callers bound their input well below */
	out[0] = '/';
	memcpy(out + 1, in, n);
	out[n + 1] = 0;
	/* no trailing slash, except for the root itself */
	for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--)
		out[n - 1] = 0;
}

int tm_home_rule_add(struct tm_place_cfg *c, const char *arg, char *err, size_t errlen)
{
	const char *eq = strrchr(arg, '=');
	char mode[16], *end, raw[PATH_MAX], path[PATH_MAX];
	const char *comma;
	unsigned long long mcpu = 0;
	size_t ml;

	if (!eq || eq == arg) {
		snprintf(err, errlen, "--home '%s': expected PATH=strict|soft[,MCPU]", arg);
		return -1;
	}
	if (c->n >= TM_MAX_RULES) {
		snprintf(err, errlen, "more than %d --home rules", TM_MAX_RULES);
		return -1;
	}
	comma = strchr(eq + 1, ',');
	ml = comma ? (size_t)(comma - eq - 1) : strlen(eq + 1);
	if (ml >= sizeof(mode)) {
		snprintf(err, errlen, "--home '%s': mode must be strict or soft", arg);
		return -1;
	}
	memcpy(mode, eq + 1, ml);
	mode[ml] = 0;
	if (strcmp(mode, "strict") && strcmp(mode, "soft")) {
		snprintf(err, errlen, "--home '%s': mode '%s' must be strict or soft", arg, mode);
		return -1;
	}
	if (comma) {
		errno = 0;
		mcpu = strtoull(comma + 1, &end, 10);
		if (!comma[1] || *end || errno || comma[1] == '-' || mcpu < 1 ||
		    mcpu > (unsigned long long)TM_PL_MAX_DOMAINS * TM_TOPO_MAX_CPUS * 1000) {
			snprintf(err, errlen,
				 "--home '%s': demand '%s' must be a whole number of milli-CPUs, "
				 "at least 1",
				 arg, comma + 1);
			return -1;
		}
	}
	if ((size_t)(eq - arg) >= sizeof(raw) - 2 || memmem(arg, eq - arg, "..", 2)) {
		snprintf(err, errlen, "--home '%s': bad cgroup path", arg);
		return -1;
	}
	memcpy(raw, arg, eq - arg);
	raw[eq - arg] = 0;
	norm_path(raw, path, sizeof(path));
	c->r[c->n].path = strdup(path);
	if (!c->r[c->n].path) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->r[c->n].soft = !strcmp(mode, "soft");
	c->r[c->n].demand_mcpu = mcpu;
	c->n++;
	return 0;
}

/* The last --home rule matching @path, NULL if none. */
static const struct tm_home_rule *rule_for(const struct tm_place_cfg *c, const char *path)
{
	for (int i = c->n - 1; i >= 0; i--)
		if (!fnmatch(c->r[i].path, path, FNM_PATHNAME))
			return &c->r[i];
	return NULL;
}

static int read_line(const char *root, const char *path, const char *file, char *buf, size_t len)
{
	char p[PATH_MAX];
	FILE *f;
	int ok;

	if (tm_cg_path(p, sizeof(p), root, path, file))
		return -1;
	f = fopen(p, "r");
	if (!f)
		return -1;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	if (!ok)
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int read_usage_us(const char *root, const char *path, uint64_t *us)
{
	char dir[PATH_MAX];
	__u64 v;

	if (tm_cg_path(dir, sizeof(dir), root, path, NULL) ||
	    tm_cg_read_u64(dir, "cpu.stat", "usage_usec", &v))
		return -1;
	*us = v;
	return 0;
}

/* Peak usage rate of the window, mCPU; 0 when nothing was measured yet. */
static uint32_t peak_of(struct tm_unit *u, uint32_t window_s, uint64_t now_us, bool *have)
{
	uint64_t span = (uint64_t)window_s * 1000000 / TM_PEAK_BUCKETS;
	uint64_t epoch = now_us / (span ? span : 1);
	uint32_t peak = 0;

	*have = false;
	for (int i = 0; i < TM_PEAK_BUCKETS; i++) {
		if (!u->peak_epoch[i] || u->peak_epoch[i] + TM_PEAK_BUCKETS <= epoch)
			continue;
		*have = true;
		if (u->peak[i] > peak)
			peak = u->peak[i];
	}
	return peak;
}

/* cpu.pressure "some avg10": share of time some task of the cgroup waited
 * for a CPU, 0-1000 per mille; 0 when PSI is not there. */
static uint32_t read_cpu_wait_permille(const char *root, const char *path)
{
	char buf[256];
	double avg10;

	if (read_line(root, path, "cpu.pressure", buf, sizeof(buf)) ||
	    sscanf(buf, "some avg10=%lf", &avg10) != 1 || avg10 < 0)
		return 0;
	return avg10 >= 100 ? 1000 : (uint32_t)(avg10 * 10);
}

/*
 * One sample of demand: CPU used since the last sample plus, for the share
 * of time some task waited for a CPU, one more CPU. Usage alone would hide
 * a cgroup held down by a home that is too small (it can never use more
 * than it is given); the wait shows it wanted at least one CPU more.
 */
static void sample_usage(struct tm_unit *u, const char *root, uint32_t window_s, uint64_t now_us)
{
	uint64_t span = (uint64_t)window_s * 1000000 / TM_PEAK_BUCKETS, usage;
	uint64_t epoch = now_us / (span ? span : 1);
	int b = epoch % TM_PEAK_BUCKETS;

	if (read_usage_us(root, u->path, &usage))
		return;
	if (u->usage_at_us && now_us > u->usage_at_us && usage >= u->usage_us) {
		uint64_t rate = (usage - u->usage_us) * 1000 / (now_us - u->usage_at_us);

		rate += read_cpu_wait_permille(root, u->path);
		/* epoch + 1 so that 0 means "never" */
		if (u->peak_epoch[b] != epoch + 1) {
			u->peak_epoch[b] = epoch + 1;
			u->peak[b] = 0;
		}
		if (rate > u->peak[b])
			u->peak[b] = rate > UINT32_MAX ? UINT32_MAX : rate;
	}
	u->usage_us = usage;
	u->usage_at_us = now_us;
}

uint32_t tm_unit_demand(struct tm_unit *u, const char *root, const struct tm_home_rule *rule,
			uint32_t peak_window_s, uint64_t now_us, enum tm_demand_src *src)
{
	char buf[4096];
	struct tm_cpuset cs = {};
	__u32 mcpu;
	uint32_t peak;
	bool have;

	sample_usage(u, root, peak_window_s, now_us);
	if (tm_cg_cpu_max(root, u->path, &mcpu) == 1) {
		*src = TM_DEMAND_CPU_MAX;
		return mcpu;
	}
	if (!read_line(root, u->path, "cpuset.cpus", buf, sizeof(buf)) && buf[0] &&
	    !tm_cpuset_parse(buf, &cs) && tm_cpuset_count(&cs)) {
		*src = TM_DEMAND_CPUSET;
		return tm_cpuset_count(&cs) * 1000;
	}
	if (rule && rule->demand_mcpu) {
		*src = TM_DEMAND_RULE;
		return rule->demand_mcpu;
	}
	/* peak_epoch holds epoch + 1: shift the clock the same way */
	peak = peak_of(u, peak_window_s,
		       now_us + (uint64_t)peak_window_s * 1000000 / TM_PEAK_BUCKETS, &have);
	if (!have) {
		*src = TM_DEMAND_UNKNOWN;
		return TM_DEMAND_UNKNOWN_MCPU;
	}
	*src = TM_DEMAND_PEAK;
	return peak ? peak : 1;
}

static int cmp_unit(const void *a, const void *b)
{
	const struct tm_unit *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Mark @id (at @path) a unit: kept if known, else appended (unsorted). */
static int want_unit(struct tm_placer *pl, size_t nsorted, uint64_t id, const char *path)
{
	struct tm_unit key = {.id = id}, *u;

	u = nsorted ? bsearch(&key, pl->u, nsorted, sizeof(*pl->u), cmp_unit) : NULL;
	if (!u) {
		for (size_t i = nsorted; i < pl->n; i++)
			if (pl->u[i].id == id)
				return 0; /* matched twice */
		if (pl->n == pl->cap) {
			size_t nc = pl->cap ? pl->cap * 2 : 64;
			struct tm_unit *nu = realloc(pl->u, nc * sizeof(*nu));

			if (!nu)
				return -1;
			pl->u = nu;
			pl->cap = nc;
		}
		u = &pl->u[pl->n++];
		*u = (struct tm_unit){.id = id};
		u->path = strdup(path);
		if (!u->path) {
			pl->n--;
			return -1;
		}
	} else if (strcmp(u->path, path)) {
		char *np = strdup(path); /* renamed */

		if (!np)
			return -1;
		free(u->path);
		u->path = np;
	}
	u->alive = true;
	return 0;
}

static const struct tm_class_entry *class_of(const struct tm_class_entry *cls, size_t n,
					     uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cls[mid].id == id)
			return &cls[mid];
		if (cls[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Is @child a direct child of @parent ("/a" and "/a/b")? */
static bool is_child(const char *parent, const char *child)
{
	size_t pl = strcmp(parent, "/") ? strlen(parent) : 0;

	return !strncmp(parent, child, pl) && child[pl] == '/' && child[pl + 1] &&
	       !strchr(child + pl + 1, '/');
}

static int collect_units(struct tm_placer *pl, const struct tm_ruleset *rs,
			 const struct tm_class_entry *cls, size_t ncls,
			 const struct tm_cg_path *paths, size_t npaths)
{
	size_t nsorted = pl->n;

	for (size_t i = 0; i < pl->n; i++)
		pl->u[i].alive = false;
	for (size_t i = 0; i < ncls; i++) {
		const struct tm_class_entry *e = &cls[i];
		const char *path;

		if (e->cls != TM_CLASS_ONLINE)
			continue;
		path = tm_cgroup_path_of(paths, npaths, e->id);
		if (!path)
			continue; /* created after the walk: next time */
		if (e->rule >= 0 && e->rule < rs->n && !rs->r[e->rule].builtin) {
			if (want_unit(pl, nsorted, e->id, path))
				return -1;
			continue;
		}
		/* a kubelet QoS cgroup: each pod below it that is not classified itself */
		for (size_t k = 0; k < npaths; k++) {
			if (!is_child(path, paths[k].path) || class_of(cls, ncls, paths[k].id))
				continue;
			if (want_unit(pl, nsorted, paths[k].id, paths[k].path))
				return -1;
		}
	}
	return 0;
}

int tm_placer_update(struct tm_placer *pl, const char *root, const struct tm_ruleset *rs,
		     const struct tm_class_entry *cls, size_t ncls, const struct tm_cg_path *paths,
		     size_t npaths, uint64_t now_us)
{
	struct tm_pl_cgroup *pc;
	int changed = 0, *order;
	size_t i, j;

	if (collect_units(pl, rs, cls, ncls, paths, npaths))
		return -1;
	/* drop vanished units */
	for (i = 0, j = 0; i < pl->n; i++) {
		if (!pl->u[i].alive) {
			free(pl->u[i].path);
			changed++;
			continue;
		}
		pl->u[j++] = pl->u[i];
	}
	pl->n = j;
	qsort(pl->u, pl->n, sizeof(*pl->u), cmp_unit);
	if (!pl->n)
		return changed;

	pc = calloc(pl->n, sizeof(*pc));
	order = calloc(pl->n, sizeof(*order));
	if (!pc || !order) {
		free(pc);
		free(order);
		return -1;
	}
	for (i = 0; i < pl->n; i++) {
		struct tm_unit *u = &pl->u[i];
		const struct tm_home_rule *r = rule_for(&pl->cfg, u->path);

		u->soft = r ? r->soft : pl->cfg.soft_default;
		u->demand_mcpu = tm_unit_demand(u, root, r, pl->cfg.peak_window_s, now_us, &u->src);
		pc[i] = (struct tm_pl_cgroup){.id = u->id,
					      .demand_mcpu = u->demand_mcpu,
					      .last_demand_mcpu = u->last_demand_mcpu,
					      .home = u->home};
	}
	tm_place(pl->d, pl->nd, pc, pl->n, pl->cfg.slack_pct, order);
	for (i = 0; i < pl->n; i++) {
		struct tm_unit *u = &pl->u[i];

		u->moved = pc[i].home != u->home;
		changed += u->moved;
		u->home = pc[i].home;
		u->last_demand_mcpu = pc[i].last_demand_mcpu;
	}
	free(pc);
	free(order);
	return changed;
}

uint64_t tm_placer_home_doms(const struct tm_placer *pl)
{
	uint64_t m = 0;

	for (size_t i = 0; i < pl->n; i++)
		m |= pl->u[i].home;
	return m;
}

void tm_placer_free(struct tm_placer *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->u[i].path);
	free(pl->u);
	pl->u = NULL;
	pl->n = pl->cap = 0;
}
