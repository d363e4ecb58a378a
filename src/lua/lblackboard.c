/*
** lblackboard.c: the blackboard userdata. Values live in the C blackboard
** (nil, booleans, integers, numbers, strings); any other Lua value is kept
** in the userdata's side table under its key id and stored in C as a
** handle, so the garbage collector sees it. Key strings map to interned ids
** through the context's cache. Observers are Lua functions called after a
** write through Lua changes a key; a blackboard whose key changes also
** notifies the observers of descendants that read the key through it.
** Writes on blackboards without observers (or observing descendants) pay
** one test for them.
*/
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

/* A blackboard userdata has one uservalue, its parent's userdata, when it
** has a parent. Its side table { [key id + 1] = handle value, obs =, kids = }
** is its entry in the context's extras, made when first needed. kids is a
** weak set of its direct children that have observers or lead to some:
** a write walks down these links, never up a chain. */
#define UV_PARENT 1

/* The side table's observer part: obs[key id + 1] = { handle... } in
** registration order, obs.fn[handle] = function, obs.key[handle] = key. */

/*
** {======================================================
** Blackboard userdata
** =======================================================
*/

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
  b = (LBB *)lua_newuserdatauv(L, sizeof *b, parentidx != 0 ? 1 : 0);
  b->bb = NULL;
  b->nobs = 0;
  b->watched = 0;
  luaL_setmetatable(L, BS_BB_T);
  if ((b->bb = bonsai_bb_new(lb->env, parent)) == NULL)
    luaL_error(L, "out of memory");
  if (parentidx != 0) {
    lua_pushvalue(L, parentidx);
    lua_setiuservalue(L, -2, UV_PARENT);
  }
  return b;
}

/* Pushes the side table of the userdata at idx, created if 'make'; pushes
** nil if there is none. */
static int pushside(lua_State *L, int idx, int make) {
  lb_extra(L, idx, lua_upvalueindex(1), make);
  return lua_istable(L, -1);
}

/* Whether the blackboard itself (not a parent) holds a value for key. */
static int holds(const LBB *b, int key) {
  return bonsai_bb_get_own(b->bb, key).type != BONSAI_TNIL;
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
  default: /* a handle: in the side table of the blackboard holding it */
    lua_pushvalue(L, idx);
    while (!holds((LBB *)lua_touserdata(L, -1), key)) {
      lua_getiuservalue(L, -1, UV_PARENT);
      lua_remove(L, -2);
    }
    if (pushside(L, -1, 0))
      lua_rawgeti(L, -1, (lua_Integer)key + 1);
    else
      lua_pushnil(L);
    lua_replace(L, -3);
    lua_pop(L, 1);
  }
}

/* }====================================================== */

/*
** {======================================================
** Observers
** =======================================================
*/

/* Calls the observers of key on the userdata at idx with (bb, name, new,
** old); new and old are at nv and ov. They are gathered first, so an
** observer may add or remove observers; one removed before its turn is
** not called. */
static void callobservers(lua_State *L, int idx, int key, int name, int nv,
                          int ov) {
  lua_Integer k, n;
  int top = lua_gettop(L), obs, first;
  if (!pushside(L, idx, 0) || lua_getfield(L, -1, "obs") != LUA_TTABLE ||
      lua_rawgeti(L, -1, (lua_Integer)key + 1) != LUA_TTABLE) {
    lua_settop(L, top);
    return;
  }
  obs = top + 2;
  n = (lua_Integer)lua_rawlen(L, -1);
  luaL_checkstack(L, (int)n + 8, "too many observers");
  first = lua_gettop(L) + 1;
  for (k = 1; k <= n; k++) /* the handles, in order */
    lua_rawgeti(L, first - 1, k);
  lua_getfield(L, obs, "fn");
  for (k = 0; k < n; k++) {
    if (lua_rawgeti(L, -1, lua_tointeger(L, first + (int)k)) != LUA_TFUNCTION) {
      lua_pop(L, 1); /* removed meanwhile */
      continue;
    }
    lua_pushvalue(L, idx);
    lua_pushvalue(L, name);
    lua_pushvalue(L, nv);
    lua_pushvalue(L, ov);
    lua_call(L, 4, 0);
  }
  lua_settop(L, top);
}

/* Pushes the kids table (direct children on the way to an observer) of
** the userdata at idx; returns 0 (pushing nothing) if it has none. */
static int pushkids(lua_State *L, int idx) {
  int top = lua_gettop(L);
  if (pushside(L, idx, 0) && lua_getfield(L, -1, "kids") == LUA_TTABLE) {
    lua_remove(L, -2);
    return 1;
  }
  lua_settop(L, top);
  return 0;
}

