/*
** lsleep.c: the sleep cache of a bt.tick_all list. For each entry it keeps
** the agent table an earlier call found asleep there and that agent's
** state, so that a call skips a run of sleepers in a tight loop: it reads
** each entry (a leaf may have edited the list) and compares it with the
** table remembered, asks the state whether it still sleeps (which moves its
** clock) and fetches the memory of the sleepers ahead. It does not read the
** table's [1] again: the cache anchors both the table and the state, so an
** address it holds can never come to name another object; a [1] replaced
** while its agent sleeps is seen when the agent wakes. Anything else (an
** entry edited, an agent awake, busy or with interrupts) goes the ordinary
** way. The cache lives in the list's tick_all state (the context's extras,
** beside the budget's) and goes with it; the context counts the caches
** alive: while there are none, a call does not look.
** Where weak-keyed tables are no ephemerons (Lua 5.1, LuaJIT) the cache
** anchors nothing: the extras, keyed by the list, would otherwise keep for
** ever a list whose agents refer to it (a leaf that reads the game's
** list). There an entry is skipped only while the table at the entry, at
** the address the entry knows, holds at its [1] the state it knows (alive,
** then: the table is in the list), as the ordinary path reads it: a [1]
** replaced is seen at once.
*/
#include <stdint.h>
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

/* What an earlier call found at an entry. */
typedef struct Sleeper {
  LAgent *la;        /* the state at the entry's [1], asleep; NULL: none */
  const void *table; /* the agent table it was in */
} Sleeper;

/* A userdata; its uservalue 1 is the anchors table, entry i's agent table
** at 2i - 1 and its state at 2i, presized so that recording never
** allocates (without ephemerons: empty). */
struct LSleepers {
  LBonsai *lb;      /* the context, which counts it; NULL until made */
  lua_Integer cap;  /* entries allocated */
  lua_Integer used; /* the entries after this one are empty */
  Sleeper e[];      /* entry i at e[i - 1]; then AHEAD empty ones */
};

/* Fewest sleepers a call must skip for its list to get a cache; in a
** debug build one, so that the specs' and the fuzzer's short lists use
** caches too. */
#if defined(NDEBUG)
#define MINSLEPT 16
#else
#define MINSLEPT 1
#endif
/* Longest list that gets a cache (the anchors table's size is an int). */
#define MAXCAP ((lua_Integer)1 << 27)
/* How many entries ahead the loop fetches memory, and how many bytes of
** it, from the state: the header and the agent's first fields. */
#define AHEAD 16
#define PREFETCHED (sizeof(LAgent) + 40)
/* Entries skipped between two pops of the stack. */
#define RUN 32

/* The metatable of a cache (for its __gc). */
#define BS_SLEEPERS_T "bonsai.sleepers"

#if defined(__GNUC__)
#define prefetch(p) __builtin_prefetch(p)
#else
#define prefetch(p) ((void)(p))
#endif

/* Anchors entry i: the agent table at ai and its state at si, or nothing
** (ai 0). The anchors are at the top. */
static void anchor(lua_State *L, lua_Integer i, int ai, int si) {
  if (!LB_EPHEMERONS)
    return;
  if (ai != 0)
    lua_pushvalue(L, ai);
  else
    lua_pushnil(L);
  lua_rawseti(L, -2, 2 * i - 1);
  if (ai != 0)
    lua_pushvalue(L, si);
  else
    lua_pushnil(L);
  lua_rawseti(L, -2, 2 * i);
}

/* Empties the entries after entry n (the list has shrunk): what they
** anchored may go. The cache is at the top. */
static void trim(lua_State *L, LSleepers *c, lua_Integer n) {
  lua_Integer i;
  if (c->used <= n)
    return;
  lua_getiuservalue(L, -1, 1);
  for (i = n + 1; i <= c->used; i++) {
    if (c->e[i - 1].la != NULL) {
      c->e[i - 1].la = NULL;
      anchor(L, i, 0, 0);
    }
  }
  lua_pop(L, 1);
  c->used = n;
}

/* __gc of a cache: one less for its context to look for. */
static int sleepers_gc(lua_State *L) {
  LSleepers *c = (LSleepers *)lua_touserdata(L, 1);
  if (c->lb != NULL)
    c->lb->sleepers--;
  c->lb = NULL;
  return 0;
}

/* args: the list's tick_all state, the list's length, the context. Makes
** an empty cache for that many entries and some more, stored in the state
** and returned. */
static int make(lua_State *L) {
  lua_Integer n = lua_tointeger(L, 2), cap = n + n / 8;
  size_t size = sizeof(LSleepers) + (size_t)(cap + AHEAD) * sizeof(Sleeper);
  LSleepers *c = (LSleepers *)lua_newuserdatauv(L, size, 1);
  memset(c, 0, size);
  c->cap = cap;
  if (luaL_newmetatable(L, BS_SLEEPERS_T)) {
    lua_pushcfunction(L, sleepers_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_createtable(L, LB_EPHEMERONS ? (int)(2 * cap) : 0, 0);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, 1, "sleepers");
  c->lb = (LBonsai *)lua_touserdata(L, 3); /* made: counted */
  c->lb->sleepers++;
  return 1;
}

/* Calls make, protected, for the state at st and n entries: the new cache,
** pushed, or NULL (nothing pushed) when there was no memory for it (a call
** without a cache is only slower). ci: the context. */
static LSleepers *remake(lua_State *L, int st, int ci, lua_Integer n) {
  lua_pushcfunction(L, make);
  lua_pushvalue(L, st);
  lua_pushinteger(L, n);
  lua_pushvalue(L, ci);
  if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    return NULL;
  }
  return (LSleepers *)lua_touserdata(L, -1);
}

