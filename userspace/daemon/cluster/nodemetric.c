// SPDX-License-Identifier: GPL-2.0
/*
 * Koordinator's NodeMetric from tidemarkd's samples (nodemetric.h).
 *
 * Every report sample: node CPU (the report's /proc/stat rate) and memory in
 * the three forms the collect policy may ask for; each pod cgroup of the
 * kubelet's tree (kubepods.slice or kubepods, QoS level and pod level) and
 * each ONLINE cgroup outside it: cumulative CPU time and memory. nodeUsage
 * and podUsage are averages over aggregateDurationSeconds (CPU: counter
 * growth over the span; memory: mean of the samples), systemUsage is node
 * minus the pods (as Koordinator defines it), aggregatedNodeUsages the
 * avg/p50/p90/p95/p99 of the node samples over each duration, reported once
 * samples cover the duration. prodReclaimableMetric: what prod pods request
 * above their peak usage in the window.
 */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actuate.h"
#include "audit.h"
#include "buf.h"
#include "daemon.h"
#include "nodemetric.h"
#include "quantity.h"
#include "rules.h"
#include "tmlib.h"

#define NODE_RING  4096 /* node samples: 68 min at 1 s, 11 h at 10 s */
#define TRACK_RING 1024 /* per pod: the aggregate window at most */
#define MAX_TRACKS 4096

struct pt {
	uint64_t t_us, cpu_us, mem;
};

/* A pod cgroup or an ONLINE host cgroup followed from sample to sample. */
struct track {
	char path[TM_CFG_PATH_MAX];
	char uid[40];	   /* "" for a host cgroup */
	char kube_qos[16]; /* from where the kubelet put it */
	uint32_t gen;	   /* the last sample that saw it */
	uint32_t head, n, cap;
	struct pt *ring;
};

struct node_pt {
	uint64_t t_us;
	double mcpu;
	uint64_t mem[3]; /* TM_NM_MEM_* */
};

static struct {
	pthread_mutex_t lock; /* everything below: the sampler, HTTP and cluster threads */
	char node[254];
	struct tm_nm_policy pol;
	struct node_pt ring[NODE_RING];
	uint32_t head, n;
	struct track *tr;
	int nr, cap;
	uint32_t gen;
	uint64_t at_realtime;
	double scratch[NODE_RING];
	char msg[512];
	bool full; /* a cgroup found no track this sample (MAX_TRACKS) */
} metric = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tm_nm_policy_default(struct tm_nm_policy *p)
{
	*p = (struct tm_nm_policy){.aggregate_s = 300,
				   .report_s = 60,
				   .durations = {300, 600, 1800},
				   .nr_durations = 3,
				   .mem = TM_NM_MEM_NO_CACHE};
}

