// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkctl stats: watch a running scheduler from outside the process that
 * owns it. Every interval, from the pinned maps (ABI checked): CPU per class
 * and node busy against the line, BE budget throttles, preemptions, forced
 * and floor runs, caps, placement counters, and the run-queue wait per class
 * and per ONLINE cgroup as percentiles, all over that interval.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <jansson.h>

#include "ctl.h"
#include "tmlib.h"
#include "tmmaps.h"

struct cg_hist {
	__u64 id;
	__u64 hist[TM_HIST_BUCKETS];
};

/* Every ONLINE cgroup's waits are read, however many (sorted by id). */
struct sample {
	struct timespec at;
	struct tm_cpu_stats s;
	struct cg_hist *cg;
	int ncg, cap;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

static int by_id(const void *a, const void *b)
{
	__u64 x = ((const struct cg_hist *)a)->id, y = ((const struct cg_hist *)b)->id;

	return x < y ? -1 : x > y;
}

static int take(int stats_fd, int waits_fd, struct sample *x)
{
	__u64 key, at, *prev = NULL;

	clock_gettime(CLOCK_MONOTONIC, &x->at);
	if (tm_stats_sum(stats_fd, &x->s))
		return -1;
	x->ncg = 0;
	while (!bpf_map_get_next_key(waits_fd, prev, &key)) {
		struct tm_cg_wait w;

		if (x->ncg == x->cap) {
			int cap = x->cap ? 2 * x->cap : 256;
			struct cg_hist *v = realloc(x->cg, cap * sizeof(*v));

			if (!v)
				return -1; /* errno ENOMEM */
			x->cg = v;
			x->cap = cap;
		}
		if (!bpf_map_lookup_elem(waits_fd, &key, &w)) {
			x->cg[x->ncg].id = key;
			memcpy(x->cg[x->ncg].hist, w.hist, sizeof(w.hist));
			x->ncg++;
		}
		at = key;
		prev = &at;
	}
	qsort(x->cg, x->ncg, sizeof(x->cg[0]), by_id);
	return 0;
}

/* The upper bound of the highest bucket with a sample, us; 0 if none. */
static __u64 hist_max_us(const __u64 *h)
{
	for (int b = TM_HIST_BUCKETS - 1; b >= 0; b--)
		if (h[b])
			return 1ULL << b;
	return 0;
}

static json_t *wait_json(const __u64 *h)
{
	__u64 n = 0;

	for (int b = 0; b < TM_HIST_BUCKETS; b++)
		n += h[b];
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "samples", (json_int_t)n, "p50_us",
			 (json_int_t)tm_hist_pct_us(h, TM_HIST_BUCKETS, 50), "p90_us",
			 (json_int_t)tm_hist_pct_us(h, TM_HIST_BUCKETS, 90), "p99_us",
			 (json_int_t)tm_hist_pct_us(h, TM_HIST_BUCKETS, 99), "max_us",
			 (json_int_t)hist_max_us(h));
}

