// SPDX-License-Identifier: GPL-2.0
/*
 * Interference detection. Every sample_ms, for each ONLINE cgroup (those
 * the scheduler keeps wait histograms for, plus the configured ONLINE
 * paths), five signals:
 *   rq_wait_us          mean run-queue wait of its tasks (scheduler, cg_waits)
 *   cpu_delay_ms_per_s  CPU delay of its threads (taskstats, else schedstat)
 *   cpu_some_pct        cpu.pressure "some"
 *   memory_some_pct     memory.pressure "some"
 *   cpi                 cycles per instruction (perf, when a PMU exists)
 * Each has its own baseline (interference.h); a cgroup is interfered while
 * need_n of its last of_m samples of one signal are outliers. The culprit is
 * the configured BE cgroup whose CPU use over the last corr_samples follows
 * the sufferer's signal best. Then a ladder, one step per cooldown_s while the
 * interference lasts: lower the node's BE line, cap the culprit's CPU
 * (the scheduler's be_caps), kill the culprit. After recover_s without
 * interference the line and the cap are given back.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "actuate.h"
#include "config.h"
#include "report.h"
#include "strategy.h"
#include "interfere.h"
#include "interference_signals.h"
#include "tmlib.h"
#include "tmmaps.h"
#include "log.h"

#define NAME "interference"
#define RING 64
/* sized for a 1,000-pod node; more is logged once and counted */
#define MAX_BE 1024
#define NSIG   TM_IF_SIGNALS

enum { SIG_WAIT, SIG_DELAY, SIG_PSI_CPU, SIG_PSI_MEM, SIG_CPI };

/* What the reports show, copied at the end of every tick under d->lock. */
#define TM_IF_SIGNALS	    5
#define TM_IF_MAX_SUFFERERS 1024
struct if_row {
	char path[160];
	double value[TM_IF_SIGNALS];	/* last sample; NAN when not measured */
	double baseline[TM_IF_SIGNALS]; /* baseline mean */
	bool interfered;
};

static struct {
	struct if_row row[TM_IF_MAX_SUFFERERS];
	int nr;
	int step;		  /* enum tm_if_step */
	char culprit[160];	  /* last culprit named, "" if none */
	uint64_t detections;	  /* times a sufferer turned interfered */
	const char *delay_source; /* "taskstats", "schedstat" */
	bool cpi;		  /* a PMU counts cycles */
} shown;

static const char *const signal_names[TM_IF_SIGNALS] = {
	"rq_wait_us", "cpu_delay_ms_per_s", "cpu_some_pct", "memory_some_pct", "cpi",
};
/* Smallest rise that counts, per signal: below it a flat signal's noise. */
static const double abs_min[NSIG] = {50, 5, 2, 2, 0.2};

static const char *const step_names[] = {"none", "lower_line", "throttle", "evict"};

static const char *step_name(int step)
{
	return step >= 0 && step <= TM_IF_EVICT ? step_names[step] : "?";
}

struct sufferer {
	bool used;
	uint64_t id;
	char path[TM_CFG_PATH_MAX];
	uint64_t first_k, seen_k;
	struct tm_baseline base[NSIG];
	double ser[NSIG][RING];
	double out[NSIG][RING]; /* 1 where the sample was an outlier */
	double value[NSIG];
	bool prev_ok;
	uint64_t prev_ms;
	uint64_t prev_hist[TM_HIST_BUCKETS];
	uint64_t prev_ctr[NSIG]; /* delay ns, psi us (cpu, mem) */
	uint64_t prev_cyc, prev_ins;
	struct tm_cpi cpi;
	bool cpi_open;
	bool interfered;
};

struct be_track {
	bool used;
	char path[TM_CFG_PATH_MAX];
	uint64_t first_k, seen_k;
	uint64_t prev_us, prev_ms;
	bool prev_ok;
	double ser[RING];
};

static struct {
	struct sufferer v[TM_IF_MAX_SUFFERERS];
	struct be_track b[MAX_BE];
	uint64_t k; /* samples taken */
	struct tm_ladder ladder;
	char culprit[TM_CFG_PATH_MAX];
	char throttled[TM_CFG_PATH_MAX];
	struct tm_delay delay;
	bool started, pmu;
	uint64_t detections;
	struct tm_cg_path *paths; /* the cgroup tree, walked every WALK_EVERY samples */
	size_t np;
	uint64_t walked_k;
	uint32_t caps_map_id; /* the be_caps map stale caps were cleared from */
} st;

