// SPDX-License-Identifier: GPL-2.0
/* tidemarkd's HTTP side: GET /metrics and /report (libmicrohttpd), and the
 * optional push of the JSON report from its own thread. */
#include <errno.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "actuate.h"
#include "daemon.h"
#include "http.h"
#include "httpc.h"
#include "nodemetric.h"
#include "report.h"
#include "tmlib.h"
#include "log.h"

/*
 * Bounds that keep the endpoint answering under slow or many clients:
 * slots for 512 connections, 128 from one address; a request must have
 * arrived within 2 s of the connection (or of the previous answer on a
 * kept-alive one) and its answer gone within 10 s, else the connection is
 * shut down; idle ones close after 5 s (libmicrohttpd's own time-out).
 */
#define HTTP_MAX_CONN	    512u
#define HTTP_MAX_PER_IP	    128u
#define HTTP_REQ_DEADLINE   2000 /* ms */
#define HTTP_REPLY_DEADLINE 10000
#define HTTP_IDLE_S	    5u
#define HTTP_LOG_BURST	    5	  /* log lines per window, then counted */
#define HTTP_LOG_WINDOW	    10000 /* ms */

/* One open connection, from accept to close (MHD's socket context). */
struct conn {
	struct conn *prev, *next;
	int fd;
	uint64_t since_ms; /* accepted, or its last answer went out */
	bool serving;	   /* a request arrived: the answer's deadline runs */
	bool cut;
};

struct tm_http {
	struct tm_daemon *d;
	struct MHD_Daemon *mhd;
	pthread_t pusher, reaper;
	volatile bool stop;
	pthread_mutex_t lock; /* guards the list; MHD's close notice takes it */
	struct conn head;
	/* rate-limited log of libmicrohttpd's messages */
	uint64_t log_window_ms;
	unsigned int log_lines, log_dropped;
};

/* Everything from the system in a log line is already in the message;
 * a flood (one per refused connection) prints 5 lines per 10 s. */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	struct tm_http *h = cls;
	uint64_t now = tm_now_ms();
	unsigned int dropped = 0;
	bool print;

	pthread_mutex_lock(&h->lock);
	if (now - h->log_window_ms >= HTTP_LOG_WINDOW) {
		dropped = h->log_dropped;
		h->log_window_ms = now;
		h->log_lines = h->log_dropped = 0;
	}
	print = h->log_lines < HTTP_LOG_BURST;
	if (print)
		h->log_lines++;
	else
		h->log_dropped++;
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_lock(&h->d->lock);
	h->d->http_log_lines++;
	pthread_mutex_unlock(&h->d->lock);
	if (dropped)
		tm_log(TM_LOG_WARNING,
		       "tidemarkd: http: %u more messages in the last %u s not shown\n", dropped,
		       HTTP_LOG_WINDOW / 1000);
	if (!print)
		return;
	{
		char msg[1024];

		vsnprintf(msg, sizeof(msg), fmt, ap);
		tm_log(TM_LOG_WARNING, "tidemarkd: http: %s", msg);
	}
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct tm_http *h = cls;
	struct conn *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = calloc(1, sizeof(*c));
		if (!c || !ci) {
			free(c);
			*socket_context = NULL;
			return;
		}
		c->fd = ci->connect_fd;
		c->since_ms = tm_now_ms();
		pthread_mutex_lock(&h->lock);
		c->next = h->head.next;
		c->prev = &h->head;
		h->head.next->prev = c;
		h->head.next = c;
		pthread_mutex_unlock(&h->lock);
		*socket_context = c;
	} else if (c) {
		/* before libmicrohttpd closes the socket: once unlinked under the
		 * lock, the reaper can no longer shut down a reused descriptor */
		pthread_mutex_lock(&h->lock);
		c->prev->next = c->next;
		c->next->prev = c->prev;
		pthread_mutex_unlock(&h->lock);
		free(c);
		*socket_context = NULL;
	}
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* An answer went out (or the request ended): a kept-alive connection gets a
 * fresh request deadline. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct tm_http *h = cls;
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	c->serving = false;
	c->since_ms = tm_now_ms();
	pthread_mutex_unlock(&h->lock);
}

/* Shuts down connections past their deadline; libmicrohttpd then sees the
 * end of the stream and closes them (and tells on_connection). */
