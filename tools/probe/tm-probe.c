// SPDX-License-Identifier: GPL-2.0
/*
 * tm-probe: an ONLINE latency probe in the style of a request/response
 * service. Message threads issue requests at a fixed rate and hand each to an
 * idle worker (a futex wakeup); the worker does a fixed amount of CPU work
 * and completes it. Two latencies per request, in microseconds:
 *   wakeup:  from the hand-off to the worker running (run-queue wait),
 *   request: from the request's scheduled time to its completion (includes
 *            queueing behind busy workers; no coordinated omission).
 *
 *   tm-probe [--messengers M] [--workers N] [--rate R] [--work-us W]
 *            [--seconds S] [--jitter-us J] [--seed N] [--json]
 *
 * --workers is per messenger; --rate is the total requests per second over
 * all messengers; CPU work is measured in thread CPU time, so preemption
 * does not shorten it.
 *
 * --jitter-us J moves each request by a uniform random offset in [0, J)
 * from its slot on the fixed grid. Without it the arrival times are locked
 * in phase with the kernel's periodic tick (5 ms requests, 4 ms tick at
 * HZ=250: every run samples one tick phase, so a collision hits either 0 or
 * 25% of the requests, decided by when the run happened to start).
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

#define MAX_SAMPLES (4u << 20)
#define QUEUE_LEN   4096

struct opts {
	int messengers, workers;
	double rate, seconds;
	int64_t work_ns, jitter_ns;
	uint64_t seed;
	bool json;
};

struct samples {
	uint64_t *v;
	size_t n, cap;
	pthread_mutex_t lock;
};

struct messenger;

struct worker {
	pthread_t thread;
	struct messenger *m;
	_Atomic uint32_t state; /* 0 idle (sleeping), 1 busy, 2 handed a request, 3 stop */
	int64_t req_sched;	/* handed request: scheduled time */
	int64_t handed_at;	/* when it was handed over */
};

struct messenger {
	pthread_t thread;
	const struct opts *o;
	struct worker *w;
	/* requests that found every worker busy, FIFO of scheduled times */
	pthread_mutex_t qlock;
	int64_t queue[QUEUE_LEN];
	unsigned head, tail;
	uint64_t dropped;
	/* scheduled gap between consecutive requests: shows the jitter */
	int64_t gap_min, gap_max;
	int64_t start, end;
	double period_ns;
	int idx;
};

static struct samples wake_s, req_s;
static _Atomic uint64_t completed;

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void record(struct samples *s, uint64_t ns)
{
	pthread_mutex_lock(&s->lock);
	if (s->n < s->cap)
		s->v[s->n++] = ns;
	pthread_mutex_unlock(&s->lock);
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Spin until this thread has used @ns of CPU time. */
static void burn(int64_t ns)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t x = 1;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
}

static bool dequeue(struct messenger *m, int64_t *sched)
{
	bool got = false;

	pthread_mutex_lock(&m->qlock);
	if (m->head != m->tail) {
		*sched = m->queue[m->head++ % QUEUE_LEN];
		got = true;
	}
	pthread_mutex_unlock(&m->qlock);
	return got;
}

static void complete(int64_t sched)
{
	int64_t done = now_ns(CLOCK_MONOTONIC);

	record(&req_s, done > sched ? (uint64_t)(done - sched) : 0);
	atomic_fetch_add(&completed, 1);
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct messenger *m = w->m;
	int64_t sched;

	for (;;) {
		uint32_t st = atomic_load(&w->state);

		/*
		 * The stop is a state, not a flag next to it: a flag set and
		 * woken between this load and the futex wait would be missed,
		 * and the worker would sleep through it for good.
		 */
		if (st == 3)
			break;
		if (st == 0) {
			futex_wait(&w->state, 0);
			continue;
		}
		if (st == 2) {
			int64_t t = now_ns(CLOCK_MONOTONIC);

			record(&wake_s, t > w->handed_at ? (uint64_t)(t - w->handed_at) : 0);
			sched = w->req_sched;
			atomic_store(&w->state, 1);
			burn(m->o->work_ns);
			complete(sched);
		}
		/* drain what queued up while every worker was busy */
		while (dequeue(m, &sched)) {
			burn(m->o->work_ns);
			complete(sched);
		}
		atomic_store(&w->state, 0);
		/* a request queued between the drain and going idle is not lost */
		if (m->head != m->tail) {
			uint32_t idle = 0;

			atomic_compare_exchange_strong(&w->state, &idle, 1);
		}
	}
	return NULL;
}

