// SPDX-License-Identifier: GPL-2.0
/* Unit tests for tidemarkd's configuration validation (userspace/daemon/config.c). */
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <stdlib.h>
#include "kselftest_harness.h"
#include "config.h"
#include "kube.h"

static struct tm_config c;
static char err[512];

/* Parse @json into c; the message when refused is in err. */
static int parse(const char *json)
{
	err[0] = 0;
	return tm_config_parse(json, &c, err, sizeof(err));
}

TEST(minimal_config_gets_the_defaults)
{
	ASSERT_EQ(0, parse("{\"version\": 1}"));
	EXPECT_EQ(65U, c.cpu.suppress_pct);
	EXPECT_EQ(70U, c.memory.evict_pct);
	EXPECT_EQ(68U, c.memory.evict_lower_pct);
	/* CPU eviction stops at the scheduler's line unless told otherwise */
	EXPECT_EQ(65U, c.cpu.evict_lower_pct);
	EXPECT_EQ(70U, c.cpu.evict_pct);
	EXPECT_EQ(10U, c.cpu.evict_window_s);
	EXPECT_EQ(1000U, c.cpu_eviction.default_request_mcpu);
	EXPECT_TRUE(c.memory_eviction.enabled);
	EXPECT_TRUE(c.memory_eviction.throttle_first);
	EXPECT_FALSE(c.memory_eviction.dry_run);
	EXPECT_STREQ("127.0.0.1", c.report.listen_addr);
	EXPECT_EQ(9477, c.report.listen_port);
}

/* Every default of the field table passes its own row (the range, the
 * choices, its own parser). */
TEST(the_table_s_defaults_are_valid)
{
	EXPECT_EQ(0, tm_config_defaults_check(err, sizeof(err)));
}

TEST(full_config)
{
	ASSERT_EQ(
		0,
		parse("{\"version\":1,"
		      "\"watermarks\":{\"cpu\":{\"forbid_pct\":50,\"suppress_pct\":60,\"evict_"
		      "pct\":80},"
		      "\"memory\":{\"forbid_pct\":60,\"evict_lower_pct\":75,\"evict_pct\":80}},"
		      "\"scheduler\":{\"max_be_wait_ms\":500,\"be_floor_mcpu\":200},"
		      "\"memory_eviction\":{\"dry_run\":true,\"throttle_first\":false,\"poll_ms\":"
		      "50,\"cooldown_ms\":0},"
		      "\"cgroups\":{\"be\":[\"/be\",{\"path\":\"/batch/"
		      "*\",\"priority\":-5}],\"online\":[\"/online\"]},"
		      "\"report\":{\"listen\":\"0.0.0.0:9100\",\"sample_s\":5,\"reclaim_pct\":90,"
		      "\"push_interval_s\":30}}"));
	EXPECT_EQ(60U, c.cpu.suppress_pct);
	EXPECT_EQ(75U, c.memory.evict_lower_pct);
	EXPECT_EQ(500U, c.max_be_wait_ms);
	EXPECT_TRUE(c.memory_eviction.dry_run);
	EXPECT_EQ(50U, c.memory_eviction.poll_ms);
	ASSERT_EQ(2, c.nr_be);
	EXPECT_STREQ("/batch/*", c.be[1].path);
	EXPECT_EQ(-5, c.be[1].priority);
	EXPECT_EQ(1, c.nr_online);
	EXPECT_STREQ("0.0.0.0", c.report.listen_addr);
	EXPECT_EQ(9100, c.report.listen_port);
}

/* The push URL through libcurl's URL parser, or, in a node-only build
 * (make CLUSTER=0), refused as needing the HTTP client. */
