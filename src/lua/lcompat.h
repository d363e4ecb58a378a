/*
** lcompat.h: the one place where the Lua C APIs of 5.1, LuaJIT 2.1, 5.3,
** 5.4 and 5.5 differ for the binding. The binding is written against 5.4's
** API; on an older Lua this header supplies what 5.4 has and that Lua
** lacks, with 5.4's meaning, under 5.4's name (as lua-compat-5.3 does).
** No other binding file tests LUA_VERSION_NUM.
**
** What changes meaning, and how it is kept the same:
** - integers (5.3+): before 5.3 every number is a double; a number is "an
**   integer" when it is integral and fits lua_Integer (lua_isinteger,
**   lua_tointegerx, luaL_checkinteger), so `times = 3` reads as on 5.4;
** - uservalues: 5.4 gives a userdata n of them; 5.3 one Lua value, 5.1 an
**   environment table: there the userdata's one value is a table holding
**   the n slots (made by lua_newuserdatauv);
** - lua_getfield, lua_rawget(i), lua_getiuservalue return the type (5.3+);
** - lua_topointer gives a string's address (5.4+);
** - lua_resume: (L, narg) in 5.1, (L, from, narg) in 5.3, (L, from, narg,
**   &nres) from 5.4; before 5.4 every value on the coroutine's stack is a
**   result; on LuaJIT a call follows it (its current thread, see
**   lbc_resumejit);
** - closing a coroutine (to-be-closed variables): lua_closethread from
**   5.4.6 (and 5.5), lua_resetthread before; nothing before 5.4 (no
**   to-be-closed variables: the coroutine is only dropped, see
**   lb_closethread);
** - lua_pushcfunction allocates nothing (5.2+: light C functions);
** - luaL_buffinitsize: before 5.2, a buffer larger than LUAL_BUFFERSIZE is
**   a userdata on the stack top until luaL_pushresultsize.
** 5.5 (from its manual and headers) changes nothing else the binding
** calls: lua_newstate's seed argument and the LUA_GCPARAM options of lua_gc
** concern hosts; lua_resetthread is gone, lua_closethread is used as from
** 5.4.6.
*/
#ifndef bonsai_lcompat_h
#define bonsai_lcompat_h

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include <math.h>

#ifndef LUA_OK /* 5.1 */
#define LUA_OK 0
#endif

/* Whether weak-keyed tables are ephemerons (5.2+): a value that refers
** back to its key does not keep it. Before, it does, for ever: what keeps
** Lua values for an object keeps them in the object's own uservalue, or
** holds what refers back weakly (see lb_getbeside, lsleep.c). */
#define LB_EPHEMERONS (LUA_VERSION_NUM >= 502)

/* Whether the headers are LuaJIT's (its lua.h says 5.1; its lualib.h
** names the jit library). */
#if defined(LUA_JITLIBNAME)
#define LB_LUAJIT 1
#else
#define LB_LUAJIT 0
#endif

/* Closing a coroutine: runs its to-be-closed variables (5.4), returns the
** status and leaves an error on its stack. Before 5.4 there is nothing to
** run: the coroutine is dropped by its owner. */
#if LUA_VERSION_NUM >= 505
#define lb_closethread(co, from) lua_closethread(co, from)
#elif LUA_VERSION_NUM == 504 && LUA_VERSION_RELEASE_NUM >= 50406
#define lb_closethread(co, from) lua_closethread(co, from)
#elif LUA_VERSION_NUM == 504
#define lb_closethread(co, from) ((void)(from), lua_resetthread(co))
#else
#define lb_closethread(co, from) ((void)(co), (void)(from), LUA_OK)
#endif

/* How many parameters the function at the top (popped) declares; -1 for a
** vararg one, or where the Lua does not tell (5.1, LuaJIT). */
#if LUA_VERSION_NUM >= 502
static inline int lb_nparams(lua_State *L) {
  lua_Debug ar;
  if (!lua_getinfo(L, ">u", &ar) || ar.isvararg)
    return -1;
  return ar.nparams;
}
#else
#define lb_nparams(L) (lua_pop((L), 1), -1)
#endif

/* {====================================================== 5.3: 5.4's names */
#if LUA_VERSION_NUM <= 503

#define luaL_pushfail(L) lua_pushnil(L)

