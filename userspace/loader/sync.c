// SPDX-License-Identifier: GPL-2.0
/* scx_tidemark: the class and home maps kept in line with the rules and the
 * placement; the pinned objects. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <scx/common.h>
#include <sys/stat.h>

#include "tmmaps.h"
#include "loader.h"
#include "log.h"

/* Cgroup paths, refreshed at every rescan, to name cgroups in the stats. */
struct tm_cg_path *tm_cg_paths;
size_t tm_nr_cg_paths;

/* Drop the wait histograms of cgroups that no longer exist. */
void tm_refresh_cg_paths(struct tidemark *skel)
{
	int fd = bpf_map__fd(skel->maps.cg_waits);
	struct tm_cg_path *v;
	__u64 key, next, *prev = NULL;
	size_t n;

	if (tm_cgroup_walk(TM_CGROUP_ROOT, &v, &n))
		return;
	tm_cgroup_paths_free(tm_cg_paths, tm_nr_cg_paths);
	tm_cg_paths = v;
	tm_nr_cg_paths = n;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		if (!tm_cgroup_path_of(tm_cg_paths, tm_nr_cg_paths, key) &&
		    !bpf_map_delete_elem(fd, &key))
			continue; /* deleted: iterate from the previous key again */
		prev = &key;
	}
}

/* Flag values come from the running kernel's BTF: they moved after 6.12. */
/* Class entries the loader wrote into the classes map (sorted by id). */
/* A class change bumps class_gen so cached per-task lookups are redone;
 * through the scheduler's tunables_update, like every other writer. */
void tm_bump_class_gen(struct tidemark *skel)
{
	char err[256];

	if (tm_tunables_update(bpf_program__fd(skel->progs.tunables_update), 0, NULL, true, NULL,
			       NULL, err, sizeof(err)))
		tm_log(TM_LOG_ERR, "scx_tidemark: cannot bump class_gen: %s\n", err);
}

/*
 * Match the rules against the cgroup tree and bring the classes map in line:
 * new and changed cgroups are written, vanished ones removed, then class_gen
 * is bumped so cached lookups are redone. The first time, a missing cgroup
 * named by a plain rule is an error and nothing is written; later (rescans,
 * restarts) it is a warning, so the rest of the node stays protected.
 */
int tm_sync_rules(struct tidemark *skel, const struct tm_opts *o, struct tm_owned *own, bool strict)
{
	int fd = bpf_map__fd(skel->maps.classes);
	struct tm_class_entry *nv;
	size_t nn, i = 0, j = 0;
	bool changed = false;
	char err[512];

	if (tm_rules_resolve(&o->rules, TM_CGROUP_ROOT, true, !strict, &nv, &nn, err,
			     sizeof(err))) {
		tm_log(TM_LOG_ERR, "scx_tidemark: class rules: %s\n", err);
		return strict ? -1 : 0;
	}
	while (i < own->n || j < nn) {
		if (j >= nn || (i < own->n && own->v[i].id < nv[j].id)) {
			/* the cgroup is gone (or no rule matches it any more) */
			if (bpf_map_delete_elem(fd, &own->v[i].id) && errno != ENOENT)
				goto map_err;
			changed = true;
			i++;
		} else if (i >= own->n || nv[j].id < own->v[i].id || nv[j].cls != own->v[i].cls) {
			if (bpf_map_update_elem(fd, &nv[j].id, &nv[j].cls, BPF_ANY))
				goto map_err;
			changed = true;
			if (i < own->n && own->v[i].id == nv[j].id)
				i++;
			j++;
		} else {
			i++;
			j++;
		}
	}
	free(own->v);
	own->v = nv;
	own->n = nn;
	if (changed)
		tm_bump_class_gen(skel);
	return 0;
map_err:
	tm_log(TM_LOG_ERR, "scx_tidemark: class map update: %s\n", strerror(errno));
	free(nv);
	return -1;
}

/*
 * SMT siblings for the scheduler, from the topology's cores: each CPU's
 * other threads (as CPU + 1). Cores of more threads than the scheduler
 * knows of keep their first TM_MAX_SMT - 1 siblings, said once.
 */