TEST(push_url)
{
	if (tm_cluster_missing()) {
		EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"push_url\":\"http://x/\"}}"));
		EXPECT_NE(NULL, strstr(err, "report.push_url: a push needs the HTTP client: "
					    "this tidemarkd is built node-only"));
		EXPECT_EQ(-1, parse("{\"version\":1,\"kubernetes\":{\"api\":\"in-cluster\"}}"));
		EXPECT_NE(NULL, strstr(err, "kubernetes.api: 'in-cluster' needs the cluster wing"));
		EXPECT_EQ(-1, parse("{\"version\":1,\"kubernetes\":{\"pods\":\"kubelet\"}}"));
		EXPECT_NE(NULL, strstr(err, "kubernetes.pods: 'kubelet' needs the cluster wing"));
		return;
	}
	/* host names and https go, CRLF never reaches a request line */
	EXPECT_EQ(0, parse("{\"version\":1,\"report\":{\"push_url\":\"http://10.0.0.1:8080/"
			   "nodemetric\"}}"));
	EXPECT_STREQ("http://10.0.0.1:8080/nodemetric", c.report.push_url);
	EXPECT_EQ(0,
		  parse("{\"version\":1,\"report\":{\"push_url\":\"https://koord.example/x\"}}"));
	EXPECT_EQ(0, parse("{\"version\":1,\"report\":{\"push_url\":\"http://localhost:8080/\"}}"));
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"push_url\":\"ftp://x/y\"}}"));
	EXPECT_STREQ("report.push_url: 'ftp://x/y': the scheme must be http or https", err);
	EXPECT_EQ(-1,
		  parse("{\"version\":1,\"report\":{\"push_url\":\"http://x/a\\r\\nHost: y\"}}"));
	EXPECT_STREQ("report.push_url: has a space or control character (byte 0x0d)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"push_url\":\"http://u:p@x/\"}}"));
	EXPECT_NE(NULL, strstr(err, "no user name or password"));
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"push_url\":\"http://x:99999/\"}}"));
	EXPECT_NE(NULL, strstr(err, "is not a URL"));
}

TEST(watermark_order_is_enforced_with_the_field_named)
{
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"suppress_pct\":70,\"evict_"
			    "pct\":70}}}"));
	EXPECT_STREQ("watermarks.cpu.suppress_pct: 70 must be below evict_pct (70)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"forbid_pct\":66}}}"));
	EXPECT_STREQ("watermarks.cpu.forbid_pct: 66 must not be above suppress_pct (65)", err);
	EXPECT_EQ(-1,
		  parse("{\"version\":1,\"watermarks\":{\"memory\":{\"evict_lower_pct\":72}}}"));
	EXPECT_STREQ("watermarks.memory.evict_lower_pct: 72 must be below evict_pct (70)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"memory\":{\"forbid_pct\":69}}}"));
	EXPECT_STREQ("watermarks.memory.forbid_pct: 69 must not be above evict_lower_pct (68)",
		     err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"evict_lower_pct\":60}}}"));
	EXPECT_STREQ("watermarks.cpu.evict_lower_pct: 60 must not be below suppress_pct (65)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"evict_lower_pct\":70}}}"));
	EXPECT_STREQ("watermarks.cpu.evict_lower_pct: 70 must be below evict_pct (70)", err);
	/* the default lower line follows a changed suppress line */
	ASSERT_EQ(0, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"suppress_pct\":62,"
			   "\"evict_window_s\":30}}}"));
	EXPECT_EQ(62U, c.cpu.evict_lower_pct);
	EXPECT_EQ(30U, c.cpu.evict_window_s);
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"evict_window_s\":0}}}"));
	EXPECT_STREQ("watermarks.cpu.evict_window_s: 0 is out of range 1-600", err);
}

TEST(bad_input_names_the_field)
{
	EXPECT_EQ(-1, parse("{\"version\":2}"));
	EXPECT_STREQ("version: must be 1", err);
	EXPECT_EQ(-1, parse("{}"));
	EXPECT_NE(NULL, strstr(err, "version: missing"));
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"suppress_pct\":\"65\"}}}"));
	EXPECT_STREQ("watermarks.cpu.suppress_pct: must be a whole number", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"suppress_pct\":101}}}"));
	EXPECT_STREQ("watermarks.cpu.suppress_pct: 101 is out of range 1-100", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"memory_eviction\":{\"dryrun\":true}}"));
	EXPECT_STREQ("memory_eviction.dryrun: unknown field", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"memory_eviction\":{\"dry_run\":1}}"));
	EXPECT_STREQ("memory_eviction.dry_run: must be true or false", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"cgroups\":{\"be\":[\"/a/../b\"]}}"));
	EXPECT_STREQ("cgroups.be[0]: '..' is not allowed in a cgroup path", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"cgroups\":{\"be\":[{\"priority\":1}]}}"));
	EXPECT_STREQ("cgroups.be[0]: needs a \"path\" string", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"listen\":\"localhost:80\"}}"));
	EXPECT_STREQ("report.listen: address 'localhost' must be an IPv4 address (dotted, no "
		     "leading zeros)",
		     err);
	/* sscanf took it and the daemon then listened on 0.0.0.0 */
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"listen\":\"127.0.0.01:80\"}}"));
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"listen\":\"127.0.0.1: 80\"}}"));
	EXPECT_EQ(0, parse("{\"version\":1,\"report\":{\"listen\":\"10.1.2.3:80\"}}"));
	EXPECT_EQ(-1, parse("{\"version\":1,\"report\":{\"listen\":\"127.0.0.1:0\"}}"));
	EXPECT_STREQ("report.listen: port '0' must be 1-65535", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"version\":1}"));
	EXPECT_NE(NULL, strstr(err, "duplicate"));
	EXPECT_EQ(-1, parse("{\"version\":1,"));
	EXPECT_NE(NULL, strstr(err, "line 1"));
	EXPECT_EQ(-1, parse("[1]"));
	EXPECT_STREQ("(top level): must be a JSON object", err);
}

