// SPDX-License-Identifier: GPL-2.0
/* Unit tests for class rules: kubelet layouts, globs, precedence, errors. */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "rules.h"

FIXTURE(tree)
{
	char root[64];
	char err[512];
};

static void mk(const char *root, const char *rel)
{
	char p[PATH_MAX], *s;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static __u64 ino(const char *root, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (stat(p, &st))
		return 0;
	return st.st_ino;
}

/* class of @rel in the resolved set; -1 when it has no entry of its own */
static int class_of(const struct tm_class_entry *v, size_t n, __u64 id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return v[i].cls;
	return -1;
}

FIXTURE_SETUP(tree)
{
	snprintf(self->root, sizeof(self->root), "/tmp/tm-rules-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	/* kubelet, systemd driver */
	mk(self->root, "kubepods.slice/kubepods-pod1111.slice/cri-containerd-a.scope");
	mk(self->root, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod2222.slice");
	mk(self->root,
	   "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod3333.slice");
	/* kubelet, cgroupfs driver */
	mk(self->root, "kubepods/pod4444");
	mk(self->root, "kubepods/burstable/pod5555");
	mk(self->root, "kubepods/besteffort/pod6666");
	/* user cgroups */
	mk(self->root, "batch/job-1");
	mk(self->root, "batch/job-2");
	mk(self->root, "batch/other");
	mk(self->root, "web");
}

FIXTURE_TEARDOWN(tree)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->root);
	if (system(cmd))
		TH_LOG("cleanup of %s failed", self->root);
}

TEST_F(tree, kubelet_auto_covers_both_drivers)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v;
	size_t n;

	ASSERT_EQ(0, tm_rules_add_kubelet(&rs, TM_KUBELET_AUTO, self->err, sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_resolve(&rs, self->root, false, false, &v, &n, self->err,
				      sizeof(self->err)));
	EXPECT_EQ(6U, n);
	EXPECT_EQ(TM_CLASS_ONLINE, class_of(v, n, ino(self->root, "kubepods.slice")));
	EXPECT_EQ(TM_CLASS_ONLINE,
		  class_of(v, n, ino(self->root, "kubepods.slice/kubepods-burstable.slice")));
	EXPECT_EQ(TM_CLASS_BE,
		  class_of(v, n, ino(self->root, "kubepods.slice/kubepods-besteffort.slice")));
	EXPECT_EQ(TM_CLASS_ONLINE, class_of(v, n, ino(self->root, "kubepods")));
	EXPECT_EQ(TM_CLASS_ONLINE, class_of(v, n, ino(self->root, "kubepods/burstable")));
	EXPECT_EQ(TM_CLASS_BE, class_of(v, n, ino(self->root, "kubepods/besteffort")));
	/* pods are not listed: they inherit from their QoS cgroup */
	EXPECT_EQ(-1, class_of(v, n, ino(self->root, "kubepods/besteffort/pod6666")));
	free(v);
}

TEST_F(tree, kubelet_missing_layout_is_not_an_error)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v;
	char cmd[160];
	size_t n;

	snprintf(cmd, sizeof(cmd), "rm -rf %s/kubepods", self->root);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, tm_rules_add_kubelet(&rs, TM_KUBELET_CGROUPFS, self->err, sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_resolve(&rs, self->root, false, false, &v, &n, self->err,
				      sizeof(self->err)));
	EXPECT_EQ(0U, n);
	free(v);
}

TEST_F(tree, glob_matches_and_skips_files)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v;
	char f[PATH_MAX];
	size_t n;

	/* a file matching the glob must not become a class entry */
	snprintf(f, sizeof(f), "%s/batch/job-file", self->root);
	close(creat(f, 0644));
	ASSERT_EQ(0, tm_rules_add(&rs, "/batch/job-*", TM_CLASS_BE, self->err, sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_resolve(&rs, self->root, false, false, &v, &n, self->err,
				      sizeof(self->err)));
	EXPECT_EQ(2U, n);
	EXPECT_EQ(TM_CLASS_BE, class_of(v, n, ino(self->root, "batch/job-1")));
	EXPECT_EQ(TM_CLASS_BE, class_of(v, n, ino(self->root, "batch/job-2")));
	EXPECT_EQ(-1, class_of(v, n, ino(self->root, "batch/other")));
	free(v);
}

TEST_F(tree, glob_matching_nothing_is_fine)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v;
	size_t n;

	ASSERT_EQ(0, tm_rules_add(&rs, "nothing-*/x", TM_CLASS_BE, self->err, sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_resolve(&rs, self->root, false, false, &v, &n, self->err,
				      sizeof(self->err)));
	EXPECT_EQ(0U, n);
	free(v);
}

