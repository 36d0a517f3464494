/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the libFuzzer targets: the input as a NUL-ended string. */
#ifndef __TM_FUZZ_H
#define __TM_FUZZ_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = 0;
	}
	return s;
}
#endif