static void *messenger_fn(void *arg)
{
	struct messenger *m = arg;
	const struct opts *o = m->o;
	uint64_t k = 0, rng = o->seed + (uint64_t)m->idx * 0x9e3779b97f4a7c15ULL + 1;
	int64_t prev = 0;

	for (;;) {
		int64_t sched = m->start + (int64_t)(k * m->period_ns);
		bool handed = false;
		struct timespec ts;

		if (o->jitter_ns) {
			/* xorshift64: cheap, and the same seed gives the same arrivals */
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			sched += (int64_t)(rng % (uint64_t)o->jitter_ns);
		}
		if (k) {
			int64_t gap = sched - prev;

			if (!m->gap_max || gap < m->gap_min)
				m->gap_min = gap;
			if (gap > m->gap_max)
				m->gap_max = gap;
		}
		prev = sched;
		ts.tv_sec = sched / 1000000000LL;
		ts.tv_nsec = sched % 1000000000LL;

		if (sched >= m->end)
			break;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		k++;
		for (int i = 0; i < o->workers && !handed; i++) {
			struct worker *w = &m->w[i];
			uint32_t idle = 0;

			w->req_sched = sched;
			w->handed_at = now_ns(CLOCK_MONOTONIC);
			if (atomic_compare_exchange_strong(&w->state, &idle, 2)) {
				futex_wake(&w->state);
				handed = true;
			}
		}
		if (!handed) {
			pthread_mutex_lock(&m->qlock);
			if (m->tail - m->head < QUEUE_LEN)
				m->queue[m->tail++ % QUEUE_LEN] = sched;
			else
				m->dropped++;
			pthread_mutex_unlock(&m->qlock);
			/* a worker may have gone idle after the scan: wake one to drain */
			for (int i = 0; i < o->workers; i++) {
				uint32_t idle = 0;

				if (atomic_compare_exchange_strong(&m->w[i].state, &idle, 1)) {
					futex_wake(&m->w[i].state);
					break;
				}
			}
		}
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const struct samples *s, double p)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (size_t)(p / 100.0 * (double)(s->n - 1) + 0.5);
	return s->v[i];
}

static int usage(FILE *f)
{
	fprintf(f, "usage: tm-probe [--messengers M] [--workers N] [--rate R] [--work-us W]\n"
		   "                [--seconds S] [--jitter-us J] [--seed N] [--json]\n"
		   "  --messengers M  threads issuing requests (default 1, 1-64)\n"
		   "  --workers N     workers per messenger (default 2, 1-256)\n"
		   "  --rate R        requests per second, all messengers (default 400)\n"
		   "  --work-us W     CPU work per request, us of thread CPU time (default 1000)\n"
		   "  --seconds S     run time (default 10)\n"
		   "  --jitter-us J   move each request by a random 0..J us off the fixed grid\n"
		   "                  (default 0; must be below the period per messenger)\n"
		   "  --seed N        seed of the jitter (default 1)\n"
		   "  --json          one JSON object instead of text\n");
	return f == stdout ? 0 : 2;
}

