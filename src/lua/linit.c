/*
** linit.c: luaopen_bonsai_core, as Lua's own linit.c opens its libraries.
** Makes the per-state context (the environment, the named-leaf table, the
** key cache, the interned status strings), has each binding file make its
** metatables and methods, and builds the module table. Every module
** function and method gets the context as upvalue 1, so nothing here is
** global. The top of the binding: it calls every file, and no file calls
** it.
*/
#include <string.h>

#include "bonsai.h"
#include "bonsai_lua.h"
#include "lbonsai.h"

/* The registry field of the context (bonsai_lua_env finds it there). */
#define LB_CONTEXT_T "bonsai.context"

/* __gc of the context: the environment goes with the last Lua reference. */
static int context_gc(lua_State *L) {
  LBonsai *lb = (LBonsai *)lua_touserdata(L, 1);
  if (lb->env != NULL) { /* agents collected later let go of no payload */
    bonsai_env_payload_hooks(lb->env, NULL, NULL, NULL);
    bonsai_env_release(lb->env);
    lb->env = NULL;
  }
  lb_payload_free(L, lb);
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

/* core._script(fn): the compiler of the scripts of pre- and
** post-conditions (init.lua). */
static int lb_setscript(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_setiuservalue(L, lua_upvalueindex(1), LB_SCRIPT);
  return 0;
}

static const luaL_Reg bonsai_funcs[] = {
    {"tree", lb_tree},
    {"shared", lb_shared},
    {"agent", lb_agent},
    {"tick_all", lb_tick_all},
    {"send", lb_send},
    {"sleep", lb_sleep},
    {"defer", lb_defer},
    {"register", lb_register},
    {"strict", lb_strict},
    {"blackboard", lb_blackboard},
    {"memory", lb_memory},
    {"istree", lb_istree},
    {"_isleaf", lb_isleaf},
    {"_mtime", lb_mtime},
    {"_dir", lb_dir},
    {"_realpath", lb_realpath},
    {"_readfile", lb_readfile},
    {"_view", lb_setview},
    {"_script", lb_setscript},
    {"_checkopts", lb_checkopts_lua},
    {"_nearest", lb_nearest_lua},
    {"_suggest", lb_suggest_lua},
    {"_leafnames", lb_leafnames_lua},
    {NULL, NULL}};

/* Pushes the table of node kinds, in bonsai_kind order (1-based): each
** { name =, class = "leaf"|"composite"|"decorator"|"hidden", number =,
** params = { ... }, keys = "every key its node tables take" }, from which
** lua/bonsai makes its constructors. */
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
    lb_kindwords(L, k);
    lua_setfield(L, -2, "keys");
    lua_rawseti(L, -2, k + 1);
  }
}

/* core.STATUS: { [0] = "idle", "running", ... }, the core's status names
** by number (bonsai_status_name), for the Lua modules that read them. */
static void pushstatuses(lua_State *L) {
  int s;
  lua_newtable(L);
  for (s = 0; bonsai_status_name(s) != NULL; s++) {
    lua_pushstring(L, bonsai_status_name(s));
    lua_rawseti(L, -2, s);
  }
}

/* Interns s, remembers its address in *p and anchors it in the context
** (stack: context, module); also sets module[field] = s. */
static void status_string(lua_State *L, const char *field, const char *s,
                          const void **p) {
  lua_pushstring(L, s);
  *p = lua_topointer(L, -1);
  lua_getiuservalue(L, -3, LB_ANCHOR);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
  lua_setfield(L, -2, field);
}

/* bonsai_lua.h: the environment of L's module, or NULL before it opens. */
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
  int k;
  if (lua_getfield(L, LUA_REGISTRYINDEX, LB_CONTEXT_T) == LUA_TUSERDATA)
    return (LBonsai *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  lb = (LBonsai *)lua_newuserdatauv(L, sizeof *lb, LB_NUV);
  lb->env = NULL;
  lb->ticking = NULL;
  lb->sleepers = 0;
  lb->task = NULL;
  lb->tasktick = NULL;
  lb->strict = 0;
  memset(&lb->out, 0, sizeof lb->out);
  lb->fdepth = 0;
  lb->nstepped = 0;
  memset(&lb->pay, 0, sizeof lb->pay);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, context_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  f = lua_getallocf(L, &ud);
  if ((lb->env = bonsai_env_new((bonsai_alloc)f, ud)) == NULL)
    luaL_error(L, "out of memory");
  for (k = LB_NAMED; k <= LB_TICKING; k++) { /* weak keys: ids, extras */
    if (k == LB_IDS || k == LB_EXTRAS)
      lb_newweak(L);
    else
      lua_newtable(L);
    lua_setiuservalue(L, -2, k);
  }
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setiuservalue(L, -2, LB_TREES);
  lua_newtable(L);
  lua_setiuservalue(L, -2, LB_PAYLOADS);
  lua_newtable(L);
  lua_setiuservalue(L, -2, LB_SEEN);
  bonsai_env_payload_hooks(lb->env, lb_payload_retain, lb_payload_release,
                           lb);
  lb->nextid = 0;
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, LB_CONTEXT_T);
  return lb;
}

/* Pushes core._metatables, the one door from Lua to the metatables the
** binding made: { tree =, agent =, blackboard =, control = }, each with
** its methods table (init.lua adds the methods written in Lua there). */
static void metatables(lua_State *L) {
  static const char *const types[][2] = {
    {"tree", BS_TREE_T}, {"agent", BS_AGENT_T}, {"blackboard", BS_BB_T},
    {"control", LB_CONTROL_T},
  };
  size_t i;
  lua_createtable(L, 0, (int)(sizeof types / sizeof types[0]));
  for (i = 0; i < sizeof types / sizeof types[0]; i++) {
    luaL_getmetatable(L, types[i][1]);
    lua_setfield(L, -2, types[i][0]);
  }
}

/* bonsai_lua.h. The types first, each by its own file; ltick.c, lsave.c,
** levents.c and ltrace.c add their methods to the tables that ltree.c and
** lagent.c made. */
int luaopen_bonsai_core(lua_State *L) {
  LBonsai *lb;
  luaL_checkversion(L);
  lb = context(L);
  lb_open_control(L);
  lb_open_tree(L);
  lb_open_agent(L);
  lb_open_tick(L);
  lb_open_blackboard(L);
  lb_open_save(L);
  lb_open_events(L);
  lb_open_trace(L);
  /* stack: context */
  lua_newtable(L);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, bonsai_funcs, 1);
  lua_pushliteral(L, BONSAI_VERSION);
  lua_setfield(L, -2, "VERSION");
  pushkinds(L);
  lua_setfield(L, -2, "KINDS");
  pushstatuses(L);
  lua_setfield(L, -2, "STATUS");
  status_string(L, "SUCCESS", "success", &lb->s_success);
  status_string(L, "FAILURE", "failure", &lb->s_failure);
  status_string(L, "RUNNING", "running", &lb->s_running);
  lua_pushliteral(L, "aborted");
  lua_setfield(L, -2, "ABORTED");
  lua_pushliteral(L, "idle");
  lua_setfield(L, -2, "IDLE");
  status_string(L, "SKIPPED", "skipped", &lb->s_skipped);
  lb_open_step(L);
  lua_pushliteral(L, "aborting");
  lua_setfield(L, -2, "ABORTING");
  metatables(L);
  lua_setfield(L, -2, "_metatables");
  /* keep the context alive as long as the module table */
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "_context");
  return 1;
}
