// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkctl trace: record what the running scheduler decided for a few
 * seconds, from outside the process that owns it. Asks for the events
 * through the pinned "trace_ctl" (with a deadline, so the scheduler stops
 * on its own if this process dies), reads the pinned ring buffer "trace",
 * and writes one line per event, or a Chrome/Perfetto trace (JSON) with a
 * track per CPU: runs as slices, decisions as instants, the BE budget as a
 * counter. Opens in https://ui.perfetto.dev or chrome://tracing.
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
#include <bpf/libbpf.h>
#include <jansson.h>

#include "ctl.h"
#include "tmlib.h"
#include "tmmaps.h"

#define TR_NAME(e, n, h) n,
static const char *const kind_names[TM_NR_TRACE_KINDS] = {TM_TRACE_KINDS(TR_NAME)};
#undef TR_NAME
#define TR_HELP(e, n, h) h,
static const char *const kind_help[TM_NR_TRACE_KINDS] = {TM_TRACE_KINDS(TR_HELP)};
#undef TR_HELP
static const char *const queue_names[TM_NR_TRACE_QUEUES] = {
	[TM_TRQ_IDLE_CPU] = "idle_cpu", [TM_TRQ_TAKE_BE] = "take_be", [TM_TRQ_SHARED] = "shared",
	[TM_TRQ_HOME] = "home",		[TM_TRQ_BE] = "be",	      [TM_TRQ_PINNED] = "pinned",
	[TM_TRQ_LIMITED] = "limited",
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* an open run per CPU, closed by its stop event into one slice */
struct open_run {
	bool open;
	struct tm_trace_ev ev;
};

struct tr {
	FILE *out;
	bool perfetto;
	__u64 t0;   /* first event, ns: times are written from it */
	__u64 last; /* latest event, ns */
	__u64 n[TM_NR_TRACE_KINDS], bad;
	bool first;		 /* no JSON event written yet */
	bool skip;		 /* draining what an earlier reader left */
	__u64 stale, stale_last; /* what it left: how many, the newest's time */
	struct open_run run[TM_MAX_CPUS];
	bool cpu_named[TM_MAX_CPUS];
	struct tm_cg_path *paths;
	size_t np;
	/* when paths were read: an unknown id re-reads them, at most once a second */
	time_t walked;
	int err; /* errno of the first write error */
};

static const char *cg_path(struct tr *t, __u64 id)
{
	const char *p;

	if (!id)
		return "";
	p = tm_cgroup_path_of(t->paths, t->np, id);
	if (!p && time(NULL) != t->walked) {
		tm_cgroup_paths_free(t->paths, t->np);
		t->paths = NULL;
		t->np = 0;
		tm_cgroup_walk(TM_CGROUP_ROOT, &t->paths, &t->np);
		t->walked = time(NULL);
		p = tm_cgroup_path_of(t->paths, t->np, id);
	}
	return p ? p : "?";
}

static void put_json(struct tr *t, json_t *o)
{
	if (!o)
		return;
	if (fputs(t->first ? "\n" : ",\n", t->out) < 0 || json_dumpf(o, t->out, JSON_COMPACT))
		t->err = t->err ? t->err : errno ? errno : EIO;
	t->first = false;
	json_decref(o);
}

static double ts_us(const struct tr *t, __u64 ns)
{
	return ns >= t->t0 ? (ns - t->t0) / 1e3 : 0;
}

/* The task's part of an event's args. */
static json_t *task_args(struct tr *t, const struct tm_trace_ev *e)
{
	return json_pack("{s:i,s:s,s:s%,s:s}", "pid", (int)e->pid, "class", tm_class_name(e->cls),
			 "comm", e->comm, strnlen(e->comm, sizeof(e->comm)), "cgroup",
			 cg_path(t, e->cgid));
}

/* One run as a slice on its CPU's track, @r's start to @end_ns. */
static void put_slice(struct tr *t, const struct tm_trace_ev *r, __u64 end_ns, bool runnable,
		      bool open_at_end)
{
	char name[40];
	json_t *args;

	snprintf(name, sizeof(name), "%.16s %u", r->comm, r->pid);
	args = task_args(t, r);
	json_object_set_new(args, "wait_us", json_real(r->arg / 1e3));
	json_object_set_new(args, "still_runnable", json_boolean(runnable));
	if (open_at_end)
		json_object_set_new(args, "open_at_end", json_true());
	put_json(t, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:o}", "ph", "X", "name", name, "cat",
			      tm_class_name(r->cls), "ts", ts_us(t, r->ts_ns), "dur",
			      end_ns > r->ts_ns ? (end_ns - r->ts_ns) / 1e3 : 0.0, "pid", 0, "tid",
			      (int)r->cpu, "args", args));
}

