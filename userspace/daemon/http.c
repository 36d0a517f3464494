// SPDX-License-Identifier: GPL-2.0
/* tidemarkd's HTTP side: GET /metrics and /report (libmicrohttpd), and the
 * optional push of the JSON report from its own thread. */
#include <errno.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "http.h"
#include "httpc.h"
#include "report.h"

struct tm_http {
	struct tm_daemon *d;
	struct MHD_Daemon *mhd;
	pthread_t pusher;
	volatile bool stop;
};

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
			     const char *method, const char *version, const char *upload_data,
			     size_t *upload_data_size, void **con_cls)
{
	struct tm_daemon *d = cls;
	struct MHD_Response *r;
	const char *type = "text/plain; version=0.0.4; charset=utf-8";
	unsigned int code = MHD_HTTP_OK;
	enum MHD_Result ret;
	char *body = NULL;

	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		body = strdup("read-only: GET /metrics or GET /report\n");
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (*upload_data_size) {
		*upload_data_size = 0; /* a GET has no body: ignore it */
		return MHD_YES;
	} else if (!strcmp(url, "/metrics")) {
		body = tm_report_prometheus(d);
	} else if (!strcmp(url, "/report")) {
		body = tm_report_json(d);
		type = "application/json";
	} else {
		body = strdup("not found: GET /metrics or GET /report\n");
		code = MHD_HTTP_NOT_FOUND;
	}
	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static struct MHD_Daemon *start_http(struct tm_daemon *d)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(d->cfg.report.listen_port)};
	struct MHD_Daemon *h;

	inet_pton(AF_INET, d->cfg.report.listen_addr, &sa.sin_addr);
	h = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
			     d->cfg.report.listen_port, NULL, NULL, serve, d, MHD_OPTION_SOCK_ADDR,
			     (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, 32u,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
			     MHD_OPTION_CONNECTION_TIMEOUT, 5u, MHD_OPTION_END);
	if (!h)
		fprintf(stderr, "tidemarkd: cannot listen on %s:%u: %s\n",
			d->cfg.report.listen_addr, d->cfg.report.listen_port, strerror(errno));
	return h;
}

/* Optional push of the JSON report, from its own thread (a slow receiver
 * must not delay eviction). */
static void *push_thread(void *arg)
{
	struct tm_http *h = arg;
	struct tm_daemon *d = h->d;

	while (!h->stop) {
		char addr[64], path[256], url[256], err[256], *resp = NULL, *body;
		uint32_t every;
		uint16_t port;
		int status;

		pthread_mutex_lock(&d->lock);
		snprintf(url, sizeof(url), "%s", d->cfg.report.push_url);
		every = d->cfg.report.push_interval_s;
		pthread_mutex_unlock(&d->lock);
		for (uint32_t i = 0; i < every * 10 && !h->stop; i++)
			usleep(100000);
		if (!url[0] || h->stop)
			continue;
		if (tm_http_parse_url(url, addr, sizeof(addr), &port, path, sizeof(path)))
			continue; /* validated on load */
		body = tm_report_json(d);
		if (!body)
			continue;
		if (tm_http_request(addr, port, "POST", path, body, 2000, &resp, &status, err,
				    sizeof(err)))
			fprintf(stderr, "tidemarkd: push to %s: %s\n", url, err);
		else if (status / 100 != 2)
			fprintf(stderr, "tidemarkd: push to %s: HTTP %d\n", url, status);
		free(resp);
		free(body);
	}
	return NULL;
}

struct tm_http *tm_http_start(struct tm_daemon *d)
{
	struct tm_http *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->d = d;
	h->mhd = start_http(d);
	if (!h->mhd) {
		free(h);
		return NULL;
	}
	if (pthread_create(&h->pusher, NULL, push_thread, h)) {
		fprintf(stderr, "tidemarkd: cannot start the push thread\n");
		MHD_stop_daemon(h->mhd);
		free(h);
		return NULL;
	}
	return h;
}

void tm_http_stop(struct tm_http *h)
{
	h->stop = true;
	MHD_stop_daemon(h->mhd);
	pthread_join(h->pusher, NULL);
	free(h);
}