TEST(cpu_eviction_fields)
{
	ASSERT_EQ(0, parse("{\"version\":1,\"cpu_eviction\":{\"window_s\":20,\"lower_pct\":50,"
			   "\"upper_pct\":70,\"dry_run\":true},"
			   "\"cgroups\":{\"be\":[{\"path\":\"/be/a\",\"request_mcpu\":1500}]}}"));
	EXPECT_EQ(20U, c.cpu_eviction.window_s);
	EXPECT_TRUE(c.cpu_eviction.dry_run);
	EXPECT_EQ(1500U, c.be[0].request_mcpu);
	EXPECT_EQ(-1,
		  parse("{\"version\":1,\"cpu_eviction\":{\"lower_pct\":80,\"upper_pct\":80}}"));
	EXPECT_STREQ("cpu_eviction.lower_pct: 80 must be below upper_pct (80)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"cpu_eviction\":{\"window_s\":5}}"));
	EXPECT_STREQ("cpu_eviction.window_s: 5 is out of range 10-3600", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"cgroups\":{\"be\":[{\"path\":\"/"
			    "x\",\"request_mcpu\":0}]}}"));
	EXPECT_STREQ("cgroups.be[0]: request_mcpu must be a whole number in 1..512000", err);
	ASSERT_EQ(0, parse("{\"version\":1,\"cpu_eviction\":{\"default_request_mcpu\":500}}"));
	EXPECT_EQ(500U, c.cpu_eviction.default_request_mcpu);
	EXPECT_EQ(-1, parse("{\"version\":1,\"cpu_eviction\":{\"default_request_mcpu\":0}}"));
	EXPECT_STREQ("cpu_eviction.default_request_mcpu: 0 is out of range 1-512000", err);
}

TEST(eviction_backoff_fields)
{
	ASSERT_EQ(0, parse("{\"version\":1}"));
	EXPECT_EQ(60U, c.eviction.backoff_initial_s);
	EXPECT_EQ(1800U, c.eviction.backoff_max_s);
	EXPECT_EQ(100U, c.eviction.backoff_cap_mcpu);
	ASSERT_EQ(0, parse("{\"version\":1,\"eviction\":{\"backoff_initial_s\":5,"
			   "\"backoff_max_s\":40,\"backoff_cap_mcpu\":0}}"));
	EXPECT_EQ(5U, c.eviction.backoff_initial_s);
	EXPECT_EQ(40U, c.eviction.backoff_max_s);
	EXPECT_EQ(0U, c.eviction.backoff_cap_mcpu);
	EXPECT_EQ(-1, parse("{\"version\":1,\"eviction\":{\"backoff_initial_s\":50,"
			    "\"backoff_max_s\":40}}"));
	EXPECT_STREQ("eviction.backoff_max_s: 40 must not be below backoff_initial_s (50)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"eviction\":{\"backoff\":1}}"));
	EXPECT_STREQ("eviction.backoff: unknown field", err);
}

TEST(fallback_fields)
{
	ASSERT_EQ(0, parse("{\"version\":1}"));
	EXPECT_TRUE(c.fallback.enabled);
	EXPECT_FALSE(c.fallback.dry_run);
	ASSERT_EQ(0, parse("{\"version\":1,\"fallback\":{\"enabled\":false,\"dry_run\":true}}"));
	EXPECT_FALSE(c.fallback.enabled);
	EXPECT_TRUE(c.fallback.dry_run);
	EXPECT_EQ(-1, parse("{\"version\":1,\"fallback\":{\"period_ms\":1}}"));
	EXPECT_STREQ("fallback.period_ms: unknown field", err);
}