static void setup_smt(struct tidemark *skel, const struct tm_topology *t,
		      const struct tm_tunables *tun)
{
	bool any = false;

	memset((void *)skel->rodata->cpu_sibs, 0, sizeof(skel->rodata->cpu_sibs));
	for (unsigned int cpu = 0; cpu < TM_MAX_CPUS && cpu < TM_TOPO_MAX_CPUS; cpu++) {
		struct tm_cpuset sib;
		int n = 0;

		tm_topo_siblings(t, cpu, &sib);
		for (unsigned int s = 0; s < TM_MAX_CPUS && s < TM_TOPO_MAX_CPUS; s++) {
			if (s == cpu || !tm_cpuset_test(&sib, s))
				continue;
			if (n < TM_MAX_SMT - 1)
				skel->rodata->cpu_sibs[cpu * (TM_MAX_SMT - 1) + n] = (__u16)(s + 1);
			n++;
			any = true;
		}
	}
	skel->rodata->smt_present = any;
	if (!any)
		return;
	if (t->threads_per_core > TM_MAX_SMT)
		tm_log(TM_LOG_NOTICE,
		       "scx_tidemark: cores of %u hardware threads: smt_expel keeps BE off "
		       "%d siblings of each only\n",
		       t->threads_per_core, TM_MAX_SMT - 1);
	tm_log(TM_LOG_INFO, "scx_tidemark: SMT: %u cores of up to %u threads, smt_expel %s\n",
	       t->nr_cores, t->threads_per_core, tun->smt_expel ? "on" : "off");
}

/*
 * Cache domains for the scheduler: CPU -> domain and the domain capacities
 * placement works with. One domain (or no topology): placement stays off.
 * Read whether placement is on or not (@tun), so that it can be turned on
 * at runtime.
 */
void tm_setup_domains(struct tidemark *skel, const struct tm_opts *o, const struct tm_tunables *tun,
		      struct tm_place_run *pr)
{
	struct tm_topology *t;
	/* with placement off, say what keeps tidemarkctl set placement=1 from working */
	const char *off = tun->placement ? "placement off" : "placement cannot be turned on";
	char err[256];
	int nd;

	memset((void *)skel->rodata->cpu_dom, TM_NO_DOM, sizeof(skel->rodata->cpu_dom));
	skel->rodata->nr_doms = 0;
	pr->pl.cfg = o->place;
	pr->pl.cfg.enabled = tun->placement;
	pr->pl.cfg.slack_pct = tun->home_slack_pct;
	pr->pl.nd = 0;
	t = calloc(1, sizeof(*t));
	if (!t) {
		tm_log(TM_LOG_ERR, "scx_tidemark: %s: out of memory\n", off);
		return;
	}
	if (tm_topo_load(NULL, t, err, sizeof(err))) {
		tm_log(TM_LOG_WARNING, "scx_tidemark: %s: %s\n", off, err);
		tm_log(TM_LOG_WARNING,
		       "scx_tidemark: SMT siblings unknown: BE is not kept off them\n");
		free(t);
		return;
	}
	setup_smt(skel, t, tun);
	if (t->nr_domains < 2) {
		tm_log(TM_LOG_INFO, "scx_tidemark: %s: one cache domain\n", off);
		free(t);
		return;
	}
	nd = t->nr_domains;
	if (nd > TM_MAX_DOMS) {
		tm_log(TM_LOG_INFO,
		       "scx_tidemark: %d cache domains, placing in the first %d only\n", nd,
		       TM_MAX_DOMS);
		nd = TM_MAX_DOMS;
	}
	for (int d = 0; d < nd; d++) {
		for (unsigned int cpu = 0; cpu < TM_MAX_CPUS && cpu < TM_TOPO_MAX_CPUS; cpu++)
			if (tm_cpuset_test(&t->d[d].cpus, cpu))
				skel->rodata->cpu_dom[cpu] = d;
		pr->pl.d[d].cap_mcpu = tm_cpuset_count(&t->d[d].online) * 1000;
		pr->pl.d[d].package = t->d[d].package;
	}
	skel->rodata->nr_doms = nd;
	pr->pl.nd = nd;
	pr->topo = t;
}

const char *tm_domain_kind(const struct tm_place_run *pr)
{
	return pr->topo ? tm_domain_kind_name(pr->topo->kind) : "domain";
}

void tm_format_doms(__u64 m, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int d = 0; d < 64 && off < len; d++)
		if (m >> d & 1)
			off += snprintf(buf + off, len - off, "%s%d", off ? "," : "", d);
}

/*
 * Work out homes again and bring the homes map in line; bump class_gen when
 * anything changed so tasks look their home up again. The first time, a
 * plain --home path that names no placed cgroup is an error.
 */
