/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interference detection, the pure decisions (unit-tested on synthetic
 * traces): a per-signal baseline with an outlier test and N-of-M hysteresis,
 * the correlation that names a culprit, and the action ladder.
 *
 * Baseline (after CPI2): an exponentially weighted mean and variance of the
 * signal, fed only with samples that are not outliers, and not at all while
 * the ladder is acting, so an interference that lasts or is half relieved
 * does not become the new normal. A sample is an outlier when it
 * is above mean + max(sigma x spread, mean x min_rise_pct, abs_min): the
 * relative and absolute floors keep a very steady signal (spread ~0) from
 * flagging noise.
 */
#ifndef __TM_INTERFERE_H
#define __TM_INTERFERE_H
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

struct tm_if_params {
	uint32_t warmup;       /* samples before the baseline is trusted */
	uint32_t span;	       /* EWMA span of the baseline, samples */
	double sigma;	       /* outlier: above mean + sigma x spread ... */
	uint32_t min_rise_pct; /* ... and above mean x (1 + this / 100) ... */
	double abs_min;	       /* ... and above mean + this (signal units) */
	uint32_t need_n, of_m; /* interfered: n outliers among the last m samples */
	bool frozen;	       /* judge, but do not learn (during an episode) */
};

struct tm_baseline {
	double mean, var;
	uint32_t n;	 /* samples folded in */
	uint32_t recent; /* bit i: the i-th most recent sample was an outlier */
	uint32_t seen;	 /* samples judged (for the m window) */
};

/* Outlier threshold of baseline @b. */
static inline double tm_if_threshold(const struct tm_baseline *b, const struct tm_if_params *p)
{
	double sd = b->var > 0 ? sqrt(b->var) : 0, m = p->sigma * sd;
	double rel = b->mean * p->min_rise_pct / 100.0;

	if (rel > m)
		m = rel;
	if (p->abs_min > m)
		m = p->abs_min;
	return b->mean + m;
}

static inline uint32_t tm_popcount32(uint32_t x)
{
	uint32_t n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/*
 * Feed sample @x. Returns true when the signal is interfered: at least
 * need_n of the last of_m judged samples were outliers. @outlier (may be
 * NULL) tells whether this sample was one.
 */
static inline bool tm_baseline_feed(struct tm_baseline *b, const struct tm_if_params *p, double x,
				    bool *outlier)
{
	bool out = false;
	uint32_t m = p->of_m > 32 ? 32 : p->of_m;
	uint32_t mask = m >= 32 ? 0xffffffffu : (1u << m) - 1;

	if (b->n >= p->warmup) {
		out = x > tm_if_threshold(b, p);
		b->recent = (b->recent << 1 | out) & mask;
		b->seen++;
	}
	/*
	 * While the ladder acts, samples are judged against the baseline from
	 * before the episode: half-relieved samples folded in would raise it
	 * and call the episode over too early.
	 */
	if (!out && !(p->frozen && b->n >= p->warmup)) {
		/* plain mean/variance while warming up, then an EWMA */
		double a = b->n < p->span ? 1.0 / (b->n + 1) : 1.0 / p->span;
		double d = x - b->mean;

		b->mean += a * d;
		b->var = (1 - a) * (b->var + a * d * d);
		b->n++;
	}
	if (outlier)
		*outlier = out;
	return b->seen && tm_popcount32(b->recent) >= p->need_n;
}

/* Pearson correlation of @x and @y over @n samples; 0 when either is flat. */
static inline double tm_pearson(const double *x, const double *y, uint32_t n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;

	if (n < 3)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (uint32_t i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx <= 1e-12 * n || syy <= 1e-12 * n)
		return 0;
	return sxy / sqrt(sxx * syy);
}

/*
 * The culprit among @nbe BE cgroups: the one whose activity series (CPU
 * used per sample, be[i][0..n-1], oldest first) correlates best with the
 * sufferer's series @sufferer[0..n-1] (its outliers as 1/0: a point-biserial
 * correlation), if at least @min_corr, and which is
 * active now (last sample >= @min_active). Not simply the biggest: a BE
 * cgroup that ran all along at the same rate explains no change. Ties go to
 * the larger rise over the window. Returns the index, or -1; *r_out gets
 * the winner's correlation.
 */
static inline int tm_pick_culprit(const double *sufferer, const double *const *be, uint32_t nbe,
				  uint32_t n, double min_corr, double min_active, double *r_out)
{
	int best = -1;
	double best_r = 0, best_rise = 0;

	for (uint32_t i = 0; i < nbe; i++) {
		double r, rise;

		if (n < 3 || be[i][n - 1] < min_active)
			continue;
		r = tm_pearson(sufferer, be[i], n);
		rise = be[i][n - 1] - be[i][0];
		if (r < min_corr)
			continue;
		if (best < 0 || r > best_r + 1e-9 ||
		    (fabs(r - best_r) <= 1e-9 && rise > best_rise)) {
			best = (int)i;
			best_r = r;
			best_rise = rise;
		}
	}
	if (r_out)
		*r_out = best < 0 ? 0 : best_r;
	return best;
}

/*
 * The action ladder. The first step when the sufferer turns interfered; each
 * further step after @cooldown_ms if the last did not help, that is while
 * any of the last of_m samples is still an outlier (@lingering; not just
 * while n of m are: half a relief is no relief). Every step is undone
 * (eviction cannot be) after @recover_ms without a single outlier.
 */
enum tm_if_step {
	TM_IF_NONE = 0,
	TM_IF_SUPPRESS, /* lower the node's BE line */
	TM_IF_THROTTLE, /* cap the culprit's CPU */
	TM_IF_EVICT,	/* kill the culprit */
};

enum tm_if_move { TM_IF_HOLD, TM_IF_ESCALATE, TM_IF_RELAX };

struct tm_ladder {
	enum tm_if_step step;
	uint64_t step_ms;	/* when the current step was taken */
	uint64_t calm_since_ms; /* first sample without outliers, 0 while not calm */
};

/*
 * Any outlier among the last @last judged samples (at most of_m are kept):
 * after a step, only the samples taken since it say whether it helped.
 */
static inline bool tm_baseline_lingering(const struct tm_baseline *b, uint32_t last)
{
	uint32_t mask = last >= 32 ? 0xffffffffu : (1u << last) - 1;

	return (b->recent & mask) != 0;
}

static inline enum tm_if_move tm_ladder_decide(struct tm_ladder *l, bool interfered, bool lingering,
					       bool have_culprit, uint64_t now_ms,
					       uint32_t cooldown_ms, uint32_t recover_ms)
{
	if (l->step == TM_IF_NONE)
		return interfered ? TM_IF_ESCALATE : TM_IF_HOLD;
	if (interfered || lingering) {
		l->calm_since_ms = 0;
		if (l->step >= TM_IF_EVICT || now_ms - l->step_ms < cooldown_ms)
			return TM_IF_HOLD;
		/* throttling and eviction act on a culprit: none named, hold */
		return have_culprit ? TM_IF_ESCALATE : TM_IF_HOLD;
	}
	if (!l->calm_since_ms)
		l->calm_since_ms = now_ms ? now_ms : 1;
	return now_ms - l->calm_since_ms >= recover_ms ? TM_IF_RELAX : TM_IF_HOLD;
}
#endif