#define WALK_EVERY 10

/* Does cg_waits hold an id the last walk of the tree did not see? */
static bool unknown_ids(int waits_fd)
{
	uint64_t key, next, *prev = NULL;

	while (waits_fd >= 0 && !bpf_map_get_next_key(waits_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!tm_cgroup_path_of(st.paths, st.np, key))
			return true;
	}
	return false;
}

static void cgdir(const struct tm_daemon *d, const char *rel, char *out, size_t len)
{
	if (tm_cg_path(out, len, d->cgroup_root, rel, NULL))
		*out = 0;
}

static struct sufferer *sufferer_get(uint64_t id, const char *path)
{
	struct sufferer *free_slot = NULL;

	for (int i = 0; i < TM_IF_MAX_SUFFERERS; i++) {
		if (st.v[i].used && st.v[i].id == id)
			return &st.v[i];
		if (!st.v[i].used && !free_slot)
			free_slot = &st.v[i];
	}
	if (!free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = true;
	free_slot->id = id;
	free_slot->first_k = st.k;
	snprintf(free_slot->path, sizeof(free_slot->path), "%s", path);
	for (int s = 0; s < NSIG; s++)
		free_slot->value[s] = NAN;
	return free_slot;
}

static void sufferer_drop(struct sufferer *v)
{
	if (v->cpi_open)
		tm_cpi_close(&v->cpi);
	v->used = false;
}

/* Mean of a log2-us wait histogram delta (bucket b holds [2^(b-1), 2^b) us). */
static double hist_mean_us(const uint64_t *now, const uint64_t *prev)
{
	double sum = 0, n = 0;

	for (int b = 0; b < TM_HIST_BUCKETS; b++) {
		double c = now[b] >= prev[b] ? (double)(now[b] - prev[b]) : 0;
		double mid = b ? 0.75 * (double)(1ULL << b) : 0.5;

		sum += c * mid;
		n += c;
	}
	return n ? sum / n : NAN;
}

/* One sample of every signal of @v into v->value (NAN: not measured). */
static void sample_sufferer(struct tm_daemon *d, struct sufferer *v, int waits_fd, uint64_t now)
{
	char dir[PATH_MAX];
	struct tm_cg_wait w = {};
	uint64_t ctr[NSIG] = {}, cyc = 0, ins = 0;
	bool have_w, have[NSIG] = {}, have_cpi = false;
	double dt_s;

	cgdir(d, v->path, dir, sizeof(dir));
	have_w = waits_fd >= 0 && !bpf_map_lookup_elem(waits_fd, &v->id, &w);
	have[SIG_DELAY] = !tm_delay_cg_ns(&st.delay, dir, &ctr[SIG_DELAY]);
	have[SIG_PSI_CPU] = !tm_psi_some_us(dir, "cpu", &ctr[SIG_PSI_CPU]);
	have[SIG_PSI_MEM] = !tm_psi_some_us(dir, "memory", &ctr[SIG_PSI_MEM]);
	if (st.pmu && !v->cpi_open && !tm_cpi_open(&v->cpi, dir))
		v->cpi_open = true;
	if (v->cpi_open)
		have_cpi = !tm_cpi_read(&v->cpi, &cyc, &ins);

	for (int s = 0; s < NSIG; s++)
		v->value[s] = NAN;
	dt_s = (now - v->prev_ms) / 1000.0;
	if (v->prev_ok && dt_s > 0) {
		if (have_w)
			v->value[SIG_WAIT] = hist_mean_us((const uint64_t *)w.hist, v->prev_hist);
		/* threads that exit take their delay with them: no sample then */
		if (have[SIG_DELAY] && ctr[SIG_DELAY] >= v->prev_ctr[SIG_DELAY])
			v->value[SIG_DELAY] =
				(ctr[SIG_DELAY] - v->prev_ctr[SIG_DELAY]) / 1e6 / dt_s;
		for (int s = SIG_PSI_CPU; s <= SIG_PSI_MEM; s++)
			if (have[s] && ctr[s] >= v->prev_ctr[s])
				v->value[s] = (ctr[s] - v->prev_ctr[s]) / 1e4 / dt_s;
		/* too few instructions say nothing about CPI */
		if (have_cpi && ins > v->prev_ins + 100000 && cyc >= v->prev_cyc)
			v->value[SIG_CPI] =
				(double)(cyc - v->prev_cyc) / (double)(ins - v->prev_ins);
	}
	memcpy(v->prev_hist, w.hist, sizeof(v->prev_hist));
	memcpy(v->prev_ctr, ctr, sizeof(ctr));
	v->prev_cyc = cyc;
	v->prev_ins = ins;
	v->prev_ms = now;
	v->prev_ok = true;
}

/* The ONLINE cgroups: every id in cg_waits, and the configured paths. */
static void find_sufferers(struct tm_daemon *d, int waits_fd, struct tm_cg_path *paths, size_t np)
{
	uint64_t key, next, *prev = NULL;

	while (waits_fd >= 0 && !bpf_map_get_next_key(waits_fd, prev, &next)) {
		const char *p = tm_cgroup_path_of(paths, np, next);
		struct sufferer *v;

		key = next;
		prev = &key;
		if (!p)
			continue;
		v = sufferer_get(key, p);
		if (v)
			v->seen_k = st.k;
		else
			tm_limit_hit(d, "interference.online", TM_IF_MAX_SUFFERERS);
	}
	for (size_t j = 0; j < np; j++) {
		struct sufferer *v;

		if (!tm_cfg_online(d, paths[j].path))
			continue;
		v = sufferer_get(paths[j].id, paths[j].path);
		if (v)
			v->seen_k = st.k;
		else
			tm_limit_hit(d, "interference.online", TM_IF_MAX_SUFFERERS);
	}
}

/* BE cgroups of the configuration and their CPU use this sample, mCPU, from
 * the sampler's reading of this round. */
static int track_cmp(const void *a, const void *b)
{
	return strcmp(st.b[*(const int *)a].path, st.b[*(const int *)b].path);
}

static int track_key_cmp(const void *key, const void *b)
{
	return strcmp(key, st.b[*(const int *)b].path);
}

static void sample_be(struct tm_daemon *d, uint64_t now)
{
	/* the tracked cgroups by path, and the free slots: a lookup is a
	 * bsearch (a scan of every slot per cgroup was 1,000,000 strcmp a
	 * sample at 1,000 BE cgroups) */
	static int idx[MAX_BE], free_slots[MAX_BE];
	int nidx = 0, nfree = 0;
	const struct tm_be_use *be;
	int n = tm_sample_be(d, &be);

	for (int j = 0; j < MAX_BE; j++) {
		if (st.b[j].used)
			idx[nidx++] = j;
		else
			free_slots[nfree++] = j;
	}
	qsort(idx, nidx, sizeof(idx[0]), track_cmp);
	/* taken from the end: the lowest slots first, as before */
	for (int a = 0, z = nfree - 1; a < z; a++, z--) {
		int x = free_slots[a];

		free_slots[a] = free_slots[z];
		free_slots[z] = x;
	}
	for (int i = 0; i < n; i++) {
		struct be_track *t = NULL;
		int *hit;
		uint64_t us;

		/* tm_be_cgroups lists a cgroup once: one added here is not
		 * looked up again in this round */
		hit = nidx ? bsearch(be[i].path, idx, nidx, sizeof(idx[0]), track_key_cmp) : NULL;
		if (hit)
			t = &st.b[*hit];
		if (!t) {
			if (!nfree) {
				tm_limit_hit(d, "interference.be", MAX_BE);
				continue;
			}
			t = &st.b[free_slots[--nfree]];
			memset(t, 0, sizeof(*t));
			t->used = true;
			t->first_k = st.k;
			memcpy(t->path, be[i].path, sizeof(t->path));
			t->path[sizeof(t->path) - 1] = 0;
		}
		t->seen_k = st.k;
		if (!be[i].ok) {
			t->prev_ok = false;
			t->ser[st.k % RING] = 0;
			continue;
		}
		us = be[i].usage_us;
		t->ser[st.k % RING] = t->prev_ok && now > t->prev_ms && us >= t->prev_us
					      ? (double)(us - t->prev_us) / (now - t->prev_ms)
					      : 0;
		t->prev_us = us;
		t->prev_ms = now;
		t->prev_ok = true;
	}
	for (int j = 0; j < MAX_BE; j++)
		if (st.b[j].used && st.b[j].seen_k != st.k)
			st.b[j].used = false;
}

static bool be_tracked(const char *path)
{
	for (int j = 0; j < MAX_BE; j++)
		if (st.b[j].used && !strcmp(st.b[j].path, path))
			return true;
	return false;
}

/* Copy the last @n samples of ring @r (sample k last) oldest first. */
static void series(const double *r, uint32_t n, double *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = r[(st.k - (n - 1 - i)) % RING];
}

/* The culprit of sufferer @v for signal @s; "" if none. */
static const char *culprit_of(const struct tm_daemon *d, const struct sufferer *v, int s, double *r)
{
	static double vs[RING], bs[MAX_BE][RING];
	const double *bp[MAX_BE];
	const struct be_track *who[MAX_BE];
	uint32_t n = d->cfg.interference.corr_samples, nb = 0;
	int pick;

	if (n > RING)
		n = RING;
	if (st.k - v->first_k + 1 < n)
		n = (uint32_t)(st.k - v->first_k + 1);
	for (int j = 0; j < MAX_BE; j++) {
		const struct be_track *t = &st.b[j];

		if (!t->used)
			continue;
		if (st.k - t->first_k + 1 < n)
			n = (uint32_t)(st.k - t->first_k + 1);
		who[nb++] = t;
	}
	/*
	 * Against the sufferer's outliers (1/0), not its raw values: how far a
	 * signal rises varies from sample to sample and says nothing about who
	 * caused it; when it is out of line is what a culprit's activity follows.
	 */
	series(v->out[s], n, vs);
	for (uint32_t j = 0; j < nb; j++) {
		series(who[j]->ser, n, bs[j]);
		bp[j] = bs[j];
	}
	pick = tm_pick_culprit(vs, bp, nb, n, d->cfg.interference.min_corr_pct / 100.0,
			       d->cfg.interference.min_active_mcpu, r);
	return pick < 0 ? "" : who[pick]->path;
}

/*
 * At debug level, each sample of a sufferer: every measured signal as
 * value/baseline, '*' when an outlier. What a detection (or its absence)
 * was decided on, and the sample count a test measures latency in.
 */
static void log_sample(const struct sufferer *v)
{
	char buf[400];
	size_t n = 0;

	if (!tm_log_on(TM_LOG_DEBUG))
		return;
	for (int s = 0; s < NSIG && n < sizeof(buf); s++)
		if (!isnan(v->value[s]))
			n += snprintf(buf + n, sizeof(buf) - n, " %s=%.1f/%.1f%s", signal_names[s],
				      v->value[s], v->base[s].mean,
				      v->out[s][st.k % RING] ? "*" : "");
	tm_debug("tidemarkd: interference sample=%llu sufferer=%s interfered=%s%s",
		 (unsigned long long)st.k, v->path, v->interfered ? "true" : "false", buf);
}

static bool set_cap(struct tm_daemon *d, const char *rel, uint32_t mcpu)
{
	return tm_be_cap(d, rel, mcpu);
}

/*
 * Caps a previous tidemarkd left (killed before it could give them back):
 * cleared once per be_caps map, unless this daemon holds one itself.
 * Operators' caps (tidemarkctl cap) are left alone.
 */
static void clear_stale_caps(struct tm_daemon *d)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = tm_pin(d, TM_PIN_BE_CAPS), bw = tm_pin(d, TM_PIN_BW_UPDATE), n;