static void perfetto_ev(struct tr *t, const struct tm_trace_ev *e)
{
	int cpu = (int)e->cpu;
	bool first_of_cpu = false;
	json_t *args;

	if (cpu >= 0 && cpu < TM_MAX_CPUS && !t->cpu_named[cpu]) {
		char name[32];

		first_of_cpu = true;
		snprintf(name, sizeof(name), "CPU %d", cpu);
		put_json(t, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "ph", "M", "name", "thread_name",
				      "pid", 0, "tid", cpu, "args", "name", name));
		put_json(t, json_pack("{s:s,s:s,s:i,s:i,s:{s:i}}", "ph", "M", "name",
				      "thread_sort_index", "pid", 0, "tid", cpu, "args",
				      "sort_index", cpu));
		t->cpu_named[cpu] = true;
	}
	switch (e->kind) {
	case TM_TR_RUN:
		if (cpu >= 0 && cpu < TM_MAX_CPUS) {
			t->run[cpu].open = true;
			t->run[cpu].ev = *e;
			/* running when the trace began: from the trace's start */
			if (e->aux)
				t->run[cpu].ev.ts_ns = t->t0;
		}
		return;
	case TM_TR_STOP: {
		struct tm_trace_ev r;

		if (cpu < 0 || cpu >= TM_MAX_CPUS)
			return;
		if (t->run[cpu].open && t->run[cpu].ev.pid == e->pid) {
			r = t->run[cpu].ev;
		} else if (first_of_cpu) {
			/* it was running when the trace began */
			r = *e;
			r.ts_ns = t->t0;
			r.arg = 0;
		} else {
			return;
		}
		t->run[cpu].open = false;
		put_slice(t, &r, e->ts_ns, e->aux, false);
		return;
	}
	case TM_TR_WINDOW:
		put_json(t, json_pack("{s:s,s:s,s:f,s:i,s:{s:f,s:f,s:i,s:i}}", "ph", "C", "name",
				      "BE budget", "ts", ts_us(t, e->ts_ns), "pid", 0, "args",
				      "budget_us", e->arg / 1e3, "over_us", (__s64)e->cgid / 1e3,
				      "hi_us", (int)e->aux, "be_us", (int)e->pid));
		return;
	default:
		break;
	}
	if (e->pid)
		args = task_args(t, e);
	else
		args = json_object();
	if (e->kind == TM_TR_ENQUEUE)
		json_object_set_new(
			args, "queue",
			json_string(e->aux < TM_NR_TRACE_QUEUES ? queue_names[e->aux] : "?"));
	if (e->kind == TM_TR_FORCED)
		json_object_set_new(args, "head_wait_us", json_real(e->arg / 1e3));
	if (e->kind == TM_TR_FLOOR)
		json_object_set_new(args, "grant_us", json_real(e->arg / 1e3));
	put_json(t, json_pack("{s:s,s:s,s:s,s:s,s:f,s:i,s:i,s:o}", "ph", "i", "s", "t", "name",
			      kind_names[e->kind], "cat", "decision", "ts", ts_us(t, e->ts_ns),
			      "pid", 0, "tid", cpu, "args", args));
}