TEST(interference_fields)
{
	ASSERT_EQ(0, parse("{\"version\":1,\"interference\":{\"sigma\":2.5,\"need_n\":2,"
			   "\"of_m\":4,\"throttle_mcpu\":300,\"dry_run\":true}}"));
	EXPECT_EQ(2.5, c.interference.sigma);
	EXPECT_EQ(2U, c.interference.need_n);
	EXPECT_EQ(300U, c.interference.throttle_mcpu);
	EXPECT_TRUE(c.interference.dry_run);
	EXPECT_TRUE(c.interference.enabled);
	EXPECT_EQ(-1, parse("{\"version\":1,\"interference\":{\"need_n\":4,\"of_m\":3}}"));
	EXPECT_STREQ("interference.need_n: 4 must not be above of_m (3)", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"interference\":{\"sigma\":\"3\"}}"));
	EXPECT_STREQ("interference.sigma: must be a number", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"interference\":{\"sigma\":0.1}}"));
	EXPECT_STREQ("interference.sigma: 0.1 is out of range 0.5-20", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"interference\":{\"corr_samples\":65}}"));
	EXPECT_STREQ("interference.corr_samples: 65 is out of range 4-64", err);
	EXPECT_EQ(-1, parse("{\"version\":1,\"interference\":{\"ladder\":1}}"));
	EXPECT_STREQ("interference.ladder: unknown field", err);
	/* the ladder may not lower the line below itself: the floor must be under it */
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"forbid_pct\":20,"
			    "\"suppress_pct\":25}},\"interference\":{\"suppress_min_pct\":30}}"));
	EXPECT_STREQ("interference.suppress_min_pct: 30 must not be above suppress_pct (25)", err);
}

TEST(a_refused_config_leaves_the_old_one_untouched)
{
	ASSERT_EQ(0, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"forbid_pct\":40,\"suppress_"
			   "pct\":50}}}"));
	EXPECT_EQ(-1, parse("{\"version\":1,\"watermarks\":{\"cpu\":{\"suppress_pct\":55}},"
			    "\"bogus\":1}"));
	EXPECT_EQ(50U, c.cpu.suppress_pct);
}

/* What --check accepted and the daemon then refused or misapplied on the
 * node: one path (tm_config_parse_node) for --check, start and SIGHUP. */
static int parse_on(const char *json, uint32_t cpus, const char *self)
{
	struct tm_node_facts n = {.nr_cpus = cpus};

	snprintf(n.self_cgroup, sizeof(n.self_cgroup), "%s", self);
	err[0] = 0;
	return tm_config_parse_node(json, &c, &n, err, sizeof(err));
}

TEST(node_checks_floor_and_be_patterns)
{
	tm_config_defaults(&c);
	/* a floor above 2 CPUs: the scheduler refused it, /report claimed it */
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"scheduler\":{\"be_floor_mcpu\":2500}}", 2, "/"));
	EXPECT_NE(NULL, strstr(err, "scheduler.be_floor_mcpu: 2500 with 2 online CPUs"));
	EXPECT_NE(NULL, strstr(err, "capacity"));
	EXPECT_EQ(100U, c.be_floor_mcpu); /* untouched */
	/* above the line interference may lower it to (30% of 2 CPUs) */
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"scheduler\":{\"be_floor_mcpu\":700}}", 2, "/"));
	EXPECT_NE(NULL, strstr(err, "suppress_min_pct (30)"));
	EXPECT_EQ(0, parse_on("{\"version\":1,\"scheduler\":{\"be_floor_mcpu\":700},"
			      "\"interference\":{\"enabled\":false}}",
			      2, "/"));
	EXPECT_EQ(0, parse_on("{\"version\":1,\"scheduler\":{\"be_floor_mcpu\":700}}", 4, "/"));

	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/*\"]}}", 2, "/"));
	EXPECT_STREQ("cgroups.be[0]: '/*' takes in /system.slice (the node's services): never a "
		     "BE cgroup",
		     err);
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/be\",\"/\"]}}", 2, "/"));
	EXPECT_NE(NULL, strstr(err, "cgroups.be[1]: '/' is the root cgroup"));
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/user.slice/*\"]}}", 2, "/"));
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/init.scope\"]}}", 2, "/"));
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/s*/x\"]}}", 2, "/"));
	/* the daemon's own cgroup and its parents */
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/batch/*\"]}}", 2,
			       "/batch/tidemarkd"));
	EXPECT_NE(NULL, strstr(err, "tidemarkd's own cgroup"));
	EXPECT_EQ(-1, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/batch\"]}}", 2,
			       "/batch/tidemarkd"));
	EXPECT_EQ(0, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/batch/jobs/*\"]}}", 2,
			      "/batch/tidemarkd"));
	EXPECT_EQ(0, parse_on("{\"version\":1,\"cgroups\":{\"be\":[\"/kubepods.slice/"
			      "kubepods-besteffort.slice/*\"]}}",
			      2, "/system.slice/tidemarkd.service"));
}

TEST(object_form_path_length_refused_not_cut)
{
	char json[1200], path[600];

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	snprintf(json, sizeof(json), "{\"version\":1,\"cgroups\":{\"be\":[{\"path\":\"%s\"}]}}",
		 path);
	EXPECT_EQ(-1, parse(json));
	EXPECT_STREQ("cgroups.be[0]: path longer than 511 bytes", err);
}

/* The NodeSLO over the file: applied with the file's checks, its own field
 * named on a refusal, the configuration in effect untouched then. */
