// SPDX-License-Identifier: GPL-2.0
/*
 * Saved cgroup values (actuate.c): what tidemarkd overwrites is recorded on
 * disk first, and a later tidemarkd puts it back. A record whose cgroup
 * is gone by then is dropped and counted as gone, not as restored: a
 * BE cgroup that came and went while no tidemarkd ran. Runs against a
 * plain directory standing in for the cgroup root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "fakecg.h"
#include "actuate.h"
#include "config.h"
#include "tmlib.h"

static char root[64];
static struct tm_daemon d;

FIXTURE(saved){};

FIXTURE_SETUP(saved)
{
	ASSERT_EQ(0, fakecg_root(root, sizeof(root)));
	ASSERT_EQ(0, fakecg_put(root, "/be/mem", "memory.high", "max\n"));
	ASSERT_EQ(0, fakecg_put(root, "/be/c20", "memory.high", "max\n"));
	memset(&d, 0, sizeof(d));
	pthread_mutex_init(&d.lock, NULL);
	d.cgroup_root = root;
	d.state_dir = root;
}

FIXTURE_TEARDOWN(saved)
{
	fakecg_remove(root);
}

TEST_F(saved, a_gone_cgroup_is_counted_as_gone_not_restored)
{
	char err[256], p[128];
	int gone = -1;

	ASSERT_EQ(0, tm_cg_write_saved(&d, "memory_eviction", "/be/c20", "memory.high", "4096"));
	ASSERT_EQ(0, tm_cg_write_saved(&d, "memory_eviction", "/be/mem", "memory.high", "8192"));
	EXPECT_STREQ("8192", fakecg_get(root, "/be/mem", "memory.high"));
	/* a later tidemarkd: the records from disk; the short-lived cgroup gone */
	ASSERT_EQ(0, tm_saved_load(&d, err, sizeof(err)));
	ASSERT_EQ(2, tm_saved_count("memory_eviction"));
	snprintf(p, sizeof(p), "%s/be/c20/memory.high", root);
	ASSERT_EQ(0, unlink(p));
	snprintf(p, sizeof(p), "%s/be/c20", root);
	ASSERT_EQ(0, rmdir(p));
	EXPECT_EQ(1, tm_cg_restore(&d, "memory_eviction", NULL, &gone));
	EXPECT_EQ(1, gone);
	EXPECT_STREQ("max", fakecg_get(root, "/be/mem", "memory.high"));
	EXPECT_EQ(0, tm_saved_count("memory_eviction"));
	/* and none on disk either */
	ASSERT_EQ(0, tm_saved_load(&d, err, sizeof(err)));
	EXPECT_EQ(0, tm_saved_count("memory_eviction"));
}

/* A write that fails for another reason than a gone cgroup keeps the
 * record for the next restore, and says so: it was kept silently once,
 * and that is how a restore-order bug hid. */
TEST_F(saved, a_failed_write_is_kept_and_logged)
{
	char err[256], p[128], log[512] = "";
	int gone = -1, saved_fd, n;
	FILE *f = tmpfile();

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, tm_cg_write_saved(&d, "memory_eviction", "/be/mem", "memory.high", "8192"));
	ASSERT_EQ(0, tm_saved_load(&d, err, sizeof(err)));
	/* the file cannot be written (a directory in its place): not ENOENT */
	snprintf(p, sizeof(p), "%s/be/mem/memory.high", root);
	ASSERT_EQ(0, unlink(p));
	ASSERT_EQ(0, mkdir(p, 0755));
	fflush(stderr);
	saved_fd = dup(2);
	ASSERT_LE(0, saved_fd);
	ASSERT_EQ(2, dup2(fileno(f), 2));
	n = tm_cg_restore(&d, "memory_eviction", NULL, &gone);
	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	rewind(f);
	log[fread(log, 1, sizeof(log) - 1, f)] = 0;
	fclose(f);
	EXPECT_EQ(0, n);
	EXPECT_EQ(0, gone);
	EXPECT_EQ(1, tm_saved_count("memory_eviction"));
	EXPECT_NE(NULL, strstr(log, "/be/mem memory.high not restored to max"));
	EXPECT_NE(NULL, strstr(log, "(kept)"));
	ASSERT_EQ(0, rmdir(p));
}

