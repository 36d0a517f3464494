/* SPDX-License-Identifier: GPL-2.0 */
/* The node's sampler and its reports: Prometheus text and the JSON
 * NodeMetric-like report; each strategy adds its own section through the
 * strategy interface. */
#ifndef __TM_REPORT_H
#define __TM_REPORT_H
#include <stdint.h>
struct tm_daemon;

/* Sample the node and the scheduler into the daemon's snapshot. */
void tm_report_sample(struct tm_daemon *d, uint64_t now_ms);
/* Render into a malloc'd buffer; NULL on allocation failure. */
char *tm_report_prometheus(struct tm_daemon *d);
char *tm_report_json(struct tm_daemon *d);
#endif
