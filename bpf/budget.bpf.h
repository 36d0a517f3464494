/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BE budget and watermark: grants reserved from the window's budget,
 * the floor, BE preemption by ONLINE, per-CPU grant timers and the window
 * timer that sets the next budget.
 * Part of tidemark.bpf.c (one translation unit), included in order.
 */
#ifndef __TM_BUDGET_BPF_H
#define __TM_BUDGET_BPF_H

/* How long the oldest queued BE task has waited, 0 if none. */
static u64 be_head_wait(u64 now)
{
	struct task_struct *p;
	u64 wait = 0;

	/* the window timer is not an RCU section of its own */
	bpf_rcu_read_lock();
	bpf_for_each (scx_dsq, p, TM_DSQ_BE, 0) {
		struct task_ctx *tctx = task_ctx(p);

		if (tctx && time_before(tctx->enq_at, now))
			wait = now - tctx->enq_at;
		break;
	}
	bpf_rcu_read_unlock();
	return wait;
}

/*
 * Start a BE grant of @grant ns on this CPU: the slice ends when it is used up,
 * enforced by the CPU's grant timer. Forced grants (floor, bounded wait)
 * do not come out of the budget.
 */
static void be_grant_start(struct task_struct *p, struct tm_cpu_ctx *c, u64 grant, bool forced,
			   u64 now)
{
	struct grant_timer *gt;
	/* running and dispatch both run on the CPU concerned */
	u32 key = bpf_get_smp_processor_id();

	if (grant < TM_BE_GRANT_MIN_NS)
		grant = TM_BE_GRANT_MIN_NS;
	if (!forced) {
		__sync_fetch_and_sub(&be_budget, grant);
		/* a regular run counts towards the floor as well */
		__sync_fetch_and_sub(&be_floor_left, grant);
	}
	c->grant_left = grant;
	c->forced = forced;
	c->be_until = now + grant;
	p->scx.slice = grant;
	gt = bpf_map_lookup_elem(&grant_timers, &key);
	if (!gt) {
		scx_bpf_error("grant_timers lookup failed for CPU %u", key);
		return;
	}
	bpf_timer_start(&gt->timer, grant, BPF_F_TIMER_CPU_PIN);
}

/* What a regular grant did not use goes back to the budget and floor. */
static __always_inline void be_grant_return(struct tm_cpu_ctx *c)
{
	if (!c->forced && c->grant_left) {
		__sync_fetch_and_add(&be_budget, c->grant_left);
		__sync_fetch_and_add(&be_floor_left, c->grant_left);
	}
	c->grant_left = 0;
}

/*
 * A regular BE grant: be_grant_ns, or what is left of the budget. Grants are
 * taken when a run starts, not at dispatch: two CPUs may both dispatch BE
 * on the last of a window's budget and one finds it spent. That one gets
 * the minimum grant (its timer ends the run at once), not a whole slice,
 * which at a low line put BE points above it.
 */
static __always_inline u64 be_regular_grant(void)
{
	s64 b = be_budget;

	if (b <= 0)
		return TM_BE_GRANT_MIN_NS;
	return (u64)b < be_grant_ns ? (u64)b : be_grant_ns;
}

/*
 * Charge what @p on @c ran since it started or was last charged: to its
 * class and, for BE, to its grant; a run past the grant (the timer was
 * late) comes out of the budget. Done at every tick and at stopping.
 * Measured by the kernel's own clock of the task (se.sum_exec_runtime, what
 * cpu.stat sums), not from ops.running: the kernel counts a task's run from
 * the start of the schedule() that picked it, so the pick (dispatch, our
 * callbacks) is the task's time. Counted from ops.running, a service woken
 * from idle hundreds of times a second ran 3.6 points of the node more by
 * cpu.stat than this saw, and BE was given them.
 */
