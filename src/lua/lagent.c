/*
** lagent.c: bt.agent and the agent object. An agent is a plain Lua table
** { owner, bb, tree, time, [1] = state }, so a leaf reads a.owner and a.bb
** as plain fields; the state userdata owns the C agent and keeps the
** references the core relies on (values, blackboard, tree). Here: its
** making (blackboard, owner, events, restore), its collection, a.tree and
** a.time, and the methods that only read or set it (status, running,
** wake, sleeping, hold, interrupts). The methods that run its callbacks
** (a:tick, a:abort, a:reset) and bt.tick_all are the tick engine, ltick.c;
** lsave.c, levents.c and ltrace.c add theirs.
*/
#include "bonsai.h"
#include "lbonsai.h"

/* Upvalue 1 of agent methods and module functions: the context. */
#define CONTEXT lua_upvalueindex(1)

/* a:wake() */
static int agent_wake(lua_State *L) {
  bonsai_agent_wake(agentof(lb_checkagent(L, 1)));
  return 0;
}

/* a:sleeping(): seconds of sleep left, or nil */
static int agent_sleeping(lua_State *L) {
  double left = bonsai_agent_sleeping(agentof(lb_checkagent(L, 1)));
  if (left < 0)
    lua_pushnil(L);
  else
    lua_pushnumber(L, left);
  return 1;
}

/* a:hold(on): keeps the agent on the version it runs across reloads (true)
** or lets it switch at its next tick (false); a:held() */
static int agent_hold(lua_State *L) {
  int on = (luaL_checkany(L, 2), lua_toboolean(L, 2));
  bonsai_agent_hold(agentof(lb_checkagent(L, 1)), on); /* (it pushes) */
  return 0;
}

static int agent_held(lua_State *L) {
  lua_pushboolean(L, bonsai_agent_held(agentof(lb_checkagent(L, 1))));
  return 1;
}

/* a:pass(on): lets the agent switch though its tree is held (true), until
** the tree's hold ends, or takes the pass back (false); a:passes() */
static int agent_pass(lua_State *L) {
  int on = (luaL_checkany(L, 2), lua_toboolean(L, 2));
  bonsai_agent_pass(agentof(lb_checkagent(L, 1)), on); /* (it pushes) */
  return 0;
}

static int agent_passes(lua_State *L) {
  lua_pushboolean(L, bonsai_agent_passes(agentof(lb_checkagent(L, 1))));
  return 1;
}

static int agent_status(lua_State *L) {
  lb_pushstatus(L, bonsai_agent_status(agentof(lb_checkagent(L, 1))));
  return 1;
}

