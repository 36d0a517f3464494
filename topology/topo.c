// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "topo.h"

static void from_hwloc(hwloc_const_bitmap_t in, struct tm_cpuset *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	hwloc_bitmap_foreach_begin(i, in)
	{
		tm_cpuset_set(out, (unsigned int)i);
	}
	hwloc_bitmap_foreach_end();
}

/* The PUs a synthetic description makes, saturated above TM_TOPO_MAX_CPUS:
 * the product of its arities, the numbers after a ':' or opening a word
 * ("pack:2 l3:4 core:8 pu:2", "2 4 8 2"; hwloc also takes "co:32L3:4");
 * may count too many, never too few. hwloc would build every object before we
 * could refuse the result (24,000 PUs took tens of seconds). */
static unsigned long synthetic_pus(const char *d)
{
	unsigned long n = 1;

	for (const char *p = d; *p; p++) {
		unsigned long a;
		char *end;

		/* attributes ("(memory=1GB)", "indexes=0,1") follow '=' or ',';
		 * brackets are not trusted to close */
		if (p > d && p[-1] != ':' && !isspace((unsigned char)p[-1]) && p[-1] != '(' &&
		    p[-1] != '[')
			continue;
		/* blanks and a sign first (":+72372"), in base 0 ("0x8600" is
		 * 34,304) or 10 ("000484811979" is octal 04 and then digits),
		 * whichever is more: too many is safe, too few is not; a '-'
		 * reads as huge: refused */
		a = strtoul(p, &end, 0);
		{
			char *end10;
			unsigned long a10 = strtoul(p, &end10, 10);

			if (a10 > a)
				a = a10;
			if (end10 > end)
				end = end10;
		}
		if (end == p)
			continue;
		p = end - 1;
		/* a 0 here is an attribute hwloc skips ("(0..."), not a count
		 * that empties the machine: it must not zero the product */
		if (!a)
			continue;
		if (a > TM_TOPO_MAX_CPUS || n > TM_TOPO_MAX_CPUS / a)
			return TM_TOPO_MAX_CPUS + 1UL;
		n *= a;
	}
	return n;
}

