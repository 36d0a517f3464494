/* SPDX-License-Identifier: GPL-2.0 */
/* A growing text buffer for reports, with the escaping JSON strings and
 * Prometheus label values need. An allocation failure is sticky: tm_buf_done
 * then returns NULL. */
#ifndef __TM_BUF_H
#define __TM_BUF_H
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

struct tm_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void tm_bprintf(struct tm_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Length of the well-formed UTF-8 sequence at @s (1-4), 0 if none starts there. */
size_t tm_utf8_len(const char *s);
/* @s as a JSON string, quotes included; bytes that are not UTF-8 become
 * "\\xHH" (a backslash, x, two hex digits), in both forms. */
void tm_bjson_str(struct tm_buf *b, const char *s);
/* @s as a jansson string, the same bytes as tm_bjson_str's (a tenant names
 * its cgroups: one name that is not UTF-8 must not void the document);
 * NULL only when out of memory. */
json_t *tm_json_str(const char *s);
/* @s as a Prometheus label value, quotes included, UTF-8 as above. */
void tm_bprom_label(struct tm_buf *b, const char *s);
/* The text (caller frees), or NULL after an allocation failure. */
char *tm_buf_done(struct tm_buf *b);
/* A Prometheus family's "# HELP" and "# TYPE" (@type "gauge", "counter"). */
void tm_prom_help(struct tm_buf *b, const char *type, const char *name, const char *help);
#endif