/* a:running(): names of the running nodes, outermost first; an aborting
** one's with " (aborting)" */
static int agent_running(lua_State *L) {
  bonsai_agent *a = agentof(lb_checkagent(L, 1));
  unsigned n = bonsai_agent_running(a, NULL, 0), k;
  unsigned *nodes = (unsigned *)lua_newuserdatauv(L, n * sizeof *nodes + 1, 0);
  bonsai_agent_running(a, nodes, n);
  lua_createtable(L, (int)n, 0);
  for (k = 0; k < n; k++) {
    bonsai_nodeinfo info;
    bonsai_agent_node_info(a, nodes[k], &info);
    if (bonsai_agent_node_status(a, nodes[k]) == BONSAI_ABORTING)
      lua_pushfstring(L, "%s (aborting)", info.name);
    else
      lua_pushstring(L, info.name);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  return 1;
}

/* a:add_interrupt(fn) */
static int agent_add_interrupt(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  la = lb_checkagent(L, 1); /* state at 3 */
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lb_extra(L, 3, CONTEXT, 1);
  if (lua_getfield(L, -1, "interrupts") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "interrupts");
  }
  lua_pushvalue(L, 2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  la->ninterrupts++;
  return 0;
}

/* a:remove_interrupt(fn): true if it was there */
static int agent_remove_interrupt(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  la = lb_checkagent(L, 1); /* state at 3 */
  lb_extra(L, 3, CONTEXT, 1);
  if (lua_getfield(L, -1, "interrupts") == LUA_TTABLE && lb_list_remove(L, 2)) {
    la->ninterrupts--;
    lua_pushboolean(L, 1);
  } else {
    lua_pushboolean(L, 0);
  }
  return 1;
}

static int agent_tostring(lua_State *L) {
  LAgent *la = lb_toagent(L, 1);
  if (la == NULL) {
    lua_pushliteral(L, "bonsai.agent (broken)");
    return 1;
  }
  lb_pushstatus(L, bonsai_agent_status(agentof(la)));
  lua_pushfstring(L, "bonsai.agent of '%s' (%s)",
                  bonsai_tree_name(bonsai_agent_tree(agentof(la))),
                  lua_tostring(L, -1));
  return 1;
}

/* __gc of an agent's state (upvalue 1: the context): the payloads of its
** queue and trace are let go at once. */
static int state_gc(lua_State *L) {
  LAgent *la = (LAgent *)lua_touserdata(L, 1);
  if (la->magic != NULL) {
    bonsai_agent_done(agentof(la));
    lb_payload_sweep(L, lua_upvalueindex(1));
  }
  la->magic = NULL;
  return 0;
}

/* bt.agent(tree [, {owner = x, blackboard = bb_or_table}]). The agent
** table and its state are made first, next to each other: every tick
** reads both; the blackboard comes after them. */
int lb_agent(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  LBB *bb;
  LAgent *la;
  void *owner = NULL;
  lua_settop(L, 2);
  if (!lua_isnil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lb_checkopts(L, 2, "bt.agent", "blackboard owner restore events");
  }
  /* 3: the agent table: a.owner and a.bb are plain fields; a.tree and
  ** a.time come from __index */
  lua_createtable(L, 1, 2);
  /* 4: state userdata holding the C agent, created empty, then filled */
  la = (LAgent *)lua_newuserdatauv(L, sizeof *la + bonsai_agent_size(lt->t),
                                   UV_N);
  la->magic = NULL;
  la->ninterrupts = 0;
  la->frozen = la->hooked = la->tasks = 0;
  luaL_setmetatable(L, BS_STATE_T);
  /* 5: blackboard userdata */
  if (lua_istable(L, 2) && lua_getfield(L, 2, "blackboard") != LUA_TNIL) {
    if (lua_istable(L, 5)) { /* initial values, and maybe a parent */
      int parent = lua_getfield(L, 5, "parent") != LUA_TNIL ? 6 : 0;
      lb_newbb(L, parent);
      lb_bb_fill(L, -1, 5);
      lua_replace(L, 5);
      lua_settop(L, 5);
    } else if (luaL_testudata(L, 5, BS_BB_T) == NULL) {
      return luaL_error(L, "bt.agent: 'blackboard' must be a table of initial "
                        "values or a blackboard (bt.blackboard()), got %s",
                        luaL_typename(L, 5));
    } else {
      lb_checkbb(L, 5);
    }
  } else {
    lua_settop(L, 4);
    lb_newbb(L, 0);
  }
  bb = (LBB *)lua_touserdata(L, 5);
  if (lua_istable(L, 2)) { /* a userdata owner is call->owner for C leaves */
    lua_getfield(L, 2, "owner");
    owner = lua_touserdata(L, -1);
    lua_pop(L, 1);
  }
  if (bonsai_agent_init(agentof(la), lt->t, bb->bb, owner) != BONSAI_OK)
    return luaL_error(L, "out of memory");
  la->magic = lb_context(L);
  lb_tree_values(L, 1);
  lua_setiuservalue(L, 4, UV_VALUES);
  lua_pushvalue(L, 5);
  lua_setiuservalue(L, 4, UV_BB);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, 4, UV_TREE);
  lua_pushvalue(L, 4);
  lua_rawseti(L, 3, 1);
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "owner");
    lua_setfield(L, 3, "owner");
  }
  lua_pushvalue(L, 5);
  lua_setfield(L, 3, "bb");
  lua_pushvalue(L, 3);
  luaL_setmetatable(L, BS_AGENT_T);
  if (lua_istable(L, 2)) {
    if (lua_getfield(L, 2, "events") != LUA_TNIL) { /* its queue's bound */
      lua_Integer n = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
      if (n < 0 || n > 0x1000000 ||
          bonsai_agent_queue(agentof(la), (unsigned)n) != BONSAI_OK)
        return luaL_error(L, "bt.agent: 'events' must be a whole number from "
                             "0 to 16777216 (the most events its queue "
                             "holds), got %s", luaL_typename(L, -1));
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "restore") != LUA_TNIL) {
      lb_agent_restore(L, 3, 4, -1);
      lb_control_restore(L, 3, 4, CONTEXT);
      lb_payload_sweep(L, CONTEXT); /* (a restore replaced the queue) */
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* ltick.c adds a:tick, a:abort and a:reset, lsave.c a:save, ltrace.c
** a:trace, a:events, a:freeze, a:on_tick... */
static const luaL_Reg agent_methods[] = {
    {"status", agent_status},
    {"wake", agent_wake},
    {"sleeping", agent_sleeping},
    {"running", agent_running},
    {"add_interrupt", agent_add_interrupt},
    {"remove_interrupt", agent_remove_interrupt},
    {"hold", agent_hold},
    {"held", agent_held},
    {"pass", agent_pass},
    {"passes", agent_passes},
    {NULL, NULL}};

/* a.tree, a.time and the methods: what an agent table does not hold
** (upvalues: the context, the methods, "tree", "time"). Reading a.time
** costs a call, but no tick has to write it. */
static int agent_index(lua_State *L) {
  LAgent *la;
  lua_pushvalue(L, 2); /* nil if called without a key */
  if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL)
    return 1;
  if (lua_rawequal(L, 2, lua_upvalueindex(4)) &&
      (la = lb_toagent(L, 1)) != NULL)
    lua_pushnumber(L, bonsai_agent_time(agentof(la)));
  else if (lua_rawequal(L, 2, lua_upvalueindex(3)) && lb_toagent(L, 1) != NULL)
    lua_getiuservalue(L, -1, UV_TREE);
  else
    lua_pushnil(L);
  return 1;
}

