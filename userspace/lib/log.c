// SPDX-License-Identifier: GPL-2.0
/* The daemons' log: see log.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "log.h"

static enum tm_log_level max_level = TM_LOG_INFO;
static enum tm_log_format format = TM_LOG_LOGFMT;

/* sd-daemon.h's prefixes: what journald reads a line's priority from */
static const char *const prefixes[] = {
	[TM_LOG_ERR] = SD_ERR,	 [TM_LOG_WARNING] = SD_WARNING, [TM_LOG_NOTICE] = SD_NOTICE,
	[TM_LOG_INFO] = SD_INFO, [TM_LOG_DEBUG] = SD_DEBUG,
};

static const char *const names[] = {
	[TM_LOG_ERR] = "error", [TM_LOG_WARNING] = "warning", [TM_LOG_NOTICE] = "notice",
	[TM_LOG_INFO] = "info", [TM_LOG_DEBUG] = "debug",
};

void tm_log_init(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	/* journald's stream is ours only if stderr is still that very socket */
	if (js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	    st.st_dev == dev && st.st_ino == ino)
		format = TM_LOG_JOURNAL;
	else if (isatty(STDERR_FILENO))
		format = TM_LOG_PLAIN;
	else
		format = TM_LOG_LOGFMT;
}

int tm_log_level_parse(const char *s)
{
	for (int l = TM_LOG_ERR; l <= TM_LOG_DEBUG; l++)
		if (!strcmp(s, names[l]))
			return l;
	return -1;
}

void tm_log_set_level(enum tm_log_level max)
{
	max_level = max;
}

int tm_log_on(enum tm_log_level level)
{
	return level <= max_level;
}

enum tm_log_format tm_log_format(void)
{
	return format;
}

/* One write(2) per line: threads log too, and lines must not interleave. */
static void emit(char *buf, size_t len)
{
	ssize_t n;

	while (len && (n = write(STDERR_FILENO, buf, len)) > 0) {
		buf += n;
		len -= n;
	}
}

/* logfmt's quoted value: backslash, quote and control characters escaped */
static size_t quote(char *out, size_t cap, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < cap; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = c;
		} else if (c == '\t') {
			out[o++] = '\\';
			out[o++] = 't';
		} else if (c < 0x20 || c == 0x7f) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = c;
		}
	}
	return o;
}

static void line_out(enum tm_log_level level, const char *s, size_t len)
{
	char buf[8192];
	size_t n;

	switch (format) {
	case TM_LOG_JOURNAL:
		n = snprintf(buf, sizeof(buf), "%s%.*s\n", prefixes[level], (int)len, s);
		break;
	case TM_LOG_PLAIN:
		n = snprintf(buf, sizeof(buf), "%.*s\n", (int)len, s);
		break;
	default:
		n = snprintf(buf, sizeof(buf), "level=%s msg=\"", names[level]);
		n += quote(buf + n, sizeof(buf) - n - 2, s, len);
		buf[n++] = '"';
		buf[n++] = '\n';
		break;
	}
	emit(buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

void tm_vlog(enum tm_log_level level, const char *fmt, va_list ap)
{
	char msg[16384]; /* a preflight report is one message */
	char *p, *nl;
	int n;

	if (level > max_level)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	/* a message of several lines (a report) is that many log lines */
	for (p = msg; p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		line_out(level, p, nl ? (size_t)(nl - p) : strlen(p));
	}
}

void tm_log(enum tm_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tm_vlog(level, fmt, ap);
	va_end(ap);
}

void tm_log_audit(const char *line)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf), "%s%s\n", format == TM_LOG_JOURNAL ? SD_NOTICE : "",
			 line);

	if (n > 0)
		emit(buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}
