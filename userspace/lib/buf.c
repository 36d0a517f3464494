// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "buf.h"

void tm_bprintf(struct tm_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < room) {
			b->len += n;
			return;
		}
		size_t nc = (b->cap ? b->cap * 2 : 4096) + n;
		char *np = realloc(b->p, nc);

		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
}

/* Length of the well-formed UTF-8 sequence at @s (1-4), or 0 when the byte
 * there starts none (stray continuation, overlong form, surrogate, above
 * U+10FFFF, cut short). */
size_t tm_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int n, cp, min;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (unsigned int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* NUL included: cut short */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Text from the system (cgroup names a tenant chose) in a report: valid
 * UTF-8 is kept, each byte that is not is written as the four characters
 * "\xHH" (systemd's convention), so distinct names stay distinct and the
 * document stays valid. @json picks JSON escapes, else Prometheus's.
 */
static void put_text(struct tm_buf *b, const char *s, bool json)
{
	tm_bprintf(b, "\"");
	while (*s) {
		size_t n = tm_utf8_len(s);
		unsigned char c = (unsigned char)*s;

		if (!n) {
			tm_bprintf(b, "\\\\x%02x", c); /* "\\" decodes to one backslash */
			s++;
		} else if (c == '"' || c == '\\') {
			tm_bprintf(b, "\\%c", c);
			s++;
		} else if (c == '\n') {
			tm_bprintf(b, "\\n");
			s++;
		} else if (json && c < 0x20) {
			tm_bprintf(b, "\\u%04x", c);
			s++;
		} else {
			tm_bprintf(b, "%.*s", (int)n, s);
			s += n;
		}
	}
	tm_bprintf(b, "\"");
}

void tm_bjson_str(struct tm_buf *b, const char *s)
{
	put_text(b, s, true);
}

json_t *tm_json_str(const char *s)
{
	struct tm_buf b = {};
	json_t *j;

	while (*s) {
		size_t n = tm_utf8_len(s);

		if (n) {
			tm_bprintf(&b, "%.*s", (int)n, s);
			s += n;
		} else {
			tm_bprintf(&b, "\\x%02x", (unsigned char)*s++);
		}
	}
	if (!tm_buf_done(&b))
		return NULL;
	j = json_string(b.p);
	free(b.p);
	return j;
}

void tm_bprom_label(struct tm_buf *b, const char *s)
{
	put_text(b, s, false);
}

char *tm_buf_done(struct tm_buf *b)
{
	if (b->oom) {
		free(b->p);
		return NULL;
	}
	if (!b->p)
		b->p = calloc(1, 1);
	return b->p;
}

void tm_prom_help(struct tm_buf *b, const char *type, const char *name, const char *help)
{
	tm_bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}
