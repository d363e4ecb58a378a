/*
** names.h: process-wide interning of blackboard keys, leaf names and
** event names (ids mean the same in every environment and thread).
*/
#ifndef bonsai_names_h
#define bonsai_names_h

#include "bstypes.h"

enum { BS_KEYS, BS_LEAVES, BS_EVENTS, BS_NTABLES };

/* The id of s (len bytes) in the table, interned if add; -1 when absent,
** out of memory, or s holds a NUL byte. Thread-safe. */
BS_INTERNAL int bs_name_id(int table, const char *s, size_t len, int add);
/* How many ids the table has given. */
BS_INTERNAL uint32_t bs_name_count(int table);
/* The name of id, or NULL. The string lives as long as the process. */
BS_INTERNAL const char *bs_name(int table, uint32_t id);

/* FNV-1a over len bytes of s, from h (BS_HASHSEED, or a seed mixed into
** it): the hash of names here, of sibling names in the compiler and of
** paths in reload plans. */
#define BS_HASHSEED 2166136261u
static inline uint32_t bs_hash(uint32_t h, const char *s, size_t len) {
  while (len--)
    h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

#endif
