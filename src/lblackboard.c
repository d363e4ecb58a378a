/*
** lblackboard.c: the blackboard userdata. Values live in the C blackboard
** (nil, booleans, integers, numbers, strings); any other Lua value is kept
** in the userdata's handles table under its key id and stored in C as a
** handle, so the garbage collector sees it. Key strings map to interned ids
** through the context's cache.
*/
#include <string.h>

#include "bonsai.h"
#include "blackboard.h"
#include "lbonsai.h"

#define UV_HANDLES 1 /* key id -> Lua value, for BONSAI_THANDLE slots */
#define UV_PARENT 2  /* the parent's userdata */

LBB *lb_checkbb(lua_State *L, int idx) {
  LBB *b = (LBB *)luaL_checkudata(L, idx, BS_BB_T);
  if (b->bb == NULL)
    luaL_argerror(L, idx, "released blackboard");
  return b;
}

LBB *lb_newbb(lua_State *L, int parentidx) {
  LBonsai *lb = lb_context(L);
  bonsai_bb *parent = NULL;
  LBB *b;
  if (parentidx != 0) {
    parentidx = lua_absindex(L, parentidx);
    parent = lb_checkbb(L, parentidx)->bb;
  }
  b = (LBB *)lua_newuserdatauv(L, sizeof *b, 2);
  b->bb = NULL;
  luaL_setmetatable(L, BS_BB_T);
  if ((b->bb = bonsai_bb_new(lb->env, parent)) == NULL)
    luaL_error(L, "out of memory");
  if (parentidx != 0) {
    lua_pushvalue(L, parentidx);
    lua_setiuservalue(L, -2, UV_PARENT);
  }
  return b;
}

/* Pushes the value of key (found in bb or a parent) for the userdata at
** idx. */
static void pushvalue(lua_State *L, int idx, int key) {
  LBB *b = (LBB *)lua_touserdata(L, idx);
  bonsai_value v = bonsai_bb_get(b->bb, key);
  switch (v.type) {
  case BONSAI_TNIL: lua_pushnil(L); break;
  case BONSAI_TBOOLEAN: lua_pushboolean(L, v.u.b); break;
  case BONSAI_TINTEGER: lua_pushinteger(L, (lua_Integer)v.u.i); break;
  case BONSAI_TNUMBER: lua_pushnumber(L, v.u.n); break;
  case BONSAI_TSTRING: lua_pushlstring(L, v.u.str.s, v.u.str.len); break;
  default: { /* a handle: in the handles of the blackboard that holds it */
    const bonsai_bb *owner = bs_bb_owner(b->bb, key);
    lua_pushvalue(L, idx);
    while (((LBB *)lua_touserdata(L, -1))->bb != owner) {
      lua_getiuservalue(L, -1, UV_PARENT);
      lua_remove(L, -2);
    }
    if (lua_getiuservalue(L, -1, UV_HANDLES) == LUA_TTABLE)
      lua_rawgeti(L, -1, key);
    else
      lua_pushnil(L);
    lua_replace(L, -3);
    lua_pop(L, 1);
  }
  }
}

/* Writes the value at vidx under key in the userdata at idx. */
static void setvalue(lua_State *L, int idx, int key, int vidx) {
  LBB *b = (LBB *)lua_touserdata(L, idx);
  bonsai_value v;
  int handle = 0;
  vidx = lua_absindex(L, vidx);
  v.u.i = 0;
  switch (lua_type(L, vidx)) {
  case LUA_TNIL: v.type = BONSAI_TNIL; break;
  case LUA_TBOOLEAN:
    v.type = BONSAI_TBOOLEAN;
    v.u.b = lua_toboolean(L, vidx);
    break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, vidx)) {
      v.type = BONSAI_TINTEGER;
      v.u.i = (long long)lua_tointeger(L, vidx);
    } else {
      v.type = BONSAI_TNUMBER;
      v.u.n = lua_tonumber(L, vidx);
    }
    break;
  case LUA_TSTRING:
    v.type = BONSAI_TSTRING;
    v.u.str.s = lua_tolstring(L, vidx, &v.u.str.len);
    break;
  default:
    v.type = BONSAI_THANDLE;
    v.u.handle = key;
    handle = 1;
    break;
  }
  /* keep (or drop) the Lua side of a handle */
  if (lua_getiuservalue(L, idx, UV_HANDLES) != LUA_TTABLE && handle) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, idx, UV_HANDLES);
  }
  if (lua_istable(L, -1)) {
    if (handle)
      lua_pushvalue(L, vidx);
    else
      lua_pushnil(L);
    lua_rawseti(L, -2, key);
  }
  lua_pop(L, 1);
  if (bonsai_bb_set(b->bb, key, v) != BONSAI_OK)
    luaL_error(L, "out of memory");
}