static void text_ev(struct tr *t, const struct tm_trace_ev *e)
{
	int r;

	r = fprintf(t->out, "%14.6f %3d %-8s", ts_us(t, e->ts_ns) / 1e6, (int)e->cpu,
		    kind_names[e->kind]);
	/* a window's pid field carries what BE used in it, not a task */
	if (e->pid && e->kind != TM_TR_WINDOW) {
		char comm[sizeof(e->comm) + 1];
		const char *path = cg_path(t, e->cgid);

		/* one word per column, whatever the task calls itself */
		snprintf(comm, sizeof(comm), "%.16s", e->comm);
		for (char *q = comm; *q; q++)
			if (*q == ' ' || *q == '\t')
				*q = '_';
		r |= fprintf(t->out, " %-6s %7u %-16s %s", tm_class_name(e->cls), e->pid,
			     comm[0] ? comm : "-", path[0] ? path : "-");
	}
	switch (e->kind) {
	case TM_TR_ENQUEUE:
		r |= fprintf(t->out, " queue=%s",
			     e->aux < TM_NR_TRACE_QUEUES ? queue_names[e->aux] : "?");
		break;
	case TM_TR_RUN:
		r |= fprintf(t->out, " wait_us=%.1f%s", e->arg / 1e3,
			     e->aux ? " running_at_start" : "");
		break;
	case TM_TR_STOP:
		r |= fprintf(t->out, " ran_us=%.1f%s", e->arg / 1e3,
			     e->aux ? " still_runnable" : "");
		break;
	case TM_TR_FORCED:
		r |= fprintf(t->out, " head_wait_us=%.1f", e->arg / 1e3);
		break;
	case TM_TR_FLOOR:
		r |= fprintf(t->out, " grant_us=%.1f", e->arg / 1e3);
		break;
	case TM_TR_WINDOW:
		r |= fprintf(t->out, " hi_us=%u be_us=%u over_us=%.1f be_budget_us=%.1f", e->aux,
			     e->pid, (__s64)e->cgid / 1e3, e->arg / 1e3);
		break;
	}
	if ((r | fputc('\n', t->out)) < 0 && !t->err)
		t->err = errno ? errno : EIO;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct tr *t = ctx;
	const struct tm_trace_ev *e = data;

	if (t->skip) {
		t->stale++;
		if (size >= sizeof(*e) && e->ts_ns > t->stale_last)
			t->stale_last = e->ts_ns;
		return 0;
	}
	if (size < sizeof(*e) || e->kind >= TM_NR_TRACE_KINDS) {
		t->bad++;
		return 0;
	}
	if (!t->t0)
		t->t0 = e->ts_ns;
	if (e->ts_ns > t->last)
		t->last = e->ts_ns;
	t->n[e->kind]++;
	if (t->perfetto)
		perfetto_ev(t, e);
	else
		text_ev(t, e);
	return 0;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int parse_kinds(const char *s, __u32 *mask)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf)) {
		fprintf(stderr, "tidemarkctl: --kinds is too long\n");
		return -1;
	}
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < TM_NR_TRACE_KINDS; k++)
			if (!strcmp(tok, kind_names[k]))
				break;
		if (k == TM_NR_TRACE_KINDS) {
			fprintf(stderr, "tidemarkctl: --kinds: unknown event '%s' (one of:", tok);
			for (k = 0; k < TM_NR_TRACE_KINDS; k++)
				fprintf(stderr, " %s", kind_names[k]);
			fprintf(stderr, ")\n");
			return -1;
		}
		*mask |= 1u << k;
	}
	if (!*mask) {
		fprintf(stderr, "tidemarkctl: --kinds names no event\n");
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tidemarkctl trace --seconds N [--format text|perfetto] [--output FILE]\n"
		   "                         [--kinds KIND,...]\n"
		   "events (--kinds; all by default):\n");
	for (int k = 0; k < TM_NR_TRACE_KINDS; k++)
		fprintf(f, "  %-9s %s\n", kind_names[k], kind_help[k]);
}