/* One interval as JSON (the schema is in the README). */
static json_t *interval_json(const struct sample *a, const struct sample *b,
			     const struct tm_tunables *t, __u32 cap_cpus,
			     const struct tm_cg_path *paths, size_t np)
{
	static const char *const cls[TM_NR_CLASSES] = {"system", "online", "be"};
	double dt = secs(&a->at, &b->at), cap_ns = dt * 1e9 * cap_cpus, busy = 0;
	json_t *o = json_object(), *cpu = json_object(), *cnt = json_object();
	json_t *waits = json_object(), *cgs = json_array();
	__u64 d[TM_NR_STATS], h[TM_HIST_BUCKETS];

	for (int i = 0; i < TM_NR_STATS; i++)
		d[i] = b->s.cnt[i] - a->s.cnt[i];
	for (int c = 0; c < TM_NR_CLASSES; c++) {
		double ns = d[TM_STAT_RUN_NS_SYSTEM + c];

		busy += ns;
		json_object_set_new(
			cpu, cls[c],
			json_pack("{s:f,s:f}", "mcpu", ns / dt / 1e6, "pct", 100.0 * ns / cap_ns));
		for (int k = 0; k < TM_HIST_BUCKETS; k++)
			h[k] = b->s.wait_hist[c][k] - a->s.wait_hist[c][k];
		json_object_set_new(waits, cls[c], wait_json(h));
	}
	for (int i = 0; i < TM_NR_STATS; i++)
		json_object_set_new(cnt, tm_stat_names[i], json_integer((json_int_t)d[i]));
	for (int i = 0; i < b->ncg; i++) {
		const struct cg_hist *was =
			a->ncg ? bsearch(&b->cg[i], a->cg, a->ncg, sizeof(a->cg[0]), by_id) : NULL;
		const char *path = tm_cgroup_path_of(paths, np, b->cg[i].id);
		json_t *w;

		for (int k = 0; k < TM_HIST_BUCKETS; k++)
			h[k] = b->cg[i].hist[k] - (was ? was->hist[k] : 0);
		w = wait_json(h);
		if (json_integer_value(json_object_get(w, "samples")) == 0) {
			json_decref(w);
			continue;
		}
		json_object_set_new(w, "cgroup", json_string(path ? path : "?"));
		json_object_set_new(w, "id", json_integer((json_int_t)b->cg[i].id));
		json_array_append_new(cgs, w);
	}
	json_object_set_new(o, "interval_s", json_real(dt));
	json_object_set_new(o, "cap_cpus", json_integer(cap_cpus));
	json_object_set_new(o, "line_pct", json_integer(t->suppress_pct));
	json_object_set_new(o, "busy_pct", json_real(100.0 * busy / cap_ns));
	json_object_set_new(o, "cpu", cpu);
	json_object_set_new(o, "wait", waits);
	json_object_set_new(o, "online_cgroups", cgs);
	json_object_set_new(o, "counters", cnt);
	return o;
}

static double num(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);

	return json_number_value(b ? json_object_get(v, b) : v);
}

static void print_text(json_t *o, bool tty)
{
	static const char *const cls[] = {"system", "online", "be"};
	json_t *cnt = json_object_get(o, "counters"), *cgs = json_object_get(o, "online_cgroups");
	double dt = num(o, "interval_s", NULL);
	size_t i;
	json_t *c;

	if (tty)
		printf("\033[H\033[J");
#define RATE(n) (json_integer_value(json_object_get(cnt, n)) / dt)
	printf("tidemark over %.1f s, %d CPUs: node busy %.1f%% (line %d%%)\n", dt,
	       (int)num(o, "cap_cpus", NULL), num(o, "busy_pct", NULL),
	       (int)num(o, "line_pct", NULL));
	for (int k = 0; k < 3; k++) {
		json_t *cpu = json_object_get(json_object_get(o, "cpu"), cls[k]);
		json_t *w = json_object_get(json_object_get(o, "wait"), cls[k]);

		printf("  %-6s %6.0f mCPU %5.1f%%   wait p50 %6" JSON_INTEGER_FORMAT
		       " us  p90 %6" JSON_INTEGER_FORMAT " us  p99 %6" JSON_INTEGER_FORMAT
		       " us  max %7" JSON_INTEGER_FORMAT " us  (%" JSON_INTEGER_FORMAT ")\n",
		       cls[k], num(cpu, "mcpu", NULL), num(cpu, "pct", NULL),
		       json_integer_value(json_object_get(w, "p50_us")),
		       json_integer_value(json_object_get(w, "p90_us")),
		       json_integer_value(json_object_get(w, "p99_us")),
		       json_integer_value(json_object_get(w, "max_us")),
		       json_integer_value(json_object_get(w, "samples")));
	}
	printf("  BE: throttled %.0f/s (%.0f ms/s waiting on the budget), preempted %.0f/s, forced "
	       "%.1f/s, floor %.1f/s + %.1f/s on idle CPUs, held by CPU limits %.1f/s\n",
	       RATE("be_throttled"), RATE("be_throttled_ns") / 1e6, RATE("be_preempted"),
	       RATE("be_forced"), RATE("be_floor"), RATE("be_floor_idle"), RATE("bw_throttled"));
	printf("  placement: outside home %.1f/s (soft %.1f/s, pinned %.1f/s), cross-domain "
	       "migrations/s system %.1f online %.1f be %.1f, BE sent off home domains %.1f/s\n",
	       RATE("runs_outside_home"), RATE("runs_outside_soft_home"),
	       RATE("runs_outside_home_pinned"), RATE("xdom_migrations_system"),
	       RATE("xdom_migrations_online"), RATE("xdom_migrations_be"), RATE("be_avoided"));
#undef RATE
	json_array_foreach(cgs, i, c)
		printf("  online %s: wait p50 %" JSON_INTEGER_FORMAT " us p90 %" JSON_INTEGER_FORMAT
		       " us p99 %" JSON_INTEGER_FORMAT " us max %" JSON_INTEGER_FORMAT
		       " us (%" JSON_INTEGER_FORMAT ")\n",
		       json_string_value(json_object_get(c, "cgroup")),
		       json_integer_value(json_object_get(c, "p50_us")),
		       json_integer_value(json_object_get(c, "p90_us")),
		       json_integer_value(json_object_get(c, "p99_us")),
		       json_integer_value(json_object_get(c, "max_us")),
		       json_integer_value(json_object_get(c, "samples")));
	fflush(stdout);
}