/* After key changed in the userdata at idx: notifies its observers, then
** those of the descendants that see the change (they do not hold the key
** themselves, nor does any blackboard between them and this one). The
** descendants are gathered first, walking down the kids links with an
** explicit stack (each blackboard once: linear in their number, no C
** recursion), since observers may change the set. */
static void notify(lua_State *L, int idx, int key, int name, int nv, int ov) {
  LBB *b = (LBB *)lua_touserdata(L, idx);
  int top = lua_gettop(L), todo, hits;
  lua_Integer ntodo = 0, nhits = 0, k;
  if (b->nobs > 0)
    callobservers(L, idx, key, name, nv, ov);
  if (!b->watched || b->bb == NULL)
    return;
  luaL_checkstack(L, 8, "notify");
  lua_createtable(L, 8, 0); /* blackboards to visit */
  todo = lua_gettop(L);
  lua_createtable(L, 8, 0); /* blackboards whose observers are called */
  hits = lua_gettop(L);
  lua_pushvalue(L, idx);
  lua_rawseti(L, todo, ++ntodo);
  while (ntodo > 0) {
    LBB *u;
    lua_rawgeti(L, todo, ntodo); /* u */
    lua_pushnil(L);
    lua_rawseti(L, todo, ntodo--);
    u = (LBB *)lua_touserdata(L, -1);
    if (u->bb == NULL || (u != b && holds(u, key))) {
      lua_pop(L, 1); /* released, or it hides the change from its subtree */
      continue;
    }
    if (u != b && u->nobs > 0) {
      lua_pushvalue(L, -1);
      lua_rawseti(L, hits, ++nhits);
    }
    if (u->watched && pushkids(L, lua_gettop(L))) {
      lua_pushnil(L);
      while (lua_next(L, -2) != 0) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, todo, ++ntodo);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  for (k = 1; k <= nhits; k++) {
    lua_rawgeti(L, hits, k);
    callobservers(L, lua_gettop(L), key, name, nv, ov);
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

/* }====================================================== */

/*
** {======================================================
** Values: C ones in the core, Lua ones beside it
** =======================================================
*/

/* The id of the Lua value at idx as a handle (a weak map in the context),
** so that bt.check's "==" sees the same table in two keys as equal. */
static long long handleid(lua_State *L, int idx) {
  LBonsai *lb = lb_context(L);
  long long id;
  lua_getiuservalue(L, lua_upvalueindex(1), LB_IDS);
  lua_pushvalue(L, idx);
  if (lua_rawget(L, -2) == LUA_TNUMBER) {
    id = (long long)lua_tointeger(L, -1);
  } else {
    id = ++lb->nextid;
    lua_pushvalue(L, idx);
    lua_pushinteger(L, (lua_Integer)id);
    lua_rawset(L, -4);
  }
  lua_pop(L, 2);
  return id;
}

/* Writes the value at vidx under key (named by the string at nidx) in the
** userdata at idx, then notifies observers if the value changed (unless
** nidx is 0). */
static void setvalue(lua_State *L, int idx, int key, int nidx, int vidx) {
  LBB *b = (LBB *)lua_touserdata(L, idx);
  int watch = nidx != 0 && (b->nobs > 0 || b->watched), changed, old = 0;
  bonsai_value v;
  idx = lua_absindex(L, idx);
  vidx = lua_absindex(L, vidx);
  if (nidx != 0)
    nidx = lua_absindex(L, nidx);
  if (!lb_tovalue(L, vidx, &v)) /* the same Lua value, the same handle */
    v.u.handle = handleid(L, vidx);
  if (watch || v.type == BONSAI_THANDLE) { /* the old value, seen from here */
    pushvalue(L, idx, key);
    old = lua_gettop(L);
    if (v.type == BONSAI_THANDLE && lua_rawequal(L, old, vidx)) {
      lua_settop(L, old - 1); /* the same value is not a change */
      return;
    }
  }
  /* keep (or drop) the Lua side of a handle */
  if ((v.type == BONSAI_THANDLE ||
       bonsai_bb_get_own(b->bb, key).type == BONSAI_THANDLE) &&
      pushside(L, idx, v.type == BONSAI_THANDLE)) {
    if (v.type == BONSAI_THANDLE)
      lua_pushvalue(L, vidx);
    else
      lua_pushnil(L);
    lua_rawseti(L, -2, (lua_Integer)key + 1);
    lua_pop(L, 1);
  }
  if ((changed = bonsai_bb_update(b->bb, key, v)) < 0)
    luaL_error(L, "out of memory");
  if (watch && changed) { /* the new value as read now (nil may uncover a
                            parent's value) */
    pushvalue(L, idx, key);
    notify(L, idx, key, nidx, lua_gettop(L), old);
  }
  if (old != 0)
    lua_settop(L, old - 1);
}

/* Upvalues of the blackboard functions: 1 the context, 2 the context's key
** cache (a read of a known key is one table lookup), 3 (__index only) the
** methods. */
#define KEYCACHE lua_upvalueindex(2)

/* }====================================================== */

/*
** {======================================================
** Methods
** =======================================================
*/

static int checkkey(lua_State *L, int idx, int add) {
  luaL_argcheck(L, lua_type(L, idx) == LUA_TSTRING, idx,
                "a blackboard key is a string");
  return lb_keyid_in(L, idx, add, KEYCACHE);
}

/* bb:get(key, default) */
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

/* bb:set(key, value) */
static int bb_set(lua_State *L) {
  lb_checkbb(L, 1);
  lua_settop(L, 3);
  setvalue(L, 1, checkkey(L, 2, 1), 2, 3);
  return 0;
}

/* bb:has(key) */
static int bb_has(lua_State *L) {
  int key;
  LBB *b = lb_checkbb(L, 1);
  key = checkkey(L, 2, 0);
  lua_pushboolean(L, key >= 0 && bonsai_bb_get(b->bb, key).type != BONSAI_TNIL);
  return 1;
}

/* bb:observe(key, fn): calls fn(bb, key, new, old) after each change of
** key; returns a handle for bb:unobserve. */
static int bb_observe(lua_State *L) {
  LBB *b = lb_checkbb(L, 1);
  int key = checkkey(L, 2, 1);
  lua_Integer h;
  luaL_checktype(L, 3, LUA_TFUNCTION);
  lua_settop(L, 3);
  pushside(L, 1, 1); /* 4 */
  if (lua_getfield(L, 4, "obs") != LUA_TTABLE) { /* 5 */
    lua_pop(L, 1);
    lua_createtable(L, 0, 3);
    lua_newtable(L);
    lua_setfield(L, -2, "fn");
    lua_newtable(L);
    lua_setfield(L, -2, "key");
    lua_pushvalue(L, -1);
    lua_setfield(L, 4, "obs");
  }
  lua_getfield(L, 5, "last");
  h = lua_tointeger(L, -1) + 1;
  lua_pushinteger(L, h);
  lua_setfield(L, 5, "last");
  lua_getfield(L, 5, "fn");
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, h);
  lua_getfield(L, 5, "key");
  lua_pushinteger(L, key);
  lua_rawseti(L, -2, h);
  if (lua_rawgeti(L, 5, (lua_Integer)key + 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 5, (lua_Integer)key + 1);
  }
  lua_pushinteger(L, h);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  if (b->nobs++ == 0) { /* link it into the kids of its ancestors */
    lua_settop(L, 3);
    lua_pushvalue(L, 1); /* 4: the child */
    while (lua_getiuservalue(L, 4, UV_PARENT) == LUA_TUSERDATA) { /* 5 */
      LBB *p = (LBB *)lua_touserdata(L, 5);
      int linked = p->watched || p->nobs > 0; /* and so are its ancestors */
      p->watched = 1;
      pushside(L, 5, 1); /* 6 */
      if (lua_getfield(L, 6, "kids") != LUA_TTABLE) { /* 7 */
        lua_pop(L, 1);
        lb_newweak(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, 6, "kids");
      }
      lua_pushvalue(L, 4);
      lua_pushboolean(L, 1);
      lua_rawset(L, 7);
      lua_settop(L, 5);
      lua_replace(L, 4); /* one level up: the stack does not grow */
      if (linked)
        break;
    }
    lua_settop(L, 3);
  }
  lua_pushinteger(L, h);
  return 1;
}

/* bb:unobserve(handle): true if it was observing */
static int bb_unobserve(lua_State *L) {
  LBB *b = lb_checkbb(L, 1);
  lua_Integer h = luaL_checkinteger(L, 2);
  lua_settop(L, 2);
  if (!pushside(L, 1, 0) || lua_getfield(L, 3, "obs") != LUA_TTABLE) {
    lua_pushboolean(L, 0); /* no observer at all */
    return 1;
  }
  lua_getfield(L, 4, "key");
  if (lua_rawgeti(L, -1, h) != LUA_TNUMBER) { /* 6: key id */
    lua_pushboolean(L, 0); /* not this one */
    return 1;
  }
  lua_pushnil(L);
  lua_rawseti(L, 5, h);
  lua_getfield(L, 4, "fn");
  lua_pushnil(L);
  lua_rawseti(L, -2, h);
  lua_rawgeti(L, 4, lua_tointeger(L, 6) + 1); /* the key's handles */
  lua_pushinteger(L, h);
  lua_insert(L, -2);
  lb_list_remove(L, -2);
  b->nobs--;
  lua_pushboolean(L, 1);
  return 1;
}

/*
** Iteration over every key visible from the blackboard: its own keys, then
** its parents' keys that a nearer blackboard does not hold. The iterator's
** upvalues are the context (as for every blackboard function), the
** blackboard being walked (a userdata of the chain, which the first one
** keeps alive), the slot reached and the keys already seen, so that a whole
** iteration is linear in the depth plus the keys.
*/
#define IT_CUR lua_upvalueindex(2)
#define IT_AT lua_upvalueindex(3)
#define IT_SEEN lua_upvalueindex(4)

static int bb_iter(lua_State *L) {
  for (;;) {
    LBB *cur = (LBB *)lua_touserdata(L, IT_CUR);
    unsigned at = (unsigned)lua_tointeger(L, IT_AT);
    int key;
    bonsai_value v;
    if (cur == NULL || cur->bb == NULL)
      return 0;
    if (!bonsai_bb_next(cur->bb, &at, &key, &v)) { /* on up the chain */
      lua_getiuservalue(L, IT_CUR, UV_PARENT);
      lua_replace(L, IT_CUR);
      lua_pushinteger(L, 0);
      lua_replace(L, IT_AT);
      continue;
    }
    lua_pushinteger(L, (lua_Integer)at);
    lua_replace(L, IT_AT);
    if (lua_rawgeti(L, IT_SEEN, key) != LUA_TNIL) {
      lua_pop(L, 1); /* held by a nearer blackboard */
      continue;
    }
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_rawseti(L, IT_SEEN, key);
    lua_pushstring(L, bonsai_key_name(lb_context(L)->env, key));
    pushvalue(L, IT_CUR, key); /* cur holds it: no walk */
    return 2;
  }
}

/* bb:pairs() and pairs(bb) */
static int bb_pairs(lua_State *L) {
  lb_checkbb(L, 1);
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1)); /* the context */
  lua_insert(L, 1);
  lua_pushinteger(L, 0);
  lua_newtable(L);
  lua_pushcclosure(L, bb_iter, 4);
  return 1;
}