	if (fd < 0 || bw < 0) {
		if (fd >= 0)
			close(fd);
		if (bw >= 0)
			close(bw);
		return;
	}
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.id != st.caps_map_id) {
		st.caps_map_id = info.id;
		if (!st.throttled[0] && !d->cfg.interference.dry_run) {
			n = tm_be_caps_clear(fd, bw, TM_CAP_TIDEMARKD);
			if (n)
				tm_audit(d, NAME, "clear_stale_caps", false,
					 "cgroups=%d reason=\"left by an earlier tidemarkd\"", n);
		}
	}
	close(fd);
	close(bw);
}

static void relax(struct tm_daemon *d, const char *why)
{
	const struct tm_config *cfg = &d->cfg;

	if (tm_audit(d, NAME, "relax", cfg->interference.dry_run,
		     "step=%s line_pct=%u throttled=%s reason=%s", step_names[st.ladder.step],
		     cfg->cpu.suppress_pct, st.throttled[0] ? st.throttled : "-", why)) {
		tm_line_withdraw(d, NAME);
		if (st.throttled[0])
			set_cap(d, st.throttled, 0);
	}
	st.throttled[0] = 0;
	st.ladder.step = TM_IF_NONE;
	st.ladder.calm_since_ms = 0;
}

static void escalate(struct tm_daemon *d, const struct sufferer *v, int sig, const char *culprit,
		     double r, uint64_t now)
{
	const struct tm_config *cfg = &d->cfg;
	bool dry = cfg->interference.dry_run;
	int next = st.ladder.step + 1;
	char facts[1400];

	snprintf(facts, sizeof(facts),
		 "sufferer=%s signal=%s value=%.1f baseline=%.1f culprit=%s corr=%.2f", v->path,
		 signal_names[sig], v->value[sig], v->base[sig].mean, *culprit ? culprit : "-", r);
	if (next == TM_IF_SUPPRESS) {
		uint32_t line = cfg->cpu.suppress_pct, to = cfg->interference.suppress_min_pct;

		if (line > to + cfg->interference.suppress_step_pct)
			to = line - cfg->interference.suppress_step_pct;
		if (tm_audit(d, NAME, "lower_line", dry, "line_pct=%u->%u %s", line, to, facts))
			tm_line_request(d, NAME, to);
	} else if (next == TM_IF_THROTTLE) {
		if (tm_audit(d, NAME, "throttle", dry, "cgroup=%s cap_mcpu=%u %s", culprit,
			     cfg->interference.throttle_mcpu, facts)) {
			if (!set_cap(d, culprit, cfg->interference.throttle_mcpu))
				tm_log(TM_LOG_WARNING,
				       "tidemarkd: %s: cannot cap %s (no scheduler?)\n", NAME,
				       culprit);
			snprintf(st.throttled, sizeof(st.throttled), "%s", culprit);
		}
	} else if (next == TM_IF_EVICT) {
		tm_evict(d, NAME, "evict", culprit, dry, "%s", facts);
	}
	st.ladder.step = next;
	st.ladder.step_ms = now;
}

