/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's leaf: its clock, the audit line every action leaves, and
 * the tables that hold at most so many (counted, said once). Calls no
 * other daemon file.
 */
#ifndef __TM_AUDIT_H
#define __TM_AUDIT_H
#include <stdbool.h>
#include <stdint.h>

struct tm_daemon;

uint64_t tm_now_ms(void);

/*
 * Record an action: one audit line on stderr ("audit ts=... strategy=...
 * action=... dry_run=... <details>") and the action metric. Returns true
 * when the caller must really act (false in dry-run).
 */
bool tm_audit(struct tm_daemon *d, const char *strategy, const char *action, bool dry_run,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Table @what (e.g. "interference.be") holds at most @limit and more were
 * there: logged once per table, counted in tidemark_limit_hits_total. */
void tm_limit_hit(struct tm_daemon *d, const char *what, unsigned int limit);
#endif
