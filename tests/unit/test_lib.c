// SPDX-License-Identifier: GPL-2.0
/*
 * libtidemark's one home for logic that had several copies: cgroup path
 * forms and joins, cpu.max, /proc/stat, the domain-kind names, and
 * tidemarkd's BE-line arbiter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "actuate.h"
#include "buf.h"
#include "strategy.h"
#include "tmlib.h"
#include "topo.h"

TEST(rel_norm_one_form)
{
	static const char *const in[] = {"x/y",
					 "/x/y",
					 "/x/y/",
					 "//x//y",
					 "./x/./y",
					 "/sys/fs/cgroup/x/y",
					 "/sys/fs/cgroup//x/y/"};
	const char *why;
	char out[64];

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		ASSERT_EQ(0, tm_cg_rel_norm(in[i], out, sizeof(out), &why));
		EXPECT_STREQ("/x/y", out);
	}
	ASSERT_EQ(0, tm_cg_rel_norm("/sys/fs/cgroup", out, sizeof(out), &why));
	EXPECT_STREQ("/", out);
	ASSERT_EQ(0, tm_cg_rel_norm("kubepods.slice/*/", out, sizeof(out), &why));
	EXPECT_STREQ("/kubepods.slice/*", out);
	/* a name that merely starts like the mount is not the mount */
	ASSERT_EQ(0, tm_cg_rel_norm("/sys/fs/cgroupx", out, sizeof(out), &why));
	EXPECT_STREQ("/sys/fs/cgroupx", out);
	EXPECT_EQ(-1, tm_cg_rel_norm("", out, sizeof(out), &why));
	EXPECT_STREQ("empty cgroup path", why);
	EXPECT_EQ(-1, tm_cg_rel_norm("/a/../b", out, sizeof(out), &why));
	EXPECT_NE(NULL, strstr(why, "'..'"));
	EXPECT_EQ(-1, tm_cg_rel_norm("/abcdefgh", out, 8, &why));
	EXPECT_STREQ("cgroup path too long", why);
}

/* fuzz_rules: the one form read again named another cgroup */
TEST(rel_norm_refuses_the_ambiguous)
{
	const char *why = NULL;
	char out[128];

	EXPECT_EQ(-1, tm_cg_rel_norm("/sys/fs/cgroup/sys/fs/cgroup/x", out, sizeof(out), &why));
	EXPECT_NE(NULL, strstr(why, "ambiguous"));
	EXPECT_EQ(-1, tm_cg_rel_norm("//sys/fs/cgroup/x", out, sizeof(out), &why));
	EXPECT_EQ(0, tm_cg_rel_norm("/sys/fs/cgroup/sys/x", out, sizeof(out), &why));
	EXPECT_STREQ("/sys/x", out);
}

