/*
** test_oom_sweep.c: the allocation-failure sweep. A host embedding Lua 5.4
** (or LuaJIT, whose GC64 builds take a lua_Alloc: there the scenario also
** runs on the LuaJIT path) with a lua_Alloc that refuses the N-th
** allocation (mode "one"), or every allocation from the N-th on (mode
** "all"), runs tests/c/oom_scenario.lua for every N the scenario's run
** makes, in both modes (on LuaJIT, only the allocations Bonsai makes
** itself are counted and refused: see luajits). After each run the
** allocator grants everything again and the scenario checks that its
** objects still work; lua_close must then give back every byte.
**   test_oom_sweep [FIRST-LAST] [one|all] [--without reload]
** (default: every N, both modes; --without reload leaves the reloads out of
** the scenario while a fix is pending). OOM_TRACE=1 in the environment makes
** the scenario print the allocation count at each step.
*/
#define _GNU_SOURCE /* dladdr */
#include <stdio.h>
#include <stdlib.h>
#ifdef OOM_BACKTRACE
#include <execinfo.h>
#endif
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "bonsai.h"
#include "bonsai_lua.h"

#ifndef SOURCE_ROOT
#define SOURCE_ROOT "."
#endif

#ifndef LUA_OK /* 5.1, LuaJIT */
#define LUA_OK 0
#endif
#if defined(LUA_JITLIBNAME)
#include <dlfcn.h>
#endif

enum { MODE_ONE, MODE_ALL };

/* The allocator's state: bytes in use, allocations counted since 'armed',
** and the one to refuse. */
static int without_reload;

typedef struct Heap {
  size_t inuse;
  long count;  /* allocations made while armed */
  long failat; /* 0: refuse none */
  int mode;
  int armed;
  long refused;
} Heap;

/*
** Whether the allocator was called by LuaJIT itself (its interpreter,
** compiler, collector or C API), from the return address into the caller.
** Those are never refused: LuaJIT 2.1 before its fix of November 2022
** (LuaJIT issue #906, commit ca8d3257; Debian 12 ships the version of March
** 2022) raises "not enough memory" from a Lua function's bytecode (a table
** constructor, BC_TDUP) with the stack top unset, which overwrites the
** stack and crashes in the unwinder (lj_err_mem -> err_unwind), with the
** compiler on or off. Bonsai's own allocations (the core's and the
** binding's, through the allocator the binding takes from lua_getallocf)
** are refused as on 5.4; those LuaJIT makes for the binding's Lua API calls
** are refused by the sweep on 5.4.
*/
#if defined(LUA_JITLIBNAME)
static int luajits(const void *caller) {
  lua_State *(*fn)(lua_Alloc, void *) = lua_newstate;
  void *f;
  Dl_info c, lj;
  memcpy(&f, &fn, sizeof f); /* (ISO C has no cast from a function) */
  return dladdr(caller, &c) != 0 && dladdr(f, &lj) != 0 &&
         c.dli_fbase == lj.dli_fbase;
}
#define REFUSABLE() (!luajits(__builtin_return_address(0)))
#else
#define REFUSABLE() 1
#endif

/* An allocation is a call that asks for a new block or a larger one;
** shrinking and freeing always succeed. */
static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Heap *h = (Heap *)ud;
  size_t old = ptr != NULL ? osize : 0;
  void *p;
  if (nsize == 0) {
    free(ptr);
    h->inuse -= old;
    return NULL;
  }
  if (h->armed && nsize > old && REFUSABLE()) {
    long n = ++h->count;
    if (h->failat > 0 && (n == h->failat ||
                          (h->mode == MODE_ALL && n > h->failat))) {
      h->refused++;
#ifdef OOM_BACKTRACE
      if (h->refused == 1) {
        void *frames[24];
        backtrace_symbols_fd(frames, backtrace(frames, 24), 2);
      }
#endif
      return NULL;
    }
  }
  p = realloc(ptr, nsize);
  if (p == NULL)
    return NULL;
  h->inuse = h->inuse - old + nsize;
  return p;
}

/* ALLOCS(): the allocations counted so far (for tracing a scenario). */
static int allocs(lua_State *L) {
  Heap *h = (Heap *)lua_touserdata(L, lua_upvalueindex(1));
  lua_pushinteger(L, (lua_Integer)h->count);
  lua_pushinteger(L, (lua_Integer)h->refused);
  return 2;
}

