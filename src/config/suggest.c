/*
 * suggest.c - "did you mean ...?" by Levenshtein edit distance.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"

#define WORD_MAX 128

/* Case-insensitive edit distance, or -1 when a word is too long to compare. */
static int distance(const char *a, const char *b)
{
	int row[WORD_MAX + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > WORD_MAX || lb > WORD_MAX)
		return -1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *cs_suggest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	int best_d = 0;
	size_t len;
	int limit;

	if (!word || !candidates)
		return NULL;
	len = strlen(word);
	limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	/* a word that starts a candidate ("h100" for "h100-sxm-80g") */
	for (size_t i = 0; len >= 3 && i < n; i++)
		if (candidates[i] && strncasecmp(candidates[i], word, len) == 0)
			return candidates[i];
	for (size_t i = 0; i < n; i++) {
		int d;
		if (!candidates[i])
			continue;
		d = distance(word, candidates[i]);
		if (d < 0 || d > limit || d >= (int)strlen(candidates[i]))
			continue;
		if (!best || d < best_d) {
			best = candidates[i];
			best_d = d;
		}
	}
	return best;
}

bool cs_name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;
		if (x != y)
			return false;
	}
	return *a == *b;
}