static void configure(struct tm_daemon *d)
{
	if (!st.started) {
		char why[160];

		tm_delay_open(&st.delay);
		if (st.delay.src != TM_DELAY_TASKSTATS)
			tm_log(TM_LOG_NOTICE,
			       "tidemarkd: %s: CPU delay from /proc/TID/schedstat: %s\n", NAME,
			       st.delay.why);
		st.pmu = tm_pmu_available(why, sizeof(why));
		if (!st.pmu)
			tm_log(TM_LOG_NOTICE, "tidemarkd: %s: no CPI signal (%s)\n", NAME, why);
		st.started = true;
	}
	/* baselines are kept over a reload: their units do not change, and
	 * relearning during an episode would learn the interference */
	if (!d->cfg.interference.enabled && st.ladder.step != TM_IF_NONE)
		relax(d, "disabled");
}

static void tick(struct tm_daemon *d, uint64_t now)
{
	const struct tm_config *cfg = &d->cfg;
	struct tm_if_params p = {
		.warmup = cfg->interference.warmup_samples,
		.span = cfg->interference.baseline_span,
		.sigma = cfg->interference.sigma,
		.min_rise_pct = cfg->interference.min_rise_pct,
		.need_n = cfg->interference.need_n,
		.of_m = cfg->interference.of_m,
		/* after eviction nothing is left to try: learn, so that a lasting
		 * change of the service itself becomes its normal */
		.frozen = st.ladder.step == TM_IF_SUPPRESS || st.ladder.step == TM_IF_THROTTLE,
	};
	struct tm_cg_path *paths = NULL;
	struct sufferer *worst = NULL;
	const char *culprit = "";
	int waits_fd, worst_sig = 0;
	double r = 0;
	size_t np = 0;
	bool any = false, lingering = false;
	uint32_t since_step;
	enum tm_if_move mv;

	if (!cfg->interference.enabled)
		return;
	/* samples wholly after the last step (the first one straddles it) */
	since_step = st.ladder.step == TM_IF_NONE
			     ? 32
			     : (uint32_t)((now - st.ladder.step_ms) / cfg->interference.sample_ms);
	since_step = since_step ? since_step - 1 : 0;
	st.k++;
	waits_fd = tm_pin(d, TM_PIN_CG_WAITS);
	clear_stale_caps(d);
	/* the tree is walked every WALK_EVERY samples, or when the scheduler
	 * reports a cgroup id the last walk did not see */
	if (!st.paths || st.k - st.walked_k >= WALK_EVERY || unknown_ids(waits_fd)) {
		tm_cgroup_paths_free(st.paths, st.np);
		st.paths = NULL;
		st.np = 0;
		if (tm_cgroup_walk(d->cgroup_root, &st.paths, &st.np)) {
			st.paths = NULL;
			st.np = 0;
			if (waits_fd >= 0)
				close(waits_fd);
			return;
		}
		st.walked_k = st.k;
	}
	paths = st.paths;
	np = st.np;
	find_sufferers(d, waits_fd, paths, np);
	sample_be(d, now);
	for (int i = 0; i < TM_IF_MAX_SUFFERERS; i++) {
		struct sufferer *v = &st.v[i];
		bool was;

		if (!v->used)
			continue;
		/* gone from the scheduler's map and the configuration, or removed */
		if (v->seen_k != st.k || !tm_cgroup_path_of(paths, np, v->id)) {
			sufferer_drop(v);
			continue;
		}
		sample_sufferer(d, v, waits_fd, now);
		was = v->interfered;
		v->interfered = false;
		for (int s = 0; s < NSIG; s++) {
			double x = v->value[s];
			bool on, outlier;

			/* unmeasured: the series holds its last value */
			v->ser[s][st.k % RING] = isnan(x) ? v->ser[s][(st.k - 1) % RING] : x;
			v->out[s][st.k % RING] = 0;
			if (isnan(x))
				continue;
			p.abs_min = abs_min[s];
			on = tm_baseline_feed(&v->base[s], &p, x, &outlier);
			v->out[s][st.k % RING] = outlier;
			lingering |= tm_baseline_lingering(&v->base[s], since_step);
			if (on && !v->interfered) {
				v->interfered = true;
				if (!worst) {
					worst = v;
					worst_sig = s;
				}
			}
		}
		log_sample(v);
		any |= v->interfered;
		if (v->interfered && !was) {
			const char *c;

			st.detections++;
			c = culprit_of(d, v, worst == v ? worst_sig : SIG_WAIT, &r);
			tm_audit(d, NAME, "detect", cfg->interference.dry_run,
				 "sufferer=%s signal=%s value=%.1f baseline=%.1f threshold=%.1f "
				 "culprit=%s corr=%.2f",
				 v->path, signal_names[worst == v ? worst_sig : SIG_WAIT],
				 v->value[worst == v ? worst_sig : SIG_WAIT],
				 v->base[worst == v ? worst_sig : SIG_WAIT].mean,
				 tm_if_threshold(&v->base[worst == v ? worst_sig : SIG_WAIT], &p),
				 *c ? c : "-", r);
		}
	}
	for (int i = 0; i < TM_IF_MAX_SUFFERERS && !worst && st.ladder.step != TM_IF_NONE; i++) {
		/* no sufferer interfered, one still with outliers: it leads the ladder */
		for (int s = 0; s < NSIG && st.v[i].used && !worst; s++)
			if (tm_baseline_lingering(&st.v[i].base[s], since_step)) {
				worst = &st.v[i];
				worst_sig = s;
			}
	}
	if (worst && st.throttled[0] && be_tracked(st.throttled)) {
		/*
		 * The capped culprit stays the culprit of this episode: capped,
		 * its CPU use no longer follows the sufferer (nor reaches
		 * min_active_mcpu), yet it is who the next step is for.
		 */
		culprit = st.throttled;
		r = NAN;
	} else if (worst) {
		culprit = culprit_of(d, worst, worst_sig, &r);
		if (*culprit)
			snprintf(st.culprit, sizeof(st.culprit), "%s", culprit);
	}
	mv = tm_ladder_decide(&st.ladder, any, lingering, *culprit, now,
			      cfg->interference.cooldown_s * 1000,
			      cfg->interference.recover_s * 1000);
	if (mv == TM_IF_ESCALATE)
		escalate(d, worst, worst_sig, culprit, r, now);
	else if (mv == TM_IF_RELAX)
		relax(d, "calm");
	/* a restarted scheduler has an empty be_caps: keep the cap in place */
	if (st.throttled[0] && !cfg->interference.dry_run)
		set_cap(d, st.throttled, cfg->interference.throttle_mcpu);

	pthread_mutex_lock(&d->lock);
	shown.nr = 0;
	for (int i = 0; i < TM_IF_MAX_SUFFERERS; i++) {
		const struct sufferer *v = &st.v[i];
		struct if_row *row = &shown.row[shown.nr];

		if (!v->used)
			continue;
		snprintf(row->path, sizeof(row->path), "%.159s", v->path);
		for (int s = 0; s < NSIG; s++) {
			row->value[s] = v->value[s];
			row->baseline[s] = v->base[s].n ? v->base[s].mean : NAN;
		}
		row->interfered = v->interfered;
		shown.nr++;
	}
	shown.step = st.ladder.step;
	snprintf(shown.culprit, sizeof(shown.culprit), "%.159s", st.culprit);
	shown.detections = st.detections;
	shown.delay_source = tm_delay_source_name(st.delay.src);
	shown.cpi = st.pmu;
	pthread_mutex_unlock(&d->lock);

	if (waits_fd >= 0)
		close(waits_fd);
}

