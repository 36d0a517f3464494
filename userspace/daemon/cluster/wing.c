// SPDX-License-Identifier: GPL-2.0
/*
 * This tidemarkd has the whole cluster wing (none.c stands in for it in a
 * node-only build). A file of its own: the configuration asks, and the API
 * client reads the configuration.
 */
#include <stddef.h>

#include "kube.h"

const char *tm_cluster_missing(void)
{
	return NULL;
}
