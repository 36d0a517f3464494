/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A window of the last samples, one per period: a ring over storage the
 * caller gives. A sample that does not count (NaN: BE was not asking, no
 * reading) keeps its place in time, so "the last k samples" is always the
 * last k periods. Pure: the sampler and the strategies use it, and
 * tests/unit/test_window.c checks it.
 */
#ifndef __TM_WINDOW_H
#define __TM_WINDOW_H
#include <math.h>
#include <stdint.h>

struct tm_win {
	double *v;
	uint32_t cap;  /* slots in v */
	uint32_t head; /* the next slot written */
	uint32_t n;    /* samples held, at most cap */
};

/* A window over the array @buf */
#define TM_WIN_OVER(buf)                                          \
	{                                                         \
		.v = (buf), .cap = sizeof(buf) / sizeof((buf)[0]) \
	}

static inline void tm_win_reset(struct tm_win *w)
{
	w->head = w->n = 0;
}

static inline void tm_win_push(struct tm_win *w, double x)
{
	w->v[w->head] = x;
	w->head = (w->head + 1) % w->cap;
	if (w->n < w->cap)
		w->n++;
}

/* The @k-th newest sample (0: the newest); @k below n */
static inline double tm_win_at(const struct tm_win *w, uint32_t k)
{
	return w->v[(w->head + w->cap - 1 - k) % w->cap];
}

/* The last @k samples (fewer if fewer were pushed), oldest first, into
 * @out; how many. */
static inline uint32_t tm_win_last(const struct tm_win *w, uint32_t k, double *out)
{
	if (k > w->n)
		k = w->n;
	for (uint32_t i = 0; i < k; i++)
		out[i] = tm_win_at(w, k - 1 - i);
	return k;
}

/*
 * The mean of the samples that count among the last @k: 0, with *@mean and
 * *@counted (how many counted; *@mean is 0 when none did). -1 while fewer
 * than @k samples were pushed, or @k is 0 or above the window's size: a
 * window not yet full is not averaged as if it were.
 */
static inline int tm_win_mean(const struct tm_win *w, uint32_t k, double *mean, uint32_t *counted)
{
	double sum = 0;
	uint32_t c = 0;

	if (!k || k > w->cap || w->n < k)
		return -1;
	for (uint32_t i = 0; i < k; i++) {
		double x = tm_win_at(w, i);

		if (!isnan(x)) {
			sum += x;
			c++;
		}
	}
	*mean = c ? sum / c : 0;
	*counted = c;
	return 0;
}

/* The largest sample that counts among the last @k (0 if none). */
static inline double tm_win_max(const struct tm_win *w, uint32_t k)
{
	double m = 0;

	if (k > w->n)
		k = w->n;
	for (uint32_t i = 0; i < k; i++) {
		double x = tm_win_at(w, i);

		if (!isnan(x) && x > m)
			m = x;
	}
	return m;
}
#endif
