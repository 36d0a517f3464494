// SPDX-License-Identifier: GPL-2.0
/*
 * scx_tidemark: loads the tidemark sched_ext scheduler, prints its counters,
 * and restarts it when the kernel asks for a restart (CPU hotplug).
 *
 * Options are parsed once into struct tm_opts and applied to every fresh
 * skeleton, so a restart never loses them.
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
#include <scx/common.h>

#include "tidemark.h"
#include "tidemark.skel.h"

struct tm_opts {
	__u64 slice_us;
	__u32 timeout_ms;	/* 0: kernel default (30 s) */
	__u32 stats_s;		/* 0: no periodic counters */
	bool json;
	bool verbose;
};

static volatile sig_atomic_t exit_req;

static const char *const stat_names[] = {
#define TM_STAT_NAME(e, n, h) n,
	TM_STATS(TM_STAT_NAME)
#undef TM_STAT_NAME
};

static const char *const stat_help[] = {
#define TM_STAT_HELP(e, n, h) h,
	TM_STATS(TM_STAT_HELP)
#undef TM_STAT_HELP
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTIONS]\n"
		"Load the tidemark sched_ext scheduler until SIGINT/SIGTERM.\n\n"
		"  -s, --slice-us US     time slice in microseconds (default %d, range %d-%d)\n"
		"  -t, --timeout-ms MS   sched_ext watchdog timeout (default 30000, range 1-%d)\n"
		"      --stats SECONDS   print the counters every SECONDS (default: off)\n"
		"      --json            print counters as one JSON object per line\n"
		"  -v, --verbose         libbpf debug output\n"
		"  -h, --help            this text\n",
		prog, TM_SLICE_US_DFL, TM_SLICE_US_MIN, TM_SLICE_US_MAX, TM_TIMEOUT_MS_MAX);
}

/* Strict unsigned parse: the whole string, in range, or an error naming it. */
static int parse_u64(const char *opt, const char *s, __u64 min, __u64 max, __u64 *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || !*s || *s == '-')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		goto bad;
	if (v < min || v > max) {
		fprintf(stderr, "scx_tidemark: %s %s is out of range %" PRIu64 "-%" PRIu64 "\n",
			opt, s, (uint64_t)min, (uint64_t)max);
		return -1;
	}
	*out = v;
	return 0;
bad:
	fprintf(stderr, "scx_tidemark: %s needs a whole number, got '%s'\n", opt, s ? s : "");
	return -1;
}