int tm_ctl_trace(int argc, char **argv)
{
	static const struct option lo[] = {
		{"seconds", required_argument, NULL, 's'}, {"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},  {"kinds", required_argument, NULL, 'k'},
		{"help", no_argument, NULL, 'h'},	   {}};
	int rb_fd = -1, ctl_fd = -1, stats_fd = -1, c, ret = 1;
	struct tm_cpu_stats s0 = {}, s1 = {};
	struct ring_buffer *rb = NULL;
	const char *output = NULL;
	struct tm_trace_ctl ctl = {}, cur = {};
	__u32 mask = TM_TRACE_ALL, zero = 0;
	static struct tr t;
	char err[512], *end, tmp[4096] = "";
	long seconds = 0;
	__u64 total = 0, now;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			seconds = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || seconds < 1 || seconds > 3600) {
				fprintf(stderr, "tidemarkctl: --seconds '%s' must be 1-3600\n",
					optarg);
				return 2;
			}
			break;
		case 'f':
			if (!strcmp(optarg, "perfetto")) {
				t.perfetto = true;
			} else if (strcmp(optarg, "text")) {
				fprintf(stderr,
					"tidemarkctl: --format '%s' must be text or perfetto\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'k':
			if (parse_kinds(optarg, &mask))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tidemarkctl: trace: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!seconds) {
		fprintf(stderr, "tidemarkctl: trace needs --seconds N\n");
		usage(stderr);
		return 2;
	}

	rb_fd = tm_pin_open(NULL, TM_PIN_TRACE, "tidemarkctl", err, sizeof(err));
	if (rb_fd >= 0)
		ctl_fd = tm_pin_open(NULL, TM_PIN_TRACE_CTL, "tidemarkctl", err, sizeof(err));
	if (ctl_fd >= 0)
		stats_fd = tm_pin_open(NULL, TM_PIN_STATS, "tidemarkctl", err, sizeof(err));
	if (stats_fd < 0) {
		fprintf(stderr, "tidemarkctl: %s\n", err);
		goto out;
	}
	if (bpf_map_lookup_elem(ctl_fd, &zero, &cur)) {
		fprintf(stderr, "tidemarkctl: reading trace_ctl: %s\n", strerror(errno));
		goto out;
	}
	now = mono_ns();
	if (cur.mask && cur.until_ns > now) {
		fprintf(stderr,
			"tidemarkctl: a trace is already being taken (for %.1f s more): one reader "
			"at a time\n",
			(cur.until_ns - now) / 1e9);
		goto out;
	}
	/* written to a temporary file and renamed at the end: a failed trace
	 * leaves no half file where the output should be */
	if (output) {
		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", output, (int)getpid());
		t.out = fopen(tmp, "w");
		if (!t.out) {
			fprintf(stderr, "tidemarkctl: cannot write %s: %s\n", tmp, strerror(errno));
			goto out;
		}
	} else {
		t.out = stdout;
	}
	rb = ring_buffer__new(rb_fd, on_event, &t, NULL);
	if (!rb) {
		fprintf(stderr, "tidemarkctl: reading the trace ring buffer: %s\n",
			strerror(errno));
		goto out;
	}
	/* what an earlier reader left in the ring buffer is not this trace */
	t.skip = true;
	ring_buffer__consume(rb);
	t.skip = false;
	if (t.stale) {
		now = mono_ns();
		fprintf(stderr,
			"tidemarkctl: skipped %llu events an earlier trace left (the newest "
			"written "
			"%.3f s ago)\n",
			(unsigned long long)t.stale,
			now > t.stale_last ? (now - t.stale_last) / 1e9 : 0.0);
	}
	tm_cgroup_walk(TM_CGROUP_ROOT, &t.paths, &t.np);
	t.walked = time(NULL);
	if (t.perfetto) {
		fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", t.out);
		t.first = true;
		put_json(&t, json_pack("{s:s,s:s,s:i,s:{s:s}}", "ph", "M", "name", "process_name",
				       "pid", 0, "args", "name", "tidemark: CPUs"));
	} else {
		fprintf(t.out, "# tidemarkctl trace: seconds from the first event, cpu, event, "
			       "class, pid, comm, cgroup, details\n");
	}
	tm_stats_sum(stats_fd, &s0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	now = mono_ns();
	ctl.mask = mask;
	ctl.until_ns = now + seconds * 1000000000ULL;
	if (bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY)) {
		fprintf(stderr, "tidemarkctl: writing trace_ctl: %s\n", strerror(errno));
		goto out;
	}
	fprintf(stderr, "tidemarkctl: tracing %s for %ld s (from the next window)\n",
		mask == TM_TRACE_ALL ? "every event" : "the events asked for", seconds);
	/* drained every 50 ms (events come without wakeups): ~1.3 million
	 * events/s before the 4 MiB buffer could fill between two reads */
	while (!stop && mono_ns() < ctl.until_ns && !t.err) {
		struct timespec nap = {0, 50000000};
		int n;

		nanosleep(&nap, NULL);
		n = ring_buffer__consume(rb);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "tidemarkctl: reading the trace: %s\n", strerror(-n));
			break;
		}
	}
	ctl.mask = 0;
	ctl.until_ns = 0;
	bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY);
	/* events of the last window, written before the scheduler saw the stop */
	usleep(20000);
	ring_buffer__consume(rb);
	tm_stats_sum(stats_fd, &s1);
	/* runs still going when the trace ended: up to its last event */
	for (int i = 0; t.perfetto && i < TM_MAX_CPUS; i++)
		if (t.run[i].open)
			put_slice(&t, &t.run[i].ev, t.last, true, true);
	if (t.perfetto && fputs("\n]}\n", t.out) < 0 && !t.err)
		t.err = errno ? errno : EIO;
	/* where the relative times sit on the clock other tools read (cgroup
	 * samplers, perf, bpftrace): CLOCK_MONOTONIC, as bpf_ktime_get_ns */
	if (!t.perfetto && t.t0 &&
	    fprintf(t.out, "# span: first event at %.6f s, last at %.6f s of CLOCK_MONOTONIC\n",
		    t.t0 / 1e9, t.last / 1e9) < 0 &&
	    !t.err)
		t.err = errno ? errno : EIO;
	if (fflush(t.out) && !t.err)
		t.err = errno ? errno : EIO;
	if (t.err) {
		fprintf(stderr, "tidemarkctl: writing the trace: %s\n", strerror(t.err));
		goto out;
	}
	if (output) {
		if (fclose(t.out) || rename(tmp, output)) {
			t.out = NULL;
			fprintf(stderr, "tidemarkctl: writing %s: %s\n", output, strerror(errno));
			goto out;
		}
		t.out = NULL;
		tmp[0] = 0;
	}
	for (int k = 0; k < TM_NR_TRACE_KINDS; k++)
		total += t.n[k];
	fprintf(stderr, "tidemarkctl: %llu events", (unsigned long long)total);
	for (int k = 0; k < TM_NR_TRACE_KINDS; k++)
		if (t.n[k])
			fprintf(stderr, " %s=%llu", kind_names[k], (unsigned long long)t.n[k]);
	fprintf(stderr, "; lost %llu (ring buffer full)%s%s\n",
		(unsigned long long)(s1.cnt[TM_STAT_TRACE_LOST] - s0.cnt[TM_STAT_TRACE_LOST]),
		output ? "; written to " : "", output ? output : "");
	if (t.bad)
		fprintf(stderr, "tidemarkctl: %llu records of an unknown shape skipped\n",
			(unsigned long long)t.bad);
	if (stop)
		fprintf(stderr, "tidemarkctl: interrupted: the trace above ends early\n");
	ret = 0;
out:
	if (ctl_fd >= 0 && ctl.mask) {
		ctl.mask = 0;
		ctl.until_ns = 0;
		bpf_map_update_elem(ctl_fd, &zero, &ctl, BPF_ANY);
	}
	ring_buffer__free(rb);
	if (t.out && t.out != stdout)
		fclose(t.out);
	if (tmp[0])
		unlink(tmp);
	tm_cgroup_paths_free(t.paths, t.np);
	for (int i = 0; i < 3; i++) {
		int fd = i == 0 ? rb_fd : i == 1 ? ctl_fd : stats_fd;

		if (fd >= 0)
			close(fd);
	}
	return ret;
}
