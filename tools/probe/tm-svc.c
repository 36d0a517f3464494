// SPDX-License-Identifier: GPL-2.0
/*
 * tm-svc: a multi-threaded request service, the shape of an RPC server's
 * thread pool. Requests arrive on a fixed grid (open loop, optionally
 * jittered). One dispatcher thread accepts each arrival and queues it to a
 * pool of workers (a mutex and a condition variable: a futex wakeup per
 * hand-off); a worker computes over its own buffer (a cache footprint) for
 * a fixed amount of thread CPU time and hands the reply back to the
 * dispatcher, which wakes to deliver it. So every request costs two
 * wakeups, dispatcher -> worker -> dispatcher, and the dispatcher's own
 * wakeups (arrivals and replies) are on the critical path.
 *
 *   tm-svc [--workers N] [--rate R] [--work-us W] [--footprint-kb K]
 *          [--seconds S] [--timeout-ms T] [--jitter-us J] [--seed N] [--json]
 *
 * Served: replies the dispatcher delivered within the client's timeout of
 * the request's arrival. A dispatcher woken late accepts late; an arrival
 * it reaches past the timeout is shed and never issued; a reply delivered
 * past it is late. Neither is served: work lost to a late wakeup shows in
 * the served rate, not only in the latency of what was served. A worker
 * drops a request already past the timeout when it takes it (it comes back
 * late, unworked), so an overload serves what the pool can, not nothing.
 *
 * Latencies, in microseconds:
 *   request:           arrival to the reply's delivery, over served requests;
 *   dispatcher_wakeup: per dispatcher wakeup, from its oldest pending event
 *                      (an arrival due or a reply posted) to it running;
 *   worker_wakeup:     from the hand-off to a sleeping worker running.
 * start_s, end_s: the first arrival's grid time and the last's, seconds of
 * CLOCK_MONOTONIC, so that a meter on that clock can cut out the run.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUESTS 4000000u

struct opts {
	int workers;
	double rate, seconds;
	int64_t work_ns, timeout_ns, jitter_ns;
	size_t footprint;
	uint64_t seed;
	bool json;
};

struct samples {
	uint64_t *v;
	size_t n, cap;
};

struct req {
	int64_t arrival; /* scheduled arrival */
	int64_t queued;	 /* handed to the pool */
	int64_t done;	 /* reply posted */
};

static struct opts o = {.rate = 400,
			.seconds = 10,
			.work_ns = 1000000,
			.timeout_ns = 100000000,
			.footprint = 256 << 10,
			.seed = 1};
static struct req *reqs;
static uint32_t nreq;

/* dispatcher -> workers: indexes into reqs, FIFO */
static pthread_mutex_t wq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wq_cond = PTHREAD_COND_INITIALIZER;
static uint32_t *wq, wq_head, wq_tail;
static bool wq_stop;
static struct samples worker_wake; /* under wq_lock */

/* workers -> dispatcher: indexes into reqs, FIFO; rseq counts posts */
static pthread_mutex_t rq_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *rq, rq_head, rq_tail;
static _Atomic uint32_t rseq;

static struct samples request_lat, disp_wake;

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool samples_init(struct samples *s, size_t cap)
{
	s->v = calloc(cap ? cap : 1, sizeof(*s->v));
	s->cap = cap;
	return s->v != NULL;
}

static void record(struct samples *s, int64_t ns)
{
	if (s->n < s->cap)
		s->v[s->n++] = ns > 0 ? (uint64_t)ns : 0;
}

/* Compute over the worker's buffer until this thread has used @ns of CPU. */
static void work(uint64_t *buf, size_t words, int64_t ns, uint64_t *pos)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	uint64_t x = *pos;
	size_t i = *pos % words;

	do {
		/* one cache line per step, 64 lines between clock reads */
		for (int k = 0; k < 64; k++) {
			x = x * 6364136223846793005ULL + buf[i];
			buf[i] = x;
			i += 8;
			if (i >= words)
				i = 0;
		}
	} while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	*pos = i;
}

