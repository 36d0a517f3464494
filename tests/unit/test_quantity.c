// SPDX-License-Identifier: GPL-2.0
/*
 * Kubernetes quantities and Go durations (userspace/lib/quantity.c): what
 * pod requests and NodeMetric's collect policy arrive as, and the canonical
 * forms NodeMetric's status is written in.
 */
#include <stdint.h>
#include <string.h>
#include "kselftest_harness.h"
#include "quantity.h"

static uint64_t q(const char *s, uint64_t scale)
{
	uint64_t v = 12345;

	return tm_qty_parse(s, scale, &v) ? UINT64_MAX : v;
}

TEST(cpu_quantities)
{
	ASSERT_EQ(1500ull, q("1500m", 1000));
	ASSERT_EQ(2000ull, q("2", 1000));
	ASSERT_EQ(500ull, q("0.5", 1000));
	ASSERT_EQ(500ull, q(".5", 1000));
	ASSERT_EQ(100ull, q("100m", 1000));
	ASSERT_EQ(1ull, q("1u", 1000)); /* below a milli-CPU: rounded up */
	ASSERT_EQ(1000000ull, q("1k", 1000));
	ASSERT_EQ(3000ull, q("3e0", 1000));
	ASSERT_EQ(1500ull, q("1.5e0", 1000));
	ASSERT_EQ(2000ull, q("+2", 1000));
	ASSERT_EQ(0ull, q("0", 1000));
}

TEST(memory_quantities)
{
	ASSERT_EQ(2147483648ull, q("2Gi", 1));
	ASSERT_EQ(134217728ull, q("128Mi", 1));
	ASSERT_EQ(1000000000ull, q("1G", 1));
	ASSERT_EQ(129000000ull, q("129M", 1));
	ASSERT_EQ(123456789ull, q("123456789", 1));
	ASSERT_EQ(1000ull, q("1e3", 1));
	ASSERT_EQ(1ull, q("1m", 1)); /* a milli-byte: one byte, rounded up */
	ASSERT_EQ(1536ull, q("1.5Ki", 1));
	ASSERT_EQ((uint64_t)8 << 60, q("8Ei", 1));
}

TEST(not_quantities)
{
	static const char *const bad[] = {"",	    "-1",   "1x",   "Gi",    "1.2.3", "1Gib",
					  "1e",	    "1e+",  "1ee",  "e3",    "1 Gi",  "0x10",
					  "1.5.Mi", "16Ei", "1e30", "1e3m5", "m",     NULL};

	for (int i = 0; bad[i]; i++) {
		uint64_t v;

		EXPECT_EQ(-1, tm_qty_parse(bad[i], 1, &v))
		TH_LOG("'%s' accepted as %llu", bad[i], (unsigned long long)v);
	}
}

TEST(canonical_forms)
{
	char b[32];

	tm_qty_cpu(b, sizeof(b), 1500);
	ASSERT_STREQ("1500m", b);
	tm_qty_cpu(b, sizeof(b), 2000);
	ASSERT_STREQ("2", b);
	tm_qty_cpu(b, sizeof(b), 0);
	ASSERT_STREQ("0", b);
	tm_qty_bytes(b, sizeof(b), 2147483648ull);
	ASSERT_STREQ("2Gi", b);
	tm_qty_bytes(b, sizeof(b), 1536ull << 20);
	ASSERT_STREQ("1536Mi", b);
	tm_qty_bytes(b, sizeof(b), 123456789);
	ASSERT_STREQ("123456789", b);
	tm_qty_bytes(b, sizeof(b), 0);
	ASSERT_STREQ("0", b);
	/* what is written reads back to the same amount */
	for (uint64_t v = 1; v < (1ull << 40); v = v * 3 + 7) {
		tm_qty_bytes(b, sizeof(b), v);
		ASSERT_EQ(v, q(b, 1));
		tm_qty_cpu(b, sizeof(b), v);
		ASSERT_EQ(v, q(b, 1000));
	}
}

TEST(durations)
{
	uint32_t s;
	char b[32];

	ASSERT_EQ(0, tm_duration_parse("5m0s", &s));
	ASSERT_EQ(300u, s);
	ASSERT_EQ(0, tm_duration_parse("5m", &s));
	ASSERT_EQ(300u, s);
	ASSERT_EQ(0, tm_duration_parse("1h30m", &s));
	ASSERT_EQ(5400u, s);
	ASSERT_EQ(0, tm_duration_parse("1.5m", &s));
	ASSERT_EQ(90u, s);
	ASSERT_EQ(0, tm_duration_parse("2s", &s));
	ASSERT_EQ(2u, s);
	ASSERT_EQ(0, tm_duration_parse("1500ms", &s));
	ASSERT_EQ(2u, s);
	ASSERT_EQ(-1, tm_duration_parse("5", &s));
	ASSERT_EQ(-1, tm_duration_parse("-5m", &s));
	ASSERT_EQ(-1, tm_duration_parse("100ms", &s)); /* below a second */
	ASSERT_EQ(-1, tm_duration_parse("1000h", &s));
	ASSERT_EQ(-1, tm_duration_parse("5d", &s));
	ASSERT_EQ(-1, tm_duration_parse("", &s));
	tm_duration_fmt(b, sizeof(b), 300);
	ASSERT_STREQ("5m0s", b);
	tm_duration_fmt(b, sizeof(b), 3600);
	ASSERT_STREQ("1h0m0s", b);
	tm_duration_fmt(b, sizeof(b), 30);
	ASSERT_STREQ("30s", b);
	tm_duration_fmt(b, sizeof(b), 5430);
	ASSERT_STREQ("1h30m30s", b);
}

TEST_HARNESS_MAIN
