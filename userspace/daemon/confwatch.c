// SPDX-License-Identifier: GPL-2.0
/* The configuration file, watched: see confwatch.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "confwatch.h"

/* FNV-1a over the file's bytes; 0 when unreadable (a swap's gap). */
static uint64_t content_sum(const char *path)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned char buf[8192];
	size_t n, i;
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	fclose(f);
	return h;
}

int tm_confwatch_open(struct tm_confwatch *w, const char *path, char *err, size_t len)
{
	char dir[PATH_MAX];
	const char *base = strrchr(path, '/');
	char *slash;

	w->fd = -1;
	snprintf(w->name, sizeof(w->name), "%s", base ? base + 1 : path);
	w->sum = content_sum(path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		snprintf(err, len, "inotify: %s", strerror(errno));
		return -1;
	}
	/* the directory, not the file: a swapped symlink or a rename over
	 * the file would end a watch on the file itself */
	if (inotify_add_watch(w->fd, dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB) <
	    0) {
		snprintf(err, len, "watching %s: %s", dir, strerror(errno));
		close(w->fd);
		w->fd = -1;
		return -1;
	}
	return 0;
}

void tm_confwatch_sync(struct tm_confwatch *w, const char *path)
{
	w->sum = content_sum(path);
}

bool tm_confwatch_changed(struct tm_confwatch *w, const char *path)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	bool ours = false;
	uint64_t sum;
	ssize_t n;

	if (w->fd < 0)
		return false;
	/* the file itself, or the kubelet's "..data" swapped over to a new
	 * version of the directory; other files of the directory are not ours */
	while ((n = read(w->fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if ((ev->mask & IN_Q_OVERFLOW) ||
			    (ev->len &&
			     (!strcmp(ev->name, w->name) || !strcmp(ev->name, "..data"))))
				ours = true;
		}
	if (!ours)
		return false;
	sum = content_sum(path);
	if (!sum || sum == w->sum)
		return false; /* gone for a moment, or touched but the same */
	w->sum = sum;
	return true;
}

void tm_confwatch_close(struct tm_confwatch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
