/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kubernetes' text forms: resource quantities ("1500m", "2Gi", "0.5",
 * "1e3") and Go durations ("5m0s", "1h30m"), read from the API and written
 * into NodeMetric the way the API server writes them back (canonical).
 */
#ifndef __TM_QUANTITY_H
#define __TM_QUANTITY_H
#include <stddef.h>
#include <stdint.h>

/*
 * @s as a quantity times @scale (1000: CPU in milli-units, 1: bytes),
 * rounded up as the API server rounds: "1500m" x 1000 -> 1500, "0.5" x 1000
 * -> 500, "2Gi" x 1 -> 2147483648. 0; -1 when @s is not a quantity, is
 * negative or does not fit 64 bits.
 */
int tm_qty_parse(const char *s, uint64_t scale, uint64_t *out);

/* CPU in milli-units the canonical way: "2" for 2000, "1500m" for 1500. */
void tm_qty_cpu(char *out, size_t len, uint64_t mcpu);

/* Bytes in the canonical binary form: "2Gi", "1536Mi", or "123" when no
 * binary suffix divides them. */
void tm_qty_bytes(char *out, size_t len, uint64_t bytes);

/* A Go duration ("300s", "5m", "1h0m0s", "1.5m") in whole seconds; -1 when
 * it is not one, is negative, is below a second or above 30 days. */
int tm_duration_parse(const char *s, uint32_t *secs);

/* Seconds as Go's time.Duration prints them: "5m0s", "1h0m0s", "30s". */
void tm_duration_fmt(char *out, size_t len, uint32_t secs);
#endif
