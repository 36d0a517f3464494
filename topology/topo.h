/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cache-domain discovery: the L3 domains (a CCX on AMD Zen) of this machine,
 * of an hwloc XML export or of an hwloc synthetic description, found with
 * hwloc and cross-checked against sysfs. Keyed on the layout only, never on
 * the CPU vendor (VMs report other vendors). No exit(): errors come back with
 * a message in the caller's buffer.
 */
#ifndef __TM_TOPO_H
#define __TM_TOPO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TM_TOPO_MAX_CPUS    512
#define TM_TOPO_MAX_DOMAINS 256

enum tm_domain_kind {
	TM_DOMAIN_L3 = 3,
	TM_DOMAIN_L2 = 2,
	TM_DOMAIN_PACKAGE = 0, /* no shared cache found: one domain per package */
};

/* "L3", "L2" or "package": the one name table. */
const char *tm_domain_kind_name(enum tm_domain_kind k);

struct tm_cpuset {
	uint64_t bits[TM_TOPO_MAX_CPUS / 64];
};

static inline void tm_cpuset_set(struct tm_cpuset *s, unsigned int cpu)
{
	if (cpu < TM_TOPO_MAX_CPUS)
		s->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

static inline bool tm_cpuset_test(const struct tm_cpuset *s, unsigned int cpu)
{
	return cpu < TM_TOPO_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

static inline unsigned int tm_cpuset_count(const struct tm_cpuset *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < TM_TOPO_MAX_CPUS / 64; i++)
		n += __builtin_popcountll(s->bits[i]);
	return n;
}

struct tm_domain {
	int id;			 /* 0.. in the order hwloc lists them */
	struct tm_cpuset cpus;	 /* every PU of the domain (SMT siblings included) */
	struct tm_cpuset online; /* those that are online (allowed) now */
	unsigned int nr_cores;
	uint64_t cache_bytes; /* 0 for package domains */
	int numa;	      /* first NUMA node covering it, -1 if none */
	int package;	      /* package (socket) index, -1 if unknown */
};

struct tm_topology {
	enum tm_domain_kind kind;
	int nr_domains;
	unsigned int nr_cpus; /* PUs in the machine (online or not) */
	unsigned int nr_online;
	bool symmetric; /* every domain has the same number of PUs */
	/* CPUs of the machine in no domain: offline ones whose caches the
	 * kernel no longer reports (placement must not count on them) */
	struct tm_cpuset unplaced;
	char source[128]; /* "this machine", an XML path or a synthetic description */
	struct tm_domain d[TM_TOPO_MAX_DOMAINS];
	/* SMT: the core of each CPU (0.. in hwloc's order, -1 for a CPU in no
	 * core), so siblings are the CPUs of one core whatever their numbers
	 * (Linux numbers a Zen core's threads c and c + cores) */
	unsigned int nr_cores;
	unsigned int threads_per_core; /* most PUs of any core; 1: no SMT */
	int16_t core_of[TM_TOPO_MAX_CPUS];
};

/* The CPUs of @cpu's core, itself included (empty when unknown). */
void tm_topo_siblings(const struct tm_topology *t, unsigned int cpu, struct tm_cpuset *s);

/*
 * Load the cache domains. @input NULL: this machine. Otherwise an existing
 * file is read as an hwloc XML export, anything else as an hwloc synthetic
 * description ("pack:1 l3:8 core:8 pu:2"). -1 with a message on bad input.
 */
int tm_topo_load(const char *input, struct tm_topology *t, char *err, size_t errlen);

/*
 * Compare with sysfs (root: "/sys/devices/system/cpu" or a copy of it):
 * every online CPU's cache/index3/shared_cpu_list must equal its domain's
 * online CPUs, and its topology/thread_siblings_list its core's online
 * CPUs. Writes one line per disagreement into @report and returns how many
 * there were; -1 if sysfs has neither.
 */
int tm_topo_check_sysfs(const struct tm_topology *t, const char *root, char *report, size_t len);

/* "0-3,8-11" style list of a set into @buf. */
void tm_cpuset_format(const struct tm_cpuset *s, char *buf, size_t len);

/* Parse a kernel CPU list ("0-3,8,10-11"); -1 when malformed. */
int tm_cpuset_parse(const char *list, struct tm_cpuset *s);

/* Print the domain map, as text or JSON. */
void tm_topo_print(const struct tm_topology *t, bool json, FILE *f);
#endif
