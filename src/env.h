/*
** env.h: allocation through the environment's allocator, interned strings,
** and the named-leaf registry.
*/
#ifndef bonsai_env_h
#define bonsai_env_h

#include "bstypes.h"

BS_INTERNAL void *bs_realloc(bonsai_env *env, void *p, size_t osize,
                             size_t nsize);
#define bs_malloc(env, n) bs_realloc(env, NULL, 0, n)
#define bs_free(env, p, n) ((void)bs_realloc(env, p, n, 0))
BS_INTERNAL char *bs_strdup(bonsai_env *env, const char *s, size_t len);
BS_INTERNAL void bs_strfree(bonsai_env *env, char *s);

BS_INTERNAL void bs_env_retain(bonsai_env *env);

/* Id of s (len bytes, no NUL among them) in t, or -1 when absent (add ==
** 0) or out of memory. */
BS_INTERNAL int bs_intern(bonsai_env *env, Strtab *t, const char *s,
                          size_t len, int add);

/* Registry lookup by name: the leaf id, or -1. */
BS_INTERNAL int bs_leaf_find(bonsai_env *env, const char *name);

#endif
