/*
** lbonsai.c: the helpers every binding file shares, as lauxlib.c is Lua's:
** the per-state context (upvalue 1 of every module function and method),
** agents' extras (event payloads among them), status names, Lua values as
** C values, key ids, and adding methods to a type. It calls no other binding file; linit.c opens the
** module.
*/
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

LBonsai *lb_context(lua_State *L) {
  return (LBonsai *)lua_touserdata(L, lua_upvalueindex(1));
}

int lb_tovalue(lua_State *L, int idx, bonsai_value *v) {
  v->u.i = 0;
  switch (lua_type(L, idx)) {
  case LUA_TNIL:
    v->type = BONSAI_TNIL;
    return 1;
  case LUA_TBOOLEAN:
    v->type = BONSAI_TBOOLEAN;
    v->u.b = lua_toboolean(L, idx);
    return 1;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      v->type = BONSAI_TINTEGER;
      v->u.i = (long long)lua_tointeger(L, idx);
    } else {
      v->type = BONSAI_TNUMBER;
      v->u.n = lua_tonumber(L, idx);
    }
    return 1;
  case LUA_TSTRING:
    v->type = BONSAI_TSTRING;
    v->u.str.s = lua_tolstring(L, idx, &v->u.str.len);
    return 1;
  default:
    v->type = BONSAI_THANDLE;
    return 0;
  }
}

void lb_pushstatus(lua_State *L, int status) {
  lua_pushstring(L, bonsai_status_name(status));
}

int lb_keyid_in(lua_State *L, int idx, int add, int cache) {
  LBonsai *lb = lb_context(L);
  size_t len;
  const char *s;
  int id;
  lua_pushvalue(L, idx);
  if (lua_rawget(L, cache) == LUA_TNUMBER) { /* the usual case */
    id = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    return id;
  }
  lua_pop(L, 1);
  s = lua_tolstring(L, idx, &len);
  if (memchr(s, '\0', len) != NULL) {
    if (add)
      luaL_error(L, "a blackboard key cannot contain a NUL byte");
    return -1;
  }
  id = add ? bonsai_key(lb->env, s, len) : bonsai_key_find(lb->env, s, len);
  if (id >= 0) {
    lua_pushvalue(L, idx);
    lua_pushinteger(L, id);
    lua_rawset(L, cache);
  } else if (add) {
    luaL_error(L, "out of memory");
  }
  return id;
}

int lb_keyid(lua_State *L, int idx, int add) {
  int id;
  idx = lua_absindex(L, idx);
  lua_getiuservalue(L, lua_upvalueindex(1), LB_KEYS);
  id = lb_keyid_in(L, idx, add, lua_gettop(L));
  lua_pop(L, 1);
  return id;
}

int lb_list_remove(lua_State *L, int v) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1), k;
  v = lua_absindex(L, v);
  for (k = 1; k <= n; k++) {
    int found = (lua_rawgeti(L, -1, k), lua_rawequal(L, -1, v));
    lua_pop(L, 1);
    if (found) {
      for (; k < n; k++) {
        lua_rawgeti(L, -1, k + 1);
        lua_rawseti(L, -2, k);
      }
      lua_pushnil(L);
      lua_rawseti(L, -2, n);
      return 1;
    }
  }
  return 0;
}

void lb_newweak(lua_State *L) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
}

void lb_extra(lua_State *L, int si, int ci, int make) {
  si = lua_absindex(L, si);
  if (lb_getbeside(L, ci, LB_EXTRAS, si) == LUA_TNIL && make) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lb_setbeside(L, ci, LB_EXTRAS, si);
  }
}

void lb_setextra(lua_State *L, int si, int ci) {
  lb_setbeside(L, ci, LB_EXTRAS, si);
}

/*
** Event payloads only Lua holds (tables): kept in the agent's extras,
** payloads = { lo = the first kept, hi = the last given, [h] = value },
** and sent to the core as handle h (numbered in the order sent, per
** agent); let go once the core holds them no more.
*/

/* Pushes the agent's payloads table (at si; ci the context), made if
** 'make', else nil when it has none. */
static void pushpayloads(lua_State *L, int si, int ci, int make) {
  lb_extra(L, si, ci, make);
  if (!lua_istable(L, -1))
    return; /* nil: no extras */
  if (lua_getfield(L, -1, "payloads") != LUA_TTABLE && make) {
    lua_pop(L, 1);
    lua_createtable(L, 4, 2);
    lua_pushinteger(L, 1);
    lua_setfield(L, -2, "lo");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "hi");
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "payloads");
  }
  lua_remove(L, -2);
}

long long lb_payload_keep(lua_State *L, int si, int ci, int vidx) {
  lua_Integer h;
  vidx = lua_absindex(L, vidx);
  si = lua_absindex(L, si);
  pushpayloads(L, si, ci, 1);
  lua_getfield(L, -1, "hi");
  h = lua_tointeger(L, -1) + 1;
  lua_pop(L, 1);
  lua_pushinteger(L, h);
  lua_setfield(L, -2, "hi");
  lua_pushvalue(L, vidx);
  lua_rawseti(L, -2, h);
  lua_pop(L, 1);
  ((LAgent *)lua_touserdata(L, si))->payloads = 1;
  return (long long)h;
}

int lb_payload_push(lua_State *L, int si, int ci, long long h) {
  pushpayloads(L, si, ci, 0);
  if (!lua_istable(L, -1))
    return LUA_TNIL;
  lua_rawgeti(L, -1, (lua_Integer)h);
  lua_remove(L, -2);
  return lua_type(L, -1);
}

void lb_payload_prune(lua_State *L, int si, int ci) {
  LAgent *la = (LAgent *)lua_touserdata(L, si);
  long long floor = bonsai_agent_payload_floor(agentof(la));
  lua_Integer lo, hi;
  si = lua_absindex(L, si);
  pushpayloads(L, si, ci, 0);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    la->payloads = 0;
    return;
  }
  lua_getfield(L, -1, "lo");
  lua_getfield(L, -2, "hi");
  lo = lua_tointeger(L, -2);
  hi = lua_tointeger(L, -1);
  lua_pop(L, 2);
  for (; lo <= hi && lo < floor; lo++) {
    lua_pushnil(L);
    lua_rawseti(L, -2, lo);
  }
  lua_pushinteger(L, lo);
  lua_setfield(L, -2, "lo");
  lua_pop(L, 1);
  la->payloads = lo <= hi;
}

void lb_addmethods(lua_State *L, const char *tname, const luaL_Reg *l) {
  int ctx = lua_gettop(L);
  if (luaL_getmetatable(L, tname) != LUA_TTABLE)
    luaL_error(L, "%s is not open yet", tname);
  if (lua_getfield(L, -1, "methods") != LUA_TTABLE)
    luaL_error(L, "%s has no methods table", tname);
  lua_pushvalue(L, ctx);
  luaL_setfuncs(L, l, 1);
  lua_settop(L, ctx);
}