/* A string's address, as lua_topointer gives it from 5.4 (the binding
** tells the status strings apart by it): its characters, which are as
** unique (short strings are interned). */
static inline const void *lbc_topointer(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TSTRING ? (const void *)lua_tostring(L, idx)
                                         : (lua_topointer)(L, idx);
}
#define lua_topointer(L, idx) lbc_topointer((L), (idx))

static inline int lbc_typeerror(lua_State *L, int arg, const char *tname) {
  const char *got = luaL_typename(L, arg);
  if (luaL_getmetafield(L, arg, "__name") != LUA_TNIL &&
      lua_type(L, -1) == LUA_TSTRING)
    got = lua_tostring(L, -1);
  return luaL_argerror(L, arg,
                       lua_pushfstring(L, "%s expected, got %s", tname, got));
}
#define luaL_typeerror(L, arg, tname) lbc_typeerror((L), (arg), (tname))
#define luaL_argexpected(L, cond, arg, tname)                                  \
  ((void)((cond) || luaL_typeerror((L), (arg), (tname))))

/* One uservalue: a table of the n slots. */
#if LUA_VERSION_NUM == 503
#define lbc_getuv(L, idx) lua_getuservalue((L), (idx))
#define lbc_setuv(L, idx) lua_setuservalue((L), (idx))
#else
#define lbc_getuv(L, idx) (lua_getfenv((L), (idx)), lua_type((L), -1))
#define lbc_setuv(L, idx) lua_setfenv((L), (idx))
#endif

static inline void *lbc_newuserdatauv(lua_State *L, size_t size, int nuv) {
  void *p = lua_newuserdata(L, size);
  if (nuv > 0 || LUA_VERSION_NUM == 501) { /* 5.1: its own, see lb_getbeside */
    lua_createtable(L, nuv, 0);
    lbc_setuv(L, -2);
  }
  return p;
}
#define lua_newuserdatauv(L, size, nuv) lbc_newuserdatauv((L), (size), (nuv))

static inline int lbc_getiuservalue(lua_State *L, int idx, int n) {
  if (lbc_getuv(L, idx) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushnil(L);
    return LUA_TNONE;
  }
  lua_rawgeti(L, -1, n);
  lua_remove(L, -2);
  return lua_type(L, -1);
}
#define lua_getiuservalue(L, idx, n) lbc_getiuservalue((L), (idx), (n))

static inline int lbc_setiuservalue(lua_State *L, int idx, int n) {
  if (lbc_getuv(L, idx) != LUA_TTABLE) {
    lua_pop(L, 2);
    return 0;
  }
  lua_insert(L, -2);
  lua_rawseti(L, -2, n);
  lua_pop(L, 1);
  return 1;
}
#define lua_setiuservalue(L, idx, n) lbc_setiuservalue((L), (idx), (n))

static inline int lbc_resume(lua_State *co, lua_State *from, int narg,
                             int *nres) {
#if LUA_VERSION_NUM == 503
  int st = (lua_resume)(co, from, narg);
#else
  int st = ((void)from, (lua_resume)(co, narg));
#endif
  *nres = st == LUA_OK || st == LUA_YIELD ? lua_gettop(co) : 0;
  return st;
}
#define lua_resume(co, from, narg, nres) lbc_resume((co), (from), (narg), (nres))

#endif /* }====================================================== */

/* {====================================================== 5.1 and LuaJIT */
#if LUA_VERSION_NUM == 501

typedef size_t lua_Unsigned;

#define lua_rawlen(L, idx) lua_objlen((L), (idx))
#define lua_absindex(L, idx)                                                   \
  ((idx) > 0 || (idx) <= LUA_REGISTRYINDEX ? (idx) : lua_gettop(L) + (idx) + 1)

/* The getters return the type of the value they pushed. */
#define lua_getfield(L, idx, k)                                                \
  ((lua_getfield)((L), (idx), (k)), lua_type((L), -1))
#define lua_rawget(L, idx) ((lua_rawget)((L), (idx)), lua_type((L), -1))
#define lua_rawgeti(L, idx, n)                                                 \
  ((lua_rawgeti)((L), (idx), (int)(n)), lua_type((L), -1))
#define lua_rawseti(L, idx, n) (lua_rawseti)((L), (idx), (int)(n))

static inline void lbc_rotate(lua_State *L, int idx, int n) {
  idx = lua_absindex(L, idx);
  if (n < 0)
    n += lua_gettop(L) - idx + 1;
  for (; n > 0; n--)
    lua_insert(L, idx);
}
#define lua_rotate(L, idx, n) lbc_rotate((L), (idx), (n))

