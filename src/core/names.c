/*
** names.c: the names all environments share: blackboard keys, leaf names
** and event names, interned process-wide to dense ids, so that a compiled tree means
** the same in every environment and thread (a tree shared by several Lua
** states holds key and leaf ids). One mutex guards the lookups; a name's
** string never moves and is never freed, so it is read without the lock
** (the count of ids is published with release/acquire).
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bonsai.h"
#include "names.h"

#define CHUNK 1024u        /* names per chunk: chunks never move */
#define MAXCHUNKS 4096u    /* so at most 4M names per table */

typedef struct Table {
  char **chunk[MAXCHUNKS];
  uint32_t n;              /* ids given (read with acquire) */
  uint32_t *hash;          /* open addressing: id + 1, 0 empty */
  uint32_t hcap;           /* power of 2 */
} Table;

static Table tables[BS_NTABLES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *at(const Table *t, uint32_t id) {
  return t->chunk[id / CHUNK][id % CHUNK];
}

/* Rebuilds the index with room for twice the names. */
static int rehash(Table *t) {
  uint32_t ncap = t->hcap ? t->hcap * 2 : 64, i;
  uint32_t *h = calloc(ncap, sizeof *h);
  if (h == NULL)
    return -1;
  for (i = 0; i < t->n; i++) {
    const char *s = at(t, i);
    uint32_t j = bs_hash(BS_HASHSEED, s, strlen(s)) & (ncap - 1);
    while (h[j] != 0)
      j = (j + 1) & (ncap - 1);
    h[j] = i + 1;
  }
  free(t->hash);
  t->hash = h;
  t->hcap = ncap;
  return 0;
}

static int intern(Table *t, const char *s, size_t len, int add) {
  uint32_t j, id;
  char *copy;
  if (t->hcap != 0)
    for (j = bs_hash(BS_HASHSEED, s, len) & (t->hcap - 1); t->hash[j] != 0;
         j = (j + 1) & (t->hcap - 1)) {
      const char *o = at(t, t->hash[j] - 1);
      if (strncmp(o, s, len) == 0 && o[len] == '\0')
        return (int)(t->hash[j] - 1);
    }
  if (!add || t->n >= CHUNK * MAXCHUNKS || t->n >= 0x7fffffffu)
    return -1;
  id = t->n;
  if (t->chunk[id / CHUNK] == NULL &&
      (t->chunk[id / CHUNK] = malloc(CHUNK * sizeof(char *))) == NULL)
    return -1;
  if ((id + 1) * 2 > t->hcap && rehash(t) != 0)
    return -1;
  if ((copy = malloc(len + 1)) == NULL)
    return -1;
  memcpy(copy, s, len);
  copy[len] = '\0';
  t->chunk[id / CHUNK][id % CHUNK] = copy;
  for (j = bs_hash(BS_HASHSEED, s, len) & (t->hcap - 1); t->hash[j] != 0;
       j = (j + 1) & (t->hcap - 1))
    ;
  t->hash[j] = id + 1;
  __atomic_store_n(&t->n, id + 1, __ATOMIC_RELEASE);
  return (int)id;
}

int bs_name_id(int table, const char *s, size_t len, int add) {
  int id;
  if (memchr(s, '\0', len) != NULL)
    return -1; /* names are C strings */
  pthread_mutex_lock(&lock);
  id = intern(&tables[table], s, len, add);
  pthread_mutex_unlock(&lock);
  return id;
}

uint32_t bs_name_count(int table) {
  return __atomic_load_n(&tables[table].n, __ATOMIC_ACQUIRE);
}

const char *bs_name(int table, uint32_t id) {
  return id < bs_name_count(table) ? at(&tables[table], id) : NULL;
}

#if defined(__GNUC__)
/* When the library is unloaded (the last Lua state that required the
** module closed, or the process ends), the names go with it. */
__attribute__((destructor)) static void freenames(void) {
  int k;
  uint32_t i;
  for (k = 0; k < BS_NTABLES; k++) {
    Table *t = &tables[k];
    for (i = 0; i < t->n; i++)
      free(t->chunk[i / CHUNK][i % CHUNK]);
    for (i = 0; i < MAXCHUNKS && t->chunk[i] != NULL; i++)
      free(t->chunk[i]);
    free(t->hash);
    memset(t, 0, sizeof *t);
  }
}
#endif