static void stop(struct tm_daemon *d)
{
	/* a cap or lowered line nobody is watching any more would stay forever */
	if (st.ladder.step != TM_IF_NONE)
		relax(d, "daemon stopping");
	tm_delay_close(&st.delay);
	for (int i = 0; i < TM_IF_MAX_SUFFERERS; i++)
		if (st.v[i].used)
			sufferer_drop(&st.v[i]);
	tm_cgroup_paths_free(st.paths, st.np);
	st.paths = NULL;
	st.np = 0;
}

static void report_prom(struct tm_daemon *d, struct tm_buf *b)
{
	/* one family per signal, in its base unit: the last sample and the
	 * baseline (mean of the non-outlier samples) as stat="last|baseline" */
	static const struct {
		const char *name, *help;
		double scale;
	} fam[TM_IF_SIGNALS] = {
		{"tidemark_interference_rq_wait_seconds",
		 "Mean run-queue wait of an ONLINE cgroup's tasks (the scheduler's).", 1e-6},
		{"tidemark_interference_cpu_delay_ratio",
		 "Time an ONLINE cgroup's tasks waited for a CPU per second (schedstat delay).",
		 1e-3},
		{"tidemark_interference_cpu_pressure_ratio",
		 "Share of the last interval some task of an ONLINE cgroup waited for a CPU "
		 "(cpu.pressure some total).",
		 1e-2},
		{"tidemark_interference_memory_pressure_ratio",
		 "Share of the last interval some task of an ONLINE cgroup stalled on memory "
		 "(memory.pressure some total).",
		 1e-2},
		{"tidemark_interference_cycles_per_instruction",
		 "Cycles per instruction of an ONLINE cgroup (perf counters).", 1},
	};
	static const char *const stat[2] = {"last", "baseline"};

	pthread_mutex_lock(&d->lock);
	for (int k = 0; k < TM_IF_SIGNALS; k++) {
		tm_bprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", fam[k].name, fam[k].help,
			   fam[k].name);
		for (int i = 0; i < shown.nr; i++)
			for (int st = 0; st < 2; st++) {
				double v = st ? shown.row[i].baseline[k] : shown.row[i].value[k];

				if (isnan(v))
					continue;
				tm_bprintf(b, "%s{cgroup=", fam[k].name);
				tm_bprom_label(b, shown.row[i].path);
				tm_bprintf(b, ",stat=\"%s\"} %.6g\n", stat[st], v * fam[k].scale);
			}
	}
	tm_bprintf(b, "# HELP tidemark_interference_interfered 1 while an ONLINE cgroup is "
		      "interfered (n of the last m samples outliers).\n"
		      "# TYPE tidemark_interference_interfered gauge\n");
	for (int i = 0; i < shown.nr; i++) {
		tm_bprintf(b, "tidemark_interference_interfered{cgroup=");
		tm_bprom_label(b, shown.row[i].path);
		tm_bprintf(b, "} %d\n", shown.row[i].interfered);
	}
	tm_bprintf(b,
		   "# HELP tidemark_interference_step Step of the interference ladder: 0 none, "
		   "1 lower_line, 2 throttle, 3 evict.\n# TYPE tidemark_interference_step gauge\n");
	tm_bprintf(b, "tidemark_interference_step %d\n", shown.step);
	tm_bprintf(b, "# HELP tidemark_interference_detections_total ONLINE cgroups turning "
		      "interfered.\n# TYPE tidemark_interference_detections_total counter\n");
	tm_bprintf(b, "tidemark_interference_detections_total %" PRIu64 "\n", shown.detections);
	pthread_mutex_unlock(&d->lock);
}