static void *reaper_thread(void *arg)
{
	struct tm_http *h = arg;

	while (!h->stop) {
		uint64_t now = tm_now_ms();
		unsigned int cut = 0;

		pthread_mutex_lock(&h->lock);
		for (struct conn *c = h->head.next; c != &h->head; c = c->next) {
			uint64_t limit = c->serving ? HTTP_REPLY_DEADLINE : HTTP_REQ_DEADLINE;

			if (c->cut || now - c->since_ms < limit)
				continue;
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			cut++;
		}
		pthread_mutex_unlock(&h->lock);
		if (cut) {
			pthread_mutex_lock(&h->d->lock);
			h->d->http_cut += cut;
			pthread_mutex_unlock(&h->d->lock);
		}
		usleep(100000);
	}
	return NULL;
}

/*
 * GET /healthz: alive while the main loop goes round. A round waits at most
 * until the next sample, so two sample periods and 30 s without one is a
 * loop that is stuck.
 */
static char *healthz(struct tm_daemon *d, unsigned int *code)
{
	uint64_t last = __atomic_load_n(&d->round_ms, __ATOMIC_RELAXED), now = tm_now_ms();
	uint64_t limit_ms;
	char *s = NULL;

	pthread_mutex_lock(&d->lock);
	limit_ms = 2000ULL * d->cfg.report.sample_s + 30000;
	pthread_mutex_unlock(&d->lock);
	if (last && now - last <= limit_ms) {
		*code = MHD_HTTP_OK;
		return strdup("ok\n");
	}
	*code = MHD_HTTP_SERVICE_UNAVAILABLE;
	if (asprintf(&s,
		     "unhealthy: the main loop has not gone round for %" PRIu64
		     " ms (limit %" PRIu64 " ms)\n",
		     last ? now - last : 0, limit_ms) < 0)
		return NULL;
	return s;
}

/*
 * GET /readyz: ready once a sample was taken and tidemark is the running
 * scheduler with its maps pinned (or, with fallback.ready, while the fallback
 * holds BE). A rollout waits on it: a scheduler that failed to attach is a
 * node that is not ready.
 */
