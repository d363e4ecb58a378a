/*
** bonsai_lua.h: for C and C++ engines that embed Lua 5.4 and link the
** binding (the static library bonsai_lua, or the objects of the module
** bonsai.core): opening the module, and reaching the environment its Lua
** trees use, so that native C leaves registered there can be named by
** designers' Lua trees (bt.action "name") and run without entering Lua.
** Kept apart from bonsai.h, which needs no Lua, as lualib.h is from lua.h.
*/
#ifndef bonsai_lua_h
#define bonsai_lua_h

#include <lua.h>

#include "bonsai.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the C module "bonsai.core" (lua/bonsai/init.lua, the module
** "bonsai", requires it). Typically: luaL_requiref(L, "bonsai.core",
** luaopen_bonsai_core, 0). Opening it again in the same state reuses the
** same environment. */
BONSAI_API int luaopen_bonsai_core(lua_State *L);

/* The environment of L's bonsai module, or NULL if it is not open yet.
** A C leaf registered there (bonsai_leaf_register) is found by name by
** Lua trees of that state; its call->owner is the agent's owner when that
** is a userdata or light userdata (NULL otherwise), and bonsai_agent_bb
** gives the agent's blackboard. */
BONSAI_API bonsai_env *bonsai_lua_env(lua_State *L);

#ifdef __cplusplus
}
#endif

#endif