/* to 3 decimals; a signal not measured is null */
static json_t *json_num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(round(v * 1000) / 1000);
}

static void report_json(struct tm_daemon *d, json_t *r)
{
	json_t *rows = json_array();

	pthread_mutex_lock(&d->lock);
	for (int i = 0; i < shown.nr; i++) {
		json_t *sig = json_object();

		for (int k = 0; k < TM_IF_SIGNALS; k++) {
			double v = shown.row[i].value[k], m = shown.row[i].baseline[k];

			if (isnan(v) && isnan(m))
				continue;
			json_object_set_new(sig, signal_names[k],
					    json_pack("{s:o,s:o}", "value", json_num(v), "baseline",
						      json_num(m)));
		}
		json_array_append_new(rows, json_pack("{s:o,s:b,s:o}", "cgroup",
						      tm_json_str(shown.row[i].path), "interfered",
						      shown.row[i].interfered, "signals", sig));
	}
	json_object_set_new(r, "interference",
			    json_pack("{s:s,s:o,s:I,s:s,s:b,s:o}", "step", step_name(shown.step),
				      "culprit", tm_json_str(shown.culprit), "detections",
				      (json_int_t)shown.detections, "delay_source",
				      shown.delay_source ? shown.delay_source : "none", "cpi",
				      shown.cpi, "cgroups", rows));
	pthread_mutex_unlock(&d->lock);
}