/* Returns 0 to run, 1 for --help, -1 on a bad command line. */
static int parse_opts(int argc, char **argv, struct tm_opts *o)
{
	enum { OPT_STATS = 256, OPT_JSON };
	static const struct option longopts[] = {
		{ "slice-us", required_argument, NULL, 's' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "stats", required_argument, NULL, OPT_STATS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	__u64 v;
	int c;

	*o = (struct tm_opts){ .slice_us = TM_SLICE_US_DFL };
	while ((c = getopt_long(argc, argv, "s:t:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u64("--slice-us", optarg, TM_SLICE_US_MIN, TM_SLICE_US_MAX, &v))
				return -1;
			o->slice_us = v;
			break;
		case 't':
			if (parse_u64("--timeout-ms", optarg, 1, TM_TIMEOUT_MS_MAX, &v))
				return -1;
			o->timeout_ms = v;
			break;
		case OPT_STATS:
			if (parse_u64("--stats", optarg, 1, 3600, &v))
				return -1;
			o->stats_s = v;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scx_tidemark: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void on_signal(int sig)
{
	exit_req = 1;
}

static int read_stats(struct tidemark *skel, __u64 *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct tm_cpu_stats *per;
	__u32 zero = 0;
	int i, j;

	if (ncpu <= 0)
		return -1;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -1;
	memset(sum, 0, sizeof(__u64) * TM_NR_STATS);
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &zero, per)) {
		free(per);
		return -1;
	}
	for (i = 0; i < ncpu; i++)
		for (j = 0; j < TM_NR_STATS; j++)
			sum[j] += per[i].cnt[j];
	free(per);
	return 0;
}

static void print_stats(struct tidemark *skel, const struct tm_opts *o)
{
	__u64 sum[TM_NR_STATS];
	int i;

	if (read_stats(skel, sum)) {
		fprintf(stderr, "scx_tidemark: cannot read counters: %s\n", strerror(errno));
		return;
	}
	if (o->json) {
		printf("{\"scheduler\":\"tidemark\"");
		for (i = 0; i < TM_NR_STATS; i++)
			printf(",\"%s\":%" PRIu64, stat_names[i], (uint64_t)sum[i]);
		printf("}\n");
	} else {
		printf("%-18s %14s  %s\n", "counter", "value", "meaning");
		for (i = 0; i < TM_NR_STATS; i++)
			printf("%-18s %14" PRIu64 "  %s\n", stat_names[i], (uint64_t)sum[i],
			       stat_help[i]);
	}
	fflush(stdout);
}

/* The kernel bumps hotplug_seq on CPU hotplug; passing it in makes a
 * hotplug that races with loading end in a restartable exit. */
static __u64 read_hotplug_seq(void)
{
	FILE *f = fopen("/sys/kernel/sched_ext/hotplug_seq", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * One scheduler lifetime: open, configure, load, attach, wait for a signal
 * or an exit from the kernel. Returns the exit code the kernel recorded (or a
 * negative errno when loading failed); *restart says whether to go again.
 */
static int run_once(const struct tm_opts *o, bool *restart)
{
	struct tidemark *skel;
	struct bpf_link *link = NULL;
	time_t next_stats;
	__s64 ecode = 0;
	int err;

	*restart = false;
	skel = tidemark__open();
	if (!skel) {
		fprintf(stderr, "scx_tidemark: cannot open BPF object: %s\n", strerror(errno));
		return -errno;
	}
	skel->struct_ops.tidemark_ops->hotplug_seq = read_hotplug_seq();
	skel->struct_ops.tidemark_ops->timeout_ms = o->timeout_ms;
	skel->rodata->slice_ns = o->slice_us * 1000;
	UEI_SET_SIZE(skel, tidemark_ops, uei);

	err = tidemark__load(skel);
	if (err) {
		fprintf(stderr, "scx_tidemark: load failed: %s\n", strerror(-err));
		goto out;
	}
	link = bpf_map__attach_struct_ops(skel->maps.tidemark_ops);
	if (!link) {
		err = -errno;
		fprintf(stderr, "scx_tidemark: attach failed: %s%s\n", strerror(errno),
			errno == EBUSY ? " (another sched_ext scheduler is loaded)" : "");
		goto out;
	}
	fprintf(stderr, "scx_tidemark: loaded (slice %" PRIu64 " us)\n", (uint64_t)o->slice_us);

	next_stats = time(NULL) + o->stats_s;
	while (!exit_req && !UEI_EXITED(skel, uei)) {
		usleep(100 * 1000);
		if (o->stats_s && time(NULL) >= next_stats) {
			print_stats(skel, o);
			next_stats += o->stats_s;
		}
	}
	/* Detaching waits for the kernel to finish disabling. */
	bpf_link__destroy(link);
	link = NULL;
	if (o->stats_s)
		print_stats(skel, o);
	ecode = UEI_REPORT(skel, uei);
	fprintf(stderr, "scx_tidemark: exit kind %d\n", skel->data->uei.kind);
	if (skel->data->uei.kind >= TM_EXIT_KIND_ERROR)
		err = -EIO;
	*restart = !exit_req && UEI_ECODE_RESTART(ecode);
out:
	if (link)
		bpf_link__destroy(link);
	tidemark__destroy(skel);
	return err;
}

int main(int argc, char **argv)
{
	struct tm_opts opts;
	bool restart;
	int ret;

	ret = parse_opts(argc, argv, &opts);
	if (ret) {
		usage(ret > 0 ? stdout : stderr, argv[0]);
		return ret > 0 ? 0 : 2;
	}
	libbpf_set_print(opts.verbose ? libbpf_print : libbpf_print_quiet);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	do {
		ret = run_once(&opts, &restart);
		if (restart)
			fprintf(stderr, "scx_tidemark: kernel asked for a restart; reloading\n");
	} while (restart);
	return ret ? 1 : 0;
}
