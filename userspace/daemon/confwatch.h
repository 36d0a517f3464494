/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration file, watched (inotify on its directory): a changed
 * file is reloaded as SIGHUP reloads it. A ConfigMap's kubelet swaps the
 * "..data" symlink of the mounted directory; an editor writes in place or
 * renames over; both are seen, and only a changed content counts.
 */
#ifndef __TM_CONFWATCH_H
#define __TM_CONFWATCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tm_confwatch {
	int fd;		/* inotify, -1 when not watching */
	uint64_t sum;	/* the content last loaded (or refused) */
	char name[256]; /* the file's name in its directory */
};

/* Watch @path's directory; -1 with a message (the daemon runs on, unwatched). */
int tm_confwatch_open(struct tm_confwatch *w, const char *path, char *err, size_t len);
/* The content of @path now counts as seen (after a SIGHUP reload). */
void tm_confwatch_sync(struct tm_confwatch *w, const char *path);
/* Drain the events; true when @path's content differs from the last seen. */
bool tm_confwatch_changed(struct tm_confwatch *w, const char *path);
void tm_confwatch_close(struct tm_confwatch *w);

#endif