static bool parse_num(const char *name, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "tm-probe: %s '%s' is not a number within %g-%g\n", name, s, lo,
			hi);
		return false;
	}
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"messengers", required_argument, NULL, 'm'},
					   {"workers", required_argument, NULL, 'n'},
					   {"rate", required_argument, NULL, 'r'},
					   {"work-us", required_argument, NULL, 'w'},
					   {"seconds", required_argument, NULL, 's'},
					   {"jitter-us", required_argument, NULL, 'J'},
					   {"seed", required_argument, NULL, 'S'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {}};
	struct opts o = {.messengers = 1,
			 .workers = 2,
			 .rate = 400,
			 .seconds = 10,
			 .work_ns = 1000000,
			 .seed = 1};
	struct messenger *ms;
	int64_t start, elapsed;
	uint64_t dropped = 0;
	int64_t gap_min = 0, gap_max = 0;
	double v;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!parse_num("--messengers", optarg, 1, 64, &v))
				return 2;
			o.messengers = (int)v;
			break;
		case 'n':
			if (!parse_num("--workers", optarg, 1, 256, &v))
				return 2;
			o.workers = (int)v;
			break;
		case 'r':
			if (!parse_num("--rate", optarg, 1, 1e6, &o.rate))
				return 2;
			break;
		case 'w':
			if (!parse_num("--work-us", optarg, 0, 1e6, &v))
				return 2;
			o.work_ns = (int64_t)(v * 1000);
			break;
		case 's':
			if (!parse_num("--seconds", optarg, 0.1, 86400, &o.seconds))
				return 2;
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
		fprintf(stderr, "tm-probe: unexpected argument '%s'\n", argv[optind]);
		return usage(stderr);
	}
	if (o.jitter_ns && (double)o.jitter_ns >= 1e9 * o.messengers / o.rate) {
		fprintf(stderr,
			"tm-probe: --jitter-us %.0f is not below the period of %.0f us "
			"(requests would change order)\n",
			o.jitter_ns / 1e3, 1e6 * o.messengers / o.rate);
		return 2;
	}

	wake_s.cap = req_s.cap = MAX_SAMPLES;
	wake_s.v = calloc(MAX_SAMPLES, sizeof(uint64_t));
	req_s.v = calloc(MAX_SAMPLES, sizeof(uint64_t));
	ms = calloc(o.messengers, sizeof(*ms));
	if (!wake_s.v || !req_s.v || !ms) {
		fprintf(stderr, "tm-probe: out of memory\n");
		return 1;
	}
	pthread_mutex_init(&wake_s.lock, NULL);
	pthread_mutex_init(&req_s.lock, NULL);

	start = now_ns(CLOCK_MONOTONIC) + 20000000; /* let every thread start */
	for (int i = 0; i < o.messengers; i++) {
		struct messenger *m = &ms[i];

		m->o = &o;
		m->idx = i;
		m->period_ns = 1e9 * o.messengers / o.rate;
		/* stagger the messengers over one period */
		m->start = start + (int64_t)(m->period_ns * i / o.messengers);
		m->end = start + (int64_t)(o.seconds * 1e9);
		pthread_mutex_init(&m->qlock, NULL);
		m->w = calloc(o.workers, sizeof(*m->w));
		if (!m->w) {
			fprintf(stderr, "tm-probe: out of memory\n");
			return 1;
		}
		for (int j = 0; j < o.workers; j++) {
			m->w[j].m = m;
			if (pthread_create(&m->w[j].thread, NULL, worker_fn, &m->w[j])) {
				fprintf(stderr, "tm-probe: cannot start a worker thread\n");
				return 1;
			}
		}
		if (pthread_create(&m->thread, NULL, messenger_fn, m)) {
			fprintf(stderr, "tm-probe: cannot start a messenger thread\n");
			return 1;
		}
	}
	for (int i = 0; i < o.messengers; i++)
		pthread_join(ms[i].thread, NULL);
	/* let queued requests finish, then stop the workers */
	for (int i = 0; i < o.messengers; i++) {
		struct messenger *m = &ms[i];
		bool busy = true;

		while (busy) {
			busy = m->head != m->tail;
			for (int j = 0; j < o.workers; j++)
				busy |= atomic_load(&m->w[j].state) != 0;
			if (busy)
				usleep(1000);
		}
	}
	elapsed = now_ns(CLOCK_MONOTONIC) - start;
	for (int i = 0; i < o.messengers; i++) {
		for (int j = 0; j < o.workers; j++) {
			atomic_store(&ms[i].w[j].state, 3);
			futex_wake(&ms[i].w[j].state);
			pthread_join(ms[i].w[j].thread, NULL);
		}
		dropped += ms[i].dropped;
		if (ms[i].gap_max && (!gap_max || ms[i].gap_min < gap_min))
			gap_min = ms[i].gap_min;
		if (ms[i].gap_max > gap_max)
			gap_max = ms[i].gap_max;
	}

	qsort(wake_s.v, wake_s.n, sizeof(uint64_t), cmp_u64);
	qsort(req_s.v, req_s.n, sizeof(uint64_t), cmp_u64);
	if (o.json) {
		printf("{\"requests\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"seconds\":%.3f,"
		       "\"rate\":%.1f,\"target_rate\":%.1f,\"work_us\":%.0f",
		       (uint64_t)completed, dropped, elapsed / 1e9, completed / (elapsed / 1e9),
		       o.rate, o.work_ns / 1e3);
		printf(",\"jitter_us\":%.0f,\"gap_us\":{\"min\":%.1f,\"max\":%.1f}",
		       o.jitter_ns / 1e3, gap_min / 1e3, gap_max / 1e3);
		printf(",\"wakeup_us\":{\"n\":%zu,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%"
		       ".1f,\"max\":%.1f}",
		       wake_s.n, pct(&wake_s, 50) / 1e3, pct(&wake_s, 90) / 1e3,
		       pct(&wake_s, 99) / 1e3, pct(&wake_s, 99.9) / 1e3, pct(&wake_s, 100) / 1e3);
		printf(",\"request_us\":{\"n\":%zu,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":"
		       "%.1f,\"max\":%.1f}}\n",
		       req_s.n, pct(&req_s, 50) / 1e3, pct(&req_s, 90) / 1e3, pct(&req_s, 99) / 1e3,
		       pct(&req_s, 99.9) / 1e3, pct(&req_s, 100) / 1e3);
	} else {
		printf("requests %" PRIu64 " in %.2f s (%.1f/s of %.1f/s), dropped %" PRIu64 "\n",
		       (uint64_t)completed, elapsed / 1e9, completed / (elapsed / 1e9), o.rate,
		       dropped);
		printf("%-8s %10s %10s %10s %10s %10s\n", "us", "p50", "p90", "p99", "p99.9",
		       "max");
		for (int k = 0; k < 2; k++) {
			const struct samples *s = k ? &req_s : &wake_s;

			printf("%-8s %10.1f %10.1f %10.1f %10.1f %10.1f\n",
			       k ? "request" : "wakeup", pct(s, 50) / 1e3, pct(s, 90) / 1e3,
			       pct(s, 99) / 1e3, pct(s, 99.9) / 1e3, pct(s, 100) / 1e3);
		}
	}
	return 0;
}
