// SPDX-License-Identifier: GPL-2.0
/* The release every program reports with --version (set by the Makefile). */
#include <stdio.h>

#include "tmlib.h"

#ifndef TM_VERSION
#error "TM_VERSION is set by the Makefile"
#endif

const char *tm_version(void)
{
	return TM_VERSION;
}

void tm_version_print(const char *prog)
{
	printf("%s %s (scheduler map ABI %d)\n", prog, TM_VERSION, TM_ABI_VERSION);
}