static __always_inline void charge(struct tm_cpu_ctx *c, struct task_struct *p, u32 cls, u64 now)
{
	u64 sum = p->se.sum_exec_runtime, in_grant, ran;

	/* the sum is brought up to date at ticks and at stopping only: as
	 * stale elsewhere (a dispatch that renews a grant), the rest comes at
	 * the next charge */
	ran = sum > c->run_sum ? sum - c->run_sum : 0;
	c->run_sum = sum;
	c->started = now;
	c->run_ns[cls] += ran;
	stat_add(TM_STAT_RUN_NS_SYSTEM + cls, ran);
	if (cls != TM_CLASS_BE)
		return;
	in_grant = ran < c->grant_left ? ran : c->grant_left;
	c->grant_left -= in_grant;
	if (ran <= in_grant)
		return;
	if (!c->forced) {
		__sync_fetch_and_sub(&be_budget, ran - in_grant);
		__sync_fetch_and_sub(&be_floor_left, ran - in_grant);
	} else {
		__sync_fetch_and_add(&forced_debt, ran - in_grant);
	}
}

/*
 * Take a grant of at most be_grant_ns out of what the floor still owes this
 * window; 0 when nothing is owed. Given back with floor_grant_undo.
 */
static __always_inline u64 floor_grant_take(void)
{
	s64 owed = be_floor_left;
	u64 g;

	if (owed <= 0)
		return 0;
	g = (u64)owed < be_grant_ns ? (u64)owed : be_grant_ns;
	__sync_fetch_and_sub(&be_floor_left, g);
	return g;
}

/*
 * Run the head BE task on a grant out of what the floor still owes this
 * window (not out of the budget). Reserved first, so that other CPUs do not
 * run the same floor.
 */
__noinline int be_floor_dispatch(s32 cpu, u32 stat)
{
	struct tm_cpu_ctx *c = cpu_ctx(cpu);

	if (!c)
		return 0;
	c->next_grant = floor_grant_take();
	if (!c->next_grant)
		return 0;
	if (bw_move_to_local(TM_DSQ_BE, cpu)) {
		stat_inc(stat);
		trace_cpu(TM_TR_FLOOR, cpu, c->next_grant);
		return 1;
	}
	__sync_fetch_and_add(&be_floor_left, c->next_grant);
	c->next_grant = 0;
	return 0;
}

/*
 * A BE run ended before its grant did (preempted, or it slept): stop the
 * grant timer, or it would interrupt whatever runs next, often the ONLINE
 * task that preempted BE, for nothing.
 */
static __always_inline void grant_timer_cancel(void)
{
	u32 key = bpf_get_smp_processor_id();
	struct grant_timer *gt = bpf_map_lookup_elem(&grant_timers, &key);

	/* pushed far out rather than cancelled: the next BE run restarts it */
	if (!gt) {
		scx_bpf_error("grant_timers lookup failed for CPU %u", key);
		return;
	}
	bpf_timer_start(&gt->timer, 1000000000ULL, BPF_F_TIMER_CPU_PIN);
}

/*
 * A BE grant or a limited task's reserved runtime ran out: end the slice now
 * rather than at the next tick.
 */
static int grant_timer_fn(void *map, int *key, struct grant_timer *gt)
{
	struct tm_cpu_ctx *c = cpu_ctx(*key);
	u64 now = bpf_ktime_get_ns() + TM_BE_GRANT_SLACK_NS;
	u32 k = *key;

	if (c && c->class == TM_CLASS_BE && !time_before(now, c->be_until)) {
		stat_inc(TM_STAT_BE_THROTTLED);
		trace_cpu(TM_TR_THROTTLE, k, 0);
		scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
	} else if (k < TM_MAX_CPUS && bw_cpus[k].n && !time_before(now, bw_cpus[k].until)) {
		scx_bpf_kick_cpu(*key, SCX_KICK_PREEMPT);
	}
	return 0;
}

/*
 * What forced runs overran, while ONLINE leaves BE only its floor, is taken
 * from this window's floor (at most what it gives: the rest waits for the
 * next one). Without it, a floor run that a late timer stretches from 0.5 to
 * 1.2 ms gives BE twice its floor while ONLINE holds the line. The window's
 * over-the-line integral counted those overruns too: what the floor pays is
 * taken off it, so nothing is paid twice. Out of the floor regime the
 * integral alone pays them, from the budget.
 */
