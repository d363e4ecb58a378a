/*
** lsleep.c: the sleep cache of a bt.tick_all list. For each entry it keeps
** the state of the agent an earlier call found asleep there, so that a
** call skips a run of sleepers in a tight loop that knows where the next
** ones live and fetches their memory ahead (in a large crowd that memory,
** not the instructions, is most of a sleeper's cost). An entry is a hint,
** checked at each use exactly as the ordinary path checks it: it is
** skipped only while the list holds there a table whose [1] is that same
** state, still asleep, with no interrupt; anything else goes the ordinary
** way. The cache anchors every state it names (no address it holds can
** come to name another object), lives in the list's tick_all state (the
** context's extras, beside the budget's) and goes with it. The context
** counts the caches alive: while there are none, a call does not look.
*/
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

/* What an earlier call found at an entry. */
typedef struct Sleeper {
  LAgent *la;       /* the state at the entry's [1], asleep; NULL: none */
  const void *hint; /* the table it was in: only ever prefetched (it may
                    ** be gone since: the entry is read again) */
} Sleeper;

/* A userdata; its uservalue 1 is the anchors table, entry i's state at i,
** presized so that recording never allocates. */
struct LSleepers {
  LBonsai *lb;      /* the context, which counts it; NULL until made */
  lua_Integer cap;  /* entries allocated */
  lua_Integer used; /* the entries after this one are empty */
  Sleeper e[];      /* entry i at e[i - 1] */
};

/* Fewest sleepers a call must skip for its list to get a cache (a build
** with -DBS_SLEEPMIN=1 gives the fuzzer's short lists caches). */
#if defined(BS_SLEEPMIN)
#define MINSLEPT BS_SLEEPMIN
#else
#define MINSLEPT 16
#endif
/* Longest list that gets a cache (the anchors table's size is an int). */
#define MAXCAP ((lua_Integer)1 << 28)
/* How many entries ahead the loop fetches memory. */
#define AHEAD 16
/* Entries skipped between two pops of the stack (two slots each). */
#define RUN 8

/* The metatable of a cache (for its __gc). */
#define BS_SLEEPERS_T "bonsai.sleepers"

#if defined(__GNUC__)
#define prefetch(p) __builtin_prefetch(p)
#else
#define prefetch(p) ((void)(p))
#endif

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
      lua_pushnil(L);
      lua_rawseti(L, -2, i);
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
  size_t size = sizeof(LSleepers) + (size_t)cap * sizeof(Sleeper);
  LSleepers *c = (LSleepers *)lua_newuserdatauv(L, size, 1);
  memset(c, 0, size);
  c->cap = cap;
  if (luaL_newmetatable(L, BS_SLEEPERS_T)) {
    lua_pushcfunction(L, sleepers_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_createtable(L, (int)cap, 0);
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

lua_Integer lb_sleepers_skip(lua_State *L, const LSleepers *c, int list,
                             lua_Integer i, lua_Integer n, double dt,
                             const LBonsai *lb) {
  const Sleeper *e, *last;
  int top, at;
  if (n > c->used)
    n = c->used; /* the rest is empty */
  if (i > n || c->e[i - 1].la == NULL || !lua_checkstack(L, 2 * RUN))
    return i;
  top = at = lua_gettop(L); /* the entry goes to at + 1, its [1] to at + 2 */
  last = c->e + (n - 1);
  for (e = c->e + (i - 1); e <= last && e->la != NULL; e++, i++) {
    LAgent *la = e->la;
    if (i + AHEAD <= n && e[AHEAD].la != NULL) { /* what its check reads */
      prefetch(e[AHEAD].hint);
      prefetch(e[AHEAD].la);
      prefetch(&agentof(e[AHEAD].la)->time);
      prefetch(&agentof(e[AHEAD].la)->busy);
    }
    if (lua_rawgeti(L, list, i) != LUA_TTABLE ||
        lua_rawgeti(L, at + 1, 1) != LUA_TUSERDATA ||
        lua_touserdata(L, at + 2) != la || la->magic != lb ||
        la->ninterrupts != 0 || !bonsai_agent_asleep(agentof(la), dt))
      break; /* the ordinary path takes it (bonsai_agent_asleep may have
             ** woken it: then that path ticks it) */
    if ((at += 2) == top + 2 * RUN) {
      lua_settop(L, top);
      at = top;
    }
  }
  lua_settop(L, top);
  return i;
}

void lb_sleepers_note(lua_State *L, LSleepers *c, int idx, lua_Integer i,
                      int ai, int si, LAgent *la) {
  Sleeper *e;
  if (i > c->cap)
    return;
  e = &c->e[i - 1];
  if (e->la == la)
    return; /* as it was: the common case */
  if (la != NULL)
    e->hint = lua_topointer(L, ai);
  si = lua_absindex(L, si);
  lua_getiuservalue(L, idx, 1); /* the anchors */
  e->la = la;
  if (la != NULL) {
    lua_pushvalue(L, si);
    if (i > c->used)
      c->used = i;
  } else {
    lua_pushnil(L);
  }
  lua_rawseti(L, -2, i);
  lua_pop(L, 1);
}