/* bb.key: methods first, then the blackboard. As a metamethod it only
** ever sees blackboards (the metatable is protected), so no type check. */
static int bb_index(lua_State *L) {
  int key;
  if (lua_type(L, 2) != LUA_TSTRING) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(3)) != LUA_TNIL)
    return 1;
  if ((key = lb_keyid_in(L, 2, 0, KEYCACHE)) < 0)
    lua_pushnil(L);
  else
    pushvalue(L, 1, key);
  return 1;
}

static int bb_newindex(lua_State *L) {
  setvalue(L, 1, checkkey(L, 2, 1), 2, 3);
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
  unsigned at = 0;
  int key, n = 0;
  bonsai_value v;
  while (bonsai_bb_next(b->bb, &at, &key, &v))
    n++;
  lua_pushfstring(L, "bonsai.blackboard (%d keys)", n);
  return 1;
}

/* }====================================================== */

/*
** {======================================================
** For the other binding files, bt.blackboard
** =======================================================
*/

void lb_bb_store(lua_State *L, int bbidx, int key, int vidx) {
  setvalue(L, bbidx, key, 0, vidx);
}

void lb_bb_fill(lua_State *L, int bbidx, int tidx) {
  bbidx = lua_absindex(L, bbidx);
  tidx = lua_absindex(L, tidx);
  lua_pushnil(L);
  while (lua_next(L, tidx) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), "parent"))
      setvalue(L, bbidx, lb_keyid(L, -2, 1), -2, -1);
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
                                   {"__pairs", bb_pairs},
                                   {"__tostring", bb_tostring},
                                   {NULL, NULL}};

static const luaL_Reg bb_methods[] = {
    {"get", bb_get},         {"set", bb_set},
    {"has", bb_has},         {"observe", bb_observe},
    {"unobserve", bb_unobserve}, {"pairs", bb_pairs},
    {NULL, NULL}};

/* stack: context */
void lb_open_blackboard(lua_State *L) {
  int ctx = lua_gettop(L), keys;
  lua_getiuservalue(L, ctx, LB_KEYS);
  keys = lua_gettop(L);
  luaL_newmetatable(L, BS_BB_T);
  lua_pushliteral(L, BS_BB_T);
  lua_setfield(L, -2, "__metatable"); /* metamethods see blackboards only */
  lua_pushvalue(L, ctx);
  lua_pushvalue(L, keys);
  luaL_setfuncs(L, bb_meta, 2);
  lua_newtable(L); /* methods */
  lua_pushvalue(L, ctx);
  lua_pushvalue(L, keys);
  luaL_setfuncs(L, bb_methods, 2);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "methods");
  lua_pushvalue(L, ctx); /* __index: context, keys, methods */
  lua_pushvalue(L, keys);
  lua_rotate(L, -3, 2);
  lua_pushcclosure(L, bb_index, 3);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 2);
}

/* }====================================================== */