static __always_inline void pay_forced_debt(struct window *w)
{
	s64 debt = forced_debt, pay;

	if (debt <= 0)
		return;
	if (be_floor_left <= 0) {
		__sync_fetch_and_sub(&forced_debt, debt);
		return;
	}
	pay = debt < be_floor_left ? debt : be_floor_left;
	be_floor_left -= pay;
	floor_on = be_floor_left > 0;
	w->over_ns -= pay;
	__sync_fetch_and_sub(&forced_debt, pay);
}

/*
 * How long before a window's end the floor still owed must start: one
 * grant's worth (each CPU runs at most a grant of it), never the whole
 * window.
 */
static __always_inline u64 floor_lead_ns(void)
{
	u64 lead = be_floor_left > 0 ? (u64)be_floor_left : 0;

	return lead < be_grant_ns ? lead : be_grant_ns;
}

/*
 * The floor's deadline, a grant before the window ends. dispatch runs the
 * floor ahead of ONLINE from here on, but only a CPU that dispatches does:
 * with ONLINE busy on every CPU, one in 20 ms slices (ticks are 4 ms apart,
 * windows 5 ms), dispatch seldom fell in the last grant of a window and BE
 * got 0.2% of one CPU against a floor of 10%. So preempt as many CPUs
 * running ONLINE or SYSTEM as the floor needs grants (idle ones were kicked
 * when the window began), from a rotating start. (Global: window_fn calls
 * it twice.)
 */
__noinline int floor_deadline(void)
{
	static u32 next_cpu;
	u32 i, n, want;
	s64 owed = be_floor_left;

	if (!floor_owed() || owed <= 0)
		return 0;
	want = scx_bpf_dsq_nr_queued(TM_DSQ_BE);
	n = (u32)(((u64)owed + be_grant_ns - 1) / be_grant_ns);
	if (n < want)
		want = n;
	bpf_for (i, 0, nr_cpus) {
		u32 cpu = (next_cpu + i) % nr_cpus;
		struct tm_cpu_ctx *c;
		struct cpu_run *r;

		if (!want)
			break;
		c = cpu_ctx(cpu);
		r = cpu_run_of(cpu);
		if (!c || !r || c->class >= TM_CLASS_BE)
			continue;
		/* served when the kick lands, even past this window's end */
		r->floor_kick = 1;
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
		stat_inc(TM_STAT_FLOOR_KICK);
		next_cpu = cpu + 1;
		want--;
	}
	return 0;
}

/* What each class ran so far, over all CPUs. */
struct class_use {
	u64 sys, online, be;
	u64 be_running; /* a CPU runs BE now */
};

/*
 * Sum @u over the CPUs, the running tasks' shares up to @now included.
 * Global, with sums per class in scalars (not an array indexed by class):
 * window_fn's rest was walked once per way out of this loop.
 */
__noinline int window_usage(u64 now, struct class_use *u)
{
	u32 i;

	if (!u)
		return 0;
	bpf_for (i, 0, nr_cpus) {
		struct tm_cpu_ctx *c = cpu_ctx(i);
		u64 run;

		if (!c)
			continue;
		u->sys += c->run_ns[TM_CLASS_SYSTEM];
		u->online += c->run_ns[TM_CLASS_ONLINE];
		u->be += c->run_ns[TM_CLASS_BE];
		/* include the running task's share so far (racy, bounded) */
		run = time_before(c->started, now) ? now - c->started : 0;
		switch (c->class) {
		case TM_CLASS_SYSTEM:
			u->sys += run;
			break;
		case TM_CLASS_ONLINE:
			u->online += run;
			break;
		case TM_CLASS_BE:
			u->be += run;
			u->be_running = 1;
			break;
		}
	}
	return 0;
}

/* What class @cls ran since the last window, of its @used so far. */
static __always_inline u64 class_delta(struct window *w, const int cls, u64 used)
{
	u64 d = used > w->last_run_ns[cls] ? used - w->last_run_ns[cls] : 0;

	w->last_run_ns[cls] = used;
	return d;
}