int tm_topo_load(const char *input, struct tm_topology *t, char *err, size_t errlen)
{
	static const struct {
		hwloc_obj_type_t type;
		enum tm_domain_kind kind;
	} levels[] = {
		{HWLOC_OBJ_L3CACHE, TM_DOMAIN_L3},
		{HWLOC_OBJ_L2CACHE, TM_DOMAIN_L2},
		{HWLOC_OBJ_PACKAGE, TM_DOMAIN_PACKAGE},
	};
	hwloc_topology_t topo;
	hwloc_const_bitmap_t allowed;
	struct stat st;
	int n = 0, nnuma;

	memset(t, 0, sizeof(*t));
	if (hwloc_topology_init(&topo)) {
		snprintf(err, errlen, "hwloc: cannot initialise: %s", strerror(errno));
		return -1;
	}
	if (input && *input) {
		if (!stat(input, &st)) {
			if (hwloc_topology_set_xml(topo, input)) {
				snprintf(err, errlen, "%s: not an hwloc XML export", input);
				goto fail;
			}
		} else if (strchr(input, '/') || strstr(input, ".xml")) {
			snprintf(err, errlen, "%s: %s", input, strerror(errno));
			goto fail;
		} else if (synthetic_pus(input) > TM_TOPO_MAX_CPUS) {
			snprintf(err, errlen, "'%s': more than %d CPUs", input, TM_TOPO_MAX_CPUS);
			goto fail;
		} else if (hwloc_topology_set_synthetic(topo, input)) {
			snprintf(err, errlen,
				 "'%s': neither a file nor a valid hwloc synthetic description "
				 "(e.g. \"pack:1 l3:8 core:8 pu:2\")",
				 input);
			goto fail;
		}
		snprintf(t->source, sizeof(t->source), "%s", input);
	} else {
		snprintf(t->source, sizeof(t->source), "this machine");
	}
	if (hwloc_topology_load(topo)) {
		snprintf(err, errlen, "%s: hwloc cannot load it: %s", t->source, strerror(errno));
		goto fail;
	}
	allowed = hwloc_topology_get_allowed_cpuset(topo);
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]) && !n; l++) {
		n = hwloc_get_nbobjs_by_type(topo, levels[l].type);
		t->kind = levels[l].kind;
	}
	if (n <= 0) {
		snprintf(err, errlen, "%s: no cache or package objects at all", t->source);
		goto fail;
	}
	if (n > TM_TOPO_MAX_DOMAINS) {
		snprintf(err, errlen, "%s: %d domains, more than the %d supported", t->source, n,
			 TM_TOPO_MAX_DOMAINS);
		goto fail;
	}
	if (hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo)) >= TM_TOPO_MAX_CPUS) {
		snprintf(err, errlen, "%s: CPU numbers reach %d, more than the %d supported",
			 t->source, hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo)),
			 TM_TOPO_MAX_CPUS);
		goto fail;
	}
	nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	t->nr_domains = n;
	t->symmetric = true;
	for (int i = 0; i < n; i++) {
		hwloc_obj_type_t type = t->kind == TM_DOMAIN_L3	  ? HWLOC_OBJ_L3CACHE
					: t->kind == TM_DOMAIN_L2 ? HWLOC_OBJ_L2CACHE
								  : HWLOC_OBJ_PACKAGE;
		hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, i), pkg;
		struct tm_domain *d = &t->d[i];
		hwloc_bitmap_t on = hwloc_bitmap_alloc();

		d->id = i;
		from_hwloc(o->complete_cpuset ? o->complete_cpuset : o->cpuset, &d->cpus);
		hwloc_bitmap_and(on, o->cpuset, allowed);
		from_hwloc(on, &d->online);
		hwloc_bitmap_free(on);
		d->nr_cores =
			hwloc_get_nbobjs_inside_cpuset_by_type(topo, o->cpuset, HWLOC_OBJ_CORE);
		d->cache_bytes = t->kind == TM_DOMAIN_PACKAGE ? 0 : o->attr->cache.size;
		pkg = t->kind == TM_DOMAIN_PACKAGE
			      ? o
			      : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, o);
		d->package = pkg ? (int)pkg->logical_index : -1;
		d->numa = -1;
		for (int k = 0; k < nnuma; k++) {
			hwloc_obj_t nn = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, k);

			if (nn->cpuset && hwloc_bitmap_intersects(nn->cpuset, o->cpuset)) {
				d->numa = (int)nn->os_index;
				break;
			}
		}
		if (tm_cpuset_count(&d->cpus) != tm_cpuset_count(&t->d[0].cpus))
			t->symmetric = false;
		t->nr_online += tm_cpuset_count(&d->online);
	}
	for (unsigned int c = 0; c < TM_TOPO_MAX_CPUS; c++)
		t->core_of[c] = -1;
	t->threads_per_core = 1;
	t->nr_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	for (unsigned int k = 0; k < t->nr_cores; k++) {
		hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, k);
		struct tm_cpuset pus = {};
		unsigned int w;

		from_hwloc(core->complete_cpuset ? core->complete_cpuset : core->cpuset, &pus);
		w = tm_cpuset_count(&pus);
		if (w > t->threads_per_core)
			t->threads_per_core = w;
		for (unsigned int c = 0; c < TM_TOPO_MAX_CPUS; c++)
			if (tm_cpuset_test(&pus, c))
				t->core_of[c] = (int16_t)k;
	}
	from_hwloc(hwloc_topology_get_complete_cpuset(topo), &t->unplaced);
	t->nr_cpus = tm_cpuset_count(&t->unplaced);
	for (int i = 0; i < n; i++)
		for (unsigned int w = 0; w < TM_TOPO_MAX_CPUS / 64; w++)
			t->unplaced.bits[w] &= ~t->d[i].cpus.bits[w];
	hwloc_topology_destroy(topo);
	return 0;
fail:
	hwloc_topology_destroy(topo);
	return -1;
}

