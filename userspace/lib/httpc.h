/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __TM_HTTPC_H
#define __TM_HTTPC_H
#include <stddef.h>
#include <stdint.h>

/* "http://1.2.3.4:8080/path" -> parts; -1 if not that form (IPv4 only). */
int tm_http_parse_url(const char *url, char *addr, size_t addrlen, uint16_t *port, char *path,
		      size_t pathlen);

/*
 * One request (HTTP/1.0, the server closes). On success *resp is the
 * malloc'd body and *status the HTTP status; -1 with a message otherwise.
 */
int tm_http_request(const char *addr, uint16_t port, const char *method, const char *path,
		    const char *body, unsigned int timeout_ms, char **resp, int *status, char *err,
		    size_t errlen);
#endif
