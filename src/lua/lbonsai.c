/*
** lbonsai.c: the helpers every binding file shares, as lauxlib.c is Lua's:
** the per-state context (upvalue 1 of every module function and method),
** agents' extras, event payloads only Lua holds, status names, Lua values
** as C values, key ids, and adding methods to a type. It calls no other binding file; linit.c opens the
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
** Event payloads only Lua holds (tables): each is kept in the context's
** payloads table (LB_PAYLOADS) under a handle, the core's BONSAI_THANDLE,
** for as long as the core holds it: its hooks count the places that do
** (lb_payload_retain, lb_payload_release: C only, callable anywhere). A
** handle whose count falls to 0 waits in a list for the next sweep (a
** send, the end of a tick call), which lets its value go and frees its
** slot for a new payload.
*/

/* Grows the slots and the dead list to cap; 0, or -1 when out of memory. */
static int growpayloads(lua_State *L, LPayloads *p, uint32_t cap) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  LPaySlot *slot = (LPaySlot *)f(ud, p->slot, p->cap * sizeof *slot,
                                 cap * sizeof *slot);
  uint32_t *dead;
  if (slot == NULL)
    return -1;
  p->slot = slot;
  dead = (uint32_t *)f(ud, p->dead, p->cap * sizeof *dead, cap * sizeof *dead);
  if (dead == NULL) { /* keep the slots' size as it was */
    p->slot = (LPaySlot *)f(ud, slot, cap * sizeof *slot,
                            p->cap * sizeof *slot);
    return -1;
  }
  p->dead = dead;
  p->cap = cap;
  return 0;
}

void lb_payload_sweep(lua_State *L, int ci) {
  LPayloads *p = &((LBonsai *)lua_touserdata(L, ci))->pay;
  uint32_t k;
  if (p->ndead == 0)
    return;
  lua_getiuservalue(L, ci, LB_PAYLOADS);
  for (k = 0; k < p->ndead; k++) {
    uint32_t h = p->dead[k];
    LPaySlot *x = &p->slot[h - 1];
    x->dead = 0;
    if (x->refs != 0 || !x->used)
      continue; /* held again, or swept already */
    lua_pushnil(L);
    lua_rawseti(L, -2, (lua_Integer)h);
    x->used = 0;
    x->link = p->free;
    p->free = h;
  }
  p->ndead = 0;
  lua_pop(L, 1);
}

/* A slot whose count fell to 0 (or that was just made) waits for the
** sweep; the list has room for every slot. */
static void mourn(LPayloads *p, uint32_t h) {
  if (!p->slot[h - 1].dead) {
    p->slot[h - 1].dead = 1;
    p->dead[p->ndead++] = h;
  }
}

long long lb_payload_keep(lua_State *L, int ci, int vidx) {
  LPayloads *p = &((LBonsai *)lua_touserdata(L, ci))->pay;
  uint32_t h;
  vidx = lua_absindex(L, vidx);
  lb_payload_sweep(L, ci);
  if (p->free == 0 && p->n == p->cap &&
      (p->cap >= 0x40000000u ||
       growpayloads(L, p, p->cap ? p->cap * 2 : 16) != 0))
    luaL_error(L, "out of memory");
  if (p->free != 0) {
    h = p->free;
    p->free = p->slot[h - 1].link;
  } else {
    h = ++p->n;
  }
  p->slot[h - 1].refs = 0;
  p->slot[h - 1].used = 1;
  p->slot[h - 1].dead = 0;
  lua_getiuservalue(L, ci, LB_PAYLOADS);
  lua_pushvalue(L, vidx);
  lua_rawseti(L, -2, (lua_Integer)h);
  lua_pop(L, 1);
  mourn(p, h); /* unless the core keeps it, the next sweep lets it go */
  return (long long)h;
}

int lb_payload_push(lua_State *L, int ci, long long h) {
  lua_getiuservalue(L, ci, LB_PAYLOADS);
  lua_rawgeti(L, -1, (lua_Integer)h);
  lua_remove(L, -2);
  return lua_type(L, -1);
}

void lb_payload_retain(void *ud, long long h) {
  LPayloads *p = &((LBonsai *)ud)->pay;
  if (h >= 1 && (uint64_t)h <= p->n)
    p->slot[h - 1].refs++;
}

void lb_payload_release(void *ud, long long h) {
  LPayloads *p = &((LBonsai *)ud)->pay;
  if (h >= 1 && (uint64_t)h <= p->n && --p->slot[h - 1].refs == 0)
    mourn(p, (uint32_t)h);
}

void lb_payload_free(lua_State *L, LBonsai *lb) {
  LPayloads *p = &lb->pay;
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  f(ud, p->slot, p->cap * sizeof *p->slot, 0);
  f(ud, p->dead, p->cap * sizeof *p->dead, 0);
  memset(p, 0, sizeof *p);
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