/* stack: context. Makes the state and agent metatables; the agent
** methods get the context as upvalue. The methods table is upvalue 2 of
** __index and the metatable's field methods, where ltick.c and
** lb_addmethods find it for the methods of the files above, and
** bonsai's Lua modules for theirs (5.1's debug.getupvalue does not show a
** C function's upvalues). */
void lb_open_agent(lua_State *L) {
  int ctx = lua_gettop(L);
  luaL_newmetatable(L, BS_STATE_T);
  lua_pushvalue(L, ctx);
  lua_pushcclosure(L, state_gc, 1);
  lua_setfield(L, -2, "__gc");
  lua_newtable(L); /* what getmetatable gives: a mark no other value has
                   ** (the LuaJIT path knows an agent's state by it) */
  lua_setfield(L, -2, "__metatable");
  luaL_newmetatable(L, BS_AGENT_T); /* stack: ctx, statemeta, agentmeta */
  lua_newtable(L);
  lua_pushvalue(L, ctx);
  luaL_setfuncs(L, agent_methods, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "methods");
  lua_pushvalue(L, ctx);
  lua_insert(L, -2);
  lua_pushliteral(L, "tree");
  lua_pushliteral(L, "time");
  lua_pushcclosure(L, agent_index, 4);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, ctx);
  lua_pushcclosure(L, agent_tostring, 1);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 2);
}
