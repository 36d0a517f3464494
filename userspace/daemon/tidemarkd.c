// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkd: the tidemark node daemon. Runs in the foreground, logs to
 * stderr (one "audit" line per action), and:
 *  - keeps the scheduler's tunables equal to its configuration (cpusuppress),
 *  - evicts BE memory above the memory watermark (memevict),
 *  - evicts BE that cannot make progress under suppression (cpuevict),
 *  - serves node-load reports over HTTP (/metrics, /report) and can push
 *    the JSON report.
 *
 * Ownership: scx_tidemark owns the scheduler and pins its maps; tidemarkd
 * attaches to the pinned maps. If tidemarkd dies, the scheduler keeps
 * enforcing the last policy it was given; a restarted tidemarkd re-attaches
 * and re-applies its configuration (see tidemarkd.service).
 *
 * SIGHUP reloads the configuration; an invalid one is refused and the last
 * good one stays. SIGINT/SIGTERM stop it.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <glob.h>
#include <arpa/inet.h>
#include <limits.h>
#include <microhttpd.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "daemon.h"
#include "httpc.h"

static volatile sig_atomic_t exit_req, reload_req;

static const struct tm_strategy *const strategies[] = {
	&tm_strategy_cpusuppress,
	&tm_strategy_memevict,
	&tm_strategy_cpuevict,
	&tm_strategy_interfere,
};
#define NR_STRATEGIES ((int)(sizeof(strategies) / sizeof(strategies[0])))

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
	va_list ap;
	int i;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "audit ts=%lld.%03ld strategy=%s action=%s dry_run=%s ",
		(long long)ts.tv_sec, ts.tv_nsec / 1000000, strategy, action,
		dry_run ? "true" : "false");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

int tm_pin(const struct tm_daemon *d, enum tm_pin which)
{
	static char said[512];
	char err[512];
	int fd = tm_pin_open(d->cfg.pin_dir, which, "tidemarkd", err, sizeof(err));

	if (fd >= 0) {
		said[0] = 0;
		return fd;
	}
	/* no scheduler is a normal state; a mismatch is said once, not per tick */
	if (errno != ENOENT && strcmp(err, said)) {
		fprintf(stderr, "tidemarkd: %s; scheduler maps left alone\n", err);
		snprintf(said, sizeof(said), "%s", err);
	}
	return -1;
}

int tm_sched_class_of(const struct tm_daemon *d, const char *rel)
{
	size_t rl = strlen(d->cgroup_root), n;
	int fd, cls = TM_CLASS_SYSTEM;
	char path[PATH_MAX];

	fd = tm_pin(d, TM_PIN_CLASSES);
	if (fd < 0)
		return -1;
	/* the nearest classified ancestor, as the scheduler resolves it */
	snprintf(path, sizeof(path), "%s%s", d->cgroup_root, rel);
	n = strlen(path);
	for (;;) {
		struct stat st;
		__u64 id;
		__u32 c;

		if (!stat(path, &st)) {
			id = st.st_ino;
			if (!bpf_map_lookup_elem(fd, &id, &c)) {
				cls = c;
				break;
			}
		}
		if (n <= rl)
			break;
		while (n > rl && path[n] != '/')
			n--;
		path[n] = 0; /* the parent; at n == rl, the root itself */
	}
	close(fd);
	return cls;
}

bool tm_protected(const struct tm_daemon *d, const char *rel)
{
	char anc[PATH_MAX];
	int cls;

	/* configured ONLINE, or below a configured ONLINE cgroup */
	snprintf(anc, sizeof(anc), "%s", rel);
	for (;;) {
		for (int i = 0; i < d->cfg.nr_online; i++) {
			const char *p = d->cfg.online[i];
			char norm[TM_CFG_PATH_MAX + 1];

			snprintf(norm, sizeof(norm), "%s%s", *p == '/' ? "" : "/", p);
			if (!fnmatch(norm, anc, FNM_PATHNAME))
				return true;
		}
		char *s = strrchr(anc, '/');

		if (!s || s == anc)
			break;
		*s = 0;
	}
	/* whatever the configuration says, the scheduler's class decides too */
	cls = tm_sched_class_of(d, rel);
	return cls >= 0 && cls != TM_CLASS_BE;
}

int tm_be_cgroups(struct tm_daemon *d, struct tm_be_cg *out, int max)
{
	size_t rl = strlen(d->cgroup_root);
	int n = 0;

	for (int i = 0; i < d->cfg.nr_be; i++) {
		const char *rel = d->cfg.be[i].path;
		char pat[PATH_MAX];
		glob_t g;

		while (*rel == '/')
			rel++;
		snprintf(pat, sizeof(pat), "%s/%s", d->cgroup_root, rel);
		if (glob(pat, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g))
			continue;
		for (size_t k = 0; k < g.gl_pathc && n < max; k++) {
			const char *p = g.gl_pathv[k] + rl;
			bool dup = false;

			if (!*p || strlen(p) >= TM_CFG_PATH_MAX)
				continue;
			for (int j = 0; j < n && !dup; j++)
				dup = !strcmp(out[j].path, p);
			if (dup || tm_protected(d, p))
				continue; /* ONLINE/SYSTEM: never touched */
			snprintf(out[n].path, sizeof(out[n].path), "%s", p);
			out[n++].cfg = &d->cfg.be[i];
		}
		globfree(&g);
	}
	return n;
}

