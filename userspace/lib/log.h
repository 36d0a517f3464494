/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemons' log (scx_tidemark, tidemarkd): one function with a level.
 * Under journald (stderr is the stream $JOURNAL_STREAM names) each line
 * carries sd-daemon.h's "<N>" priority prefix, so journalctl -p sees it; on
 * a terminal it is the message alone; elsewhere (a container's log for
 * kubectl logs, a file) it is logfmt: level=... msg="...". Audit lines are
 * already key=value and stay as they are. tidemarkctl, an interactive
 * command, writes its errors plainly and does not use this.
 */
#ifndef __TM_LOG_H
#define __TM_LOG_H
#include <stdarg.h>

/* syslog's numbers, as the journal and sd-daemon.h count them */
enum tm_log_level {
	TM_LOG_ERR = 3,
	TM_LOG_WARNING = 4,
	TM_LOG_NOTICE = 5,
	TM_LOG_INFO = 6,
	TM_LOG_DEBUG = 7,
};

enum tm_log_format {
	TM_LOG_PLAIN,	/* a terminal */
	TM_LOG_JOURNAL, /* "<N>message" */
	TM_LOG_LOGFMT,	/* level=info msg="message" */
};

/* Where stderr goes decides the format; the level starts at info. */
void tm_log_init(void);
/* "error", "warning", "notice", "info" or "debug": -1 for anything else. */
int tm_log_level_parse(const char *s);
void tm_log_set_level(enum tm_log_level max);
/* Whether a message at @level is kept: spares building one that is not. */
int tm_log_on(enum tm_log_level level);
enum tm_log_format tm_log_format(void);

/* A message at @level (dropped above the level set); a trailing newline is
 * not part of it, inner newlines split it into lines. */
void tm_log(enum tm_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tm_vlog(enum tm_log_level level, const char *fmt, va_list ap);
/* An audit line, whatever the level: as it is (with its priority prefix
 * under journald). */
void tm_log_audit(const char *line);

#define tm_err(...)    tm_log(TM_LOG_ERR, __VA_ARGS__)
#define tm_warn(...)   tm_log(TM_LOG_WARNING, __VA_ARGS__)
#define tm_notice(...) tm_log(TM_LOG_NOTICE, __VA_ARGS__)
#define tm_info(...)   tm_log(TM_LOG_INFO, __VA_ARGS__)
#define tm_debug(...)  tm_log(TM_LOG_DEBUG, __VA_ARGS__)

#endif
