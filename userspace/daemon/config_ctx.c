// SPDX-License-Identifier: GPL-2.0
/*
 * A configuration parse's errors (config.h): a leaf, so that the strategies'
 * cross-checks and the parser that reads their rows both report through it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "config.h"

int tm_cfg_fail(struct tm_cfg_ctx *x, const char *field, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (x->failed++)
		return -1; /* the first error is the one reported */
	n = snprintf(x->err, x->errlen, "%s: ", field);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < x->errlen)
		vsnprintf(x->err + n, x->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

bool tm_cfg_failed(const struct tm_cfg_ctx *x)
{
	return x->failed;
}
