// SPDX-License-Identifier: GPL-2.0
/*
 * What a tenant controls in tidemarkd's reports: the names of its cgroups.
 * Each input is a list of names (one per line, the first byte of each
 * picking ONLINE, BE or a BestEffort pod's slice, whose name the kubelet
 * gives and NodeMetric parses for a pod UID), made as cgroups with usage counters under a
 * stand-in cgroup root; tidemarkd samples the tree as it does every
 * report.sample_s and builds /report, /metrics and /nodemetric. Contracts:
 * /report and /nodemetric are JSON that parses (jansson refuses bad
 * UTF-8), /metrics is UTF-8 and every sample line is name{labels} value
 * with each label value quoted and escaped as the exposition format says.
 */
#include <ctype.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "daemon.h"
#include "fuzz.h"
#include "nodemetric.h"
#include "report.h"

#define NAMES_MAX 24

static struct tm_daemon d = {.state_dir = "/nonexistent"};
static char root[64];
static uint64_t now_ms = 1000000;

static void put(const char *dir, const char *file, const char *text)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256], dir[128];
	const char *json = "{\"version\":1,\"cgroups\":{\"online\":[\"/online/*\"],"
			   "\"be\":[\"/be/*\",\"/kubepods.slice/kubepods-besteffort.slice/*\"]},"
			   "\"scheduler\":{\"pin_dir\":\"/nonexistent\"}}";

	snprintf(root, sizeof(root), "/tmp/fuzz-report-XXXXXX");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	snprintf(dir, sizeof(dir), "%s/online", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/be", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/kubepods.slice", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/kubepods.slice/kubepods-besteffort.slice", root);
	mkdir(dir, 0755);
	d.cgroup_root = root;
	pthread_mutex_init(&d.lock, NULL);
	if (tm_config_parse(json, &d.cfg, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	tm_nm_init(&d);
	return 0;
}

/* A label value: "..." with only \\, \" and \n escapes, no raw newline. */
static const char *label_value(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if (*p == '\n')
			return NULL;
		if (*p == '\\' && (p[1] == '\\' || p[1] == '"' || p[1] == 'n'))
			p++;
		else if (*p == '\\')
			return NULL;
	}
	return *p == '"' ? p + 1 : NULL;
}

static bool sample_line(const char *p)
{
	if (!isalpha((unsigned char)*p) && *p != '_' && *p != ':')
		return false;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == ':')
		p++;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			if (!isalpha((unsigned char)*p) && *p != '_')
				return false;
			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			if (*p++ != '=' || !(p = label_value(p)))
				return false;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return false;
		}
		p++;
	}
	return *p == ' ' && p[1] && p[1] != '\n';
}

static void check_metrics(char *text)
{
	json_t *utf8 = json_stringn(text, strlen(text));

	if (!utf8)
		abort(); /* not UTF-8 */
	json_decref(utf8);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if (line[0] != '#' && !sample_line(line)) {
			fprintf(stderr, "bad sample line: %s\n", line);
			abort();
		}
}

static void check_json(char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j) {
		fprintf(stderr, "invalid JSON: %s\n", e.text);
		abort();
	}
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char made[NAMES_MAX][600], *s = fuzz_str(data, size), *line, *save = NULL, *out;
	int n = 0;

	if (!s)
		return 0;
	for (line = strtok_r(s, "\n", &save); line && n < NAMES_MAX;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *name = line + 1;
		char usage[64];

		/* what the kernel lets a cgroup be named: no '/', not . or .. */
		if (!line[0] || !*name || strchr(name, '/') || !strcmp(name, ".") ||
		    !strcmp(name, "..") || strlen(name) > 255)
			continue;
		snprintf(made[n], sizeof(made[n]), "%s/%s/%s", root,
			 line[0] % 3 == 0   ? "be"
			 : line[0] % 3 == 1 ? "online"
					    : "kubepods.slice/kubepods-besteffort.slice",
			 name);
		if (mkdir(made[n], 0755))
			continue;
		snprintf(usage, sizeof(usage), "usage_usec %u\n", (unsigned int)(n * 1000));
		put(made[n], "cpu.stat", usage);
		put(made[n], "memory.current", "4096\n");
		n++;
	}
	free(s);
	tm_report_sample(&d, now_ms);
	now_ms += 1000;
	tm_report_sample(&d, now_ms);
	now_ms += 1000;
	if ((out = tm_report_prometheus(&d))) {
		check_metrics(out);
		free(out);
	}
	if ((out = tm_report_json(&d))) {
		check_json(out);
		free(out);
	}
	if ((out = tm_nm_json(&d))) {
		check_json(out);
		free(out);
	}
	while (n--) {
		char p[700];

		snprintf(p, sizeof(p), "%s/cpu.stat", made[n]);
		unlink(p);
		snprintf(p, sizeof(p), "%s/memory.current", made[n]);
		unlink(p);
		rmdir(made[n]);
	}
	return 0;
}
