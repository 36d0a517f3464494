/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interference signals of one cgroup, as cumulative counters the caller
 * turns into rates: PSI totals, CPU delay of its threads (taskstats over
 * generic netlink, /proc/TID/schedstat when taskstats is not allowed), and
 * cycles/instructions from perf where a PMU exists. Errors are
 * returned; nothing here exits.
 */
#ifndef __TM_INTERFERENCE_SIGNALS_H
#define __TM_INTERFERENCE_SIGNALS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "some" total stall (us) of @res ("cpu", "memory") of cgroup dir @dir. */
int tm_psi_some_us(const char *dir, const char *res, uint64_t *us);

/* Thread ids of cgroup dir @dir (cgroup.threads): count, at most @max. */
int tm_cg_threads(const char *dir, pid_t *tids, int max);

enum tm_delay_source { TM_DELAY_NONE, TM_DELAY_TASKSTATS, TM_DELAY_SCHEDSTAT };
const char *tm_delay_source_name(enum tm_delay_source s);

struct tm_delay {
	enum tm_delay_source src;
	void *sk; /* struct nl_sock * */
	int family;
	char why[160]; /* why taskstats is not used */
};

/* Choose the source: taskstats when the netlink family answers and the
 * kernel accounts delays (kernel.task_delayacct=1), else schedstat. */
void tm_delay_open(struct tm_delay *d);
void tm_delay_close(struct tm_delay *d);
/* Summed CPU delay (waiting on a run queue) of the threads of @dir, ns. */
int tm_delay_cg_ns(struct tm_delay *d, const char *dir, uint64_t *ns);

/* Cycles and instructions of a cgroup on every CPU (perf, PERF_FLAG_PID_CGROUP). */
#define TM_CPI_MAX_CPUS 256
struct tm_cpi {
	int ncpu;
	int fd_cyc[TM_CPI_MAX_CPUS], fd_ins[TM_CPI_MAX_CPUS];
};
/* 0, or -errno: -ENOENT/-EOPNOTSUPP mean no PMU (most VMs). */
int tm_cpi_open(struct tm_cpi *c, const char *dir);
void tm_cpi_close(struct tm_cpi *c);
int tm_cpi_read(const struct tm_cpi *c, uint64_t *cycles, uint64_t *instructions);
/* Does this machine count cycles at all? @why says why not. */
bool tm_pmu_available(char *why, size_t len);
#endif