TEST(path_join)
{
	char out[64];

	ASSERT_EQ(0, tm_cg_path(out, sizeof(out), "/r", "/x/y", "cpu.max"));
	EXPECT_STREQ("/r/x/y/cpu.max", out);
	ASSERT_EQ(0, tm_cg_path(out, sizeof(out), "/r", "x", NULL));
	EXPECT_STREQ("/r/x", out);
	ASSERT_EQ(0, tm_cg_path(out, sizeof(out), "/r", "/", "cgroup.procs"));
	EXPECT_STREQ("/r/cgroup.procs", out);
	ASSERT_EQ(0, tm_cg_path(out, sizeof(out), "/r", "", NULL));
	EXPECT_STREQ("/r", out);
	EXPECT_EQ(-1, tm_cg_path(out, 8, "/r", "/long/path", "f"));
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

TEST(cpu_max_as_mcpu)
{
	char root[] = "/tmp/tm-lib.XXXXXX", dir[64];
	__u32 m = 0;

	ASSERT_NE(NULL, mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/c", root);
	ASSERT_EQ(0, mkdir(dir, 0755));
	ASSERT_EQ(0, write_file(dir, "cpu.max", "50000 100000\n"));
	EXPECT_EQ(1, tm_cg_cpu_max(root, "/c", &m));
	EXPECT_EQ(500U, m);
	ASSERT_EQ(0, write_file(dir, "cpu.max", "250000 100000\n"));
	EXPECT_EQ(1, tm_cg_cpu_max(root, "c", &m));
	EXPECT_EQ(2500U, m);
	/* a quota below one milli-CPU still asks for something */
	ASSERT_EQ(0, write_file(dir, "cpu.max", "50 100000\n"));
	EXPECT_EQ(1, tm_cg_cpu_max(root, "/c", &m));
	EXPECT_EQ(1U, m);
	ASSERT_EQ(0, write_file(dir, "cpu.max", "max 100000\n"));
	EXPECT_EQ(0, tm_cg_cpu_max(root, "/c", &m));

	EXPECT_EQ(-1, tm_cg_cpu_max(root, "/missing", &m));
	snprintf(dir, sizeof(dir), "rm -rf %s", root);
	EXPECT_EQ(0, system(dir));
}

/* What the kernel never holds is refused, not passed on (fuzz_cgfiles: a
 * period of 0 came back as a limit). */
TEST(cpu_max_outside_the_kernel_ranges_refused)
{
	static const char *const bad[] = {"1500010010 0\n", "-5 100000\n",  "50000 -100000\n",
					  "50000 100\n",    "500 100000\n", "max 0\n"};
	char root[] = "/tmp/tm-lib.XXXXXX", dir[64];
	__u64 q, per, b;

	ASSERT_NE(NULL, mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/c", root);
	ASSERT_EQ(0, mkdir(dir, 0755));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int w = write_file(dir, "cpu.max", bad[i]);

		EXPECT_EQ(0, w);
		EXPECT_EQ(-1, tm_cg_bw_read(root, "/c", &q, &per, &b));
	}
	ASSERT_EQ(0, write_file(dir, "cpu.max", "50000 100000\n"));
	EXPECT_EQ(1, tm_cg_bw_read(root, "/c", &q, &per, &b));
	EXPECT_EQ(100000ULL, per);
	snprintf(dir, sizeof(dir), "rm -rf %s", root);
	EXPECT_EQ(0, system(dir));
}

struct stat_seen {
	int all, cpus;
	__u64 busy, total;
};

static void on_stat(int cpu, __u64 busy, __u64 total, void *arg)
{
	struct stat_seen *s = arg;

	if (cpu < 0) {
		s->all++;
		s->busy = busy;
		s->total = total;
	} else {
		s->cpus++;
	}
}

TEST(proc_stat_node_and_each_cpu)
{
	struct stat_seen s = {};

	ASSERT_EQ(0, tm_proc_stat(on_stat, &s));
	EXPECT_EQ(1, s.all);
	EXPECT_GE(s.cpus, tm_nr_cpus());
	EXPECT_LE(s.busy, s.total);
	EXPECT_GT(s.total, 0ULL);
}

TEST(domain_kind_names)
{
	EXPECT_STREQ("L3", tm_domain_kind_name(TM_DOMAIN_L3));
	EXPECT_STREQ("L2", tm_domain_kind_name(TM_DOMAIN_L2));
	EXPECT_STREQ("package", tm_domain_kind_name(TM_DOMAIN_PACKAGE));
}

TEST(line_arbiter_lowest_wins_owners_withdraw_their_own)
{
	static struct tm_daemon d;
	const char *owner;

	pthread_mutex_init(&d.lock, NULL);
	d.cfg.cpu.suppress_pct = 65;
	EXPECT_EQ(65U, tm_line_pct(&d, &owner));
	EXPECT_STREQ("config", owner);
	tm_line_request(&d, "interference", 50);
	EXPECT_NE(0U, d.events & TM_EV_LINE);
	d.events = 0;
	tm_line_request(&d, "other", 40);
	EXPECT_EQ(40U, tm_line_pct(&d, &owner));
	EXPECT_STREQ("other", owner);
	/* a request above the configured line changes nothing */
	tm_line_request(&d, "third", 90);
	EXPECT_EQ(40U, tm_line_pct(&d, NULL));
	tm_line_withdraw(&d, "other");
	EXPECT_EQ(50U, tm_line_pct(&d, &owner));
	EXPECT_STREQ("interference", owner);
	/* a second request by the same owner replaces its first */
	tm_line_request(&d, "interference", 55);
	EXPECT_EQ(55U, tm_line_pct(&d, NULL));
	tm_line_withdraw(&d, "interference");
	tm_line_withdraw(&d, "interference");
	tm_line_withdraw(&d, "third");
	EXPECT_EQ(65U, tm_line_pct(&d, &owner));
	EXPECT_STREQ("config", owner);
	EXPECT_EQ(0, d.nr_line_req);
}

/* Cgroup names are a tenant's choice: reports stay valid UTF-8 JSON and
 * Prometheus text whatever the bytes, and distinct names stay distinct. */
TEST(report_text_escaping)
{
	static const struct {
		const char *in, *json, *prom;
	} c[] = {
		{"/be/pod-1", "\"/be/pod-1\"", "\"/be/pod-1\""},
		{"/be/caf\xc3\xa9", "\"/be/caf\xc3\xa9\"", "\"/be/caf\xc3\xa9\""},
		{"/be/\xff\xfe", "\"/be/\\\\xff\\\\xfe\"", "\"/be/\\\\xff\\\\xfe\""},
		{"/be/\xc3", "\"/be/\\\\xc3\"", "\"/be/\\\\xc3\""}, /* cut short */
		{"/be/\xc0\xaf", "\"/be/\\\\xc0\\\\xaf\"", "\"/be/\\\\xc0\\\\xaf\""}, /* overlong */
		{"/be/\xed\xa0\x80", "\"/be/\\\\xed\\\\xa0\\\\x80\"",
		 "\"/be/\\\\xed\\\\xa0\\\\x80\""}, /* surrogate */
		{"/be/\xf0\x9f\x98\x80", "\"/be/\xf0\x9f\x98\x80\"", "\"/be/\xf0\x9f\x98\x80\""},
		{"/be/a\"b\\c\nd", "\"/be/a\\\"b\\\\c\\nd\"", "\"/be/a\\\"b\\\\c\\nd\""},
		{"/be/\x01", "\"/be/\\u0001\"", "\"/be/\x01\""},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct tm_buf j = {}, p = {};
		char *js, *ps;

		tm_bjson_str(&j, c[i].in);
		tm_bprom_label(&p, c[i].in);
		js = tm_buf_done(&j);
		ps = tm_buf_done(&p);
		ASSERT_NE(NULL, js);
		ASSERT_NE(NULL, ps);
		EXPECT_STREQ(c[i].json, js);
		EXPECT_STREQ(c[i].prom, ps);
		free(js);
		free(ps);
		/* the jansson form (/report, /nodemetric) encodes to the same text */
		json_t *o = tm_json_str(c[i].in);

		ASSERT_NE(NULL, o);
		js = json_dumps(o, JSON_ENCODE_ANY);
		ASSERT_NE(NULL, js);
		EXPECT_STREQ(c[i].json, js);
		free(js);
		json_decref(o);
	}
	EXPECT_EQ(0U, tm_utf8_len("\x80"));
	EXPECT_EQ(0U, tm_utf8_len("\xf5\x80\x80\x80"));
	EXPECT_EQ(2U, tm_utf8_len("\xc3\xa9"));
}

TEST_HARNESS_MAIN
