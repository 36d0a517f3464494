// SPDX-License-Identifier: GPL-2.0
/*
 * NodeMetric's inputs (userspace/daemon/cluster/nodemetric.c): the pod list into Koordinator's QoS
 * and priority classes with effective requests, and spec.metricCollectPolicy with each bad value
 * named.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "kselftest_harness.h"
#include "nodemetric.h"

static const struct tm_pod *find(const struct tm_pod *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

TEST(pod_list_classes_and_requests)
{
	const char *text =
		"{\"items\":["
		/* Guaranteed, no Koordinator label, no priority: LS, prod */
		"{\"metadata\":{\"uid\":\"u1\",\"namespace\":\"a\",\"name\":\"g\"},"
		" \"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
		"\"1Gi\"}}},"
		"  {\"resources\":{\"requests\":{\"cpu\":\"250m\"}}}]},"
		" \"status\":{\"qosClass\":\"Guaranteed\"}},"
		/* BestEffort: BE, batch */
		"{\"metadata\":{\"uid\":\"u2\",\"namespace\":\"a\",\"name\":\"be\"},"
		" \"spec\":{\"containers\":[{}]},\"status\":{\"qosClass\":\"BestEffort\"}},"
		/* a label and a priority band: LSR, mid; init container larger */
		"{\"metadata\":{\"uid\":\"u3\",\"namespace\":\"a\",\"name\":\"lsr\","
		"  \"labels\":{\"koordinator.sh/qosClass\":\"LSR\"}},"
		" \"spec\":{\"priority\":7500,"
		"  \"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
		"  \"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],"
		"  \"overhead\":{\"cpu\":\"50m\"}},"
		" \"status\":{\"qosClass\":\"Burstable\"}},"
		/* priority out of every band, the priority-class label: free */
		"{\"metadata\":{\"uid\":\"u4\",\"namespace\":\"a\",\"name\":\"free\","
		"  \"labels\":{\"koordinator.sh/priority-class\":\"koord-free\","
		"   \"koordinator.sh/qosClass\":\"nonsense\"}},"
		" \"spec\":{\"priority\":100},\"status\":{\"qosClass\":\"Burstable\"}},"
		/* no uid: cannot be matched, left out */
		"{\"metadata\":{\"namespace\":\"a\",\"name\":\"nouid\"}}"
		"]}";
	json_t *j = json_loads(text, 0, NULL);
	struct tm_pod *v;
	const struct tm_pod *p;
	char err[256];
	int n;

	ASSERT_NE(NULL, j);
	n = tm_pods_parse(j, &v, err, sizeof(err));
	ASSERT_EQ(4, n);
	p = find(v, n, "g");
	ASSERT_STREQ("LS", p->qos);
	ASSERT_STREQ("koord-prod", p->prio);
	ASSERT_EQ(1250u, p->req_mcpu);
	ASSERT_EQ(1ull << 30, p->req_bytes);
	p = find(v, n, "be");
	ASSERT_STREQ("BE", p->qos);
	ASSERT_STREQ("koord-batch", p->prio);
	ASSERT_EQ(0u, p->req_mcpu);
	p = find(v, n, "lsr");
	ASSERT_STREQ("LSR", p->qos);
	ASSERT_STREQ("koord-mid", p->prio);
	ASSERT_EQ(2050u, p->req_mcpu); /* max(100, 2000) + 50 overhead */
	p = find(v, n, "free");
	ASSERT_STREQ("LS", p->qos); /* an unknown label value: from the QoS class */
	ASSERT_STREQ("koord-free", p->prio);
	/* sorted by UID for the lookups */
	for (int i = 1; i < n; i++)
		ASSERT_LT(strcmp(v[i - 1].uid, v[i].uid), 0);
	free(v);
	json_decref(j);
	j = json_loads("{\"kind\":\"Status\"}", 0, NULL);
	ASSERT_EQ(-1, tm_pods_parse(j, &v, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "not a pod list"));
	json_decref(j);
}

static int policy(const char *spec, struct tm_nm_policy *p, char *err, size_t len)
{
	json_t *j = json_loads(spec, 0, NULL);
	int r = tm_nm_policy_from_spec(j, p, err, len);

	json_decref(j);
	return r;
}

TEST(collect_policy)
{
	struct tm_nm_policy p;
	char err[256];

	ASSERT_EQ(0, policy("{}", &p, err, sizeof(err)));
	ASSERT_EQ(300u, p.aggregate_s);
	ASSERT_EQ(60u, p.report_s);
	ASSERT_EQ(3, p.nr_durations);
	ASSERT_EQ(1800u, p.durations[2]);
	ASSERT_EQ(TM_NM_MEM_NO_CACHE, p.mem);
	ASSERT_EQ(
		0,
		policy("{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":60,"
		       "\"reportIntervalSeconds\":10,\"nodeAggregatePolicy\":{\"durations\":"
		       "[\"1m0s\",\"1h\"]},\"nodeMemoryCollectPolicy\":\"usageWithHotPageCache\"}}",
		       &p, err, sizeof(err)));
	ASSERT_EQ(60u, p.aggregate_s);
	ASSERT_EQ(10u, p.report_s);
	ASSERT_EQ(2, p.nr_durations);
	ASSERT_EQ(3600u, p.durations[1]);
	ASSERT_EQ(TM_NM_MEM_HOT_CACHE, p.mem);
	/* each bad value refused whole, its field named; the policy untouched */
	ASSERT_EQ(-1, policy("{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":0}}", &p, err,
			     sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "aggregateDurationSeconds"));
	ASSERT_EQ(60u, p.aggregate_s);
	ASSERT_EQ(-1, policy("{\"metricCollectPolicy\":{\"reportIntervalSeconds\":\"10\"}}", &p,
			     err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "reportIntervalSeconds"));
	ASSERT_EQ(-1, policy("{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":"
			     "[\"5m\",\"5\"]}}}",
			     &p, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "durations[1]"));
	ASSERT_EQ(-1, policy("{\"metricCollectPolicy\":{\"nodeMemoryCollectPolicy\":\"all\"}}", &p,
			     err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "nodeMemoryCollectPolicy"));
	ASSERT_EQ(-1, policy("{\"metricCollectPolicy\":[]}", &p, err, sizeof(err)));
}

TEST_HARNESS_MAIN
