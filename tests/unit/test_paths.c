// SPDX-License-Identifier: GPL-2.0
/*
 * One form for every configured cgroup path: "online/x", "/online/x/",
 * "//online//x" and "/sys/fs/cgroup/online/x" mean the same cgroup to
 * protection, to the interference detector's choice of ONLINE cgroups and to
 * eviction. Runs against a plain directory standing in for the cgroup root
 * (no scheduler: the pins directory does not exist).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "actuate.h"
#include "config.h"
#include "tmlib.h"
#include "standin.h"

static char root[64];
static struct tm_daemon d;

static void mkdirs(const char *rel)
{
	char p[256], *s;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static int setup(const char *online, const char *be)
{
	char cg[512];

	snprintf(cg, sizeof(cg), "{\"online\":[\"%s\"],\"be\":[\"%s\"]}", online, be);
	if (standin_daemon(&d, root, sizeof(root), cg))
		return -1;
	mkdirs("/online/x/sub");
	mkdirs("/be/y");
	return 0;
}

static void cleanup(void)
{
	standin_remove(root);
}

static const char *const forms[] = {"online/x", "/online/x/", "//online//x", "./online/x",
				    "/sys/fs/cgroup/online/x"};

TEST(config_keeps_one_form)
{
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		ASSERT_EQ(0, setup(forms[i], "be/*"));
		EXPECT_STREQ("/online/x", d.cfg.online[0]);
		EXPECT_STREQ("/be/*", d.cfg.be[0].path);
		cleanup();
	}
}

TEST(protection_the_same_for_every_form)
{
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		ASSERT_EQ(0, setup(forms[i], "/be"));
		EXPECT_TRUE(tm_protected(&d, "/online/x"));
		EXPECT_TRUE(tm_protected(&d, "/online/x/sub"));
		EXPECT_FALSE(tm_protected(&d, "/online"));
		EXPECT_FALSE(tm_protected(&d, "/be/y"));
		cleanup();
	}
}

TEST(interference_watches_every_form)
{
	/* the detector takes the cgroups tm_cfg_online names as its sufferers */
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		ASSERT_EQ(0, setup(forms[i], "/be"));
		EXPECT_TRUE(tm_cfg_online(&d, "/online/x"));
		EXPECT_FALSE(tm_cfg_online(&d, "/online/x/sub"));
		cleanup();
	}
	ASSERT_EQ(0, setup("online/*", "/be"));
	EXPECT_TRUE(tm_cfg_online(&d, "/online/x"));
	cleanup();
}

TEST(eviction_the_same_for_every_form)
{
	char p[256], buf[8] = "";
	FILE *f;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		/* "be" lists the ONLINE cgroup too: protection wins */
		ASSERT_EQ(0, setup(forms[i], "online/*"));
		struct tm_be_cg *cg;

		EXPECT_EQ(0, tm_be_cgroups(&d, &cg));
		free(cg);
		EXPECT_FALSE(tm_evict(&d, "test", "kill", "/online/x", false, "why=test"));
		snprintf(p, sizeof(p), "%s/online/x/cgroup.kill", root);
		EXPECT_NE(0, access(p, F_OK));
		cleanup();
	}
	ASSERT_EQ(0, setup("/online/x", "be/y/"));
	struct tm_be_cg *cg;

	ASSERT_EQ(1, tm_be_cgroups(&d, &cg));
	EXPECT_STREQ("/be/y", cg[0].path);
	EXPECT_TRUE(tm_evict(&d, "test", "kill", cg[0].path, false, "why=test"));
	snprintf(p, sizeof(p), "%s/be/y/cgroup.kill", root);
	f = fopen(p, "r");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_STREQ("1", buf);
	free(cg);
	cleanup();
}

/* Globs that overlap: each cgroup once, where it was first matched (its
 * entry's settings apply), in the order matched; protected ones left out. */
TEST(overlapping_globs_list_each_cgroup_once)
{
	char json[512], err[256];
	struct tm_be_cg *cg;

	ASSERT_EQ(0, setup("/online/x", "/be/y"));
	mkdirs("/be/a");
	mkdirs("/be/z");
	snprintf(json, sizeof(json),
		 "{\"version\":1,\"scheduler\":{\"pin_dir\":\"%s/no-pins\"},"
		 "\"cgroups\":{\"online\":[\"/online/x\"],\"be\":[\"/be/z\",\"/be/*\","
		 "{\"path\":\"/be/a\",\"priority\":-1},\"/online/*\",\"/be/z\"]}}",
		 root);
	ASSERT_EQ(0, tm_config_parse(json, &d.cfg, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3, tm_be_cgroups(&d, &cg));
	EXPECT_STREQ("/be/z", cg[0].path);
	EXPECT_EQ(&d.cfg.be[0], cg[0].cfg);
	EXPECT_STREQ("/be/a", cg[1].path);
	EXPECT_EQ(&d.cfg.be[1], cg[1].cfg); /* the glob of entry 1 matched it first */
	EXPECT_STREQ("/be/y", cg[2].path);
	EXPECT_EQ(&d.cfg.be[1], cg[2].cfg);
	free(cg);
	cleanup();
}

TEST(bad_paths_refused_with_the_reason)
{
	char err[256];
	struct tm_config c;

	EXPECT_NE(0, tm_config_parse("{\"version\":1,\"cgroups\":{\"be\":[\"/be/../online\"]}}", &c,
				     err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "'..' is not allowed"));
	EXPECT_NE(0, tm_config_parse("{\"version\":1,\"cgroups\":{\"online\":[\"\"]}}", &c, err,
				     sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "empty cgroup path"));
}

TEST_HARNESS_MAIN
