/*
** bsconf.h: limits, visibility marks, the internal assert and the Lua
** version shims, in one place (as luaconf.h and LPeg's lptypes.h do).
*/
#ifndef bonsai_bsconf_h
#define bonsai_bsconf_h

#include <assert.h>

#include "bonsai.h"

#if defined(__GNUC__) && __GNUC__ >= 4
#define BS_INTERNAL __attribute__((visibility("hidden")))
#else
#define BS_INTERNAL
#endif

/* A rare path kept out of a hot caller (inlined, it costs the caller
** registers). */
#if defined(__GNUC__)
#define BS_NOINLINE __attribute__((noinline))
#else
#define BS_NOINLINE
#endif

/* A step of a hot path kept in a function of its own for reading, which
** must still be inlined. */
#if defined(__GNUC__)
#define BS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BS_ALWAYS_INLINE inline
#endif

/* Internal invariants only; compiled out in release builds (NDEBUG). */
#define bs_assert(c) assert(c)

/* Counters and flags that threads share (blueprints of shared trees):
** GCC/Clang atomic builtins, which C99 builds have too. */
#define bs_atomic_inc(p) ((void)__atomic_add_fetch((p), 1, __ATOMIC_RELAXED))
#define bs_atomic_dec(p) (__atomic_sub_fetch((p), 1, __ATOMIC_ACQ_REL))
#define bs_atomic_get(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define bs_atomic_set(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* "No node": parent of the root, absent child; limits (bonsai.h). */
#define BS_NONE BONSAI_NONE
#define BS_MAXNODES BONSAI_MAXNODES
#define BS_DEFMAXNODES BONSAI_DEFMAXNODES
#define BS_MAXNAME BONSAI_MAXNAME

/* Size of an agent's error message buffer. */
#define BS_ERRSIZE 512

#endif
