// SPDX-License-Identifier: GPL-2.0
/*
 * scx_tidemark: loads the tidemark sched_ext scheduler, prints its counters,
 * and restarts it when the kernel asks for a restart (CPU hotplug).
 *
 * Options are parsed once into struct tm_opts and applied to every fresh
 * skeleton, so a restart never loses them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <inttypes.h>
#include <signal.h>
#include <time.h>
#include <pthread.h>

#include <scx/common.h>
#include <systemd/sd-daemon.h>

#include "tmmaps.h"
#include "loader.h"
#include "preflight.h"
#include "runtime.h"
#include "tidemark_policy.h"
#include "log.h"

static volatile sig_atomic_t exit_req;

/* libbpf's messages, at their level (its debug ones only with --verbose) */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	tm_vlog(level == LIBBPF_WARN   ? TM_LOG_WARNING
		: level == LIBBPF_INFO ? TM_LOG_INFO
				       : TM_LOG_DEBUG,
		fmt, args);
	return 0;
}

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return libbpf_print(level, fmt, args);
}

static void on_signal(int sig)
{
	exit_req = 1;
}

/* The tunables an instance ran with (tidemarkd's line, a tidemarkctl set):
 * the next instance after a restart (CPU hotplug) starts with them when they
 * still fit the CPUs online. Not an option: the options stay as parsed. */
struct tm_carry {
	struct tm_tunables tun;
	bool have;
};

/* Which sched_ext instance this is, into the ABI map before it is pinned:
 * tidemarkctl and tidemarkd then refuse these maps once it is gone. */
static void record_instance(struct tidemark *skel)
{
	struct tm_abi abi;
	__u32 zero = 0;
	char why[128];
	long seq;
	int fd = bpf_map__fd(skel->maps.abi);

	if (!tm_sched_running(&seq, why, sizeof(why)) || seq <= 0 ||
	    bpf_map_lookup_elem(fd, &zero, &abi))
		return; /* ejected already: the exit is reported below */
	abi.enable_seq = (__u32)seq;
	bpf_map_update_elem(fd, &zero, &abi, BPF_ANY);
}

/*
 * What this kernel's sched_ext offers, from its BTF. Read in a thread while
 * the object is opened and the topology discovered: parsing vmlinux BTF and
 * scanning it once per name takes about as long as both, and libbpf parses
 * it again for the load (it takes no parsed copy).
 */
struct tm_compat {
	pthread_t thread;
	bool started;
	bool btf;      /* vmlinux BTF was read */
	bool set_bw;   /* ops.cgroup_set_bandwidth exists (6.17) */
	bool enq_last; /* SCX_OPS_ENQ_LAST: without it, no sched_ext */
	u64 enq_last_flag;
	u64 cg_weight_flag; /* SCX_OPS_HAS_CGROUP_WEIGHT, 0 when absent */
};

static void *compat_read(void *arg)
{
	struct tm_compat *c = arg;

	/* loaded here, the compat helpers below never load (nor exit) */
	if (!__COMPAT_vmlinux_btf)
		__COMPAT_vmlinux_btf = btf__load_vmlinux_btf();
	c->btf = __COMPAT_vmlinux_btf;
	if (!c->btf)
		return NULL;
	c->set_bw = __COMPAT_struct_has_field("sched_ext_ops", "cgroup_set_bandwidth");
	c->enq_last = __COMPAT_read_enum("scx_ops_flags", "SCX_OPS_ENQ_LAST", &c->enq_last_flag);
	if (!__COMPAT_read_enum("scx_ops_flags", "SCX_OPS_HAS_CGROUP_WEIGHT", &c->cg_weight_flag))
		c->cg_weight_flag = 0;
	return NULL;
}

static void compat_start(struct tm_compat *c)
{
	memset(c, 0, sizeof(*c));
	c->started = !pthread_create(&c->thread, NULL, compat_read, c);
	if (!c->started)
		compat_read(c); /* no thread: read it here */
}

static void compat_wait(struct tm_compat *c)
{
	if (c->started)
		pthread_join(c->thread, NULL);
	c->started = false;
}

/* Loading or attaching failed: say what the node lacks, if anything. */
static void preflight_report(void)
{
	struct tm_preflight pf;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	tm_preflight_run(&pf, NULL);
	if (!f)
		return;
	tm_preflight_print(f, &pf);
	fclose(f);
	tm_log(pf.missing ? TM_LOG_ERR : TM_LOG_NOTICE, "%s", buf);
	free(buf);
}

/*
 * One scheduler lifetime: open, configure, load, attach, wait for a signal
 * or an exit from the kernel. Returns the exit code the kernel recorded (or a
 * negative errno when loading failed); *restart says whether to go again.
 */