int tm_place_sync(struct tidemark *skel, const struct tm_opts *o, struct tm_place_run *pr,
		  const struct tm_owned *own, bool strict)
{
	int fd = bpf_map__fd(skel->maps.homes);
	struct tm_placer *pl = &pr->pl;
	__u64 key, next, *prev = NULL, doms;
	struct tm_tunables tun;
	struct timespec ts;
	bool changed = false;
	__u32 zero = 0;
	char dl[256];
	int r;

	if (!pl->nd)
		return 0;
	/* placement and home_slack_pct change at runtime (tidemarkctl set) */
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.tunables), &zero, &tun)) {
		if (pl->cfg.enabled != !!tun.placement)
			tm_log(TM_LOG_INFO, "scx_tidemark: placement %s\n",
			       tun.placement ? "on" : "off: every home cleared");
		pl->cfg.enabled = tun.placement;
		pl->cfg.slack_pct = tun.home_slack_pct;
	}
	if (!pl->cfg.enabled) {
		/* no homes: tasks run unhomed from their next class lookup */
		while (!bpf_map_get_next_key(fd, NULL, &next)) {
			if (bpf_map_delete_elem(fd, &next))
				break;
			changed = true;
		}
		if (skel->bss->home_doms) {
			skel->bss->home_doms = 0;
			changed = true;
		}
		if (changed)
			tm_bump_class_gen(skel);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r = tm_placer_update(pl, TM_CGROUP_ROOT, &o->rules, own->v, own->n, tm_cg_paths,
			     tm_nr_cg_paths, ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000);
	if (r < 0) {
		tm_log(TM_LOG_ERR, "scx_tidemark: placement: out of memory\n");
		return strict ? -1 : 0;
	}
	if (strict) {
		for (int i = 0; i < o->place.n; i++) {
			const char *rp = o->place.r[i].path;
			bool hit = false;

			if (tm_path_is_glob(rp))
				continue;
			for (size_t k = 0; k < pl->n && !hit; k++)
				hit = !strcmp(pl->u[k].path, rp);
			if (!hit) {
				tm_log(TM_LOG_ERR,
				       "scx_tidemark: --home %s: not an ONLINE cgroup that gets a "
				       "home (those named by --online rules, and kubelet pods)\n",
				       rp);
				return -1;
			}
		}
	}
	for (size_t i = 0; i < pl->n; i++) {
		struct tm_unit *u = &pl->u[i];
		struct tm_home h = {.doms = u->home, .soft = u->soft}, cur;

		if (!bpf_map_lookup_elem(fd, &u->id, &cur) && cur.doms == h.doms &&
		    cur.soft == h.soft)
			continue;
		if (bpf_map_update_elem(fd, &u->id, &h, BPF_ANY)) {
			tm_log(TM_LOG_ERR, "scx_tidemark: homes map update for %s: %s\n", u->path,
			       strerror(errno));
			continue;
		}
		changed = true;
		tm_format_doms(u->home, dl, sizeof(dl));
		tm_log(TM_LOG_INFO, "scx_tidemark: home %s -> %s %s (%s, demand %u mCPU from %s)\n",
		       u->path, tm_domain_kind(pr), dl, u->soft ? "soft" : "strict", u->demand_mcpu,
		       tm_demand_src_name(u->src));
	}
	/* homes of cgroups that are gone, or no longer placed */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool live = false;

		key = next;
		for (size_t k = 0; k < pl->n && !live; k++)
			live = pl->u[k].id == key;
		if (!live && !bpf_map_delete_elem(fd, &key)) {
			changed = true;
			continue; /* deleted: iterate from the previous key again */
		}
		prev = &key;
	}
	doms = tm_placer_home_doms(pl);
	if (skel->bss->home_doms != doms) {
		skel->bss->home_doms = doms;
		changed = true;
	}
	if (changed)
		tm_bump_class_gen(skel);
	return 0;
}