int tm_cpuset_parse(const char *list, struct tm_cpuset *s)
{
	const char *p = list;

	memset(s, 0, sizeof(*s));
	while (*p && *p != '\n') {
		char *end;
		unsigned long a, b;

		errno = 0;
		a = strtoul(p, &end, 10);
		if (end == p || errno || a >= TM_TOPO_MAX_CPUS)
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (end == p + 1 || errno || b < a || b >= TM_TOPO_MAX_CPUS)
				return -1;
			p = end;
		}
		for (unsigned long c = a; c <= b; c++)
			tm_cpuset_set(s, c);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

void tm_cpuset_format(const struct tm_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (unsigned int c = 0; c < TM_TOPO_MAX_CPUS; c++) {
		unsigned int e = c;

		if (!tm_cpuset_test(s, c))
			continue;
		while (e + 1 < TM_TOPO_MAX_CPUS && tm_cpuset_test(s, e + 1))
			e++;
		if (off < len)
			off += snprintf(buf + off, len - off, off ? ",%u" : "%u", c);
		if (e > c && off < len)
			off += snprintf(buf + off, len - off, "-%u", e);
		c = e;
	}
}

/* The shared_cpu_list of @cpu's level-3 cache in sysfs; -1 if none. */
static int sysfs_l3(const char *root, unsigned int cpu, struct tm_cpuset *s)
{
	for (int i = 0; i < 10; i++) {
		char path[256], buf[4096];
		FILE *f;
		int level = -1;

		snprintf(path, sizeof(path), "%s/cpu%u/cache/index%d/level", root, cpu, i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &level) != 1)
			level = -1;
		fclose(f);
		if (level != 3)
			continue;
		snprintf(path, sizeof(path), "%s/cpu%u/cache/index%d/shared_cpu_list", root, cpu,
			 i);
		f = fopen(path, "r");
		if (!f)
			return -1;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			return -1;
		}
		fclose(f);
		return tm_cpuset_parse(buf, s);
	}
	return -1;
}

/* A CPU list file (thread_siblings_list): 0, or -1 when absent or bad. */
static int sysfs_list(const char *path, struct tm_cpuset *s)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		ret = tm_cpuset_parse(buf, s);
	fclose(f);
	return ret;
}

int tm_topo_check_sysfs(const struct tm_topology *t, const char *root, char *report, size_t len)
{
	size_t off = 0;
	int bad = 0, seen = 0;

	if (report && len)
		report[0] = 0;
	for (int i = 0; i < t->nr_domains; i++) {
		const struct tm_domain *d = &t->d[i];

		for (unsigned int c = 0; c < TM_TOPO_MAX_CPUS; c++) {
			struct tm_cpuset s, sib;
			char a[256], b[256], path[256];

			if (!tm_cpuset_test(&d->online, c))
				continue;
			if (t->kind == TM_DOMAIN_L3 && !sysfs_l3(root, c, &s)) {
				seen++;
				if (memcmp(&s, &d->online, sizeof(s))) {
					bad++;
					tm_cpuset_format(&d->online, a, sizeof(a));
					tm_cpuset_format(&s, b, sizeof(b));
					if (report && off < len)
						off += snprintf(
							report + off, len - off,
							"cpu%u: hwloc L3 domain %d has CPUs "
							"%s, sysfs shares its L3 with %s\n",
							c, d->id, a, b);
				}
			}
			snprintf(path, sizeof(path), "%s/cpu%u/topology/thread_siblings_list", root,
				 c);
			if (sysfs_list(path, &s))
				continue;
			seen++;
			tm_topo_siblings(t, c, &sib);
			/* sysfs lists online siblings only */
			for (unsigned int w = 0; w < TM_TOPO_MAX_CPUS / 64; w++)
				sib.bits[w] &= d->online.bits[w];
			if (!memcmp(&s, &sib, sizeof(s)))
				continue;
			bad++;
			tm_cpuset_format(&sib, a, sizeof(a));
			tm_cpuset_format(&s, b, sizeof(b));
			if (report && off < len)
				off += snprintf(report + off, len - off,
						"cpu%u: hwloc's core has CPUs %s, sysfs's thread "
						"siblings are %s\n",
						c, a, b);
		}
	}
	return seen ? bad : -1;
}