int tm_nm_policy_from_spec(json_t *spec, struct tm_nm_policy *p, char *err, size_t errlen)
{
	struct tm_nm_policy q;
	json_t *mp, *v, *a, *d;
	size_t i;

	tm_nm_policy_default(&q);
	mp = spec ? json_object_get(spec, "metricCollectPolicy") : NULL;
	if (!mp || json_is_null(mp)) {
		*p = q;
		return 0;
	}
	if (!json_is_object(mp)) {
		snprintf(err, errlen, "spec.metricCollectPolicy: must be an object");
		return -1;
	}
	if ((v = json_object_get(mp, "aggregateDurationSeconds")) && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 86400) {
			snprintf(err, errlen,
				 "spec.metricCollectPolicy.aggregateDurationSeconds: must be "
				 "1-86400");
			return -1;
		}
		q.aggregate_s = (uint32_t)json_integer_value(v);
	}
	if ((v = json_object_get(mp, "reportIntervalSeconds")) && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 86400) {
			snprintf(err, errlen,
				 "spec.metricCollectPolicy.reportIntervalSeconds: must be 1-86400");
			return -1;
		}
		q.report_s = (uint32_t)json_integer_value(v);
	}
	if ((v = json_object_get(mp, "nodeAggregatePolicy")) && !json_is_null(v)) {
		a = json_is_object(v) ? json_object_get(v, "durations") : NULL;
		if (!json_is_object(v) || (a && !json_is_array(a) && !json_is_null(a))) {
			snprintf(
				err, errlen,
				"spec.metricCollectPolicy.nodeAggregatePolicy.durations: must be a "
				"list of durations");
			return -1;
		}
		if (json_is_array(a)) {
			if (json_array_size(a) > TM_NM_MAX_DURATIONS) {
				snprintf(err, errlen,
					 "spec.metricCollectPolicy.nodeAggregatePolicy.durations: "
					 "more than %d",
					 TM_NM_MAX_DURATIONS);
				return -1;
			}
			q.nr_durations = 0;
			json_array_foreach(a, i, d)
			{
				uint32_t s;

				if (!json_is_string(d) ||
				    tm_duration_parse(json_string_value(d), &s)) {
					snprintf(err, errlen,
						 "spec.metricCollectPolicy.nodeAggregatePolicy."
						 "durations[%zu]: not a duration of 1 s to 30 days",
						 i);
					return -1;
				}
				q.durations[q.nr_durations++] = s;
			}
		}
	}
	if ((v = json_object_get(mp, "nodeMemoryCollectPolicy")) && !json_is_null(v)) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (!strcmp(s, "usageWithoutPageCache"))
			q.mem = TM_NM_MEM_NO_CACHE;
		else if (!strcmp(s, "usageWithHotPageCache"))
			q.mem = TM_NM_MEM_HOT_CACHE;
		else if (!strcmp(s, "usageWithPageCache"))
			q.mem = TM_NM_MEM_CACHE;
		else {
			snprintf(err, errlen,
				 "spec.metricCollectPolicy.nodeMemoryCollectPolicy: must be "
				 "usageWithoutPageCache, usageWithHotPageCache or "
				 "usageWithPageCache");
			return -1;
		}
	}
	*p = q;
	return 0;
}

static const char *const mem_policy_name[] = {"usageWithoutPageCache", "usageWithHotPageCache",
					      "usageWithPageCache"};

/* ---- sampling ---- */