static int cmp_applied(const void *a, const void *b)
{
	const struct tm_bw_applied *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Give the scheduler every cgroup's cpu.max and cpu.max.burst that changed
 * since the last call (6.12 tells a BPF scheduler nothing of cpu.max writes),
 * from the cgroup list tm_refresh_cg_paths just read. Removed cgroups need
 * nothing: the scheduler drops their limit in cgroup_exit. Returns how many
 * limits were changed.
 */
int tm_bw_sync(struct tidemark *skel, struct tm_bw_state *bs)
{
	int fd = bpf_program__fd(skel->progs.bw_update), changed = 0;
	struct tm_bw_applied *nv;
	size_t nn = 0;
	char err[256];

	nv = calloc(tm_nr_cg_paths ? tm_nr_cg_paths : 1, sizeof(*nv));
	if (!nv)
		return -1;
	for (size_t i = 0; i < tm_nr_cg_paths; i++) {
		struct tm_bw_applied a = {.id = tm_cg_paths[i].id}, key = a, *old;
		int r = tm_cg_bw_read(TM_CGROUP_ROOT, tm_cg_paths[i].path, &a.quota_us,
				      &a.period_us, &a.burst_us);

		old = bs->n ? bsearch(&key, bs->v, bs->n, sizeof(*bs->v), cmp_applied) : NULL;
		if (r < 0 || (r == 0 && !old))
			continue; /* no cpu controller, or never limited */
		if (r == 0)
			a.burst_us = 0;
		if (!old || old->quota_us != a.quota_us || old->period_us != a.period_us ||
		    old->burst_us != a.burst_us) {
			struct tm_bw_req req = {.cgid = a.id,
						.set = TM_BW_SET_MAX,
						.quota_us = a.quota_us,
						.period_us = a.period_us,
						.burst_us = a.burst_us};

			if (tm_bw_update(fd, &req, err, sizeof(err))) {
				if (errno != E2BIG || !bs->full_said)
					tm_log(TM_LOG_INFO, "scx_tidemark: %s: %s\n",
					       tm_cg_paths[i].path, err);
				if (errno == E2BIG)
					bs->full_said = true;
				continue;
			}
			changed++;
		}
		if (a.quota_us)
			nv[nn++] = a;
	}
	free(bs->v);
	bs->v = nv;
	bs->n = nn;
	return changed;
}

/* Pinned so tidemarkctl (and the daemon) can change classes and tunables. */
void tm_unpin_maps(void)
{
	char path[256], err[512];

	/* only in our own directory: one someone else made stays as it was */
	if (tm_pin_dir_check(TM_PIN_DIR, err, sizeof(err)))
		return;

	for (int i = 0; i < TM_NR_PINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", TM_PIN_DIR, tm_pins[i].name);
		unlink(path);
	}
	rmdir(TM_PIN_DIR);
}

int tm_pin_maps(struct tidemark *skel)
{
	/* in enum tm_pin order; the ABI map is pinned last, so a reader that
	 * finds it finds every other pin */
	struct bpf_map *maps[TM_NR_PINS] = {
		[TM_PIN_CLASSES] = skel->maps.classes,	   [TM_PIN_TUNABLES] = skel->maps.tunables,
		[TM_PIN_STATS] = skel->maps.stats,	   [TM_PIN_CG_WAITS] = skel->maps.cg_waits,
		[TM_PIN_HOMES] = skel->maps.homes,	   [TM_PIN_BE_CAPS] = skel->maps.be_caps,
		[TM_PIN_CG_BW] = skel->maps.cg_bw,	   [TM_PIN_TRACE] = skel->maps.trace,
		[TM_PIN_TRACE_CTL] = skel->maps.trace_ctl,
	};
	char path[256], err[512];

	/* a directory someone else made first is left alone, not used */
	if (tm_pin_dir_check(TM_PIN_DIR, err, sizeof(err)) && errno != ENOENT) {
		tm_log(TM_LOG_INFO, "scx_tidemark: %s\n", err);
		return -1;
	}
	tm_unpin_maps();
	if (mkdir(TM_PIN_DIR, 0700) && errno != EEXIST)
		goto fail;
	if (tm_pin_dir_check(TM_PIN_DIR, err, sizeof(err))) {
		tm_log(TM_LOG_INFO, "scx_tidemark: %s\n", err);
		return -1;
	}
	for (int i = 0; i < TM_NR_PINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", TM_PIN_DIR, tm_pins[i].name);
		if (i == TM_PIN_ABI)
			continue;
		if (i == TM_PIN_TUNABLES_UPDATE
			    ? bpf_program__pin(skel->progs.tunables_update, path)
		    : i == TM_PIN_BW_UPDATE ? bpf_program__pin(skel->progs.bw_update, path)
					    : bpf_map__pin(maps[i], path))
			goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s", TM_PIN_DIR, tm_pins[TM_PIN_ABI].name);
	if (bpf_map__pin(skel->maps.abi, path))
		goto fail;
	return 0;
fail:
	tm_log(TM_LOG_ERR, "scx_tidemark: cannot pin maps under %s: %s (is bpffs mounted?)\n",
	       TM_PIN_DIR, strerror(errno));
	tm_unpin_maps();
	return -1;
}
