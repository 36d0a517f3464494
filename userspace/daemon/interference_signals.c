// SPDX-License-Identifier: GPL-2.0
/* Interference signals of a cgroup: see interference_signals.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "interference_signals.h"

int tm_psi_some_us(const char *dir, const char *res, uint64_t *us)
{
	char p[4096], line[256];
	FILE *f;
	int ret = -1;

	snprintf(p, sizeof(p), "%s/%s.pressure", dir, res);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *t = strstr(line, "total=");

		if (!strncmp(line, "some ", 5) && t) {
			*us = strtoull(t + 6, NULL, 10);
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int tm_cg_threads(const char *dir, pid_t *tids, int max)
{
	char p[4096];
	long v;
	FILE *f;
	int n = 0;

	snprintf(p, sizeof(p), "%s/cgroup.threads", dir);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (n < max && fscanf(f, "%ld", &v) == 1)
		tids[n++] = (pid_t)v;
	fclose(f);
	return n;
}

const char *tm_delay_source_name(enum tm_delay_source s)
{
	return s == TM_DELAY_TASKSTATS	 ? "taskstats"
	       : s == TM_DELAY_SCHEDSTAT ? "schedstat"
					 : "none";
}

static bool delayacct_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/task_delayacct", "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 1;
}

void tm_delay_open(struct tm_delay *d)
{
	struct nl_sock *sk;
	int fam;

	memset(d, 0, sizeof(*d));
	d->src = TM_DELAY_SCHEDSTAT;
	if (!delayacct_on()) {
		snprintf(d->why, sizeof(d->why),
			 "kernel.task_delayacct is 0 (delay accounting off)");
		return;
	}
	sk = nl_socket_alloc();
	if (!sk) {
		snprintf(d->why, sizeof(d->why), "no memory for a netlink socket");
		return;
	}
	if (genl_connect(sk)) {
		snprintf(d->why, sizeof(d->why), "generic netlink connect failed");
		nl_socket_free(sk);
		return;
	}
	fam = genl_ctrl_resolve(sk, TASKSTATS_GENL_NAME);
	if (fam < 0) {
		snprintf(d->why, sizeof(d->why), "no %s netlink family: %s", TASKSTATS_GENL_NAME,
			 nl_geterror(fam));
		nl_socket_free(sk);
		return;
	}
	/* one request, one reply: no ACKs to drain */
	nl_socket_disable_auto_ack(sk);
	d->sk = sk;
	d->family = fam;
	d->src = TM_DELAY_TASKSTATS;
}

void tm_delay_close(struct tm_delay *d)
{
	if (d->sk)
		nl_socket_free(d->sk);
	d->sk = NULL;
	d->src = TM_DELAY_NONE;
}

struct ts_reply {
	uint64_t delay;
	bool found;
};

static int ts_parse(struct nl_msg *msg, void *arg)
{
	struct ts_reply *r = arg;
	struct nlattr *a[TASKSTATS_TYPE_MAX + 1], *in[TASKSTATS_TYPE_MAX + 1];
	struct nlattr *agg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, TASKSTATS_TYPE_MAX, NULL))
		return NL_SKIP;
	agg = a[TASKSTATS_TYPE_AGGR_PID];
	if (!agg || nla_parse_nested(in, TASKSTATS_TYPE_MAX, agg, NULL) ||
	    !in[TASKSTATS_TYPE_STATS])
		return NL_SKIP;
	/* the kernel's struct may be newer (longer) than ours: the prefix is stable */
	if ((size_t)nla_len(in[TASKSTATS_TYPE_STATS]) <
	    offsetof(struct taskstats, cpu_delay_total) + sizeof(__u64))
		return NL_SKIP;
	r->delay = ((struct taskstats *)nla_data(in[TASKSTATS_TYPE_STATS]))->cpu_delay_total;
	r->found = true;
	return NL_OK;
}