static int window_fn(void *map, int *key, struct window *w)
{
	struct tm_tunables *t;
	u64 now = bpf_ktime_get_ns(), hi, allow, cap, dt, be_used, head_wait, lead;
	struct class_use u = {};
	bool limited, be_running;
	u32 zero = 0, i, kicks;
	s64 left;

	if (w->floor_check) {
		w->floor_check = false;
		floor_deadline();
		/* the rest of the window; a timer late past its end ends it now */
		if (time_before(now, window_end)) {
			bpf_timer_start(&w->timer, window_end - now, 0);
			return 0;
		}
	}
	t = bpf_map_lookup_elem(&tunables, &zero);
	if (!t) {
		scx_bpf_error("tunables lookup failed");
		return 0;
	}
	tunables_apply(t);
	trace_refresh(now);
	stat_inc(TM_STAT_WINDOWS);

	window_usage(now, &u);
	hi = class_delta(w, TM_CLASS_SYSTEM, u.sys) + class_delta(w, TM_CLASS_ONLINE, u.online);
	be_used = class_delta(w, TM_CLASS_BE, u.be);
	be_running = u.be_running;
	dt = w->last_at && time_before(w->last_at, now) ? now - w->last_at : window_ns;
	w->last_at = now;
	/*
	 * Timers fire late under load: size the next budget on the period that
	 * really elapsed (bounded, so a long stall gives no burst), or a late
	 * timer would cost BE its share.
	 */
	if (dt > 4 * window_ns)
		dt = 4 * window_ns;
	/* The running share is counted again next time: cap at the capacity. */
	cap = dt * cap_cpus;
	if (hi > cap)
		hi = cap;
	if (be_used > cap)
		be_used = cap;

	/* the floor counts in this window only while BE is short of it lately */
	w->be_avg_mcpu = tm_be_recent_next(w->be_avg_mcpu, be_used, dt);
	be_floor_ns = tm_be_floor_due(w->be_avg_mcpu, t->be_floor_mcpu)
			      ? (u64)t->be_floor_mcpu * dt / 1000
			      : 0;
	be_floor_left = tm_be_floor_owed(cap, t->suppress_pct, hi, be_floor_ns);
	floor_on = be_floor_left > 0;
	/* ONLINE+SYSTEM of the last period predicts the next one; the floor
	 * is served by its own grants (be_floor_left), not by the budget */
	allow = tm_be_allowance(cap, t->suppress_pct, hi, 0);
	left = be_budget;
	limited = left <= 0 && scx_bpf_dsq_nr_queued(TM_DSQ_BE);
	if (limited)
		stat_add(TM_STAT_BE_THROTTLED_NS, dt);
	/* what the node used above (or, BE held back, below) its line so far;
	 * bounded past the line by what grants can carry across windows (a
	 * grant per CPU), or grants straddling a window would be forgiven */
	w->over_ns = tm_be_over_next(w->over_ns, hi, be_used, cap, t->suppress_pct, be_floor_ns,
				     limited, be_grant_ns * cap_cpus);
	be_budget = tm_be_budget_next(allow, w->over_ns);
	pay_forced_debt(w);

	kicks = scx_bpf_dsq_nr_queued(TM_DSQ_BE);
	be_running |= kicks > 0; /* from here: BE running or waiting */
	head_wait = kicks ? be_head_wait(now) : 0;
	be_wait_due = head_wait >= max_be_wait_ns / 2;
	if (kicks && (be_budget > 0 || floor_owed() || head_wait >= max_be_wait_ns)) {
		bpf_for (i, 0, nr_cpus) {
			if (!kicks)
				break;
			scx_bpf_kick_cpu(i, SCX_KICK_IDLE);
			kicks--;
		}
	}
	if (soft_homes_on())
		kick_for_soft(now);
	window_end = now + window_ns;
	trace_window(be_budget, w->over_ns, hi, be_used);
	/*
	 * A floor owed to BE: wake up again at its deadline. BE running now
	 * counts (on 1 vCPU, a floor run straddling the window's end left
	 * nothing queued, and the floor came every other window: 52 of 100
	 * mCPU).
	 */
	lead = floor_owed() && be_running ? floor_lead_ns() : 0;
	if (lead >= window_ns) {
		/* owed a grant's worth or more on one CPU: its deadline is now */
		floor_deadline();
		lead = 0;
	}
	w->floor_check = lead > 0;
	bpf_timer_start(&w->timer, window_ns - lead, 0);
	return 0;
}

#endif /* __TM_BUDGET_BPF_H */
