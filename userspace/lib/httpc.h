/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HTTP(S) requests through libcurl (DNS, TLS, one deadline for the whole
 * exchange). Call tm_httpc_global_init() once, before any thread starts.
 */
#ifndef __TM_HTTPC_H
#define __TM_HTTPC_H
#include <stdbool.h>
#include <stddef.h>

/* libcurl's process-wide set-up; -1 with a message when it fails. */
int tm_httpc_global_init(char *err, size_t errlen);

/*
 * @url is one tidemark may send requests to: http or https, a host, no
 * user name or password, no spaces or control characters, at most 255
 * bytes. 0; -1 with what is wrong in @err.
 */
int tm_httpc_url_check(const char *url, char *err, size_t errlen);

/*
 * One request: @method "GET" or "POST" (with @body as JSON). The whole
 * exchange, connecting included, ends within @timeout_ms; a body over
 * 4 MiB is refused. On success *resp is the malloc'd body (NUL-ended) and
 * *status the HTTP status; -1 with a message otherwise.
 */
int tm_httpc_request(const char *url, const char *method, const char *body, unsigned int timeout_ms,
		     char **resp, long *status, char *err, size_t errlen);

/* One request with what an API server needs besides: any method, a body's
 * content type, a bearer token or a client certificate, the CA to verify
 * the server with (a file or PEM text), a proxy. */
struct tm_httpc_req {
	const char *url;
	const char *method;	  /* "GET", "POST", "PATCH", "PUT", "DELETE" */
	const char *body;	  /* NULL: none */
	const char *content_type; /* of @body; NULL: application/json */
	const char *bearer;	  /* NULL: no Authorization header */
	const char *ca_file;	  /* NULL: the system's CAs */
	/* PEM text is used in place: it must live until the call returns */
	const char *ca_pem; /* PEM text instead of ca_file; NULL none */
	size_t ca_len;
	const char *cert_file; /* a client certificate (PEM); NULL none */
	const char *key_file;  /* ... and its key */
	const char *cert_pem;  /* PEM text instead of cert_file */
	size_t cert_len;
	const char *key_pem; /* PEM text instead of key_file */
	size_t key_len;
	const char *proxy;	 /* NULL: libcurl's default (the environment) */
	unsigned int timeout_ms; /* the whole exchange */
	/* a stream (a watch): each line of the answer goes to @on_line as it
	 * arrives (*resp is what is left: no complete line, as the Status of
	 * a refusal can be); @on_line returning nonzero
	 * ends the exchange, as *@stop set does (looked at every second);
	 * either is a success. A line over 4 MiB ends it as an error. */
	int (*on_line)(void *arg, char *line, size_t len);
	void *line_arg;
	volatile bool *stop;
};

/* As tm_httpc_request, for @r. */
int tm_httpc_exchange(const struct tm_httpc_req *r, char **resp, long *status, char *err,
		      size_t errlen);
#endif