void tm_rfc3339(char *out, size_t len, uint64_t t)
{
	time_t tt = (time_t)t;
	struct tm tmv;

	gmtime_r(&tt, &tmv);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

void tm_nm_pod_prom(struct tm_buf *b)
{
	tm_prom_help(b, "gauge", "tidemark_pod_info",
		     "A pod's cgroup (label cgroup, as the per-cgroup series name it) with the "
		     "pod's namespace and name from the pod list (empty until listed) and UID.");
	pthread_mutex_lock(&metric.lock);
	for (int i = 0; i < metric.nr; i++) {
		const struct track *t = &metric.tr[i];
		char ns[64] = "", name[254] = "";

		if (!t->uid[0])
			continue; /* a host application's cgroup */
		tm_pod_name(t->uid, ns, sizeof(ns), name, sizeof(name));
		tm_bprintf(b, "tidemark_pod_info{cgroup=");
		tm_bprom_label(b, t->path);
		tm_bprintf(b, ",namespace=");
		tm_bprom_label(b, ns);
		tm_bprintf(b, ",pod=");
		tm_bprom_label(b, name);
		tm_bprintf(b, ",uid=");
		tm_bprom_label(b, t->uid);
		tm_bprintf(b, "} 1\n");
	}
	pthread_mutex_unlock(&metric.lock);
}

/* "2026-12-03T09:00:00Z" (metav1.Time) into Unix seconds; -1 otherwise. */
static int rfc3339_parse(const char *s, uint64_t *out)
{
	struct tm tm = {};
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	time_t t;

	if (!end)
		return -1;
	if (*end == '.') /* a fraction: whole seconds are enough here */
		end += 1 + strspn(end + 1, "0123456789");
	if (strcmp(end, "Z") || (t = timegm(&tm)) < 0)
		return -1;
	*out = (uint64_t)t;
	return 0;
}

bool tm_nm_other_writer(json_t *nm, const char *self, uint64_t now_s, uint32_t within_s, char *mgr,
			size_t len, uint64_t *at)
{
	json_t *mf = json_object_get(json_object_get(nm, "metadata"), "managedFields"), *e;
	bool found = false;
	size_t i;

	json_array_foreach(mf, i, e)
	{
		const char *m = json_string_value(json_object_get(e, "manager"));
		const char *sub = json_string_value(json_object_get(e, "subresource"));
		const char *t = json_string_value(json_object_get(e, "time"));
		uint64_t ts;

		if (!m || !strcmp(m, self) || !t || rfc3339_parse(t, &ts))
			continue;
		if (!(sub && !strcmp(sub, "status")) &&
		    !json_object_get(json_object_get(e, "fieldsV1"), "f:status"))
			continue; /* a writer of the spec or metadata only */
		if (ts + within_s < now_s || (found && ts <= *at))
			continue;
		snprintf(mgr, len, "%s", m);
		*at = ts;
		found = true;
	}
	return found;
}

const char *tm_nm_node(void)
{
	return metric.node;
}

void tm_nm_init(struct tm_daemon *d)
{
	const char *env = getenv("NODE_NAME");
	char host[256] = "";

	if (d->cfg.kubernetes.node_name[0])
		snprintf(metric.node, sizeof(metric.node), "%s", d->cfg.kubernetes.node_name);
	else if (env && *env)
		snprintf(metric.node, sizeof(metric.node), "%s", env);
	else if (!gethostname(host, sizeof(host) - 1))
		for (size_t i = 0; host[i] && i < sizeof(metric.node) - 1; i++)
			metric.node[i] = (char)tolower((unsigned char)host[i]);
	tm_nm_policy_default(&metric.pol);
	tm_pods_init(d->cfg.kubernetes.pods);
}

void tm_nm_set_policy(const struct tm_nm_policy *p)
{
	pthread_mutex_lock(&metric.lock);
	metric.pol = *p;
	pthread_mutex_unlock(&metric.lock);
}

void tm_nm_get_policy(struct tm_nm_policy *p)
{
	pthread_mutex_lock(&metric.lock);
	*p = metric.pol;
	pthread_mutex_unlock(&metric.lock);
}

/* MemTotal - MemAvailable, - MemFree, and the first plus Active(file). */
static int node_mem(uint64_t m[3])
{
	uint64_t tot = 0, avail = 0, mfree = 0, afile = 0, v;
	char line[256], key[64];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %" SCNu64, key, &v) == 2) {
			if (!strcmp(key, "MemTotal"))
				tot = v * 1024;
			else if (!strcmp(key, "MemAvailable"))
				avail = v * 1024;
			else if (!strcmp(key, "MemFree"))
				mfree = v * 1024;
			else if (!strcmp(key, "Active(file)"))
				afile = v * 1024;
		}
	fclose(f);
	m[TM_NM_MEM_NO_CACHE] = tot > avail ? tot - avail : 0;
	m[TM_NM_MEM_HOT_CACHE] = m[TM_NM_MEM_NO_CACHE] + afile;
	m[TM_NM_MEM_CACHE] = tot > mfree ? tot - mfree : 0;
	return 0;
}

/* A cgroup's memory as policy @pol counts it: memory.current less its page
 * cache (memory.stat file), less its inactive page cache, or all of it. */
static uint64_t cg_mem(const char *dir, int pol)
{
	__u64 cur = 0, file = 0, inact = 0;

	if (tm_cg_read_u64(dir, "memory.current", NULL, &cur))
		return 0;
	if (pol == TM_NM_MEM_CACHE)
		return cur;
	if (pol == TM_NM_MEM_NO_CACHE) {
		tm_cg_read_u64(dir, "memory.stat", "file", &file);
		return cur > file ? cur - file : 0;
	}
	tm_cg_read_u64(dir, "memory.stat", "inactive_file", &inact);
	return cur > inact ? cur - inact : 0;
}