static char *readyz(struct tm_daemon *d, unsigned int *code)
{
	char why[512], pin_dir[TM_CFG_PATH_MAX], *s = NULL;
	uint64_t at, now = tm_now_ms();
	bool attached, fb, fb_ready;
	int fd, n;

	pthread_mutex_lock(&d->lock);
	at = d->snap.at_ms;
	fb = d->fallback_active;
	fb_ready = d->cfg.fallback.ready && d->cfg.fallback.enabled && !d->cfg.fallback.dry_run;
	snprintf(pin_dir, sizeof(pin_dir), "%s", d->cfg.pin_dir);
	pthread_mutex_unlock(&d->lock);
	/* its maps open, their ABI ours, pinned by the instance running now */
	fd = tm_pin_open(pin_dir, TM_PIN_TUNABLES, "tidemarkd", why, sizeof(why));
	attached = fd >= 0;
	if (fd >= 0)
		close(fd);
	*code = at && (attached || (fb_ready && fb)) ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
	if (!at)
		n = asprintf(&s, "not ready: no sample taken yet\n");
	else if (attached)
		n = asprintf(&s,
			     "ready: tidemark is the scheduler; last sample %" PRIu64 " ms ago\n",
			     now - at);
	else if (fb_ready && fb)
		n = asprintf(&s,
			     "ready: the CFS fallback holds BE (fallback.ready); tidemark is not "
			     "attached: %s\n",
			     why);
	else
		n = asprintf(&s, "not ready: tidemark is not attached: %s%s\n", why,
			     fb ? "; the CFS fallback holds BE meanwhile" : "");
	return n < 0 ? NULL : s;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
			     const char *method, const char *version, const char *upload_data,
			     size_t *upload_data_size, void **con_cls)
{
	struct tm_http *h = cls;
	struct tm_daemon *d = h->d;
	struct MHD_Response *r;
	const char *type = "text/plain; version=0.0.4; charset=utf-8";
	unsigned int code = MHD_HTTP_OK;
	enum MHD_Result ret;
	struct conn *c;
	char *body = NULL;

	if (!*con_cls) {
		/* the request is in: from now on the answer's deadline runs */
		*con_cls = h;
		if ((c = conn_of(conn))) {
			pthread_mutex_lock(&h->lock);
			c->serving = true;
			c->since_ms = tm_now_ms();
			pthread_mutex_unlock(&h->lock);
		}
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		body = strdup(
			"read-only: GET /metrics, /report, /nodemetric, /healthz or /readyz\n");
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (*upload_data_size) {
		*upload_data_size = 0; /* a GET has no body: ignore it */
		return MHD_YES;
	} else if (!strcmp(url, "/metrics")) {
		body = tm_report_prometheus(d);
	} else if (!strcmp(url, "/report")) {
		body = tm_report_json(d);
		type = "application/json";
	} else if (!strcmp(url, "/nodemetric")) {
		body = tm_nm_json(d);
		type = "application/json";
	} else if (!strcmp(url, "/healthz")) {
		body = healthz(d, &code);
	} else if (!strcmp(url, "/readyz")) {
		body = readyz(d, &code);
	} else {
		body = strdup(
			"not found: GET /metrics, /report, /nodemetric, /healthz or /readyz\n");
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

static struct MHD_Daemon *start_http(struct tm_http *h)
{
	struct tm_daemon *d = h->d;
	/* the address the configuration validated, never a default */
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(d->cfg.report.listen_port),
				 .sin_addr.s_addr = d->cfg.report.listen_ip};
	struct MHD_Daemon *m;

	m = MHD_start_daemon(
		MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG, d->cfg.report.listen_port, NULL,
		NULL, serve, h, MHD_OPTION_EXTERNAL_LOGGER, http_log, h, /* first: all messages */
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
		HTTP_MAX_CONN, MHD_OPTION_PER_IP_CONNECTION_LIMIT, HTTP_MAX_PER_IP,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_CONNECTION_TIMEOUT,
		HTTP_IDLE_S, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
	if (!m)
		tm_log(TM_LOG_ERR, "tidemarkd: cannot listen on %s:%u: %s\n",
		       d->cfg.report.listen_addr, d->cfg.report.listen_port, strerror(errno));
	return m;
}

/* Optional push of the JSON report, from its own thread (a slow receiver
 * must not delay eviction). */
static void *push_thread(void *arg)
{
	struct tm_http *h = arg;
	struct tm_daemon *d = h->d;

	while (!h->stop) {
		char url[256], err[512], *resp = NULL, *body;
		uint32_t every;
		long status = 0;
		bool ok;

		pthread_mutex_lock(&d->lock);
		snprintf(url, sizeof(url), "%s", d->cfg.report.push_url);
		every = d->cfg.report.push_interval_s;
		pthread_mutex_unlock(&d->lock);
		for (uint32_t i = 0; i < every * 10 && !h->stop; i++)
			usleep(100000);
		if (!url[0] || h->stop)
			continue;
		body = tm_report_json(d);
		if (!body)
			continue;
		/* bounded below the interval: a slow receiver delays nothing else */
		ok = !tm_httpc_request(url, "POST", body,
				       every * 1000 < 10000 ? every * 1000 : 10000, &resp, &status,
				       err, sizeof(err)) &&
		     status / 100 == 2;
		if (!ok && !resp)
			tm_log(TM_LOG_WARNING, "tidemarkd: push: %s\n", err);
		else if (!ok)
			tm_log(TM_LOG_WARNING, "tidemarkd: push to %s: HTTP %ld\n", url, status);
		pthread_mutex_lock(&d->lock);
		if (ok)
			d->push_ok++;
		else
			d->push_failed++;
		pthread_mutex_unlock(&d->lock);
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
	h->head.next = h->head.prev = &h->head;
	pthread_mutex_init(&h->lock, NULL);
	h->mhd = start_http(h);
	if (!h->mhd)
		goto err;
	if (pthread_create(&h->reaper, NULL, reaper_thread, h)) {
		tm_log(TM_LOG_ERR, "tidemarkd: cannot start the connection reaper\n");
		MHD_stop_daemon(h->mhd);
		goto err;
	}
	if (pthread_create(&h->pusher, NULL, push_thread, h)) {
		tm_log(TM_LOG_ERR, "tidemarkd: cannot start the push thread\n");
		h->stop = true;
		pthread_join(h->reaper, NULL);
		MHD_stop_daemon(h->mhd);
		goto err;
	}
	return h;
err:
	pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

void tm_http_stop(struct tm_http *h)
{
	h->stop = true;
	pthread_join(h->reaper, NULL);
	MHD_stop_daemon(h->mhd);
	pthread_join(h->pusher, NULL);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