LSleepers *lb_sleepers(lua_State *L, int list, int ci, lua_Integer n) {
  LSleepers *c = NULL;
  int top = lua_gettop(L);
  if (((const LBonsai *)lua_touserdata(L, ci))->sleepers == 0) {
    lua_pushnil(L); /* no list has a cache: none to look up */
    return NULL;
  }
  lua_getiuservalue(L, ci, LB_EXTRAS);
  lua_pushvalue(L, list);
  if (lua_rawget(L, top + 1) == LUA_TTABLE && /* the list's state */
      lua_getfield(L, top + 2, "sleepers") == LUA_TUSERDATA) {
    c = (LSleepers *)lua_touserdata(L, top + 3);
    if (n > c->cap) /* the list has grown: a new cache, empty */
      c = n <= MAXCAP ? remake(L, top + 2, ci, n) : NULL;
    else
      trim(L, c, n);
  }
  if (c == NULL)
    lua_pushnil(L);
  lua_copy(L, -1, top + 1);
  lua_settop(L, top + 1);
  return c;
}

/* args: list, context. The list's tick_all state (made if need be). */
static int state(lua_State *L) {
  lb_extra(L, 1, 2, 1);
  return 1;
}

void lb_sleepers_want(lua_State *L, int list, int ci, lua_Integer n,
                      lua_Integer slept) {
  int top = lua_gettop(L);
  if (slept < MINSLEPT || n > MAXCAP)
    return;
  lua_pushcfunction(L, state);
  lua_pushvalue(L, list);
  lua_pushvalue(L, ci);
  if (lua_pcall(L, 2, 1, 0) == LUA_OK) { /* stack: state */
    int t = lua_getfield(L, top + 1, "sleepers");
    if (t == LUA_TNIL) { /* the first such call leaves a mark */
      lua_pushboolean(L, 1);
      lua_setfield(L, top + 1, "sleepers");
    } else if (t == LUA_TBOOLEAN) { /* the second makes the cache */
      remake(L, top + 1, ci, n);
    }
  }
  lua_settop(L, top);
}

/* Without ephemerons (no anchors): whether the agent table at 'at' still
** holds the state la at its [1]. */
static int holds(lua_State *L, int at, const LAgent *la) {
  int held = (lua_rawgeti(L, at, 1), lua_touserdata(L, -1) == la);
  lua_settop(L, at);
  return held;
}

lua_Integer lb_sleepers_skip(lua_State *L, const LSleepers *c, int list,
                             lua_Integer i, lua_Integer n, double dt) {
  const Sleeper *e, *last;
  int top, at;
  if (n > c->used)
    n = c->used; /* the rest is empty */
  if (i > n || c->e[i - 1].la == NULL || !lua_checkstack(L, RUN + 1))
    return i;
  top = at = lua_gettop(L);
  last = c->e + (n - 1);
  for (e = c->e + (i - 1); e <= last && e->la != NULL; e++, i++) {
    LAgent *la = e->la;
    /* what its check reads (an empty entry's fetch is of NULL: harmless) */
    prefetch(e[AHEAD].la);
    prefetch((const void *)((uintptr_t)e[AHEAD].la + PREFETCHED));
    if (lua_rawgeti(L, list, i) != LUA_TTABLE ||
        lua_topointer(L, ++at) != e->table ||
        (!LB_EPHEMERONS && !holds(L, at, la)) ||
        la->magic == NULL ||
        la->ninterrupts != 0 || !bonsai_agent_asleep(agentof(la), dt))
      break; /* the ordinary path takes it (bonsai_agent_asleep may have
             ** woken it: then that path ticks it; a state finalized, by a
             ** list brought back by a finalizer or at close: it refuses it) */
    if (at == top + RUN) {
      lua_settop(L, top);
      at = top;
    }
  }
  lua_settop(L, top);
  return i;
}

void lb_sleepers_awake(lua_State *L, LSleepers *c, int idx, lua_Integer i,
                       int ai, int si, LAgent *la) {
  const Sleeper *e = i <= c->cap ? &c->e[i - 1] : NULL;
  if (e != NULL && e->la == la && e->table == lua_topointer(L, ai))
    return; /* woken: it likely sleeps again, and the loop takes it the
            ** ordinary way while it is awake */
  lb_sleepers_note(L, c, idx, i, ai, si, NULL);
}

void lb_sleepers_note(lua_State *L, LSleepers *c, int idx, lua_Integer i,
                      int ai, int si, LAgent *la) {
  Sleeper *e;
  const void *table = la != NULL ? lua_topointer(L, ai) : NULL;
  if (i > c->cap)
    return;
  e = &c->e[i - 1];
  if (e->la == la && e->table == table)
    return; /* as it was: the common case */
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  lua_getiuservalue(L, idx, 1); /* the anchors */
  e->la = la;
  e->table = table;
  if (la != NULL && i > c->used)
    c->used = i;
  anchor(L, i, la != NULL ? ai : 0, si);
  lua_pop(L, 1);
}