/* The track of @path, added when new; tracks stay sorted by path (one
 * lookup per cgroup per sample: a scan was O(n^2) at many pods). */
static struct track *track_get(const char *path)
{
	int lo = 0, hi = metric.nr - 1;
	struct track *t;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(metric.tr[mid].path, path);

		if (!c)
			return &metric.tr[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	if (metric.nr >= MAX_TRACKS) {
		metric.full = true;
		return NULL;
	}
	if (metric.nr == metric.cap) {
		int nc = metric.cap ? metric.cap * 2 : 64;
		struct track *nv = realloc(metric.tr, sizeof(*nv) * nc);

		if (!nv)
			return NULL;
		metric.tr = nv;
		metric.cap = nc;
	}
	memmove(&metric.tr[lo + 1], &metric.tr[lo], sizeof(*metric.tr) * (metric.nr - lo));
	metric.nr++;
	t = &metric.tr[lo];
	memset(t, 0, sizeof(*t));
	snprintf(t->path, sizeof(t->path), "%s", path);
	return t;
}

static void track_add(struct track *t, uint32_t cap, uint64_t now_us, uint64_t cpu_us, uint64_t mem)
{
	if (t->cap != cap) {
		struct pt *nr = calloc(cap, sizeof(*nr));

		if (!nr)
			return;
		/* the newest samples carried over */
		for (uint32_t i = 0; i < t->n && i < cap; i++)
			nr[cap - 1 - i] = t->ring[(t->head + t->cap - 1 - i) % t->cap];
		t->n = t->n < cap ? t->n : cap;
		t->head = 0;
		free(t->ring);
		t->ring = nr;
		t->cap = cap;
		if (t->n < cap) { /* move them to the front: head is the next slot */
			memmove(nr, nr + cap - t->n, t->n * sizeof(*nr));
			t->head = t->n;
		}
	}
	t->ring[t->head] = (struct pt){now_us, cpu_us, mem};
	t->head = (t->head + 1) % t->cap;
	if (t->n < t->cap)
		t->n++;
}

/* Each pod's counter is stamped with the time it was read, not the scan's
 * start: a scan held up midway (a busy node) would otherwise credit the
 * delay to the pods read after it, a rate spike in their peak. */
static void sample_dir(const char *root, const char *rel, const char *kube_qos, uint32_t cap,
		       int pol)
{
	char dir[PATH_MAX], uid[40], sub[TM_CFG_PATH_MAX];
	struct dirent *e;
	DIR *dd;

	if (tm_cg_path(dir, sizeof(dir), root, rel, NULL) || !(dd = opendir(dir)))
		return;
	while ((e = readdir(dd))) {
		struct track *t;
		char pdir[PATH_MAX];
		__u64 cpu = 0;
		uint64_t at;

		/* one directory name: the pod's UID if it is a pod's */
		if (e->d_type != DT_DIR || tm_pod_uid(e->d_name, uid, sizeof(uid)) != 1)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name) >= (int)sizeof(sub) ||
		    tm_cg_path(pdir, sizeof(pdir), root, sub, NULL) ||
		    tm_cg_read_u64(pdir, "cpu.stat", "usage_usec", &cpu))
			continue;
		at = tm_now_ms() * 1000;
		t = track_get(sub);
		if (!t)
			continue;
		snprintf(t->uid, sizeof(t->uid), "%s", uid);
		snprintf(t->kube_qos, sizeof(t->kube_qos), "%s", kube_qos);
		t->gen = metric.gen;
		track_add(t, cap, at, cpu, cg_mem(pdir, pol));
	}
	closedir(dd);
}

static bool under_kubepods(const char *p)
{
	return !strncmp(p, "/kubepods", 9) && (p[9] == '/' || p[9] == '.' || !p[9]);
}

