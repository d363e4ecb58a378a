/*
** bsconf.h: limits, visibility marks, the internal assert and the Lua
** version shims, in one place (as luaconf.h and LPeg's lptypes.h do).
*/
#ifndef bonsai_bsconf_h
#define bonsai_bsconf_h

#include <assert.h>

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

/* Internal invariants only; compiled out in release builds (NDEBUG). */
#define bs_assert(c) assert(c)

/* Counters and flags that threads share (blueprints of shared trees):
** GCC/Clang atomic builtins, which C99 builds have too. */
#define bs_atomic_inc(p) ((void)__atomic_add_fetch((p), 1, __ATOMIC_RELAXED))
#define bs_atomic_dec(p) (__atomic_sub_fetch((p), 1, __ATOMIC_ACQ_REL))
#define bs_atomic_get(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define bs_atomic_set(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* "No node": parent of the root, absent child. */
#define BS_NONE 0xffffffffu

/* Largest number of nodes in one tree. */
#define BS_MAXNODES 0x7fffffffu

/* Default limit on the nodes of one definition (bonsai_def_max_nodes,
** the max_nodes option of bt.tree and tree:reload). */
#define BS_DEFMAXNODES 1000000u

/* Longest name (of a node, a tree, a leaf, a key in a definition). */
#define BS_MAXNAME 1024u

/* Size of an agent's error message buffer. */
#define BS_ERRSIZE 512

/* Closing a coroutine: lua_closethread from 5.4.6 on, lua_resetthread on
** Debian's 5.4.4. Used only by the binding (files that include lua.h). */
#if defined(LUA_VERSION_RELEASE_NUM) && LUA_VERSION_RELEASE_NUM >= 50406
#define bs_closethread(co, from) lua_closethread(co, from)
#else
#define bs_closethread(co, from) ((void)(from), lua_resetthread(co))
#endif

#endif
