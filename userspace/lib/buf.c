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

void tm_bjson_str(struct tm_buf *b, const char *s)
{
	tm_bprintf(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			tm_bprintf(b, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			tm_bprintf(b, "\\u%04x", *s);
		else
			tm_bprintf(b, "%c", *s);
	}
	tm_bprintf(b, "\"");
}

void tm_bprom_label(struct tm_buf *b, const char *s)
{
	tm_bprintf(b, "\"");
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			tm_bprintf(b, "\\%c", *s);
		else if (*s == '\n')
			tm_bprintf(b, "\\n");
		else
			tm_bprintf(b, "%c", *s);
	}
	tm_bprintf(b, "\"");
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