TEST_F(saved, only_the_owner_s_records_are_restored)
{
	int gone = -1;

	ASSERT_EQ(0, tm_cg_write_saved(&d, "fallback", "/be/mem", "memory.high", "100"));
	EXPECT_EQ(0, tm_cg_restore(&d, "memory_eviction", NULL, &gone));
	EXPECT_EQ(0, gone);
	EXPECT_STREQ("100", fakecg_get(root, "/be/mem", "memory.high"));
	EXPECT_EQ(1, tm_cg_restore(&d, "fallback", "/be/mem", NULL));
	EXPECT_STREQ("max", fakecg_get(root, "/be/mem", "memory.high"));
}

/* Last saved, first restored: the fallback saves cpu.weight before
 * cpu.idle, and cpu.idle 0 resets cpu.weight (a weight written while the
 * cgroup is idle is refused), so cpu.idle must go back first. The order
 * of the writes is read from inotify, which queues them as they happen. */
TEST_F(saved, the_last_value_saved_is_the_first_restored)
{
	char p[128], buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	char order[64] = "";
	ssize_t len;
	int fd;

	fakecg_put(root, "/be/mem", "cpu.weight", "50\n");
	fakecg_put(root, "/be/mem", "cpu.idle", "0\n");
	ASSERT_EQ(0, tm_cg_record(&d, "fallback", "/be/mem", "cpu.weight"));
	ASSERT_EQ(0, tm_cg_record(&d, "fallback", "/be/mem", "cpu.idle"));
	ASSERT_EQ(0, tm_saved_sync(&d));
	fakecg_put(root, "/be/mem", "cpu.idle", "1\n");
	fd = inotify_init1(IN_NONBLOCK);
	ASSERT_LE(0, fd);
	snprintf(p, sizeof(p), "%s/be/mem", root);
	ASSERT_LE(0, inotify_add_watch(fd, p, IN_CLOSE_WRITE));
	EXPECT_EQ(2, tm_cg_restore(&d, "fallback", "/be/mem", NULL));
	len = read(fd, buf, sizeof(buf));
	ASSERT_LT(0, len);
	for (char *e = buf; e < buf + len;) {
		struct inotify_event *ev = (struct inotify_event *)e;

		if (ev->len) {
			strncat(order, ev->name, sizeof(order) - strlen(order) - 2);
			strcat(order, " ");
		}
		e += sizeof(*ev) + ev->len;
	}
	close(fd);
	EXPECT_STREQ("cpu.idle cpu.weight ", order);
	EXPECT_STREQ("0", fakecg_get(root, "/be/mem", "cpu.idle"));
	EXPECT_STREQ("50", fakecg_get(root, "/be/mem", "cpu.weight"));
}

/* Records written by tidemark 0.6.0, whose strategies had other names
 * (memevict, fallback): restored by the strategies as they are named now. */
TEST_F(saved, records_of_the_old_names_are_taken_by_the_renamed_strategies)
{
	char err[256];
	int gone = -1;

	fakecg_put(root, "/be/mem", "memory.high", "4096\n");
	fakecg_put(root, "", "saved.json",
		   "{\"version\":1,\"saved\":["
		   "{\"owner\":\"memevict\",\"cgroup\":\"/be/mem\",\"file\":\"memory.high\","
		   "\"value\":\"max\"},"
		   "{\"owner\":\"fallback\",\"cgroup\":\"/be/c20\",\"file\":\"memory.high\","
		   "\"value\":\"max\"}]}\n");
	ASSERT_EQ(0, tm_saved_load(&d, err, sizeof(err)));
	EXPECT_EQ(1, tm_saved_count("memory_eviction"));
	EXPECT_EQ(0, tm_saved_count("memevict"));
	EXPECT_EQ(1, tm_saved_count("fallback"));
	EXPECT_EQ(1, tm_cg_restore(&d, "memory_eviction", NULL, &gone));
	EXPECT_EQ(0, gone);
	EXPECT_STREQ("max", fakecg_get(root, "/be/mem", "memory.high"));
}

TEST_HARNESS_MAIN
