// SPDX-License-Identifier: GPL-2.0
/* Every strategy tidemarkd runs, in the order they run each round. */
#include "strategy.h"

extern const struct tm_strategy tm_strategy_cpusuppress;
extern const struct tm_strategy tm_strategy_memevict;
extern const struct tm_strategy tm_strategy_cpuevict;
extern const struct tm_strategy tm_strategy_cpuhigh;
extern const struct tm_strategy tm_strategy_interference;
extern const struct tm_strategy tm_strategy_fallback;

const struct tm_strategy *const tm_strategies[] = {
	/* first: knows before the others whether the scheduler runs */
	&tm_strategy_fallback,
	&tm_strategy_memevict,
	&tm_strategy_cpuevict,
	&tm_strategy_cpuhigh,
	&tm_strategy_interference,
	/* last: applies a line another strategy changed in the same round */
	&tm_strategy_cpusuppress,
};
const int tm_nr_strategies = sizeof(tm_strategies) / sizeof(tm_strategies[0]);
