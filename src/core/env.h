/*
** env.h: allocation through the environment's allocator, and the
** named-leaf registry (names themselves are interned in names.c).
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

/* Frees the records of stepped ticks not in use (step.c). */
BS_INTERNAL void bs_env_freesteps(bonsai_env *env);
/* A host's payload v (BONSAI_THANDLE) is kept, or let go, once more (the
** environment's hooks, bonsai_env_payload_hooks; nothing for other
** values). */
BS_INTERNAL void bs_payload_retain(bonsai_env *env, const bonsai_value *v);
BS_INTERNAL void bs_payload_release(bonsai_env *env, const bonsai_value *v);

/* Makes env->leaves cover the leaf name ids below n (a tree compiled
** elsewhere may name leaves this environment never registered). */
BS_INTERNAL int bs_env_cover(bonsai_env *env, uint32_t n);

#endif
