/*
** test_embed.c: an engine that embeds Lua 5.4 and links the binding
** registers a native C leaf in the state's environment (bonsai_lua.h); a
** Lua tree names it, and it runs with the agent's owner pointer and
** blackboard, without entering Lua.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "bonsai.h"
#include "bonsai_lua.h"

typedef struct Npc {
  int ticks;
} Npc;

/* A native leaf: counts its ticks in the owner and writes bb.seen. */
static int native_count(const bonsai_call *c) {
  Npc *npc = (Npc *)c->owner;
  bonsai_env *env = (bonsai_env *)c->data;
  bonsai_value v;
  if (npc == NULL)
    return bonsai_agent_error(c->agent, "no owner");
  npc->ticks++;
  v.type = BONSAI_TINTEGER;
  v.u.i = npc->ticks;
  bonsai_bb_set(bonsai_agent_bb(c->agent), bonsai_key(env, "seen", 4), v);
  return npc->ticks < 2 ? BONSAI_RUNNING : BONSAI_SUCCESS;
}

static void native_leaf_in_lua_tree(void **state) {
  lua_State *L = luaL_newstate();
  Npc npc = {0};
  bonsai_env *env;
  (void)state;
  luaL_openlibs(L);
  assert_null(bonsai_lua_env(L));
  luaL_requiref(L, "bonsai.core", luaopen_bonsai_core, 0);
  lua_pop(L, 1);
  env = bonsai_lua_env(L);
  assert_non_null(env);
  assert_int_equal(bonsai_leaf_register(env, "native_count", native_count,
                                        env, 0),
                   BONSAI_OK);
  lua_pushlightuserdata(L, &npc);
  lua_setglobal(L, "NPC");
  if (luaL_dostring(L,
                    "package.path = '" SOURCE_ROOT "/lua/?.lua;" SOURCE_ROOT
                    "/lua/?/init.lua;' .. package.path\n"
                    "local bt = require 'bonsai'\n"
                    "local t = bt.tree(bt.sequence { bt.action 'native_count',"
                    "  bt.condition(function(a, bb) return bb.seen == 2 end) })\n"
                    "local a = bt.agent(t, { owner = NPC })\n"
                    "return a:tick(1) .. ' ' .. a:tick(1)") != LUA_OK)
    fail_msg("%s", lua_tostring(L, -1));
  assert_string_equal(lua_tostring(L, -1), "running success");
  assert_int_equal(npc.ticks, 2);
  lua_close(L);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(native_leaf_in_lua_tree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
