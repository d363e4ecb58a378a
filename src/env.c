/*
** env.c: the environment every tree, agent and blackboard belongs to. It
** routes all allocation through one lua_Alloc-shaped allocator (counting the
** bytes), interns strings to dense ids, and keeps the named-leaf registry,
** whose entries are looked up at every call so re-registration takes effect
** at once.
*/
#include <stdlib.h>
#include <string.h>

#include "bonsai.h"
#include "env.h"

static void *default_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(p);
    return NULL;
  }
  return realloc(p, nsize);
}

void *bs_realloc(bonsai_env *env, void *p, size_t osize, size_t nsize) {
  void *q;
  if (p == NULL)
    osize = 0;
  q = env->alloc(env->ud, p, osize, nsize);
  if (q != NULL || nsize == 0)
    env->bytes = env->bytes - osize + nsize;
  return q;
}

char *bs_strdup(bonsai_env *env, const char *s, size_t len) {
  char *d = bs_malloc(env, len + 1);
  if (d != NULL) {
    memcpy(d, s, len);
    d[len] = '\0';
  }
  return d;
}

void bs_strfree(bonsai_env *env, char *s) {
  if (s != NULL)
    bs_free(env, s, strlen(s) + 1);
}

bonsai_env *bonsai_env_new(bonsai_alloc alloc, void *ud) {
  bonsai_env *env;
  if (alloc == NULL)
    alloc = default_alloc;
  env = alloc(ud, NULL, 0, sizeof *env);
  if (env == NULL)
    return NULL;
  memset(env, 0, sizeof *env);
  env->refs = 1;
  env->alloc = alloc;
  env->ud = ud;
  env->bytes = sizeof *env;
  return env;
}

void bs_env_retain(bonsai_env *env) { env->refs++; }

static void strtab_free(bonsai_env *env, Strtab *t) {
  uint32_t i;
  for (i = 0; i < t->n; i++)
    bs_strfree(env, t->str[i]);
  bs_free(env, t->str, t->cap * sizeof *t->str);
  bs_free(env, t->hash, t->hcap * sizeof *t->hash);
}

void bonsai_env_release(bonsai_env *env) {
  if (env == NULL || --env->refs > 0)
    return;
  bs_free(env, env->leaves, env->leafcap * sizeof *env->leaves);
  strtab_free(env, &env->leafnames);
  strtab_free(env, &env->keys);
  env->alloc(env->ud, env, sizeof *env, 0);
}

size_t bonsai_env_memory(const bonsai_env *env) { return env->bytes; }

/* FNV-1a */
static uint32_t strhash(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  while (len--)
    h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

/* Rebuilds the hash index with room for twice the strings. */
static int rehash(bonsai_env *env, Strtab *t) {
  uint32_t ncap = t->hcap ? t->hcap * 2 : 16, i;
  uint32_t *h = bs_malloc(env, ncap * sizeof *h);
  if (h == NULL)
    return -1;
  memset(h, 0, ncap * sizeof *h);
  for (i = 0; i < t->n; i++) {
    uint32_t j = strhash(t->str[i], strlen(t->str[i])) & (ncap - 1);
    while (h[j] != 0)
      j = (j + 1) & (ncap - 1);
    h[j] = i + 1;
  }
  bs_free(env, t->hash, t->hcap * sizeof *t->hash);
  t->hash = h;
  t->hcap = ncap;
  return 0;
}

int bs_intern(bonsai_env *env, Strtab *t, const char *s, size_t len,
              int add) {
  uint32_t j;
  char *copy;
  if (t->hcap != 0) {
    for (j = strhash(s, len) & (t->hcap - 1); t->hash[j] != 0;
         j = (j + 1) & (t->hcap - 1)) {
      const char *o = t->str[t->hash[j] - 1];
      if (strncmp(o, s, len) == 0 && o[len] == '\0')
        return (int)(t->hash[j] - 1);
    }
  }
  if (!add || t->n >= 0x7fffffff)
    return -1;
  if (t->n == t->cap) { /* grow the id array */
    uint32_t ncap = t->cap ? t->cap * 2 : 16;
    char **ns = bs_realloc(env, t->str, t->cap * sizeof *ns, ncap * sizeof *ns);
    if (ns == NULL)
      return -1;
    t->str = ns;
    t->cap = ncap;
  }
  if ((t->n + 1) * 2 > t->hcap && rehash(env, t) != 0)
    return -1;
  if ((copy = bs_strdup(env, s, len)) == NULL)
    return -1;
  t->str[t->n] = copy;
  for (j = strhash(s, len) & (t->hcap - 1); t->hash[j] != 0;
       j = (j + 1) & (t->hcap - 1))
    ;
  t->hash[j] = ++t->n;
  return (int)(t->n - 1);
}

int bonsai_leaf_register(bonsai_env *env, const char *name, bonsai_leaf_fn fn,
                         void *data, unsigned flags) {
  int id;
  if (name == NULL || fn == NULL || *name == '\0')
    return BONSAI_EARG;
  if (env->leafcap == env->leafnames.n) { /* room for one more leaf first */
    uint32_t ncap = env->leafcap ? env->leafcap * 2 : 16;
    Leaf *nl = bs_realloc(env, env->leaves, env->leafcap * sizeof *nl,
                          ncap * sizeof *nl);
    if (nl == NULL)
      return BONSAI_ENOMEM;
    env->leaves = nl;
    env->leafcap = ncap;
  }
  id = bs_intern(env, &env->leafnames, name, strlen(name), 1);
  if (id < 0)
    return BONSAI_ENOMEM;
  env->leaves[id].fn = fn;
  env->leaves[id].data = data;
  env->leaves[id].flags = flags;
  return BONSAI_OK;
}

int bs_leaf_find(bonsai_env *env, const char *name) {
  return bs_intern(env, &env->leafnames, name, strlen(name), 0);
}

int bonsai_key(bonsai_env *env, const char *name, size_t len) {
  if (memchr(name, '\0', len) != NULL)
    return -1; /* names are C strings */
  return bs_intern(env, &env->keys, name, len, 1);
}

const char *bonsai_key_name(const bonsai_env *env, int key) {
  if (key < 0 || (uint32_t)key >= env->keys.n)
    return NULL;
  return env->keys.str[key];
}