int tm_cg_write(const struct tm_daemon *d, const char *rel, const char *file, const char *val)
{
	char p[PATH_MAX];
	FILE *f;
	int ret;

	snprintf(p, sizeof(p), "%s%.*s/%s", d->cgroup_root, TM_CFG_PATH_MAX, rel, file);
	f = fopen(p, "w");
	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_req = 1;
	else
		exit_req = 1;
}

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
	struct tm_daemon *d = arg;

	while (!exit_req) {
		char addr[64], path[256], url[256], err[256], *resp = NULL, *body;
		uint32_t every;
		uint16_t port;
		int status;

		pthread_mutex_lock(&d->lock);
		snprintf(url, sizeof(url), "%s", d->cfg.report.push_url);
		every = d->cfg.report.push_interval_s;
		pthread_mutex_unlock(&d->lock);
		for (uint32_t i = 0; i < every * 10 && !exit_req; i++)
			usleep(100000);
		if (!url[0] || exit_req)
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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tidemarkd --config FILE [--check] [--cgroup-root DIR]\n"
		"The tidemark node daemon (foreground; logs and audit lines to stderr).\n\n"
		"  -c, --config FILE     JSON configuration (see tidemarkd.json.sample)\n"
		"      --check           validate the configuration and exit (0 valid, 2 not)\n"
		"      --cgroup-root DIR cgroup v2 mount (default /sys/fs/cgroup)\n"
		"  -h, --help            this text\n"
		"SIGHUP reloads the configuration (an invalid one is refused, the last good one\n"
		"stays); SIGINT/SIGTERM stop.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
						 {"check", no_argument, NULL, 'k'},
						 {"cgroup-root", required_argument, NULL, 'r'},
						 {"help", no_argument, NULL, 'h'},
						 {}};
	static struct tm_daemon d = {.cgroup_root = "/sys/fs/cgroup"};
	uint64_t next_sample = 0, next_slow = 0, now;
	struct MHD_Daemon *http;
	pthread_t pusher;
	bool check = false;
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d.config_path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 'r':
			d.cgroup_root = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !d.config_path) {
		fprintf(stderr,
			optind < argc ? "tidemarkd: unexpected argument '%s'\n"
				      : "tidemarkd: --config FILE is required\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (tm_config_load(d.config_path, &d.cfg, err, sizeof(err))) {
		fprintf(stderr, "tidemarkd: %s: %s\n", d.config_path, err);
		return 2;
	}
	if (check) {
		printf("%s: valid\n", d.config_path);
		return 0;
	}
	pthread_mutex_init(&d.lock, NULL);
	signal(SIGHUP, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	tm_report_sample(&d, tm_now_ms());
	http = start_http(&d);
	if (!http)
		return 1;
	if (pthread_create(&pusher, NULL, push_thread, &d)) {
		fprintf(stderr, "tidemarkd: cannot start the push thread\n");
		MHD_stop_daemon(http);
		return 1;
	}
	for (int i = 0; i < NR_STRATEGIES; i++)
		strategies[i]->configure(&d);
	fprintf(stderr, "tidemarkd: running (config %s, http %s:%u, memory eviction %s%s)\n",
		d.config_path, d.cfg.report.listen_addr, d.cfg.report.listen_port,
		d.cfg.memevict.enabled ? "on" : "off", d.cfg.memevict.dry_run ? ", dry-run" : "");

	while (!exit_req) {
		if (reload_req) {
			struct tm_config nc;

			reload_req = 0;
			if (tm_config_load(d.config_path, &nc, err, sizeof(err))) {
				fprintf(stderr,
					"tidemarkd: reload refused, keeping the last good "
					"configuration: %s: %s\n",
					d.config_path, err);
				pthread_mutex_lock(&d.lock);
				d.config_rejects++;
				pthread_mutex_unlock(&d.lock);
			} else {
				bool moved =
					strcmp(nc.report.listen_addr, d.cfg.report.listen_addr) ||
					nc.report.listen_port != d.cfg.report.listen_port;

				pthread_mutex_lock(&d.lock);
				d.cfg = nc;
				d.config_reloads++;
				pthread_mutex_unlock(&d.lock);
				if (moved)
					fprintf(stderr, "tidemarkd: report.listen changes at "
							"restart only\n");
				for (int i = 0; i < NR_STRATEGIES; i++)
					strategies[i]->configure(&d);
				fprintf(stderr, "tidemarkd: configuration reloaded\n");
			}
		}
		now = tm_now_ms();
		tm_strategy_memevict.tick(&d, now);
		tm_strategy_cpuevict.tick(&d, now); /* once a second, by itself */
		tm_strategy_interfere.tick(&d, now); /* every sample_ms, by itself */
		if (now >= next_slow || d.tunables_dirty) {
			d.tunables_dirty = false;
			tm_strategy_cpusuppress.tick(&d, now);
			next_slow = now + 1000;
		}
		if (now >= next_sample) {
			tm_report_sample(&d, now);
			next_sample = now + d.cfg.report.sample_s * 1000ULL;
		}
		poll(NULL, 0, d.cfg.memevict.poll_ms);
	}
	fprintf(stderr, "tidemarkd: stopping\n");
	for (int i = 0; i < NR_STRATEGIES; i++)
		if (strategies[i]->stop)
			strategies[i]->stop(&d);
	/* a BE line lowered by the interference ladder goes back to the configured one */
	if (d.tunables_dirty)
		tm_strategy_cpusuppress.tick(&d, tm_now_ms());
	MHD_stop_daemon(http);
	pthread_join(pusher, NULL);
	return 0;
}