static void *worker_fn(void *arg)
{
	size_t words = o.footprint / sizeof(uint64_t);
	uint64_t *buf = malloc(o.footprint), pos = (uintptr_t)arg;

	if (!buf) {
		fprintf(stderr, "tm-svc: out of memory for a worker's buffer\n");
		exit(1);
	}
	for (size_t i = 0; i < words; i++)
		buf[i] = i;
	for (;;) {
		bool slept = false;
		uint32_t r;
		int64_t t;

		pthread_mutex_lock(&wq_lock);
		while (wq_head == wq_tail && !wq_stop) {
			pthread_cond_wait(&wq_cond, &wq_lock);
			slept = true;
		}
		if (wq_head == wq_tail) {
			pthread_mutex_unlock(&wq_lock);
			break;
		}
		r = wq[wq_head++];
		t = now_ns(CLOCK_MONOTONIC);
		/* a request taken off a backlog without sleeping is queueing, not a wakeup */
		if (slept)
			record(&worker_wake, t - reqs[r].queued);
		pthread_mutex_unlock(&wq_lock);

		/* past the client's timeout: its reply would be wasted work */
		if (t - reqs[r].arrival <= o.timeout_ns)
			work(buf, words, o.work_ns, &pos);

		reqs[r].done = now_ns(CLOCK_MONOTONIC);
		pthread_mutex_lock(&rq_lock);
		rq[rq_tail++] = r;
		pthread_mutex_unlock(&rq_lock);
		atomic_fetch_add(&rseq, 1);
		syscall(SYS_futex, &rseq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	free(buf);
	return NULL;
}

struct tally {
	uint64_t issued, served, shed, late;
	int64_t start, end;
};

static void dispatch(struct tally *t)
{
	uint32_t k = 0, outstanding = 0;
	int64_t deadline = t->end + o.timeout_ns;

	for (;;) {
		uint32_t seen = atomic_load(&rseq);
		int64_t now = now_ns(CLOCK_MONOTONIC), oldest = INT64_MAX, wait_until;
		struct timespec ts;
		int pushed = 0;

		pthread_mutex_lock(&rq_lock);
		if (rq_head != rq_tail)
			oldest = reqs[rq[rq_head]].done;
		pthread_mutex_unlock(&rq_lock);
		if (k < nreq && reqs[k].arrival <= now && reqs[k].arrival < oldest)
			oldest = reqs[k].arrival;
		if (oldest != INT64_MAX)
			record(&disp_wake, now - oldest);

		/* accept what has arrived */
		pthread_mutex_lock(&wq_lock);
		for (; k < nreq && reqs[k].arrival <= now; k++) {
			if (now - reqs[k].arrival > o.timeout_ns) {
				t->shed++;
				continue;
			}
			reqs[k].queued = now;
			wq[wq_tail++] = k;
			t->issued++;
			outstanding++;
			pushed++;
		}
		pthread_mutex_unlock(&wq_lock);
		/* one wakeup per request, as a pool hands out work: no herd */
		while (pushed--)
			pthread_cond_signal(&wq_cond);

		/* deliver the replies */
		for (;;) {
			uint32_t r;

			pthread_mutex_lock(&rq_lock);
			if (rq_head == rq_tail) {
				pthread_mutex_unlock(&rq_lock);
				break;
			}
			r = rq[rq_head++];
			pthread_mutex_unlock(&rq_lock);
			outstanding--;
			now = now_ns(CLOCK_MONOTONIC);
			if (now - reqs[r].arrival <= o.timeout_ns) {
				t->served++;
				record(&request_lat, now - reqs[r].arrival);
			} else {
				t->late++;
			}
		}

		if (k == nreq && (!outstanding || now >= deadline))
			break;
		wait_until = k < nreq ? reqs[k].arrival : deadline;
		ts.tv_sec = wait_until / 1000000000LL;
		ts.tv_nsec = wait_until % 1000000000LL;
		/* absolute CLOCK_MONOTONIC; returns at once if a reply came since 'seen' */
		syscall(SYS_futex, &rseq, FUTEX_WAIT_BITSET_PRIVATE, seen, &ts, NULL,
			FUTEX_BITSET_MATCH_ANY);
	}
	/* requests still in the pool when the client gave up */
	t->late += outstanding;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const struct samples *s, double p)
{
	if (!s->n)
		return 0;
	return s->v[(size_t)(p / 100.0 * (double)(s->n - 1) + 0.5)] / 1e3;
}

static void print_lat(const char *name, struct samples *s, bool json)
{
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	if (json)
		printf(",\"%s\":{\"n\":%zu,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,"
		       "\"max\":%.1f}",
		       name, s->n, pct(s, 50), pct(s, 90), pct(s, 99), pct(s, 99.9), pct(s, 100));
	else
		printf("%-18s %8zu %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, s->n, pct(s, 50),
		       pct(s, 90), pct(s, 99), pct(s, 99.9), pct(s, 100));
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: tm-svc [--workers N] [--rate R] [--work-us W] [--footprint-kb K]\n"
		"              [--seconds S] [--timeout-ms T] [--jitter-us J] [--seed N] [--json]\n"
		"  --workers N       worker threads (default: one per online CPU, 1-256)\n"
		"  --rate R          requests per second (default 400, 1-100000)\n"
		"  --work-us W       CPU work per request, us of thread CPU time (default 1000)\n"
		"  --footprint-kb K  each worker's buffer, walked by its requests (default 256)\n"
		"  --seconds S       time over which requests arrive (default 10)\n"
		"  --timeout-ms T    the client's timeout: later is not served (default 100)\n"
		"  --jitter-us J     move each arrival by a random 0..J us off the fixed grid\n"
		"                    (default 0; must be below the period)\n"
		"  --seed N          seed of the jitter (default 1)\n"
		"  --json            one JSON object instead of text\n");
	return f == stdout ? 0 : 2;
}

static bool parse_num(const char *name, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "tm-svc: %s '%s' is not a number within %g-%g\n", name, s, lo, hi);
		return false;
	}
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"workers", required_argument, NULL, 'n'},
					   {"rate", required_argument, NULL, 'r'},
					   {"work-us", required_argument, NULL, 'w'},
					   {"footprint-kb", required_argument, NULL, 'f'},
					   {"seconds", required_argument, NULL, 's'},
					   {"timeout-ms", required_argument, NULL, 't'},
					   {"jitter-us", required_argument, NULL, 'J'},
					   {"seed", required_argument, NULL, 'S'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {}};
	struct tally t = {};
	pthread_t *th;
	double v, period, want;
	uint64_t rng;
	int c;

	o.workers = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o.workers < 1)
		o.workers = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!parse_num("--workers", optarg, 1, 256, &v))
				return 2;
			o.workers = (int)v;
			break;
		case 'r':
			if (!parse_num("--rate", optarg, 1, 100000, &o.rate))
				return 2;
			break;
		case 'w':
			if (!parse_num("--work-us", optarg, 0, 1e6, &v))
				return 2;
			o.work_ns = (int64_t)(v * 1000);
			break;
		case 'f':
			if (!parse_num("--footprint-kb", optarg, 4, 1 << 20, &v))
				return 2;
			o.footprint = (size_t)v << 10;
			break;
		case 's':
			if (!parse_num("--seconds", optarg, 0.1, 86400, &o.seconds))
				return 2;
			break;
		case 't':
			if (!parse_num("--timeout-ms", optarg, 1, 60000, &v))
				return 2;
			o.timeout_ns = (int64_t)(v * 1e6);
			break;
		case 'J':
			if (!parse_num("--jitter-us", optarg, 0, 1e7, &v))
				return 2;
			o.jitter_ns = (int64_t)(v * 1000);
			break;
		case 'S':
			if (!parse_num("--seed", optarg, 0, 1e15, &v))
				return 2;
			o.seed = (uint64_t)v;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tm-svc: unexpected argument '%s'\n", argv[optind]);
		return usage(stderr);
	}
	period = 1e9 / o.rate;
	if (o.jitter_ns && (double)o.jitter_ns >= period) {
		fprintf(stderr,
			"tm-svc: --jitter-us %.0f is not below the period of %.0f us "
			"(arrivals would change order)\n",
			o.jitter_ns / 1e3, period / 1e3);
		return 2;
	}
	want = o.rate * o.seconds;
	if (want > MAX_REQUESTS) {
		fprintf(stderr, "tm-svc: --rate x --seconds is %.0f requests, more than %u\n", want,
			MAX_REQUESTS);
		return 2;
	}
	nreq = (uint32_t)want;

	reqs = calloc(nreq ? nreq : 1, sizeof(*reqs));
	wq = calloc(nreq ? nreq : 1, sizeof(*wq));
	rq = calloc(nreq ? nreq : 1, sizeof(*rq));
	th = calloc(o.workers, sizeof(*th));
	if (!reqs || !wq || !rq || !th || !samples_init(&request_lat, nreq) ||
	    !samples_init(&disp_wake, 2 * (size_t)nreq + 16) || !samples_init(&worker_wake, nreq)) {
		fprintf(stderr, "tm-svc: out of memory\n");
		return 1;
	}
	for (int i = 0; i < o.workers; i++) {
		if (pthread_create(&th[i], NULL, worker_fn, (void *)(uintptr_t)(i * 4096))) {
			fprintf(stderr, "tm-svc: cannot start a worker thread\n");
			return 1;
		}
	}
	/* let every worker fill its buffer and go to sleep */
	t.start = now_ns(CLOCK_MONOTONIC) + 50000000;
	t.end = t.start + (int64_t)(o.seconds * 1e9);
	rng = o.seed * 0x9e3779b97f4a7c15ULL + 1;
	for (uint32_t k = 0; k < nreq; k++) {
		reqs[k].arrival = t.start + (int64_t)(k * period);
		if (o.jitter_ns) {
			/* xorshift64: cheap, and the same seed gives the same arrivals */
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			reqs[k].arrival += (int64_t)(rng % (uint64_t)o.jitter_ns);
		}
	}
	dispatch(&t);

	pthread_mutex_lock(&wq_lock);
	wq_stop = true;
	wq_head = wq_tail; /* what the client gave up on is not worked */
	pthread_mutex_unlock(&wq_lock);
	pthread_cond_broadcast(&wq_cond);
	for (int i = 0; i < o.workers; i++)
		pthread_join(th[i], NULL);

	if (o.json) {
		printf("{\"offered\":%u,\"issued\":%" PRIu64 ",\"served\":%" PRIu64
		       ",\"shed\":%" PRIu64 ",\"late\":%" PRIu64 ",\"seconds\":%.3f"
		       ",\"target_rate\":%.1f,\"served_rate\":%.2f,\"workers\":%d,\"work_us\":%.0f"
		       ",\"footprint_kb\":%zu,\"timeout_ms\":%.0f,\"jitter_us\":%.0f"
		       ",\"start_s\":%.6f,\"end_s\":%.6f",
		       nreq, t.issued, t.served, t.shed, t.late, o.seconds, o.rate,
		       t.served / o.seconds, o.workers, o.work_ns / 1e3, o.footprint >> 10,
		       o.timeout_ns / 1e6, o.jitter_ns / 1e3, t.start / 1e9, t.end / 1e9);
		print_lat("request_us", &request_lat, true);
		print_lat("dispatcher_wakeup_us", &disp_wake, true);
		print_lat("worker_wakeup_us", &worker_wake, true);
		printf("}\n");
	} else {
		printf("offered %u in %.2f s (%.1f/s): served %" PRIu64 " (%.2f/s), shed %" PRIu64
		       ", late %" PRIu64 "\n",
		       nreq, o.seconds, o.rate, t.served, t.served / o.seconds, t.shed, t.late);
		printf("%-18s %8s %9s %9s %9s %9s %9s\n", "us", "n", "p50", "p90", "p99", "p99.9",
		       "max");
		print_lat("request", &request_lat, false);
		print_lat("dispatcher wakeup", &disp_wake, false);
		print_lat("worker wakeup", &worker_wake, false);
	}
	return 0;
}