static int checkkey(lua_State *L, int idx, int add) {
  luaL_argcheck(L, lua_type(L, idx) == LUA_TSTRING, idx,
                "a blackboard key is a string");
  return lb_keyid(L, idx, add);
}

static int bb_get(lua_State *L) {
  int key;
  lua_settop(L, 3);
  lb_checkbb(L, 1);
  key = checkkey(L, 2, 0);
  if (key < 0)
    lua_pushnil(L);
  else
    pushvalue(L, 1, key);
  if (lua_isnil(L, -1))
    lua_pushvalue(L, 3);
  return 1;
}

static int bb_set(lua_State *L) {
  lb_checkbb(L, 1);
  lua_settop(L, 3);
  setvalue(L, 1, checkkey(L, 2, 1), 3);
  return 0;
}

static int bb_has(lua_State *L) {
  int key;
  LBB *b = lb_checkbb(L, 1);
  key = checkkey(L, 2, 0);
  lua_pushboolean(L, key >= 0 && bs_bb_owner(b->bb, key) != NULL);
  return 1;
}

/* bb.key: methods first, then the blackboard */
static int bb_index(lua_State *L) {
  int key;
  lb_checkbb(L, 1);
  if (lua_type(L, 2) != LUA_TSTRING)
    return lua_pushnil(L), 1;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL)
    return 1;
  key = lb_keyid(L, 2, 0);
  if (key < 0)
    return lua_pushnil(L), 1;
  pushvalue(L, 1, key);
  return 1;
}

static int bb_newindex(lua_State *L) {
  lb_checkbb(L, 1);
  setvalue(L, 1, checkkey(L, 2, 1), 3);
  return 0;
}

static int bb_gc(lua_State *L) {
  LBB *b = (LBB *)lua_touserdata(L, 1);
  bonsai_bb_release(b->bb);
  b->bb = NULL;
  return 0;
}

static int bb_tostring(lua_State *L) {
  LBB *b = lb_checkbb(L, 1);
  lua_pushfstring(L, "bonsai.blackboard (%d keys)", (int)b->bb->n);
  return 1;
}

void lb_bb_fill(lua_State *L, int bbidx, int tidx) {
  bbidx = lua_absindex(L, bbidx);
  tidx = lua_absindex(L, tidx);
  lua_pushnil(L);
  while (lua_next(L, tidx) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "parent"))
      setvalue(L, bbidx, lb_keyid(L, -2, 1), -1);
    lua_pop(L, 1);
  }
}

/* bt.blackboard([{parent = bb, key = value...}]) */
int lb_blackboard(lua_State *L) {
  int parent = 0;
  lua_settop(L, 1);
  if (!lua_isnil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (lua_getfield(L, 1, "parent") != LUA_TNIL) {
      lb_checkbb(L, 2);
      parent = 2;
    }
  }
  lb_newbb(L, parent);
  if (!lua_isnil(L, 1))
    lb_bb_fill(L, -1, 1);
  return 1;
}

static const luaL_Reg bb_meta[] = {{"__gc", bb_gc},
                                   {"__newindex", bb_newindex},
                                   {"__tostring", bb_tostring},
                                   {NULL, NULL}};

static const luaL_Reg bb_methods[] = {
    {"get", bb_get}, {"set", bb_set}, {"has", bb_has}, {NULL, NULL}};

/* stack: context */
void lb_open_blackboard(lua_State *L) {
  int ctx = lua_gettop(L);
  luaL_newmetatable(L, BS_BB_T);
  lua_pushvalue(L, ctx);
  luaL_setfuncs(L, bb_meta, 1);
  lua_newtable(L); /* methods */
  lua_pushvalue(L, ctx);
  luaL_setfuncs(L, bb_methods, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "methods");
  lua_pushvalue(L, ctx);
  lua_insert(L, -2);
  lua_pushcclosure(L, bb_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}
