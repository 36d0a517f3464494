/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CCX placement decisions: which L3 domain(s) each ONLINE cgroup calls home.
 * Pure functions on plain arrays, so host unit tests run exactly this code.
 *
 * - A cgroup whose demand fits one domain gets one: best fit, i.e. the domain
 *   whose free capacity is the smallest that still holds the demand (keeps
 *   big holes for big cgroups). When none has room, the one with the most
 *   free capacity (it overcommits least).
 * - A larger cgroup gets the fewest whole domains: ceil(demand / domain
 *   capacity), taking the emptiest ones, same package first.
 * - Hysteresis: a cgroup keeps its home while the home still holds it within
 *   the slack and its demand moved less than the slack; decisions are taken
 *   biggest demand first, kept homes before new ones, so a new or grown
 *   cgroup never pushes out one that still fits.
 */
#ifndef __TM_HOMES_H
#define __TM_HOMES_H
#include <stdbool.h>
#include <stdint.h>

#define TM_PL_MAX_DOMAINS 64 /* home masks are 64-bit */

struct tm_pl_domain {
	uint32_t cap_mcpu; /* online capacity, milli-CPUs */
	int package;
	uint32_t used_mcpu; /* filled in by tm_place() */
};

struct tm_pl_cgroup {
	uint64_t id;
	uint32_t demand_mcpu;	   /* from cpu.max, cpuset, a rule, or measured peak */
	uint32_t last_demand_mcpu; /* demand when the current home was chosen */
	uint64_t home;		   /* domain mask; 0: none yet. Updated by tm_place() */
	bool moved;		   /* set by tm_place() when home changed */
};

static inline unsigned int tm_pl_popcount(uint64_t m)
{
	unsigned int n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

static inline uint64_t tm_pl_cap_of(const struct tm_pl_domain *d, int nd, uint64_t mask)
{
	uint64_t cap = 0;

	for (int i = 0; i < nd; i++)
		if (mask >> i & 1)
			cap += d[i].cap_mcpu;
	return cap;
}

/* Does @c stay where it is? Its home still exists, its demand moved less
 * than slack_pct, and the home (with what is already placed) still holds it
 * within slack_pct of overcommit. */
static inline bool tm_pl_keep(const struct tm_pl_domain *d, int nd, const struct tm_pl_cgroup *c,
			      uint32_t slack_pct)
{
	uint64_t cap, used = 0, lo, hi;

	if (!c->home || c->home >> nd)
		return false;
	lo = (uint64_t)c->last_demand_mcpu * (100 - slack_pct) / 100;
	hi = (uint64_t)c->last_demand_mcpu * (100 + slack_pct) / 100;
	if (c->demand_mcpu < lo || c->demand_mcpu > hi)
		return false;
	cap = tm_pl_cap_of(d, nd, c->home);
	for (int i = 0; i < nd; i++)
		if (c->home >> i & 1)
			used += d[i].used_mcpu;
	return (used + c->demand_mcpu) * 100 <= cap * (100 + slack_pct);
}

static inline void tm_pl_charge(struct tm_pl_domain *d, int nd, uint64_t mask, uint32_t demand)
{
	unsigned int k = tm_pl_popcount(mask);

	for (int i = 0; i < nd && k; i++)
		if (mask >> i & 1)
			d[i].used_mcpu += demand / k;
}

/* One domain for @demand: best fit, else the emptiest. -1 if no domains. */
static inline int tm_pl_best_fit(const struct tm_pl_domain *d, int nd, uint32_t demand)
{
	int best = -1, emptiest = -1;
	int64_t best_free = INT64_MAX, most_free = INT64_MIN;

	for (int i = 0; i < nd; i++) {
		int64_t free_mcpu = (int64_t)d[i].cap_mcpu - d[i].used_mcpu;

		if (!d[i].cap_mcpu)
			continue; /* every CPU of it offline */
		if (free_mcpu >= demand && free_mcpu < best_free) {
			best = i;
			best_free = free_mcpu;
		}
		if (free_mcpu > most_free) {
			emptiest = i;
			most_free = free_mcpu;
		}
	}
	return best >= 0 ? best : emptiest;
}

/* The fewest whole domains holding @demand: emptiest first, preferring the
 * package of the first one taken. */
static inline uint64_t tm_pl_many(const struct tm_pl_domain *d, int nd, uint32_t demand)
{
	uint64_t mask = 0, cap = 0;
	int pkg = -1;

	while (cap < demand) {
		int pick = -1;
		int64_t most = INT64_MIN;

		for (int pass = 0; pass < 2 && pick < 0; pass++) {
			for (int i = 0; i < nd; i++) {
				int64_t free_mcpu = (int64_t)d[i].cap_mcpu - d[i].used_mcpu;

				if (mask >> i & 1 || !d[i].cap_mcpu)
					continue;
				if (pass == 0 && pkg >= 0 && d[i].package != pkg)
					continue;
				if (free_mcpu > most) {
					most = free_mcpu;
					pick = i;
				}
			}
		}
		if (pick < 0)
			break; /* every domain taken: the whole machine */
		if (pkg < 0)
			pkg = d[pick].package;
		mask |= 1ULL << pick;
		cap += d[pick].cap_mcpu;
	}
	return mask;
}

/*
 * Place every cgroup. @order is scratch space for @nc indexes. Returns how
 * many cgroups changed home.
 */
static inline int tm_place(struct tm_pl_domain *d, int nd, struct tm_pl_cgroup *c, int nc,
			   uint32_t slack_pct, int *order)
{
	uint32_t max_cap = 0;
	int moved = 0;

	if (nd > TM_PL_MAX_DOMAINS)
		nd = TM_PL_MAX_DOMAINS;
	for (int i = 0; i < nd; i++) {
		d[i].used_mcpu = 0;
		if (d[i].cap_mcpu > max_cap)
			max_cap = d[i].cap_mcpu;
	}
	/* biggest demand first (insertion sort: nc is small) */
	for (int i = 0; i < nc; i++) {
		int j = i;

		order[i] = i;
		while (j > 0 && c[order[j - 1]].demand_mcpu < c[order[j]].demand_mcpu) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
			j--;
		}
	}
	/* kept homes first, so a newcomer cannot push out a cgroup that fits */
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < nc; k++) {
			struct tm_pl_cgroup *g = &c[order[k]];
			uint64_t home;

			if (pass == 0) {
				g->moved = false;
				if (tm_pl_keep(d, nd, g, slack_pct)) {
					tm_pl_charge(d, nd, g->home, g->demand_mcpu);
					g->last_demand_mcpu = g->last_demand_mcpu
								      ? g->last_demand_mcpu
								      : g->demand_mcpu;
					continue;
				}
				g->moved = true; /* placed in pass 1 */
				continue;
			}
			if (!g->moved)
				continue;
			if (g->demand_mcpu <= max_cap) {
				int i = tm_pl_best_fit(d, nd, g->demand_mcpu);

				home = i >= 0 ? 1ULL << i : 0;
			} else {
				home = tm_pl_many(d, nd, g->demand_mcpu);
			}
			g->moved = home != g->home;
			moved += g->moved;
			g->home = home;
			g->last_demand_mcpu = g->demand_mcpu;
			tm_pl_charge(d, nd, home, g->demand_mcpu);
		}
	}
	return moved;
}
#endif
