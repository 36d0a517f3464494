/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __TM_HTTP_H
#define __TM_HTTP_H
struct tm_daemon;
struct tm_http;

/* Serve the reports on report.listen and start the push thread; NULL (said
 * on stderr) when that fails. */
struct tm_http *tm_http_start(struct tm_daemon *d);
void tm_http_stop(struct tm_http *h);
#endif
