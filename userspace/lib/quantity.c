// SPDX-License-Identifier: GPL-2.0
/* Kubernetes quantities and Go durations (quantity.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "quantity.h"

typedef unsigned __int128 u128;

#define BIG ((u128)1 << 120) /* past this, no later division brings it back */

int tm_qty_parse(const char *s, uint64_t scale, uint64_t *out)
{
	static const struct {
		const char *sfx;
		int bin; /* power of 1024 */
		int dec; /* power of 10 */
	} sfx[] = {{"Ki", 1, 0}, {"Mi", 2, 0}, {"Gi", 3, 0}, {"Ti", 4, 0}, {"Pi", 5, 0},
		   {"Ei", 6, 0}, {"n", 0, -9}, {"u", 0, -6}, {"m", 0, -3}, {"k", 0, 3},
		   {"M", 0, 6},	 {"G", 0, 9},  {"T", 0, 12}, {"P", 0, 15}, {"E", 0, 18}};
	const char *p = s;
	u128 m = 0, v;
	int e10 = 0, bin = 0, digits = 0;
	bool dot = false;

	if (*p == '+')
		p++;
	for (; *p; p++) {
		if (*p == '.' && !dot) {
			dot = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			break;
		digits++;
		if (m < BIG / 10) {
			m = m * 10 + (*p - '0');
			if (dot)
				e10--;
		} else if (!dot) {
			e10++; /* digits past 36 significant ones only scale */
		}
	}
	if (!digits)
		return -1;
	/* "E" alone is exa, "Ei" exbi; followed by a number, an exponent */
	if ((*p == 'e' || *p == 'E') &&
	    ((p[1] >= '0' && p[1] <= '9') || p[1] == '+' || p[1] == '-')) {
		int sign = 1, x = 0, n = 0;

		p++;
		if (*p == '+' || *p == '-')
			sign = *p++ == '-' ? -1 : 1;
		for (; *p >= '0' && *p <= '9'; p++, n++)
			if (x < 1000)
				x = x * 10 + (*p - '0');
		if (!n || *p)
			return -1;
		e10 += sign * x;
	} else if (*p) {
		size_t i;

		for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
			if (!strcmp(p, sfx[i].sfx))
				break;
		if (i == sizeof(sfx) / sizeof(sfx[0]))
			return -1;
		bin = sfx[i].bin;
		e10 += sfx[i].dec;
	}
	v = m;
	if (v && scale > BIG / v)
		return -1;
	v *= scale;
	for (int i = 0; i < bin; i++) {
		if (v > BIG / 1024)
			return -1;
		v *= 1024;
	}
	for (; e10 > 0; e10--) {
		if (v > BIG / 10)
			return -1;
		v *= 10;
	}
	if (e10 < -40) {
		*out = v ? 1 : 0; /* a positive amount below one unit: one, rounded up */
		return 0;
	}
	for (; e10 < 0; e10++)
		v = v / 10 + (v % 10 ? 1 : 0); /* up, as the API server rounds */
	if (v > UINT64_MAX)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

void tm_qty_cpu(char *out, size_t len, uint64_t mcpu)
{
	if (mcpu % 1000)
		snprintf(out, len, "%llum", (unsigned long long)mcpu);
	else
		snprintf(out, len, "%llu", (unsigned long long)(mcpu / 1000));
}

void tm_qty_bytes(char *out, size_t len, uint64_t b)
{
	static const char *const sfx[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	int k = 0;

	while (b && !(b % 1024) && k < 6) {
		b /= 1024;
		k++;
	}
	snprintf(out, len, "%llu%s", (unsigned long long)b, sfx[k]);
}

int tm_duration_parse(const char *s, uint32_t *secs)
{
	const char *p = s;
	double total = 0;

	if (!strcmp(s, "0") || !*s)
		return -1;
	while (*p) {
		double v = 0, f = 0.1;
		int n = 0;
		bool dot = false;

		for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
			if (*p == '.') {
				dot = true;
				continue;
			}
			n++;
			if (dot) {
				v += (*p - '0') * f;
				f /= 10;
			} else {
				v = v * 10 + (*p - '0');
			}
			if (v > 1e9)
				return -1;
		}
		if (!n)
			return -1;
		if (!strncmp(p, "ns", 2))
			v /= 1e9, p += 2;
		else if (!strncmp(p, "us", 2) || !strncmp(p, "\xc2\xb5s", 3))
			v /= 1e6, p += *p == 'u' ? 2 : 3;
		else if (!strncmp(p, "ms", 2))
			v /= 1e3, p += 2;
		else if (*p == 's')
			p++;
		else if (*p == 'm')
			v *= 60, p++;
		else if (*p == 'h')
			v *= 3600, p++;
		else
			return -1; /* Go requires a unit on every number but "0" */
		total += v;
	}
	if (total < 1 || total > 30 * 86400.0)
		return -1;
	*secs = (uint32_t)(total + 0.5);
	return 0;
}

void tm_duration_fmt(char *out, size_t len, uint32_t s)
{
	if (s >= 3600)
		snprintf(out, len, "%uh%um%us", s / 3600, s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(out, len, "%um%us", s / 60, s % 60);
	else
		snprintf(out, len, "%us", s);
}