int tm_ctl_stats(int argc, char **argv)
{
	static const struct option lo[] = {{"interval", required_argument, NULL, 'i'},
					   {"once", no_argument, NULL, 'o'},
					   {"json", no_argument, NULL, 'j'},
					   {}};
	int fd[4] = {-1, -1, -1, -1}, c, ret = 1;
	static const enum tm_pin which[4] = {TM_PIN_STATS, TM_PIN_CG_WAITS, TM_PIN_TUNABLES,
					     TM_PIN_ABI};
	bool once = false, json = false, tty = isatty(STDOUT_FILENO);
	static struct sample a, b;
	double interval = 1;
	char err[512], *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || interval < 0.1 || interval > 3600) {
				fprintf(stderr,
					"tidemarkctl: --interval '%s' must be 0.1-3600 seconds\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			once = true;
			break;
		case 'j':
			json = true;
			break;
		default:
			fprintf(stderr,
				"usage: tidemarkctl stats [--interval S] [--once] [--json]\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tidemarkctl: stats: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	for (int i = 0; i < 4; i++) {
		fd[i] = tm_pin_open(NULL, which[i], "tidemarkctl", err, sizeof(err));
		if (fd[i] < 0) {
			fprintf(stderr, "tidemarkctl: %s\n", err);
			goto out;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (take(fd[0], fd[1], &a))
		goto read_err;
	while (!stop) {
		struct timespec ts = {(time_t)interval,
				      (long)((interval - (time_t)interval) * 1e9)};
		struct tm_cg_path *paths = NULL;
		struct tm_tunables t = {};
		struct tm_abi abi = {};
		__u32 zero = 0;
		size_t np = 0;
		json_t *o;

		while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
			;
		if (stop)
			break;
		if (take(fd[0], fd[1], &b) || bpf_map_lookup_elem(fd[2], &zero, &t) ||
		    bpf_map_lookup_elem(fd[3], &zero, &abi))
			goto read_err;
		tm_cgroup_walk(TM_CGROUP_ROOT, &paths, &np);
		o = interval_json(&a, &b, &t, abi.cap_cpus ? abi.cap_cpus : 1, paths, np);
		tm_cgroup_paths_free(paths, np);
		if (json) {
			char *s = json_dumps(o, JSON_COMPACT);

			if (s)
				printf("%s\n", s);
			free(s);
			fflush(stdout);
		} else {
			print_text(o, tty);
		}
		json_decref(o);
		/* b becomes the start of the next interval; a's buffer is reused */
		{
			struct sample x = a;

			a = b;
			b = x;
		}
		if (once)
			break;
	}
	ret = 0;
	goto out;
read_err:
	fprintf(stderr, "tidemarkctl: cannot read the scheduler's maps: %s (did it exit?)\n",
		strerror(errno));
out:
	for (int i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(a.cg);
	free(b.cg);
	a.cg = b.cg = NULL;
	a.cap = b.cap = 0;
	return ret;
}