static int schedstat_delay(pid_t tid, uint64_t *ns)
{
	char p[64];
	unsigned long long run, wait;
	FILE *f;
	int ok;

	snprintf(p, sizeof(p), "/proc/%d/schedstat", (int)tid);
	f = fopen(p, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
	fclose(f);
	if (!ok)
		return -1;
	*ns = wait;
	return 0;
}

static int tm_delay_tid_ns(struct tm_delay *d, pid_t tid, uint64_t *ns)
{
	struct ts_reply r = {};
	struct nl_msg *msg;
	int err;

	if (d->src != TM_DELAY_TASKSTATS)
		return schedstat_delay(tid, ns);
	msg = nlmsg_alloc();
	if (!msg)
		return -1;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, d->family, 0, 0, TASKSTATS_CMD_GET,
			 TASKSTATS_VERSION) ||
	    nla_put_u32(msg, TASKSTATS_CMD_ATTR_PID, (uint32_t)tid)) {
		nlmsg_free(msg);
		return -1;
	}
	nl_socket_modify_cb(d->sk, NL_CB_VALID, NL_CB_CUSTOM, ts_parse, &r);
	err = nl_send_auto(d->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return -1;
	/* an exited thread answers with an error message: not found */
	err = nl_recvmsgs_default(d->sk);
	if (err < 0 || !r.found)
		return -1;
	*ns = r.delay;
	return 0;
}

int tm_delay_cg_ns(struct tm_delay *d, const char *dir, uint64_t *ns)
{
	static pid_t tids[4096];
	int n = tm_cg_threads(dir, tids, 4096);
	uint64_t sum = 0, v;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (!tm_delay_tid_ns(d, tids[i], &v))
			sum += v;
	*ns = sum;
	return 0;
}

static int perf_open(uint64_t config, int cgfd, int cpu)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(a),
		.config = config,
	};

	return (int)syscall(SYS_perf_event_open, &a, cgfd, cpu, -1, PERF_FLAG_PID_CGROUP);
}

bool tm_pmu_available(char *why, size_t len)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.exclude_kernel = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	if (fd < 0) {
		snprintf(why, len, "perf cycles: %s", strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

int tm_cpi_open(struct tm_cpi *c, const char *dir)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int cgfd, err = 0;

	memset(c, 0, sizeof(*c));
	if (n > TM_CPI_MAX_CPUS)
		n = TM_CPI_MAX_CPUS;
	cgfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (cgfd < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		c->fd_cyc[i] = perf_open(PERF_COUNT_HW_CPU_CYCLES, cgfd, i);
		c->fd_ins[i] =
			c->fd_cyc[i] < 0 ? -1 : perf_open(PERF_COUNT_HW_INSTRUCTIONS, cgfd, i);
		if (c->fd_cyc[i] < 0 || c->fd_ins[i] < 0) {
			err = -errno;
			if (c->fd_cyc[i] >= 0)
				close(c->fd_cyc[i]);
			/* an offline CPU has no counter: skip it, fail on the rest */
			if (err == -ENODEV) {
				c->fd_cyc[i] = c->fd_ins[i] = -1;
				err = 0;
				continue;
			}
			c->ncpu = i;
			tm_cpi_close(c);
			close(cgfd);
			return err;
		}
	}
	c->ncpu = (int)n;
	close(cgfd);
	return 0;
}

void tm_cpi_close(struct tm_cpi *c)
{
	for (int i = 0; i < c->ncpu; i++) {
		if (c->fd_cyc[i] >= 0)
			close(c->fd_cyc[i]);
		if (c->fd_ins[i] >= 0)
			close(c->fd_ins[i]);
	}
	c->ncpu = 0;
}

int tm_cpi_read(const struct tm_cpi *c, uint64_t *cycles, uint64_t *instructions)
{
	uint64_t cy = 0, in = 0, v;

	for (int i = 0; i < c->ncpu; i++) {
		if (c->fd_cyc[i] < 0)
			continue;
		if (read(c->fd_cyc[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		cy += v;
		if (read(c->fd_ins[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		in += v;
	}
	*cycles = cy;
	*instructions = in;
	return 0;
}