TEST(nodeslo_overlay)
{
	char path[] = "/tmp/tm-slo-XXXXXX", err[512];
	struct tm_slo_overlay o;
	struct tm_config c, before;
	json_t *spec;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	ASSERT_GT(write(fd, "{\"version\":1,\"watermarks\":{\"cpu\":{\"forbid_pct\":50}}}", 52), 0);
	close(fd);
	spec = json_loads("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":55,"
			  "\"memoryEvictThresholdPercent\":80,\"cpuEvictTimeWindowSeconds\":120,"
			  "\"cpuSuppressPolicy\":\"cfsQuota\"}}",
			  0, NULL);
	ASSERT_EQ(0, tm_slo_overlay_from_spec(spec, &o, err, sizeof(err)));
	json_decref(spec);
	ASSERT_TRUE(o.has[TM_SLO_MEM_EVICT_LOWER]); /* Koordinator's default: less 2 */
	ASSERT_EQ(78, o.v[TM_SLO_MEM_EVICT_LOWER]);
	ASSERT_FALSE(o.has[TM_SLO_SAT_UPPER]);
	ASSERT_EQ(0, tm_config_load_overlay(path, &o, &c, err, sizeof(err)));
	ASSERT_EQ(55u, c.cpu.suppress_pct);
	ASSERT_EQ(50u, c.cpu.forbid_pct); /* the file's, kept */
	ASSERT_EQ(80u, c.memory.evict_pct);
	ASSERT_EQ(78u, c.memory.evict_lower_pct);
	ASSERT_EQ(120u, c.cpu_eviction.window_s);
	/* a value the file's rules refuse: named twice, nothing changed */
	before = c;
	o.has[TM_SLO_CPU_SUPPRESS] = true;
	o.v[TM_SLO_CPU_SUPPRESS] = 45; /* below the file's forbid_pct */
	ASSERT_EQ(-1, tm_config_load_overlay(path, &o, &c, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "NodeSLO with the file: watermarks.cpu.forbid_pct: 50 must not "
				    "be above suppress_pct (45)"))
	{
		TH_LOG("%s", err);
	}
	o.v[TM_SLO_CPU_SUPPRESS] = 101;
	ASSERT_EQ(-1, tm_config_load_overlay(path, &o, &c, err, sizeof(err)));
	ASSERT_NE(NULL,
		  strstr(err, "NodeSLO resourceUsedThresholdWithBE.cpuSuppressThresholdPercent "
			      "(watermarks.cpu.suppress_pct): "))
	{
		TH_LOG("%s", err);
	}
	ASSERT_EQ(0, memcmp(&before, &c, sizeof(c)));
	/* off, absent, or not the right types */
	spec = json_loads("{\"resourceUsedThresholdWithBE\":{\"enable\":false,"
			  "\"cpuSuppressThresholdPercent\":55}}",
			  0, NULL);
	ASSERT_EQ(0, tm_slo_overlay_from_spec(spec, &o, err, sizeof(err)));
	json_decref(spec);
	for (int i = 0; i < TM_NR_SLO; i++)
		ASSERT_FALSE(o.has[i]);
	ASSERT_EQ(0, tm_slo_overlay_from_spec(NULL, &o, err, sizeof(err)));
	spec = json_loads("{\"resourceUsedThresholdWithBE\":{\"memoryEvictLowerPercent\":1.5}}", 0,
			  NULL);
	ASSERT_EQ(-1, tm_slo_overlay_from_spec(spec, &o, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "memoryEvictLowerPercent: must be an integer"));
	json_decref(spec);
	unlink(path);
}

TEST_HARNESS_MAIN
