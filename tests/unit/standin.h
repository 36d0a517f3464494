/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A plain directory standing in for the cgroup root, and a daemon over it
 * with no scheduler (its pins directory does not exist), for the unit tests
 * that drive the daemon's actuators.
 */
#ifndef __TM_STANDIN_H
#define __TM_STANDIN_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "daemon.h"
#include "fakecg.h"

/* Make the root (@root of @len bytes gets its path) and the daemon, its
 * configuration's "cgroups" section @cgroups (JSON). 0, or -1 said. */
static inline int standin_daemon(struct tm_daemon *d, char *root, size_t len, const char *cgroups)
{
	char json[1024], err[256];

	if (fakecg_root(root, len))
		return -1;
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->cgroup_root = root;
	snprintf(json, sizeof(json),
		 "{\"version\":1,\"scheduler\":{\"pin_dir\":\"%s/no-pins\"},\"cgroups\":%s}", root,
		 cgroups);
	if (tm_config_parse(json, &d->cfg, err, sizeof(err))) {
		fprintf(stderr, "config refused: %s\n", err);
		return -1;
	}
	return 0;
}

static inline void standin_remove(const char *root)
{
	fakecg_remove(root);
}
#endif
