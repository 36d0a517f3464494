// SPDX-License-Identifier: GPL-2.0
/*
 * tidemarkctl progs: what each callback of the running sched_ext scheduler
 * costs (tidemark's or any other: the bench compares them). The kernel's
 * BPF statistics are switched on for the interval only (BPF_ENABLE_STATS:
 * on while the descriptor is open), and every struct_ops program's run
 * count and run time are read before and after. The interval is S seconds
 * or the run of a command (as perf stat does): a window started next to a
 * workload may start late or outlast it, and its calls per second then
 * count idle time.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "ctl.h"

#define PROGS_MAX 128

struct prog_stat {
	__u32 id;
	char name[64];
	__u64 cnt, ns;
};

/* The program's function name from its BTF ("tidemark_enqueue"): the
 * kernel keeps only 15 characters as its name. */
static void full_name(int fd, const struct bpf_prog_info *info, char *out, size_t len)
{
	struct bpf_func_info fi = {};
	struct bpf_prog_info again = {.nr_func_info = 1,
				      .func_info_rec_size = sizeof(fi),
				      .func_info = (__u64)(unsigned long)&fi};
	__u32 l = sizeof(again);
	const struct btf_type *t;
	struct btf *btf;

	snprintf(out, len, "%s", info->name);
	if (!info->btf_id || !info->nr_func_info || bpf_prog_get_info_by_fd(fd, &again, &l))
		return;
	btf = btf__load_from_kernel_by_id(info->btf_id);
	if (!btf)
		return;
	t = btf__type_by_id(btf, fi.type_id);
	if (t && btf__name_by_offset(btf, t->name_off))
		snprintf(out, len, "%s", btf__name_by_offset(btf, t->name_off));
	btf__free(btf);
}

/* Every loaded struct_ops program: its id, name and counters. */
static int snapshot(struct prog_stat *v, int max)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue; /* unloaded meanwhile */
		if (!bpf_prog_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_PROG_TYPE_STRUCT_OPS) {
			if (n == max) {
				close(fd);
				return -E2BIG;
			}
			v[n].id = id;
			full_name(fd, &info, v[n].name, sizeof(v[n].name));
			v[n].cnt = info.run_cnt;
			v[n].ns = info.run_time_ns;
			n++;
		}
		close(fd);
	}
	return errno == ENOENT ? n : -errno;
}

static int usage(void)
{
	fprintf(stderr, "usage: tidemarkctl progs [--json] [--seconds S | [--] CMD [ARGS...]]\n"
			"  each sched_ext callback's calls, run time and ns per call over S "
			"seconds (default 5),\n"
			"  or while CMD runs (the exit status is CMD's)\n");
	return 2;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run @argv to its end: its exit status, 128 + signal if killed, 127 if it
 * could not be started (said on stderr). */
static int run_cmd(char **argv)
{
	int st;
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "tidemarkctl: progs: fork: %s\n", strerror(errno));
		return 127;
	}
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "tidemarkctl: progs: cannot run '%s': %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int tm_ctl_progs(int argc, char **argv)
{
	static const struct option opts[] = {
		{"seconds", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'}, {}};
	static struct prog_stat a[PROGS_MAX], b[PROGS_MAX];
	double secs = 5, t0;
	bool json = false, have_secs = false;
	int c, na, nb, stats_fd, rc = 0;
	char *end;

	optind = 1;
	/* "+": options end at the command's name, its own options are its own */
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			secs = strtod(optarg, &end);
			if (*end || end == optarg || !(secs > 0 && secs <= 3600)) {
				fprintf(stderr, "tidemarkctl: progs: --seconds '%s': 0-3600 s\n",
					optarg);
				return 2;
			}
			have_secs = true;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage();
		}
	}
	if (optind < argc && have_secs) {
		fprintf(stderr, "tidemarkctl: progs: --seconds or a command, not both\n");
		return 2;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "tidemarkctl: progs: cannot switch BPF statistics on: %s\n",
			strerror(-stats_fd));
		return 1;
	}
	na = snapshot(a, PROGS_MAX);
	t0 = mono_s();
	if (optind < argc) {
		rc = run_cmd(argv + optind);
		secs = mono_s() - t0;
	} else {
		usleep((useconds_t)(secs * 1e6));
	}
	nb = snapshot(b, PROGS_MAX);
	close(stats_fd);
	if (rc == 127)
		return rc; /* it never ran: nothing measured */
	if (na < 0 || nb < 0) {
		fprintf(stderr, "tidemarkctl: progs: %s\n",
			(na == -E2BIG || nb == -E2BIG) ? "more than 128 struct_ops programs"
						       : strerror(-(na < 0 ? na : nb)));
		return 1;
	}
	if (!nb) {
		fprintf(stderr, "tidemarkctl: progs: no sched_ext scheduler loaded\n");
		return 1;
	}
	if (json)
		printf("{\"seconds\":%.3f,\"progs\":[", secs);
	else
		printf("%-32s %12s %14s %10s\n", "callback", "calls", "run time ns", "ns/call");
	for (int i = 0; i < nb; i++) {
		__u64 cnt = b[i].cnt, ns = b[i].ns;

		/* counted from the first snapshot (a program new since: from 0) */
		for (int k = 0; k < na; k++)
			if (a[k].id == b[i].id) {
				cnt -= a[k].cnt;
				ns -= a[k].ns;
				break;
			}
		if (json)
			printf("%s{\"id\":%u,\"name\":\"%s\",\"calls\":%llu,\"run_ns\":%llu,"
			       "\"ns_per_call\":%.1f}",
			       i ? "," : "", b[i].id, b[i].name, (unsigned long long)cnt,
			       (unsigned long long)ns, cnt ? (double)ns / cnt : 0.0);
		else
			printf("%-32s %12llu %14llu %10.1f\n", b[i].name, (unsigned long long)cnt,
			       (unsigned long long)ns, cnt ? (double)ns / cnt : 0.0);
	}
	if (json)
		printf("]}\n");
	return rc;
}
