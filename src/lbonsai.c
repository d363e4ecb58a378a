/*
** lbonsai.c: luaopen_bonsai_core. Creates the per-state context (the
** environment, the named-leaf table, the key cache, the interned status
** strings), the metatables, and the module table. Every module function and
** method gets the context as upvalue 1, so nothing here is global.
*/
#include <string.h>

#include "bonsai.h"
#include "bonsai_lua.h"
#include "lbonsai.h"

#define LB_CONTEXT_T "bonsai.context"

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
  lua_getiuservalue(L, ci, LB_EXTRAS);
  lua_pushvalue(L, si);
  if (lua_rawget(L, -2) == LUA_TNIL && make) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, si);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_remove(L, -2);
}

void lb_setextra(lua_State *L, int si, int ci) {
  si = lua_absindex(L, si);
  lua_getiuservalue(L, ci, LB_EXTRAS);
  lua_pushvalue(L, si);
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 2);
}

static int context_gc(lua_State *L) {
  LBonsai *lb = (LBonsai *)lua_touserdata(L, 1);
  if (lb->env != NULL) {
    bonsai_env_release(lb->env);
    lb->env = NULL;
  }
  return 0;
}

/* bt.memory(): bytes the C core has allocated (trees, agents, blackboards). */
static int lb_memory(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)bonsai_env_memory(lb_context(L)->env));
  return 1;
}

/* core._view(fn): the maker of remapping blackboard views (init.lua). */
static int lb_setview(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_setiuservalue(L, lua_upvalueindex(1), LB_VIEW);
  return 0;
}

static const luaL_Reg bonsai_funcs[] = {
    {"tree", lb_tree},
    {"shared", lb_shared},
    {"agent", lb_agent},
    {"tick_all", lb_tick_all},
    {"sleep", lb_sleep},
    {"register", lb_register},
    {"blackboard", lb_blackboard},
    {"memory", lb_memory},
    {"istree", lb_istree},
    {"_isleaf", lb_isleaf},
    {"_mtime", lb_mtime},
    {"_dir", lb_dir},
    {"_view", lb_setview},
    {NULL, NULL}};

/* Pushes the table of node kinds, in bonsai_kind order (1-based): each
** { name =, class = "leaf"|"composite"|"decorator"|"hidden", number =,
** params = { ... } }, from which lua/bonsai makes its constructors. */
static void pushkinds(lua_State *L) {
  static const char *const classes[] = {"leaf", "composite", "decorator",
                                        "hidden"};
  bonsai_kindinfo ki;
  int k, p;
  lua_newtable(L);
  for (k = 0; bonsai_kind_info(k, &ki) == BONSAI_OK; k++) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, ki.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, classes[ki.cls]);
    lua_setfield(L, -2, "class");
    if (ki.number != NULL) {
      lua_pushstring(L, ki.number);
      lua_setfield(L, -2, "number");
    }
    lua_newtable(L);
    for (p = 0; ki.params[p] != NULL; p++) {
      lua_pushstring(L, ki.params[p]);
      lua_rawseti(L, -2, p + 1);
    }
    lua_setfield(L, -2, "params");
    lua_rawseti(L, -2, k + 1);
  }
}

/* Interns s, remembers its address in *p and anchors it in the context
** (stack: context, module); also sets module[field] = s. */
static void status_string(lua_State *L, const char *field, const char *s,
                          const char **p) {
  lua_pushstring(L, s);
  *p = lua_tostring(L, -1);
  lua_getiuservalue(L, -3, LB_ANCHOR);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
  lua_setfield(L, -2, field);
}

bonsai_env *bonsai_lua_env(lua_State *L) {
  LBonsai *lb;
  lua_getfield(L, LUA_REGISTRYINDEX, LB_CONTEXT_T);
  lb = (LBonsai *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return lb != NULL ? lb->env : NULL;
}

/* Pushes the state's context, made on the first call. */
static LBonsai *context(lua_State *L) {
  LBonsai *lb;
  void *ud;
  lua_Alloc f;
  if (lua_getfield(L, LUA_REGISTRYINDEX, LB_CONTEXT_T) == LUA_TUSERDATA)
    return (LBonsai *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  lb = (LBonsai *)lua_newuserdatauv(L, sizeof *lb, LB_NUV);
  lb->env = NULL;
  lb->ticking = NULL;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, context_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  f = lua_getallocf(L, &ud);
  if ((lb->env = bonsai_env_new((bonsai_alloc)f, ud)) == NULL)
    luaL_error(L, "out of memory");
  lua_newtable(L);
  lua_setiuservalue(L, -2, LB_NAMED);
  lua_newtable(L);
  lua_setiuservalue(L, -2, LB_KEYS);
  lua_newtable(L);
  lua_setiuservalue(L, -2, LB_ANCHOR);
  lb_newweak(L);
  lua_setiuservalue(L, -2, LB_IDS);
  lb_newweak(L);
  lua_setiuservalue(L, -2, LB_EXTRAS);
  lua_newtable(L);
  lua_setiuservalue(L, -2, LB_TICKING);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setiuservalue(L, -2, LB_TREES);
  lb->nextid = 0;
  lb->ticking = NULL;
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, LB_CONTEXT_T);
  return lb;
}

int luaopen_bonsai_core(lua_State *L) {
  LBonsai *lb;
  luaL_checkversion(L);
  lb = context(L);
  lb_open_tree(L);
  lb_open_agent(L);
  lb_open_blackboard(L);
  /* stack: context */
  lua_newtable(L);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, bonsai_funcs, 1);
  lua_pushliteral(L, BONSAI_VERSION);
  lua_setfield(L, -2, "VERSION");
  pushkinds(L);
  lua_setfield(L, -2, "KINDS");
  status_string(L, "SUCCESS", "success", &lb->s_success);
  status_string(L, "FAILURE", "failure", &lb->s_failure);
  status_string(L, "RUNNING", "running", &lb->s_running);
  lua_pushliteral(L, "aborted");
  lua_setfield(L, -2, "ABORTED");
  lua_pushliteral(L, "idle");
  lua_setfield(L, -2, "IDLE");
  /* keep the context alive as long as the module table */
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "_context");
  return 1;
}
