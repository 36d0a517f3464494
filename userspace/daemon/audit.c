// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's clock, audit lines and limit hits (audit.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "audit.h"
#include "daemon.h"
#include "log.h"

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
	tm_log_audit(line);
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
		tm_log(TM_LOG_WARNING,
		       "tidemarkd: %s holds at most %u cgroups and more were found: the rest "
		       "are not considered (said once; counted in tidemark_limit_hits_total)\n",
		       what, limit);
}
