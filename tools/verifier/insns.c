// SPDX-License-Identifier: GPL-2.0
/*
 * tm-insns: the verifier's processed-instruction count of every loaded BPF
 * program whose name matches a prefix (default: all), one "name count" line
 * each, sorted by name. Reads bpf_prog_info.verified_insns, so it measures
 * any running scheduler, whatever built it. Names come from the program's
 * BTF (the kernel cuts bpf_prog_info.name at 15 characters).
 * With --runtime: "name run_cnt run_time_ns" instead, the kernel's BPF
 * statistics (sysctl kernel.bpf_stats_enabled=1 while the programs ran).
 *
 *   tm-insns [--runtime] [PREFIX...]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

struct row {
	char name[64];
	__u32 insns;
	__u64 run_cnt, run_time_ns;
};

/* The program's full name: its first func_info entry in its BTF. */
static void full_name(int fd, const struct bpf_prog_info *info, char *out, size_t len)
{
	struct bpf_func_info fi[1] = {};
	struct bpf_prog_info i2 = {};
	__u32 l2 = sizeof(i2);
	const struct btf_type *t;
	struct btf *btf;

	snprintf(out, len, "%s", info->name);
	if (!info->btf_id || !info->nr_func_info)
		return;
	i2.nr_func_info = 1;
	i2.func_info_rec_size = sizeof(fi[0]);
	i2.func_info = (__u64)(unsigned long)fi;
	if (bpf_prog_get_info_by_fd(fd, &i2, &l2))
		return;
	btf = btf__load_from_kernel_by_id(info->btf_id);
	if (!btf)
		return;
	t = btf__type_by_id(btf, fi[0].type_id);
	if (t)
		snprintf(out, len, "%s", btf__name_by_offset(btf, t->name_off));
	btf__free(btf);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

int main(int argc, char **argv)
{
	struct row rows[256];
	bool runtime = argc > 1 && !strcmp(argv[1], "--runtime");
	__u32 id = 0;
	int n = 0;

	if (runtime) {
		argv++;
		argc--;
	}

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);
		bool want = argc < 2;

		if (fd < 0)
			continue;
		if (!bpf_prog_get_info_by_fd(fd, &info, &len)) {
			for (int i = 1; i < argc && !want; i++)
				want = !strncmp(info.name, argv[i], strlen(argv[i]));
			if (want && n < 256) {
				full_name(fd, &info, rows[n].name, sizeof(rows[n].name));
				rows[n].run_cnt = info.run_cnt;
				rows[n].run_time_ns = info.run_time_ns;
				rows[n++].insns = info.verified_insns;
			}
		}
		close(fd);
	}
	if (errno != ENOENT) {
		fprintf(stderr, "tm-insns: walking BPF programs: %s\n", strerror(errno));
		return 1;
	}
	qsort(rows, n, sizeof(rows[0]), by_name);
	for (int i = 0; i < n; i++) {
		if (runtime)
			printf("%s %llu %llu\n", rows[i].name, (unsigned long long)rows[i].run_cnt,
			       (unsigned long long)rows[i].run_time_ns);
		else
			printf("%s %u\n", rows[i].name, rows[i].insns);
	}
	return n ? 0 : 1;
}