static int run_once(const struct tm_opts *o, bool first, bool *restart, struct tm_carry *carry)
{
	struct tidemark *skel;
	struct bpf_link *link = NULL;
	struct tm_owned own = {};
	struct tm_bw_state bws = {};
	struct tm_place_run *pr;
	struct timespec now;
	__u64 next_rescan, now_ms;
	time_t next_stats;
	__s64 ecode = 0;
	long hp;
	__u32 zero = 0;
	struct tm_tunables tun;
	struct tm_compat compat;
	char rt_err[512];
	int err, n;

	*restart = false;
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		tm_log(TM_LOG_ERR, "scx_tidemark: out of memory\n");
		return -ENOMEM;
	}
	compat_start(&compat);
	skel = tidemark__open();
	if (!skel) {
		err = -errno;
		tm_log(TM_LOG_ERR, "scx_tidemark: cannot open BPF object: %s\n", strerror(errno));
		compat_wait(&compat);
		preflight_report();
		free(pr);
		return err;
	}
	/* the kernel bumps hotplug_seq on CPU hotplug; passing it in makes a
	 * hotplug that races with loading end in a restartable exit */
	hp = scx_hotplug_seq();
	if (hp >= 0)
		skel->struct_ops.tidemark_ops->hotplug_seq = hp;
	skel->struct_ops.tidemark_ops->timeout_ms = o->timeout_ms;
	skel->rodata->nr_cpus = tm_nr_cpus_possible();
	skel->rodata->cap_cpus = tm_nr_cpus();
	/* a task held by a CPU limit longer than half the watchdog runs anyway */
	skel->rodata->bw_guard_ns =
		(__u64)(o->timeout_ms ? o->timeout_ms : TM_TIMEOUT_MS_MAX) * 1000000 / 2;
	/* a restart after CPU hotplug: the same options, fewer CPUs; the values
	 * set at runtime carry over when they still fit the CPUs now online */
	tun = o->tun;
	if (carry->have) {
		const char *why = tm_tunables_check(&carry->tun, tm_nr_cpus());
		char line[512];

		if (!why) {
			tun = carry->tun;
			tm_tunables_format(&tun, line, sizeof(line));
			tm_log(TM_LOG_INFO,
			       "scx_tidemark: tunables kept from the previous instance "
			       "(%s)\n",
			       line);
		} else {
			tm_log(TM_LOG_WARNING,
			       "scx_tidemark: the previous instance's tunables no longer fit (%s, "
			       "%d online CPUs): back to the command line's\n",
			       why, tm_nr_cpus());
		}
	}
	if (tm_check_tunables(&tun)) {
		err = -EINVAL;
		goto out;
	}
	/* a hotplug restart reads the topology again */
	tm_setup_domains(skel, o, &tun, pr);
	compat_wait(&compat);
	if (!compat.btf) {
		tm_log(TM_LOG_ERR, "scx_tidemark: cannot read the kernel's BTF "
				   "(/sys/kernel/btf/vmlinux)\n");
		preflight_report();
		err = -ENOTSUP;
		goto out;
	}
	/* 6.17 reports cpu.max writes; elsewhere the rescan reads them alone */
	if (!compat.set_bw)
		skel->struct_ops.tidemark_ops->cgroup_set_bandwidth = NULL;
	/* a throttle needs the last task re-enqueued, or it would run on */
	if (!compat.enq_last) {
		tm_log(TM_LOG_ERR,
		       "scx_tidemark: kernel BTF lacks SCX_OPS_ENQ_LAST (no sched_ext?)\n");
		preflight_report();
		err = -ENOTSUP;
		goto out;
	}
	/* cgroup cpu.weight is honoured: say so, or the kernel warns on writes */
	skel->struct_ops.tidemark_ops->flags |= compat.enq_last_flag | compat.cg_weight_flag;
	UEI_SET_SIZE(skel, tidemark_ops, uei);

	err = tidemark__load(skel);
	if (err) {
		tm_log(TM_LOG_ERR, "scx_tidemark: load failed: %s\n", strerror(-err));
		preflight_report();
		goto out;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.tunables), &zero, &tun, BPF_ANY) ||
	    tm_sync_rules(skel, o, &own, first)) {
		err = -EINVAL;
		goto out;
	}
	/* tidemarkctl's class changes and caps survive the scheduler */
	n = tm_runtime_apply(bpf_map__fd(skel->maps.classes),
			     bpf_program__fd(skel->progs.bw_update), rt_err, sizeof(rt_err));
	if (n < 0)
		tm_log(TM_LOG_WARNING, "scx_tidemark: runtime changes not applied: %s\n", rt_err);
	else if (n)
		tm_log(TM_LOG_INFO,
		       "scx_tidemark: %d runtime changes applied again (%s/runtime.json)\n", n,
		       tm_state_dir());
	/* homes and CPU limits before attaching, so tasks start with them */
	tm_refresh_cg_paths(skel);
	n = tm_bw_sync(skel, &bws);
	if (n > 0)
		tm_log(TM_LOG_INFO,
		       "scx_tidemark: %d cgroup CPU limits (cpu.max) enforced, changes read %s\n",
		       n,
		       skel->struct_ops.tidemark_ops->cgroup_set_bandwidth
			       ? "as written (ops.cgroup_set_bandwidth) and every --rescan-ms"
			       : "every --rescan-ms");
	if (tm_place_sync(skel, o, pr, &own, first)) {
		err = -EINVAL;
		goto out;
	}
	link = bpf_map__attach_struct_ops(skel->maps.tidemark_ops);
	if (!link) {
		err = -errno;
		tm_log(TM_LOG_ERR, "scx_tidemark: attach failed: %s%s\n", strerror(errno),
		       errno == EBUSY ? " (another sched_ext scheduler is loaded)" : "");
		preflight_report();
		goto out;
	}
	record_instance(skel);
	if (tm_pin_maps(skel)) {
		err = -EIO;
		goto out;
	}
	tm_log(TM_LOG_NOTICE,
	       "scx_tidemark: loaded (slice %u us, window %u us, suppress %u%%, max BE wait %u "
	       "ms, "
	       "BE floor %u mCPU, %d class rules, %d cache domains%s)\n",
	       tun.slice_us, tun.window_us, tun.suppress_pct, tun.max_be_wait_ms, tun.be_floor_mcpu,
	       (int)own.n, pr->pl.nd, pr->pl.nd && !tun.placement ? ", placement off" : "");
	/* ready for systemd (Type=notify) once the maps tidemarkd needs are pinned;
	 * a no-op when not started by systemd */
	sd_notifyf(0, "READY=1\nSTATUS=scheduling: suppress %u%%, %d class rules", tun.suppress_pct,
		   (int)own.n);

	next_stats = time(NULL) + o->stats_s;
	clock_gettime(CLOCK_MONOTONIC, &now);
	next_rescan = now.tv_sec * 1000ULL + now.tv_nsec / 1000000 + o->rescan_ms;
	while (!exit_req && !UEI_EXITED(skel, uei)) {
		usleep(o->rescan_ms < 100 ? o->rescan_ms * 1000 : 100 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		now_ms = now.tv_sec * 1000ULL + now.tv_nsec / 1000000;
		if (now_ms >= next_rescan) {
			tm_sync_rules(skel, o, &own, false);
			tm_refresh_cg_paths(skel);
			tm_bw_sync(skel, &bws);
			tm_place_sync(skel, o, pr, &own, false);
			next_rescan = now_ms + o->rescan_ms;
		}
		if (o->stats_s && time(NULL) >= next_stats) {
			tm_print_stats(skel, o, pr);
			next_stats += o->stats_s;
		}
	}
	/* Detaching waits for the kernel to finish disabling. */
	tm_unpin_maps();
	bpf_link__destroy(link);
	link = NULL;
	if (o->stats_s)
		tm_print_stats(skel, o, pr);
	ecode = UEI_REPORT(skel, uei);
	tm_log(TM_LOG_NOTICE, "scx_tidemark: exit kind %d\n", skel->data->uei.kind);
	if (skel->data->uei.kind >= TM_EXIT_KIND_ERROR)
		err = -EIO;
	*restart = !exit_req && UEI_ECODE_RESTART(ecode);
	/* what ran (tidemarkd's line included) is what the next instance starts with */
	carry->have = *restart &&
		      !bpf_map_lookup_elem(bpf_map__fd(skel->maps.tunables), &zero, &carry->tun);
out:
	compat_wait(&compat);
	if (link) {
		tm_unpin_maps();
		bpf_link__destroy(link);
	}
	tidemark__destroy(skel);
	free(own.v);
	free(bws.v);
	tm_placer_free(&pr->pl);
	free(pr->topo);
	free(pr);
	return err;
}

int main(int argc, char **argv)
{
	struct tm_opts opts;
	bool restart;
	int ret;

	tm_log_init();
	ret = tm_opts_parse(argc, argv, &opts);
	if (ret) {
		tm_usage(ret > 0 ? stdout : stderr, argv[0]);
		return ret > 0 ? 0 : 2;
	}
	if (opts.version) {
		tm_version_print("scx_tidemark");
		return 0;
	}
	libbpf_set_print(opts.verbose ? libbpf_print : libbpf_print_quiet);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct tm_carry carry = {};
	bool first = true;

	do {
		ret = run_once(&opts, first, &restart, &carry);
		first = false;
		if (restart) {
			tm_log(TM_LOG_WARNING,
			       "scx_tidemark: kernel asked for a restart; reloading\n");
			sd_notify(0, "STATUS=restarting: the kernel asked for it (CPU hotplug)");
		}
	} while (restart);
	sd_notify(0, "STOPPING=1");
	return ret ? 1 : 0;
}