void tm_topo_siblings(const struct tm_topology *t, unsigned int cpu, struct tm_cpuset *s)
{
	memset(s, 0, sizeof(*s));
	if (cpu >= TM_TOPO_MAX_CPUS || t->core_of[cpu] < 0)
		return;
	for (unsigned int c = 0; c < TM_TOPO_MAX_CPUS; c++)
		if (t->core_of[c] == t->core_of[cpu])
			tm_cpuset_set(s, c);
}

const char *tm_domain_kind_name(enum tm_domain_kind k)
{
	return k == TM_DOMAIN_L3 ? "L3" : k == TM_DOMAIN_L2 ? "L2" : "package";
}

void tm_topo_print(const struct tm_topology *t, bool json, FILE *f)
{
	char cpus[2048], online[2048], kind[16];

	/* JSON has the kind in lower case ("l3") */
	for (size_t i = 0; i < sizeof(kind); i++) {
		kind[i] = tolower((unsigned char)tm_domain_kind_name(t->kind)[i]);
		if (!kind[i])
			break;
	}
	if (json) {
		fprintf(f, "{\"source\":\"");
		for (const char *c = t->source; *c; c++)
			fprintf(f, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
		tm_cpuset_format(&t->unplaced, cpus, sizeof(cpus));
		fprintf(f,
			"\",\"kind\":\"%s\",\"cpus\":%u,\"online\":%u,\"symmetric\":%s,"
			"\"cores\":%u,\"threads_per_core\":%u,\"unplaced\":\"%s\",\"domains\":[",
			kind, t->nr_cpus, t->nr_online, t->symmetric ? "true" : "false",
			t->nr_cores, t->threads_per_core, cpus);
		for (int i = 0; i < t->nr_domains; i++) {
			const struct tm_domain *d = &t->d[i];

			tm_cpuset_format(&d->cpus, cpus, sizeof(cpus));
			tm_cpuset_format(&d->online, online, sizeof(online));
			fprintf(f,
				"%s{\"id\":%d,\"cpus\":\"%s\",\"online\":\"%s\",\"nr_cpus\":%u,"
				"\"cores\":%u,"
				"\"cache_bytes\":%llu,\"numa\":%d,\"package\":%d}",
				i ? "," : "", d->id, cpus, online, tm_cpuset_count(&d->cpus),
				d->nr_cores, (unsigned long long)d->cache_bytes, d->numa,
				d->package);
		}
		fprintf(f, "]}\n");
		return;
	}
	fprintf(f, "%s: %d %s%s domains, %u CPUs (%u online)%s, %u cores of %s%u thread%s\n",
		t->source, t->nr_domains, tm_domain_kind_name(t->kind),
		t->kind == TM_DOMAIN_L3	  ? ""
		: t->kind == TM_DOMAIN_L2 ? " (no L3 found)"
					  : " (no shared cache found)",
		t->nr_cpus, t->nr_online, t->symmetric ? "" : ", asymmetric", t->nr_cores,
		t->threads_per_core > 1 ? "up to " : "", t->threads_per_core,
		t->threads_per_core > 1 ? "s" : "");
	if (tm_cpuset_count(&t->unplaced)) {
		tm_cpuset_format(&t->unplaced, cpus, sizeof(cpus));
		fprintf(f, "CPUs %s: offline, domain unknown\n", cpus);
	}
	fprintf(f, "%-4s %-7s %-6s %-8s %-5s %-8s %s\n", "id", "package", "numa", "cache", "cores",
		"cpus", "cpu list (online)");
	for (int i = 0; i < t->nr_domains; i++) {
		const struct tm_domain *d = &t->d[i];
		bool partly = memcmp(&d->cpus, &d->online, sizeof(d->cpus));
		char cache[32] = "-";

		tm_cpuset_format(&d->cpus, cpus, sizeof(cpus));
		tm_cpuset_format(&d->online, online, sizeof(online));
		if (d->cache_bytes)
			snprintf(cache, sizeof(cache), "%lluK",
				 (unsigned long long)d->cache_bytes >> 10);
		fprintf(f, "%-4d %-7d %-6d %-8s %-5u %-8u %s%s%s%s\n", d->id, d->package, d->numa,
			cache, d->nr_cores, tm_cpuset_count(&d->cpus), cpus, partly ? " (" : "",
			partly ? online : "", partly ? ")" : "");
	}
}