void tm_nm_sample(struct tm_daemon *d, uint64_t now_us, double node_mcpu)
{
	static const struct {
		const char *rel, *qos;
	} dirs[] = {{"/kubepods.slice", "Guaranteed"},
		    {"/kubepods.slice/kubepods-burstable.slice", "Burstable"},
		    {"/kubepods.slice/kubepods-besteffort.slice", "BestEffort"},
		    {"/kubepods", "Guaranteed"},
		    {"/kubepods/burstable", "Burstable"},
		    {"/kubepods/besteffort", "BestEffort"}};
	uint64_t mem[3];
	uint32_t cap;
	bool full;
	int w = 0;

	if (node_mem(mem))
		return;
	pthread_mutex_lock(&metric.lock);
	metric.gen++;
	metric.at_realtime = (uint64_t)time(NULL);
	metric.ring[metric.head] = (struct node_pt){.t_us = now_us, .mcpu = node_mcpu};
	memcpy(metric.ring[metric.head].mem, mem, sizeof(mem));
	metric.head = (metric.head + 1) % NODE_RING;
	if (metric.n < NODE_RING)
		metric.n++;
	/* enough samples for the window, and one more for its start */
	cap = metric.pol.aggregate_s / (d->cfg.report.sample_s ? d->cfg.report.sample_s : 1) + 2;
	cap = cap > TRACK_RING ? TRACK_RING : cap;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		sample_dir(d->cgroup_root, dirs[i].rel, dirs[i].qos, cap, metric.pol.mem);
	/* ONLINE cgroups outside the kubelet's tree: host applications (the
	 * report's sample just read them; d->cg is this thread's) */
	for (int i = 0; i < d->nr_cg; i++) {
		const struct tm_cg_usage *u = &d->cg[i];
		char dir[PATH_MAX];
		struct track *t;

		if (u->cls != TM_CLASS_ONLINE || under_kubepods(u->path) ||
		    tm_cg_path(dir, sizeof(dir), d->cgroup_root, u->path, NULL))
			continue;
		t = track_get(u->path);
		if (!t)
			continue;
		t->uid[0] = t->kube_qos[0] = 0;
		t->gen = metric.gen;
		track_add(t, cap, now_us, u->usage_us, cg_mem(dir, metric.pol.mem));
	}
	/* gone: dropped */
	for (int i = 0; i < metric.nr; i++) {
		if (metric.tr[i].gen == metric.gen) {
			metric.tr[w++] = metric.tr[i];
			continue;
		}
		free(metric.tr[i].ring);
	}
	metric.nr = w;
	full = metric.full;
	metric.full = false;
	pthread_mutex_unlock(&metric.lock);
	if (full) /* logged and counted: never a silent cap */
		tm_limit_hit(d, "nodemetric.cgroups", MAX_TRACKS);
}

/* ---- the object ---- */

/* CPU (counter growth over the span) and mean memory of @t over the last
 * @win_s; peak CPU and memory of the intervals inside. false: fewer than
 * two samples. */
static bool track_avg(const struct track *t, uint32_t win_s, double *mcpu, double *mem,
		      double *peak_mcpu, double *peak_mem)
{
	const struct pt *last, *first = NULL, *prev;
	double msum = 0;
	uint32_t k = 0;

	if (t->n < 2)
		return false;
	last = &t->ring[(t->head + t->cap - 1) % t->cap];
	*peak_mcpu = *peak_mem = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct pt *p = &t->ring[(t->head + t->cap - 1 - i) % t->cap];

		if (last->t_us - p->t_us > (uint64_t)win_s * 1000000)
			break;
		first = p;
		msum += p->mem;
		k++;
		*peak_mem = p->mem > *peak_mem ? p->mem : *peak_mem;
		if (i + 1 < t->n) {
			prev = &t->ring[(t->head + t->cap - 2 - i) % t->cap];
			if (p->t_us > prev->t_us && p->cpu_us >= prev->cpu_us) {
				double r = 1000.0 * (p->cpu_us - prev->cpu_us) /
					   (p->t_us - prev->t_us);

				*peak_mcpu = r > *peak_mcpu ? r : *peak_mcpu;
			}
		}
	}
	if (!first || first == last || last->cpu_us < first->cpu_us)
		return false;
	*mcpu = 1000.0 * (last->cpu_us - first->cpu_us) / (last->t_us - first->t_us);
	*mem = msum / k;
	return true;
}