/* Integers: integral numbers that fit lua_Integer. */
static inline lua_Integer lbc_tointegerx(lua_State *L, int idx, int *isint) {
  lua_Number n = lua_tonumber(L, idx);
  int ok = (n != 0 || lua_isnumber(L, idx)) && n == floor(n) &&
           n >= -9223372036854775808.0 && n < 9223372036854775808.0;
  if (isint != NULL)
    *isint = ok;
  return ok ? (lua_Integer)n : 0;
}
#define lua_tointegerx(L, idx, isint) lbc_tointegerx((L), (idx), (isint))
#define lua_isinteger(L, idx)                                                  \
  (lua_type((L), (idx)) == LUA_TNUMBER && lbc_isint((L), (idx)))
static inline int lbc_isint(lua_State *L, int idx) {
  int ok;
  lbc_tointegerx(L, idx, &ok);
  return ok;
}
static inline lua_Integer lbc_checkinteger(lua_State *L, int arg) {
  int ok;
  lua_Integer i = lbc_tointegerx(L, arg, &ok);
  if (!ok) {
    if (lua_isnumber(L, arg))
      luaL_argerror(L, arg, "number has no integer representation");
    else
      luaL_typeerror(L, arg, "number");
  }
  return i;
}
#define luaL_checkinteger(L, arg) lbc_checkinteger((L), (arg))

/* luaL_tolstring as from 5.2, for the values a binding message shows
** (__tostring, else the value as print writes it). */
static inline const char *lbc_tolstring(lua_State *L, int idx, size_t *len) {
  idx = lua_absindex(L, idx);
  if (luaL_callmeta(L, idx, "__tostring")) {
    if (!lua_isstring(L, -1))
      luaL_error(L, "'__tostring' must return a string");
  } else {
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
    case LUA_TSTRING: lua_pushvalue(L, idx); break;
    case LUA_TBOOLEAN:
      lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
      break;
    case LUA_TNIL: lua_pushliteral(L, "nil"); break;
    default:
      lua_pushfstring(L, "%s: %p", luaL_typename(L, idx),
                      lua_topointer(L, idx));
    }
  }
  return lua_tolstring(L, -1, len);
}
#define luaL_tolstring(L, idx, len) lbc_tolstring((L), (idx), (len))

/* Nothing to check before 5.2 (a module built for another Lua is refused
** by the dynamic linker first: see lua/bonsai/compat.lua). */
#define luaL_checkversion(L) ((void)(L))

