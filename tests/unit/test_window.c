// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the sample window (window.h): the ring the sampler and the
 * CPU eviction policies average over. */
#include "kselftest_harness.h"
#include "window.h"

TEST(a_window_not_yet_full_is_not_averaged)
{
	double buf[8], mean = -1;
	struct tm_win w = TM_WIN_OVER(buf);
	uint32_t c = 99;

	EXPECT_EQ(8U, w.cap);
	EXPECT_EQ(-1, tm_win_mean(&w, 3, &mean, &c));
	tm_win_push(&w, 10);
	tm_win_push(&w, 20);
	EXPECT_EQ(-1, tm_win_mean(&w, 3, &mean, &c));
	tm_win_push(&w, 30);
	ASSERT_EQ(0, tm_win_mean(&w, 3, &mean, &c));
	EXPECT_EQ(3U, c);
	EXPECT_EQ(20.0, mean);
	/* a span of none, or longer than the window can hold, is refused */
	EXPECT_EQ(-1, tm_win_mean(&w, 0, &mean, &c));
	EXPECT_EQ(-1, tm_win_mean(&w, 9, &mean, &c));
}

TEST(the_last_k_are_the_newest_after_the_ring_wraps)
{
	double buf[4], out[8], mean;
	struct tm_win w = TM_WIN_OVER(buf);
	uint32_t c;

	for (int i = 1; i <= 10; i++)
		tm_win_push(&w, i);
	EXPECT_EQ(4U, w.n);
	EXPECT_EQ(10.0, tm_win_at(&w, 0));
	EXPECT_EQ(7.0, tm_win_at(&w, 3));
	/* oldest first, and never more than were kept */
	ASSERT_EQ(4U, tm_win_last(&w, 8, out));
	EXPECT_EQ(7.0, out[0]);
	EXPECT_EQ(10.0, out[3]);
	ASSERT_EQ(2U, tm_win_last(&w, 2, out));
	EXPECT_EQ(9.0, out[0]);
	EXPECT_EQ(10.0, out[1]);
	ASSERT_EQ(0, tm_win_mean(&w, 2, &mean, &c));
	EXPECT_EQ(9.5, mean);
	ASSERT_EQ(0, tm_win_mean(&w, 4, &mean, &c));
	EXPECT_EQ(8.5, mean);
}

/* A sample that does not count keeps its period: the mean is over those
 * that count, and how many counted is told (the coverage rule's input). */
TEST(samples_that_do_not_count_keep_their_place)
{
	double buf[5], mean;
	struct tm_win w = TM_WIN_OVER(buf);
	uint32_t c;

	tm_win_push(&w, 0.25);
	tm_win_push(&w, NAN);
	tm_win_push(&w, 0.75);
	tm_win_push(&w, NAN);
	ASSERT_EQ(0, tm_win_mean(&w, 4, &mean, &c));
	EXPECT_EQ(2U, c);
	EXPECT_EQ(0.5, mean);
	/* the last 2 periods: one counted */
	ASSERT_EQ(0, tm_win_mean(&w, 2, &mean, &c));
	EXPECT_EQ(1U, c);
	EXPECT_EQ(0.75, mean);
	/* the last one only: none counted, and the mean says 0, not NaN */
	ASSERT_EQ(0, tm_win_mean(&w, 1, &mean, &c));
	EXPECT_EQ(0U, c);
	EXPECT_EQ(0.0, mean);
	EXPECT_EQ(0.75, tm_win_max(&w, 4));
}

TEST(max_covers_only_the_span_asked)
{
	double buf[6], m, out[6];
	struct tm_win w = TM_WIN_OVER(buf);
	uint32_t c;

	EXPECT_EQ(0.0, tm_win_max(&w, 3));
	tm_win_push(&w, 900);
	tm_win_push(&w, 100);
	tm_win_push(&w, 200);
	EXPECT_EQ(200.0, tm_win_max(&w, 2));
	EXPECT_EQ(900.0, tm_win_max(&w, 3));
	EXPECT_EQ(900.0, tm_win_max(&w, 50));
	tm_win_reset(&w);
	EXPECT_EQ(0U, w.n);
	EXPECT_EQ(0.0, tm_win_max(&w, 3));
	EXPECT_EQ(-1, tm_win_mean(&w, 1, &m, &c));
	EXPECT_EQ(0U, tm_win_last(&w, 3, out));
}

TEST_HARNESS_MAIN