TEST_F(tree, last_rule_wins_user_over_kubelet)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v;
	size_t n;

	/* the user makes one besteffort QoS cgroup ONLINE and one job BE then SYSTEM */
	ASSERT_EQ(0, tm_rules_add(&rs, "kubepods/besteffort", TM_CLASS_ONLINE, self->err,
				  sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_add(&rs, "batch/*", TM_CLASS_BE, self->err, sizeof(self->err)));
	ASSERT_EQ(0,
		  tm_rules_add(&rs, "/batch/job-2", TM_CLASS_SYSTEM, self->err, sizeof(self->err)));
	/* kubelet rules are added after the user's but placed first */
	ASSERT_EQ(0, tm_rules_add_kubelet(&rs, TM_KUBELET_CGROUPFS, self->err, sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_resolve(&rs, self->root, false, false, &v, &n, self->err,
				      sizeof(self->err)));
	EXPECT_EQ(TM_CLASS_ONLINE, class_of(v, n, ino(self->root, "kubepods/besteffort")));
	EXPECT_EQ(TM_CLASS_BE, class_of(v, n, ino(self->root, "batch/job-1")));
	EXPECT_EQ(TM_CLASS_SYSTEM, class_of(v, n, ino(self->root, "batch/job-2")));
	/* sorted by id, one entry per cgroup */
	for (size_t i = 1; i < n; i++)
		EXPECT_LT(v[i - 1].id, v[i].id);
	free(v);
}

TEST_F(tree, missing_plain_path_is_an_error_naming_it)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v = NULL;
	size_t n = 0;

	ASSERT_EQ(0, tm_rules_add(&rs, "web", TM_CLASS_ONLINE, self->err, sizeof(self->err)));
	ASSERT_EQ(0, tm_rules_add(&rs, "/no-such", TM_CLASS_BE, self->err, sizeof(self->err)));
	EXPECT_EQ(-1, tm_rules_resolve(&rs, self->root, false, false, &v, &n, self->err,
				       sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "no-such"));
	EXPECT_NE(NULL, strstr(self->err, "No such file"));
	/* lenient (rescans): the rest still applies */
	ASSERT_EQ(0, tm_rules_resolve(&rs, self->root, false, true, &v, &n, self->err,
				      sizeof(self->err)));
	EXPECT_EQ(1U, n);
	EXPECT_EQ(TM_CLASS_ONLINE, class_of(v, n, ino(self->root, "web")));
	free(v);
}

TEST_F(tree, not_cgroup2_is_refused)
{
	struct tm_ruleset rs = {.n = 0};
	struct tm_class_entry *v = NULL;
	size_t n = 0;

	ASSERT_EQ(0, tm_rules_add(&rs, "web", TM_CLASS_ONLINE, self->err, sizeof(self->err)));
	EXPECT_EQ(-1, tm_rules_resolve(&rs, self->root, true, false, &v, &n, self->err,
				       sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "not a cgroup v2 mount"));
}

TEST(bad_rules_refused)
{
	struct tm_ruleset rs = {.n = 0};
	char err[256];

	EXPECT_EQ(-1, tm_rules_add(&rs, "", TM_CLASS_BE, err, sizeof(err)));
	EXPECT_EQ(-1, tm_rules_add(&rs, "a/../b", TM_CLASS_BE, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, ".."));
	EXPECT_EQ(-1, tm_rules_add(&rs, "a", 7, err, sizeof(err)));
	for (int i = 0; i < TM_MAX_RULES; i++)
		ASSERT_EQ(0, tm_rules_add(&rs, "x", TM_CLASS_BE, err, sizeof(err)));
	EXPECT_EQ(-1, tm_rules_add(&rs, "x", TM_CLASS_BE, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "more than"));
	EXPECT_EQ(-1, tm_rules_add_kubelet(&rs, TM_KUBELET_AUTO, err, sizeof(err)));
}

TEST(kubelet_mode_names)
{
	EXPECT_EQ(TM_KUBELET_OFF, tm_kubelet_parse("off"));
	EXPECT_EQ(TM_KUBELET_AUTO, tm_kubelet_parse("auto"));
	EXPECT_EQ(TM_KUBELET_SYSTEMD, tm_kubelet_parse("systemd"));
	EXPECT_EQ(TM_KUBELET_CGROUPFS, tm_kubelet_parse("cgroupfs"));
	EXPECT_EQ(-1, tm_kubelet_parse("docker"));
}

TEST(pod_uid_from_kubelet_names)
{
	char uid[64];

	/* systemd driver: '_' for '-', any QoS, from the pod or a container */
	ASSERT_EQ(1, tm_pod_uid("/kubepods.slice/kubepods-besteffort.slice/"
				"kubepods-besteffort-pod0b1c2d3e_4f50_6172_8394_a5b6c7d8e9f0.slice/"
				"cri-containerd-abc.scope",
				uid, sizeof(uid)));
	EXPECT_STREQ("0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", uid);
	ASSERT_EQ(
		1,
		tm_pod_uid("/kubepods.slice/kubepods-pod0b1c2d3e_4f50_6172_8394_a5b6c7d8e9f1.slice",
			   uid, sizeof(uid)));
	EXPECT_STREQ("0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f1", uid);
	/* cgroupfs driver */
	ASSERT_EQ(1, tm_pod_uid("/kubepods/besteffort/pod0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f2/c1",
				uid, sizeof(uid)));
	EXPECT_STREQ("0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f2", uid);
	/* not a pod: the QoS level, a short or non-hex UID, other names */
	EXPECT_EQ(0, tm_pod_uid("/kubepods.slice/kubepods-besteffort.slice", uid, sizeof(uid)));
	EXPECT_EQ(0, tm_pod_uid("/kubepods/besteffort/pod1234", uid, sizeof(uid)));
	EXPECT_EQ(0, tm_pod_uid("/kubepods/besteffort/podzb1c2d3e-4f50-6172-8394-a5b6c7d8e9f2", uid,
				sizeof(uid)));
	EXPECT_EQ(0, tm_pod_uid("/batch/job-1", uid, sizeof(uid)));
	EXPECT_EQ(0, tm_pod_uid("/", uid, sizeof(uid)));
	EXPECT_EQ(0, tm_pod_uid("", uid, sizeof(uid)));
	/* too small a buffer: refused, not truncated */
	EXPECT_EQ(0, tm_pod_uid("/kubepods/pod0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f2", uid, 36));
}

TEST_HARNESS_MAIN
