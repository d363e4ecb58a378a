/*
** nearest.c: the word a misspelt one likely means, for every did-you-mean
** of Bonsai: the nearest words of a list by edit distance (optimal string
** alignment: a swap of two adjacent letters counts one edit), within a
** bound that grows with the word's length. The binding's checks of names
** and options (src/lua/lcheck.c) and the core's own messages (a check's
** key that is not set) both come here. Allocates nothing.
*/
#include <string.h>

#include "bonsai.h"

#define MAXWORD 64 /* longer words are passed over */
#define MOST 3     /* words given back at most */

/* The edit distance of a (n bytes) and b (m bytes), both at most MAXWORD
** long, or a number above limit as soon as it is sure to be: three rows of
** the table (a transposition looks two rows back). */
static size_t distance(const char *a, size_t n, const char *b, size_t m,
                       size_t limit) {
  size_t rows[3][MAXWORD + 1], *pp = rows[0], *prev = rows[1], *cur = rows[2];
  size_t i, j;
  if ((n > m ? n - m : m - n) > limit)
    return limit + 1;
  for (j = 0; j <= m; j++)
    prev[j] = j;
  for (i = 1; i <= n; i++) {
    size_t least;
    size_t *t;
    cur[0] = least = i;
    for (j = 1; j <= m; j++) {
      size_t cost = a[i - 1] != b[j - 1], best = prev[j - 1] + cost;
      if (prev[j] + 1 < best)
        best = prev[j] + 1;
      if (cur[j - 1] + 1 < best)
        best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          pp[j - 2] + 1 < best)
        best = pp[j - 2] + 1;
      cur[j] = best;
      if (best < least)
        least = best;
    }
    if (least > limit)
      return limit + 1;
    t = pp;
    pp = prev;
    prev = cur;
    cur = t;
  }
  return prev[m];
}

int bonsai_nearest(const char *word, const char *words, char *buf,
                   size_t size) {
  size_t n = word != NULL ? strlen(word) : 0, bestd, at = 0, len[MOST];
  const char *p = words != NULL ? words : "", *found[MOST];
  int k = 0, i;
  if (buf != NULL && size > 0)
    buf[0] = '\0';
  if (n == 0 || n > MAXWORD)
    return 0;
  bestd = n <= 4 ? 1 : n <= 8 ? 2 : 3; /* the farthest allowed */
  if (bestd >= n)
    bestd = n - 1; /* 'y' means no 'x': a word wholly replaced is no typo */
  while (*p != '\0') {
    size_t wl = strcspn(p, " "), d;
    if (wl > 0 && wl <= MAXWORD &&
        (d = distance(word, n, p, wl, bestd)) <= bestd) {
      for (i = 0; i < k; i++) /* a word listed twice counts once */
        if (len[i] == wl && memcmp(found[i], p, wl) == 0)
          break;
      if (d < bestd || k == 0) { /* nearer than all found so far */
        bestd = d;
        k = 0;
        i = 0;
      }
      if (i == k && k < MOST) {
        found[k] = p;
        len[k++] = wl;
      }
    }
    p += wl;
    while (*p == ' ')
      p++;
  }
  for (i = 0; i < k && buf != NULL && size > 0; i++) {
    size_t room = size - 1 - at, c = len[i] + (i > 0);
    if (c > room)
      break;
    if (i > 0)
      buf[at++] = ' ';
    memcpy(buf + at, found[i], len[i]);
    at += len[i];
    buf[at] = '\0';
  }
  return k;
}

size_t bonsai_did_you_mean(const char *near, char *buf, size_t size) {
  const char *p = near;
  size_t at = 0, k = 0, n = 0, len;
  char *o = buf;
  for (; *p != '\0'; p += len + (p[len] == ' '), n++)
    len = strcspn(p, " ");
  if (buf != NULL && size > 0)
    buf[0] = '\0';
  if (n == 0)
    return 0;
#define PUT(s, l)                                                              \
  do {                                                                         \
    size_t l_ = (l);                                                           \
    if (o != NULL && at + l_ < size) {                                         \
      memcpy(o + at, (s), l_);                                                 \
      o[at + l_] = '\0';                                                       \
    } else {                                                                   \
      o = NULL; /* cut: stop writing, go on counting */                        \
    }                                                                          \
    at += l_;                                                                  \
  } while (0)
  PUT(" (did you mean ", 15);
  for (p = near; *p != '\0'; p += len + (p[len] == ' '), k++) {
    len = strcspn(p, " ");
    if (k > 0)
      PUT(k == n - 1 ? " or " : ", ", k == n - 1 ? 4 : 2);
    PUT("'", 1);
    PUT(p, len);
    PUT("'", 1);
  }
  PUT("?)", 2);
#undef PUT
  if (o == NULL && buf != NULL && size > 0)
    buf[0] = '\0'; /* all or nothing */
  return at;
}
