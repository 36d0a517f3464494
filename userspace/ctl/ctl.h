/* SPDX-License-Identifier: GPL-2.0 */
/* tidemarkctl's commands that live in their own files. */
#ifndef __TM_CTL_H
#define __TM_CTL_H

/* tidemarkctl stats [--interval S] [--once] [--json] */
int tm_ctl_stats(int argc, char **argv);
/* tidemarkctl trace --seconds N [--format text|perfetto] [--output FILE] [--kinds K,...] */
int tm_ctl_trace(int argc, char **argv);
/* tidemarkctl progs [--seconds S] [--json] */
int tm_ctl_progs(int argc, char **argv);
#endif
