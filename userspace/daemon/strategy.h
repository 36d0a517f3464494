/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The strategy interface. Each strategy (one file in strategies/, like
 * Koordinator's qosmanager plugins) has its own period and configuration
 * section, decides from what it samples, acts only through the actuators
 * (actuate.h), and renders its own part of the reports. main() runs them all
 * in one loop and knows none by name.
 */
#ifndef __TM_STRATEGY_H
#define __TM_STRATEGY_H
#include <stdint.h>
#include <jansson.h>
#include "buf.h"

struct tm_daemon;
struct tm_cfg_section;

/* Events that run a strategy before its period is due. */
enum tm_event {
	TM_EV_LINE = 1 << 0, /* the BE line the arbiter wants differs from the applied one */
};

struct tm_strategy {
	const char *name; /* in audit lines and metrics */
	/* its configuration section: its rows and cross-check (NULL: it
	 * reads only the core's sections) */
	const struct tm_cfg_section *config;
	unsigned int wake_on; /* TM_EV_* */
	/* how often tick runs, from the configuration */
	uint32_t (*period_ms)(const struct tm_daemon *d);
	/* a new configuration was accepted (also at start) */
	void (*configure)(struct tm_daemon *d);
	void (*tick)(struct tm_daemon *d, uint64_t now_ms);
	/* the daemon stops: give back temporary limits (may be NULL) */
	void (*stop)(struct tm_daemon *d);
	/* its report sections (may be NULL); called from the HTTP and push
	 * threads: take d->lock for shared state */
	void (*report_prom)(struct tm_daemon *d, struct tm_buf *b);
	/* its member of the /report object @r */
	void (*report_json)(struct tm_daemon *d, json_t *r);
};

extern const struct tm_strategy *const tm_strategies[];
extern const int tm_nr_strategies;
#endif
