// SPDX-License-Identifier: GPL-2.0
/* Per-key CPU time counters and their growth (usage.h). */
#include <stdlib.h>
#include <string.h>

#include "usage.h"

int tm_use_add(struct tm_usetab *t, const char *key, uint64_t us)
{
	char *k;

	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		struct tm_use *nv = realloc(t->v, sizeof(*nv) * cap);

		if (!nv)
			return -1;
		t->v = nv;
		t->cap = cap;
	}
	k = strdup(key);
	if (!k)
		return -1;
	t->v[t->n++] = (struct tm_use){k, us};
	t->sorted = 0;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(((const struct tm_use *)a)->key, ((const struct tm_use *)b)->key);
}

void tm_use_done(struct tm_usetab *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp);
	t->sorted = 1;
}

uint64_t tm_use_growth(const struct tm_usetab *prev, const struct tm_usetab *cur,
		       const char *prefix, uint64_t new_max_us)
{
	size_t pl = strlen(prefix);
	uint64_t sum = 0;

	for (int i = 0; i < cur->n; i++) {
		struct tm_use k = {cur->v[i].key, 0}, *p;

		if (strncmp(cur->v[i].key, prefix, pl))
			continue;
		p = prev->n ? bsearch(&k, prev->v, prev->n, sizeof(*prev->v), cmp) : NULL;
		sum += tm_use_grown(p != NULL, p ? p->us : 0, cur->v[i].us, new_max_us);
	}
	return sum;
}

void tm_use_free(struct tm_usetab *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->v[i].key);
	free(t->v);
	*t = (struct tm_usetab){};
}