/* lua_pushcfunction without allocating, as from 5.2 (light C functions;
** a:tick pushes one per call): each function's closure is made once and
** kept in the registry under the bytes of its address. */
static inline void lbc_pushcfunction(lua_State *L, lua_CFunction f) {
  lua_pushlstring(L, (const char *)&f, sizeof f);
  if (lua_rawget(L, LUA_REGISTRYINDEX) == LUA_TFUNCTION)
    return;
  lua_pop(L, 1);
  lua_pushcclosure(L, f, 0);
  lua_pushlstring(L, (const char *)&f, sizeof f);
  lua_pushvalue(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}
#undef lua_pushcfunction
#define lua_pushcfunction(L, f) lbc_pushcfunction((L), (f))

#if LB_LUAJIT
/* LuaJIT's lua_resume, called from a C function, leaves the VM's current
** thread at the coroutine; if that C function then ends by an error (a
** task's failure raised from a:tick), the unwinding runs on the wrong
** thread's state and corrupts the heap (LuaJIT issue #1066, fixed in
** 2023, not in every LuaJIT that games ship). A call on the resuming
** thread sets the current thread back. */
static int lbc_nothing(lua_State *L) {
  (void)L;
  return 0;
}
static inline int lbc_resumejit(lua_State *co, lua_State *from, int narg,
                                int *nres) {
  int st = lbc_resume(co, from, narg, nres);
  lua_pushcfunction(from, lbc_nothing);
  lua_call(from, 0, 0);
  return st;
}
#undef lua_resume
#define lua_resume(co, from, narg, nres)                                       \
  lbc_resumejit((co), (from), (narg), (nres))
#endif

/* Metatables named by __name, as from 5.3 (luaL_typeerror reads it). */
static inline int lbc_newmetatable(lua_State *L, const char *tname) {
  if (!(luaL_newmetatable)(L, tname))
    return 0;
  lua_pushstring(L, tname);
  lua_setfield(L, -2, "__name");
  return 1;
}
#define luaL_newmetatable(L, tname) lbc_newmetatable((L), (tname))

/* luaL_buffinitsize / luaL_pushresultsize: a larger buffer is a userdata
** on the top, marked by lvl -1. */
static inline char *lbc_buffinitsize(lua_State *L, luaL_Buffer *b, size_t sz) {
  luaL_buffinit(L, b);
  if (sz <= LUAL_BUFFERSIZE)
    return luaL_prepbuffer(b);
  b->lvl = -1;
  return (char *)lua_newuserdata(L, sz);
}
static inline void lbc_pushresultsize(luaL_Buffer *b, size_t n) {
  if (b->lvl == -1) {
    lua_pushlstring(b->L, (const char *)lua_touserdata(b->L, -1), n);
    lua_remove(b->L, -2);
  } else {
    luaL_addsize(b, n);
    luaL_pushresult(b);
  }
}
#define luaL_buffinitsize(L, b, sz) lbc_buffinitsize((L), (b), (sz))
#define luaL_pushresultsize(b, n) lbc_pushresultsize((b), (n))

#if !LB_LUAJIT /* LuaJIT 2.1 has these (from 5.2) */
static inline lua_Number lbc_tonumberx(lua_State *L, int idx, int *isnum) {
  if (isnum != NULL)
    *isnum = lua_isnumber(L, idx);
  return lua_tonumber(L, idx);
}
#define lua_tonumberx(L, idx, isnum) lbc_tonumberx((L), (idx), (isnum))
static inline void lbc_copy(lua_State *L, int from, int to) {
  to = lua_absindex(L, to);
  lua_pushvalue(L, from);
  lua_replace(L, to);
}
#define lua_copy(L, from, to) lbc_copy((L), (from), (to))
static inline void *lbc_testudata(lua_State *L, int idx, const char *tname) {
  void *p = lua_touserdata(L, idx);
  int same;
  if (p == NULL || !lua_getmetatable(L, idx))
    return NULL;
  luaL_getmetatable(L, tname);
  same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same ? p : NULL;
}
#define luaL_testudata(L, idx, tname) lbc_testudata((L), (idx), (tname))
static inline void lbc_setmetatable(lua_State *L, const char *tname) {
  luaL_getmetatable(L, tname);
  lua_setmetatable(L, -2);
}
#define luaL_setmetatable(L, tname) lbc_setmetatable((L), (tname))
static inline void lbc_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup, "too many upvalues");
  for (; l->name != NULL; l++) {
    int i;
    for (i = 0; i < nup; i++)
      lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}
#define luaL_setfuncs(L, l, nup) lbc_setfuncs((L), (l), (nup))
#endif

#endif /* }====================================================== */

/*
** A value kept beside an object (lb_extra: an agent state's, a
** blackboard's, a list's): in a weak-keyed table, the uservalue 'slot' of
** the context at ci, under the key at 'key'. From 5.2 weak-keyed tables
** are ephemeron tables: the value may refer back to its key (a task's
** coroutine holds its agent) and both still go. 5.1's are not (such a
** value would keep its key, and itself, for ever): there a userdata's
** value is at index 0 of its uservalue table (the table of its slots, see
** lua_newuserdatauv above). lb_getbeside pushes the value and returns its
** type; lb_setbeside pops it.
*/
#if LUA_VERSION_NUM >= 502
#define lbc_beside(L, key) 0
#else
static inline int lbc_beside(lua_State *L, int key) {
  if (lua_type(L, key) != LUA_TUSERDATA)
    return 0;
  lua_getfenv(L, key);
  if (lua_istable(L, -1))
    return 1;
  lua_pop(L, 1);
  return 0;
}
#endif

static inline int lb_getbeside(lua_State *L, int ci, int slot, int key) {
  int t;
  key = lua_absindex(L, key);
  if (lbc_beside(L, key)) {
    lua_rawgeti(L, -1, 0);
  } else {
    lua_getiuservalue(L, ci, slot);
    lua_pushvalue(L, key);
    lua_rawget(L, -2);
  }
  t = lua_type(L, -1);
  lua_remove(L, -2);
  return t;
}

static inline void lb_setbeside(lua_State *L, int ci, int slot, int key) {
  key = lua_absindex(L, key);
  if (lbc_beside(L, key)) {
    lua_insert(L, -2);
    lua_rawseti(L, -2, 0);
  } else {
    lua_getiuservalue(L, ci, slot);
    lua_pushvalue(L, key);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

#endif