static uint32_t period_ms(const struct tm_daemon *d)
{
	return d->cfg.interference.sample_ms;
}

static void check(struct tm_cfg_ctx *x, json_t *o, struct tm_config *c)
{
	if (c->interference.need_n > c->interference.of_m)
		tm_cfg_fail(x, "interference.need_n", "%u must not be above of_m (%u)",
			    c->interference.need_n, c->interference.of_m);
}

static const struct tm_cfg_row rows[] = {
	TM_CFG_BOOL_ROW("enabled", interference.enabled, "true", "the detector and its ladder"),
	TM_CFG_BOOL_ROW("dry_run", interference.dry_run, "false",
			"decide, log and count; never act"),
	TM_CFG_U32_ROW("sample_ms", interference.sample_ms, 100, 60000, "1000", "ms",
		       "one sample of every signal"),
	TM_CFG_U32_ROW("warmup_samples", interference.warmup_samples, 3, 3600, "10", "",
		       "samples before a baseline is trusted"),
	TM_CFG_U32_ROW("baseline_span", interference.baseline_span, 2, 3600, "60", "",
		       "EWMA span of the baselines, samples"),
	{.key = "sigma",
	 .type = TM_CFG_NUM,
	 TM_CFG_FIELD(interference.sigma),
	 .min = 0.5,
	 .max = 20,
	 .dflt = "3",
	 .unit = "",
	 .help = "outlier: above mean + sigma x spread ..."},
	TM_CFG_U32_ROW("min_rise_pct", interference.min_rise_pct, 0, 10000, "50", "%",
		       "... and above mean x (1 + this / 100)"),
	TM_CFG_U32_ROW("need_n", interference.need_n, 1, 32, "3", "", "interfered: n outliers ..."),
	TM_CFG_U32_ROW("of_m", interference.of_m, 1, 32, "5", "", "... in the last m samples"),
	TM_CFG_U32_ROW("corr_samples", interference.corr_samples, 4, 64, "20", "",
		       "samples the culprit correlation looks at"),
	TM_CFG_U32_ROW("min_corr_pct", interference.min_corr_pct, 1, 100, "50", "%",
		       "culprit: correlation at least this / 100"),
	TM_CFG_U32_ROW("min_active_mcpu", interference.min_active_mcpu, 0, TM_MCPU_MAX, "50",
		       "mCPU", "culprit: using at least this now"),
	TM_CFG_U32_ROW("cooldown_s", interference.cooldown_s, 1, 3600, "5", "s",
		       "between two steps of the ladder"),
	TM_CFG_U32_ROW("recover_s", interference.recover_s, 1, 86400, "60", "s",
		       "calm this long: steps undone"),
	TM_CFG_U32_ROW("suppress_step_pct", interference.suppress_step_pct, 1, 99, "15", "%",
		       "step 1 lowers the BE line by this ..."),
	TM_CFG_U32_ROW("suppress_min_pct", interference.suppress_min_pct, 1, 100, "30", "%",
		       "... never below this (at most watermarks.cpu.suppress_pct)"),
	TM_CFG_U32_ROW("throttle_mcpu", interference.throttle_mcpu, 1, TM_MCPU_MAX, "200", "mCPU",
		       "step 2 caps the culprit at this"),
};

static const struct tm_cfg_section config = {
	.name = "interference",
	.help = "interference detection and its ladder (strategy interference)",
	TM_CFG_ROWS(rows),
	.check = check,
};

const struct tm_strategy tm_strategy_interference = {
	.name = NAME,
	.config = &config,
	.period_ms = period_ms,
	.configure = configure,
	.tick = tick,
	.stop = stop,
	.report_prom = report_prom,
	.report_json = report_json,
};
