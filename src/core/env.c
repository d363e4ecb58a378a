/*
** env.c: the environment every tree, agent and blackboard belongs to. It
** routes all allocation through one lua_Alloc-shaped allocator (counting the
** bytes) and keeps the named-leaf registry, indexed by leaf name id
** (names.c), whose entries are looked up at every call so re-registration
** takes effect at once, and the host's hooks for the event payloads it
** owns.
*/
#include <stdlib.h>
#include <string.h>

#include "bonsai.h"
#include "env.h"
#include "names.h"

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

void bonsai_env_release(bonsai_env *env) {
  if (env == NULL || --env->refs > 0)
    return;
  bs_free(env, env->leaves, env->nleaves * sizeof *env->leaves);
  env->alloc(env->ud, env, sizeof *env, 0);
}

size_t bonsai_env_memory(const bonsai_env *env) { return env->bytes; }

/* The leaf of a name nothing was registered under in this environment
** (a tree shared by another one names it): its tick fails, and the VM
** names the leaf (LEAF_MISSING). */
static int missing(const bonsai_call *c) {
  (void)c;
  return BONSAI_ERROR;
}

int bs_env_cover(bonsai_env *env, uint32_t n) {
  uint32_t ncap = env->nleaves ? env->nleaves : 16, i;
  Leaf *nl;
  if (n <= env->nleaves)
    return BONSAI_OK;
  while (ncap < n)
    ncap *= 2;
  nl = bs_realloc(env, env->leaves, env->nleaves * sizeof *nl,
                  ncap * sizeof *nl);
  if (nl == NULL)
    return BONSAI_ENOMEM;
  for (i = env->nleaves; i < ncap; i++) {
    nl[i].fn = missing;
    nl[i].data = (void *)bs_name(BS_LEAVES, i); /* NULL past the names */
    nl[i].flags = LEAF_MISSING;
    nl[i].atimeout = -1;
  }
  env->leaves = nl;
  env->nleaves = ncap;
  return BONSAI_OK;
}

int bonsai_leaf_register(bonsai_env *env, const char *name, bonsai_leaf_fn fn,
                         void *data, unsigned flags) {
  int id;
  if (name == NULL || fn == NULL || *name == '\0')
    return BONSAI_EARG;
  id = bs_name_id(BS_LEAVES, name, strlen(name), 1);
  if (id < 0 || bs_env_cover(env, (uint32_t)id + 1) != BONSAI_OK)
    return BONSAI_ENOMEM;
  env->leaves[id].fn = fn;
  env->leaves[id].data = data;
  env->leaves[id].flags = flags;
  env->leaves[id].atimeout = -1;
  return BONSAI_OK;
}

int bonsai_leaf_abort_timeout(bonsai_env *env, const char *name,
                              double seconds) {
  int id = bonsai_leaf_find(env, name);
  if (id < 0)
    return BONSAI_EARG;
  env->leaves[id].atimeout = seconds >= 0 ? seconds : -1; /* NaN: none */
  return BONSAI_OK;
}

int bonsai_leaf_find(const bonsai_env *env, const char *name) {
  int id;
  if (name == NULL)
    return -1;
  id = bs_name_id(BS_LEAVES, name, strlen(name), 0);
  return id >= 0 && (uint32_t)id < env->nleaves &&
                 env->leaves[id].fn != missing
             ? id
             : -1;
}

size_t bonsai_leaf_names(const bonsai_env *env, char *buf, size_t size) {
  size_t at = 0;
  uint32_t id;
  if (buf != NULL && size > 0)
    buf[0] = '\0';
  for (id = 0; id < env->nleaves; id++) {
    const char *s;
    size_t len;
    if (env->leaves[id].fn == missing)
      continue;
    s = bs_name(BS_LEAVES, id);
    len = strlen(s);
    if (strchr(s, ' ') != NULL)
      continue; /* a list of words has no room for it */
    if (buf != NULL && at + (at > 0) + len < size) {
      if (at > 0)
        buf[at] = ' ';
      memcpy(buf + at + (at > 0), s, len + 1);
    }
    at += (at > 0) + len;
  }
  return at;
}

int bonsai_leaf_get(const bonsai_env *env, int id, bonsai_leaf_fn *fn,
                    void **data, unsigned *flags) {
  const Leaf *l;
  if (id < 0 || (uint32_t)id >= env->nleaves)
    return BONSAI_EARG;
  l = &env->leaves[id];
  *fn = l->fn;
  *data = l->data;
  *flags = l->flags;
  return BONSAI_OK;
}

int bonsai_key(bonsai_env *env, const char *name, size_t len) {
  (void)env;
  return bs_name_id(BS_KEYS, name, len, 1);
}

int bonsai_key_find(const bonsai_env *env, const char *name, size_t len) {
  (void)env;
  return bs_name_id(BS_KEYS, name, len, 0);
}

const char *bonsai_key_name(const bonsai_env *env, int key) {
  (void)env;
  return key < 0 ? NULL : bs_name(BS_KEYS, (uint32_t)key);
}

void bonsai_env_payload_hooks(bonsai_env *env, bonsai_payload_fn retain,
                              bonsai_payload_fn release, void *ud) {
  env->retain = retain;
  env->release = release;
  env->payud = ud;
}

void bs_payload_retain(bonsai_env *env, const bonsai_value *v) {
  if (v->type == BONSAI_THANDLE && env->retain != NULL)
    env->retain(env->payud, v->u.handle);
}

void bs_payload_release(bonsai_env *env, const bonsai_value *v) {
  if (v->type == BONSAI_THANDLE && env->release != NULL)
    env->release(env->payud, v->u.handle);
}
