/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tidemark needs from the running node, checked from the node's own
 * files: tidemarkctl preflight prints it, scx_tidemark prints it when it
 * cannot load. No exit(); nothing is written.
 */
#ifndef __TM_PREFLIGHT_H
#define __TM_PREFLIGHT_H
#include <stdbool.h>
#include <stdio.h>

enum tm_pf_state {
	TM_PF_OK,
	TM_PF_MISSING, /* absent or off: tidemark (or a part of it) cannot work */
	TM_PF_UNKNOWN, /* nothing to tell by (no BTF, no kernel config) */
};

#define TM_PF_MAX 12

struct tm_pf_check {
	const char *name;  /* "sched_ext", "psi", ... */
	const char *needs; /* who needs it and what for */
	bool required;	   /* the scheduler cannot run without it */
	enum tm_pf_state state;
	char detail[256]; /* what was found, and where */
	char fix[256];	  /* what to do, empty when ok */
};

struct tm_preflight {
	char kernel[128]; /* the running kernel's release */
	char config[160]; /* the kernel config read, "" if none */
	int nr;
	struct tm_pf_check c[TM_PF_MAX];
	int missing; /* required checks not ok (missing or unknown) */
	int optional_missing;
};

/*
 * Check the node whose files are under @root ("" or NULL: this node's own
 * /sys, /proc and /boot). Fills @pf; returns pf->missing.
 */
int tm_preflight_run(struct tm_preflight *pf, const char *root);

/* The report as text, one line per check and its fix under it. */
void tm_preflight_print(FILE *f, const struct tm_preflight *pf);

/* The report as a JSON document (malloc'd, NULL when out of memory). */
char *tm_preflight_json(const struct tm_preflight *pf);

const char *tm_pf_state_name(enum tm_pf_state s);

#endif