static json_t *resources(double mcpu, double bytes)
{
	char c[32], m[32];

	tm_qty_cpu(c, sizeof(c), mcpu > 0 ? (uint64_t)(mcpu + 0.5) : 0);
	tm_qty_bytes(m, sizeof(m), bytes > 0 ? (uint64_t)(bytes + 0.5) : 0);
	return json_pack("{s:{s:s,s:s}}", "resources", "cpu", c, "memory", m);
}

/* The node's samples over the last @win_s: their CPU and memory values. */
static uint32_t node_window(uint32_t win_s, double *cpu, double *mem, int pol, uint64_t *span_us)
{
	const struct node_pt *last = &metric.ring[(metric.head + NODE_RING - 1) % NODE_RING];
	uint32_t k = 0;

	*span_us = 0;
	for (uint32_t i = 0; i < metric.n; i++) {
		const struct node_pt *p =
			&metric.ring[(metric.head + NODE_RING - 1 - i) % NODE_RING];

		if (last->t_us - p->t_us > (uint64_t)win_s * 1000000)
			break;
		cpu[k] = p->mcpu;
		mem[k] = (double)p->mem[pol];
		*span_us = last->t_us - p->t_us;
		k++;
	}
	return k;
}

json_t *tm_nm_object(struct tm_daemon *d)
{
	static double cpu[NODE_RING], mem[NODE_RING];
	json_t *o, *st, *nm, *pods, *hosts, *aggs, *pol, *durs, *ann;
	double pods_mcpu = 0, pods_mem = 0, rec_mcpu = 0, rec_mem = 0;
	char when[32], buf[32], source[16], why[256];
	struct tm_wstat sc, sm;
	struct tm_pod pod;
	uint64_t span, pods_at;
	uint32_t k, ds;
	int named = 0;

	pthread_mutex_lock(&metric.lock);
	tm_rfc3339(when, sizeof(when),
		   metric.at_realtime ? metric.at_realtime : (uint64_t)time(NULL));
	durs = json_array();
	for (int i = 0; i < metric.pol.nr_durations; i++) {
		tm_duration_fmt(buf, sizeof(buf), metric.pol.durations[i]);
		json_array_append_new(durs, json_string(buf));
	}
	pol = json_pack("{s:I,s:I,s:{s:o},s:s}", "aggregateDurationSeconds",
			(json_int_t)metric.pol.aggregate_s, "reportIntervalSeconds",
			(json_int_t)metric.pol.report_s, "nodeAggregatePolicy", "durations", durs,
			"nodeMemoryCollectPolicy", mem_policy_name[metric.pol.mem]);
	/* node usage: the mean over the aggregate window */
	k = node_window(metric.pol.aggregate_s, cpu, mem, metric.pol.mem, &span);
	sc = tm_window_stats(cpu, k, metric.scratch);
	sm = tm_window_stats(mem, k, metric.scratch);
	nm = json_object();
	if (k)
		json_object_set_new(nm, "nodeUsage", resources(sc.avg, sm.avg));
	aggs = json_array();
	for (int i = 0; i < metric.pol.nr_durations; i++) {
		ds = metric.pol.durations[i];
		k = node_window(ds, cpu, mem, metric.pol.mem, &span);
		/* only when the samples cover the duration (less one interval) */
		if (!k ||
		    span + (uint64_t)d->cfg.report.sample_s * 1000000 < (uint64_t)ds * 1000000)
			continue;
		sc = tm_window_stats(cpu, k, metric.scratch);
		sm = tm_window_stats(mem, k, metric.scratch);
		tm_duration_fmt(buf, sizeof(buf), ds);
		json_array_append_new(
			aggs,
			json_pack("{s:s,s:{s:o,s:o,s:o,s:o,s:o}}", "duration", buf, "usage", "avg",
				  resources(sc.avg, sm.avg), "p50", resources(sc.p50, sm.p50),
				  "p90", resources(sc.p90, sm.p90), "p95",
				  resources(sc.p95, sm.p95), "p99", resources(sc.p99, sm.p99)));
	}
	if (json_array_size(aggs))
		json_object_set_new(nm, "aggregatedNodeUsages", aggs);
	else
		json_decref(aggs);
	pods = json_array();
	hosts = json_array();
	for (int i = 0; i < metric.nr; i++) {
		const struct track *t = &metric.tr[i];
		double c, m, pc, pm;
		const struct tm_pod *p;

		if (!track_avg(t, metric.pol.aggregate_s, &c, &m, &pc, &pm))
			continue;
		if (!t->uid[0]) {
			json_array_append_new(hosts, json_pack("{s:o,s:o,s:s,s:s}", "name",
							       tm_json_str(t->path), "usage",
							       resources(c, m), "priority",
							       "koord-prod", "qos", "LS"));
			continue;
		}
		pods_mcpu += c;
		pods_mem += m;
		if (!tm_pod_get(t->uid, &pod))
			continue; /* not (yet) in the pod list: in systemUsage's sum only */
		p = &pod;
		named++;
		if (!strcmp(p->prio, "koord-prod")) {
			rec_mcpu += p->req_mcpu > pc ? p->req_mcpu - pc : 0;
			rec_mem += p->req_bytes > pm ? p->req_bytes - pm : 0;
		}
		json_array_append_new(pods,
				      json_pack("{s:s,s:s,s:o,s:s,s:s,s:{s:{s:s,s:s,s:s}}}",
						"namespace", p->ns, "name", p->name, "podUsage",
						resources(c, m), "priority", p->prio, "qos", p->qos,
						"extensions", "tidemark", "uid", p->uid, "cgroup",
						t->path, "kubeQOS", t->kube_qos));
	}
	st = json_pack("{s:s,s:o}", "updateTime", when, "nodeMetric", nm);
	if (json_object_get(nm, "nodeUsage")) {
		k = node_window(metric.pol.aggregate_s, cpu, mem, metric.pol.mem, &span);
		sc = tm_window_stats(cpu, k, metric.scratch);
		sm = tm_window_stats(mem, k, metric.scratch);
		json_object_set_new(nm, "systemUsage",
				    resources(sc.avg > pods_mcpu ? sc.avg - pods_mcpu : 0,
					      sm.avg > pods_mem ? sm.avg - pods_mem : 0));
	}
	json_object_set_new(st, "podsMetric", pods);
	json_object_set_new(st, "hostApplicationMetric", hosts);
	tm_pods_origin(source, sizeof(source), &pods_at, why, sizeof(why));
	if (source[0])
		json_object_set_new(st, "prodReclaimableMetric",
				    json_pack("{s:o}", "resource", resources(rec_mcpu, rec_mem)));
	ann = json_object();
	if (source[0]) {
		tm_rfc3339(buf, sizeof(buf), pods_at);
		snprintf(metric.msg, sizeof(metric.msg),
			 "%d pods named from the %s's list of %s%s%s", named, source, buf,
			 why[0] ? "; last refresh failed: " : "", why);
	} else {
		snprintf(metric.msg, sizeof(metric.msg), "%s", why);
	}
	json_object_set_new(ann, "tidemark.io/pod-identity", json_string(metric.msg));
	o = json_pack("{s:s,s:s,s:{s:s,s:o},s:{s:o},s:o}", "apiVersion",
		      "slo.koordinator.sh/v1alpha1", "kind", "NodeMetric", "metadata", "name",
		      metric.node, "annotations", ann, "spec", "metricCollectPolicy", pol, "status",
		      st);
	pthread_mutex_unlock(&metric.lock);
	return o;
}

char *tm_nm_json(struct tm_daemon *d)
{
	json_t *o = tm_nm_object(d);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	char *out = NULL;

	json_decref(o);
	if (s && asprintf(&out, "%s\n", s) < 0)
		out = NULL;
	free(s);
	return out;
}