/* Calls S[name] protected; returns its error message (in buf) or NULL. */
static const char *call(lua_State *L, const char *name, char *buf,
                        size_t size) {
  int r;
  lua_getglobal(L, "S");
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
  r = lua_pcall(L, 0, 0, 0);
  if (r == LUA_OK)
    return NULL;
  snprintf(buf, size, "%s (status %d)",
           lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?", r);
  lua_pop(L, 1);
  return buf;
}

/* One run refusing allocation failat (0: none) in mode; returns the number
** of allocations the scenario's run made, or -1 after printing a
** failure. */
static long run(long failat, int mode) {
  Heap h;
  lua_State *L;
  char buf[1024];
  const char *err;
  memset(&h, 0, sizeof h);
  h.failat = failat;
  h.mode = mode;
  L = lua_newstate(heap_alloc, &h);
  if (L == NULL) {
    fprintf(stderr, "cannot make a Lua state\n");
    return -1;
  }
  luaL_openlibs(L);
  lua_pushlightuserdata(L, &h);
  lua_pushcclosure(L, allocs, 1);
  lua_setglobal(L, "ALLOCS");
  lua_pushboolean(L, without_reload);
  lua_setglobal(L, "WITHOUT_RELOAD");
  if (getenv("OOM_TRACE") != NULL) {
    lua_pushboolean(L, 1);
    lua_setglobal(L, "TRACE");
  }
#if LUA_VERSION_NUM >= 502
  luaL_requiref(L, "bonsai.core", luaopen_bonsai_core, 0);
  lua_pop(L, 1);
#else
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_bonsai_core);
  lua_setfield(L, -2, "bonsai.core");
  lua_pop(L, 2);
#endif
  if (luaL_dostring(L, "package.path = '" SOURCE_ROOT "/lua/?.lua;"
                       SOURCE_ROOT "/lua/?/init.lua;' .. package.path\n"
                       "S = dofile('" SOURCE_ROOT
                       "/tests/c/oom_scenario.lua')") != LUA_OK) {
    fprintf(stderr, "loading the scenario: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return -1;
  }
  if ((err = call(L, "setup", buf, sizeof buf)) != NULL) {
    fprintf(stderr, "setup: %s\n", err);
    lua_close(L);
    return -1;
  }
  h.armed = 1;
  (void)call(L, "run", buf, sizeof buf); /* any error is the scenario's */
  h.armed = 0;
  lua_pushinteger(L, (lua_Integer)h.refused);
  lua_setglobal(L, "REFUSED");
  if ((err = call(L, "check", buf, sizeof buf)) != NULL) {
    fprintf(stderr, "N=%ld mode=%s (%ld refused): check failed: %s\n",
            failat, mode == MODE_ONE ? "one" : "all", h.refused, err);
    lua_close(L);
    return -1;
  }
  lua_close(L);
  if (h.inuse != 0) {
    fprintf(stderr, "N=%ld mode=%s: %lu bytes not given back at lua_close\n",
            failat, mode == MODE_ONE ? "one" : "all",
            (unsigned long)h.inuse);
    return -1;
  }
  return h.count;
}

int main(int argc, char **argv) {
  long total, first = 1, last = -1, n, failed = 0, runs = 0;
  int mode, m0 = MODE_ONE, m1 = MODE_ALL, i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--without") == 0 && i + 1 < argc &&
        strcmp(argv[i + 1], "reload") == 0) {
      without_reload = 1;
      i++;
    } else if (strcmp(argv[i], "one") == 0 || strcmp(argv[i], "all") == 0) {
      m0 = m1 = strcmp(argv[i], "all") == 0 ? MODE_ALL : MODE_ONE;
    } else if (sscanf(argv[i], "%ld-%ld", &first, &last) < 1) {
      fprintf(stderr, "usage: test_oom_sweep [FIRST-LAST] [one|all] "
                      "[--without reload]\n");
      return 2;
    }
  }
  total = run(0, MODE_ONE);
  if (total < 0)
    return 1;
  if (total == 0) { /* a sweep of nothing would pass whatever happens */
    fprintf(stderr, "the run made no allocation the sweep may refuse\n");
    return 1;
  }
  if (last < 0 || last > total)
    last = total;
  for (mode = m0; mode <= m1; mode++)
    for (n = first; n <= last; n++) {
      runs++;
      if (run(n, mode) < 0 && ++failed >= 20) {
        fprintf(stderr, "stopping after 20 failures\n");
        goto done;
      }
    }
done:
  printf("oom sweep: the run makes %ld allocations; %ld runs (N %ld-%ld, "
         "%s%s), %ld failed\n",
         total, runs, first, last,
         m0 != m1 ? "both modes" : m0 == MODE_ALL ? "all" : "one",
         without_reload ? ", without reload" : "", failed);
  return failed > 0;
}
