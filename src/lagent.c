/*
** lagent.c: bt.agent, the agent methods and bt.tick_all. An agent is a plain
** Lua table { owner, bb, tree, time, [1] = state }, so a leaf reads a.owner
** and a.bb as plain fields; the state userdata owns the C agent and keeps
** the references the core relies on (values, blackboard, tree). A tick runs
** inside one protected call; a Lua error from a leaf is caught there, the
** agent's running nodes are aborted, and the error is raised again naming
** the tree and the node.
*/
#include <string.h>

#include "bonsai.h"
#include "agent.h"
#include "compile.h"
#include "lbonsai.h"
#include "vm.h"

/* Upvalues of agent methods and bt.tick_all: 1 context, 2 state metatable.
** The functions run under lua_pcall get both as arguments instead. */
#define CONTEXT lua_upvalueindex(1)
#define STATEMETA lua_upvalueindex(2)

/* The state userdata of the agent table at idx, pushed; NULL if idx does
** not hold an agent (meta: index of the state metatable). */
static LAgent *toagentm(lua_State *L, int idx, int meta) {
  LAgent *la;
  if (lua_type(L, idx) != LUA_TTABLE) {
    lua_pushnil(L);
    return NULL;
  }
  lua_rawgeti(L, idx, 1);
  la = (LAgent *)lua_touserdata(L, -1);
  if (la == NULL || !lua_getmetatable(L, -1))
    return NULL;
  if (!lua_rawequal(L, -1, meta) || la->a == NULL)
    la = NULL;
  lua_pop(L, 1);
  return la;
}

#define toagent(L, idx) toagentm(L, idx, STATEMETA)

static LAgent *checkagent(lua_State *L, int idx) {
  LAgent *la = toagent(L, idx);
  if (la == NULL)
    luaL_typeerror(L, idx, BS_AGENT_T);
  return la;
}

/* Pushes the leaf stack (see LTick) for the agent table at ai whose state
** userdata is at si; ci is the context. */
static void pushcontext(lua_State *L, LTick *t, int ai, int si, int ci) {
  if (ci > LUA_REGISTRYINDEX)
    ci = lua_absindex(L, ci);
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  t->L = L;
  t->lb = (LBonsai *)lua_touserdata(L, ci);
  t->base = lua_gettop(L) + 1;
  lua_pushvalue(L, ai);
  lua_getiuservalue(L, si, UV_BB);
  lua_getiuservalue(L, si, UV_VALUES);
  lua_getiuservalue(L, ci, LB_NAMED);
  lua_getiuservalue(L, si, UV_EXTRA);
  lua_pushvalue(L, si);
}

/* Pushes "tree 't' node 'path': msg" for the agent's last error. */
static const char *pusherror(lua_State *L, bonsai_agent *a, const char *msg) {
  const char *name = bonsai_tree_name(a->tree);
  char path[256];
  if (a->errnode == BS_NONE || a->errnode >= a->bp->n)
    return lua_pushfstring(L, "tree '%s': %s", name, msg);
  bs_bp_path(a->bp, a->errnode, path, sizeof path);
  return lua_pushfstring(L, "tree '%s' node '%s': %s", name, path, msg);
}

typedef struct Job {
  LTick t;
  LAgent *la;
  double dt;
  int status;
  int started; /* the tick began: a failure must be recovered */
} Job;

/* Switches the agent to the reloaded version of its tree: aborts in the
** old version run with the old values table, then the new one is in. */
static int migrate(lua_State *L, Job *j) {
  bonsai_agent *a = j->la->a;
  int si = j->t.base + LT_STATE, r;
  a->host = &j->t;
  a->busy = a->protect = 1;
  r = bs_agent_migrate(a);
  a->busy = a->protect = 0;
  a->host = NULL;
  lua_getiuservalue(L, si, UV_TREE);
  lua_getiuservalue(L, -1, 1);
  lua_remove(L, -2);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, si, UV_VALUES);
  lua_replace(L, j->t.base + LT_VALUES);
  return r;
}

/* Calls the interrupts; true when one of them fired. */
static int interrupted(lua_State *L, const LTick *t) {
  lua_Integer k;
  if (lua_getfield(L, t->base + LT_EXTRA, "interrupts") != LUA_TTABLE) {
    lua_pop(L, 1);
    return 0;
  }
  for (k = 1; lua_rawgeti(L, -1, k) != LUA_TNIL; k++) {
    int fired;
    lua_pushvalue(L, t->base + LT_AGENT);
    lua_pushvalue(L, t->base + LT_BB);
    lua_call(L, 2, 1);
    fired = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (fired) {
      lua_pop(L, 1);
      return 1;
    }
  }
  lua_pop(L, 2);
  return 0;
}

/* One tick of the agent table at ai (state at si, context at ci); may
** raise. */
static int tickone(lua_State *L, Job *j, int ai, int si, int ci) {
  bonsai_agent *a = j->la->a;
  int s;
  pushcontext(L, &j->t, ai, si, ci);
  if (bs_agent_stale(a) && !a->busy && migrate(L, j) != BONSAI_OK)
    return BONSAI_ELEAF;
  if ((s = bs_agent_start(a, j->dt)) != BONSAI_OK)
    return s;
  j->started = 1;
  lua_pushnumber(L, a->time);
  lua_setfield(L, j->t.base + LT_AGENT, "time");
  a->host = &j->t;
  a->current = BS_NONE;
  if (j->la->ninterrupts > 0 && interrupted(L, &j->t))
    s = bs_agent_abort(a) == BONSAI_OK ? BONSAI_ABORTED : BONSAI_ELEAF;
  else
    s = bs_vm_tick(a);
  a->host = NULL;
  bs_agent_finish(a, s);
  j->started = 0;
  lua_settop(L, j->t.base - 1);
  return s;
}

/* After a Lua error escaped a tick (message at the top): clean the agent
** up and replace the message by one that names the tree and node. */
static void recover(lua_State *L, Job *j, int ai, int si, int ci) {
  bonsai_agent *a = j->la->a;
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : "(error object is not "
                                                     "a string)";
  if (!j->started)
    return;
  j->started = 0;
  pushcontext(L, &j->t, ai, si, ci);
  a->host = &j->t;
  bs_vm_recover(a, msg);
  a->host = NULL;
  bs_agent_finish(a, BONSAI_ELEAF);
  lua_settop(L, j->t.base - 1);
  pusherror(L, a, bonsai_agent_errmsg(a));
  lua_remove(L, -2);
}

/* args: job, agent, state, context */
static int ptick(lua_State *L) {
  Job *j = (Job *)lua_touserdata(L, 1);
  j->status = tickone(L, j, 2, 3, 4);
  return 0;
}

/* a:tick([dt]) */
static int agent_tick(lua_State *L) {
  LAgent *la;
  Job j;
  lua_settop(L, 2);
  la = checkagent(L, 1); /* state at 3 */
  j.dt = luaL_optnumber(L, 2, 0.0);
  j.la = la;
  j.started = 0;
  if (la->a->busy)
    return luaL_error(L, "agent is already ticking");
  lua_pushcfunction(L, ptick);
  lua_pushlightuserdata(L, &j);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, CONTEXT);
  if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
    recover(L, &j, 1, 3, CONTEXT);
    return lua_error(L);
  }
  if (j.status < 0) {
    pusherror(L, la->a, bonsai_agent_errmsg(la->a));
    return lua_error(L);
  }
  lb_pushstatus(L, j.status);
  return 1;
}

typedef struct Batch {
  Job j;
  lua_Integer next, n, cur;
} Batch;

/* Appends { agent = list[cur], error = msg } to the errors list at eidx;
** msg is at the top (popped). */
static void adderror(lua_State *L, int list, int eidx, lua_Integer cur) {
  lua_createtable(L, 0, 2);
  lua_insert(L, -2);
  lua_setfield(L, -2, "error");
  lua_rawgeti(L, list, cur);
  lua_setfield(L, -2, "agent");
  lua_rawseti(L, eidx, (lua_Integer)lua_rawlen(L, eidx) + 1);
}

/* Ticks list[next..n] (args: batch, list, errors, context, state
** metatable); a Lua error leaves b->cur at the agent that raised it. */
static int pbatch(lua_State *L) {
  Batch *b = (Batch *)lua_touserdata(L, 1);
  while (b->next <= b->n) {
    LAgent *la;
    int s;
    lua_settop(L, 5);
    b->cur = b->next++;
    lua_rawgeti(L, 2, b->cur); /* 6: agent, 7: state */
    b->j.started = 0;
    if ((la = toagentm(L, 6, 5)) == NULL) {
      lua_pushfstring(L, "element %d is not an agent", (int)b->cur);
      adderror(L, 2, 3, b->cur);
      continue;
    }
    b->j.la = la;
    s = tickone(L, &b->j, 6, 7, 4);
    if (s < 0) {
      pusherror(L, la->a, bonsai_agent_errmsg(la->a));
      adderror(L, 2, 3, b->cur);
    }
  }
  return 0;
}

/* bt.tick_all(list, dt): returns nil, or a list of { agent =, error = } */
static int tick_all(lua_State *L) {
  Batch b;
  luaL_checktype(L, 1, LUA_TTABLE);
  b.j.dt = luaL_optnumber(L, 2, 0.0);
  b.next = 1;
  b.n = (lua_Integer)lua_rawlen(L, 1);
  lua_settop(L, 1);
  lua_newtable(L); /* errors: 2 */
  while (b.next <= b.n) {
    lua_pushcfunction(L, pbatch);
    lua_pushlightuserdata(L, &b);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, CONTEXT);
    lua_pushvalue(L, STATEMETA);
    if (lua_pcall(L, 5, 0, 0) != LUA_OK) {
      lua_rawgeti(L, 1, b.cur);
      lua_rawgeti(L, -1, 1); /* stack: errors, msg, agent, state */
      lua_rotate(L, -3, 2);  /* errors, agent, state, msg */
      recover(L, &b.j, -3, -2, CONTEXT);
      adderror(L, 1, 2, b.cur);
      lua_settop(L, 2);
    }
  }
  if (lua_rawlen(L, 2) == 0)
    lua_pushnil(L);
  return 1;
}

/* Runs an abort-like operation on an idle agent with its leaf stack set
** up; raises the first callback error. */
static int withcontext(lua_State *L, int (*op)(bonsai_agent *)) {
  LAgent *la;
  bonsai_agent *a;
  LTick t;
  int r;
  lua_settop(L, 1);
  la = checkagent(L, 1); /* state at 2 */
  a = la->a;
  if (a->busy)
    return luaL_error(L, "agent is already ticking");
  if (bs_agent_stale(a)) { /* aborts belong to the version that runs */
    Job j;
    j.la = la;
    pushcontext(L, &j.t, 1, 2, CONTEXT);
    (void)migrate(L, &j);
    lua_settop(L, 2);
  }
  pushcontext(L, &t, 1, 2, CONTEXT);
  a->host = &t;
  r = op(a);
  a->host = NULL;
  if (r != BONSAI_OK) {
    pusherror(L, a, bonsai_agent_errmsg(a));
    return lua_error(L);
  }
  return 0;
}

static int agent_abort(lua_State *L) {
  return withcontext(L, bonsai_agent_abort);
}

static int agent_reset(lua_State *L) {
  return withcontext(L, bonsai_agent_reset);
}

static int agent_status(lua_State *L) {
  lb_pushstatus(L, bonsai_agent_status(checkagent(L, 1)->a));
  return 1;
}

/* a:running(): names of the running nodes, outermost first */
static int agent_running(lua_State *L) {
  bonsai_agent *a = checkagent(L, 1)->a;
  unsigned n = bonsai_agent_running(a, NULL, 0), k;
  unsigned *nodes = (unsigned *)lua_newuserdatauv(L, n * sizeof *nodes + 1, 0);
  bonsai_agent_running(a, nodes, n);
  lua_createtable(L, (int)n, 0);
  for (k = 0; k < n; k++) {
    lua_pushstring(L, a->bp->pool + a->bp->nodes[nodes[k]].name);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  return 1;
}

/* The extras table of the state at si, created if needed (pushed). */
static void getextra(lua_State *L, int si) {
  if (lua_getiuservalue(L, si, UV_EXTRA) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, si, UV_EXTRA);
  }
}

/* a:add_interrupt(fn) */
static int agent_add_interrupt(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  la = checkagent(L, 1); /* state at 3 */
  luaL_checktype(L, 2, LUA_TFUNCTION);
  getextra(L, 3);
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
  lua_Integer k, n;
  lua_settop(L, 2);
  la = checkagent(L, 1); /* state at 3 */
  getextra(L, 3);
  if (lua_getfield(L, -1, "interrupts") != LUA_TTABLE)
    return lua_pushboolean(L, 0), 1;
  n = (lua_Integer)lua_rawlen(L, -1);
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, -1, k);
    if (lua_rawequal(L, -1, 2)) {
      lua_pop(L, 1);
      for (; k < n; k++) {
        lua_rawgeti(L, -1, k + 1);
        lua_rawseti(L, -2, k);
      }
      lua_pushnil(L);
      lua_rawseti(L, -2, n);
      la->ninterrupts--;
      return lua_pushboolean(L, 1), 1;
    }
    lua_pop(L, 1);
  }
  return lua_pushboolean(L, 0), 1;
}

static int agent_tostring(lua_State *L) {
  LAgent *la = toagent(L, 1);
  if (la == NULL)
    return lua_pushliteral(L, "bonsai.agent (broken)"), 1;
  lb_pushstatus(L, la->a->last);
  lua_pushfstring(L, "bonsai.agent of '%s' (%s)",
                  bonsai_tree_name(la->a->tree), lua_tostring(L, -1));
  return 1;
}

static int state_gc(lua_State *L) {
  LAgent *la = (LAgent *)lua_touserdata(L, 1);
  bonsai_agent_free(la->a);
  la->a = NULL;
  return 0;
}

/* bt.agent(tree [, {owner = x, blackboard = bb_or_table}]) */
int lb_agent(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  LBB *bb;
  LAgent *la;
  lua_settop(L, 2);
  if (!lua_isnil(L, 2))
    luaL_checktype(L, 2, LUA_TTABLE);
  /* 3: blackboard userdata */
  if (lua_istable(L, 2) && lua_getfield(L, 2, "blackboard") != LUA_TNIL) {
    if (lua_istable(L, 3)) {
      lb_newbb(L, 0);
      lb_bb_fill(L, 4, 3);
      lua_replace(L, 3);
    } else {
      lb_checkbb(L, 3);
    }
  } else {
    lua_settop(L, 2);
    lb_newbb(L, 0);
  }
  bb = (LBB *)lua_touserdata(L, 3);
  /* 4: state userdata, created empty, then filled */
  la = (LAgent *)lua_newuserdatauv(L, sizeof *la, UV_N);
  la->a = NULL;
  la->ninterrupts = 0;
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_setmetatable(L, -2);
  if ((la->a = bonsai_agent_new(lt->t, bb->bb, NULL)) == NULL)
    return luaL_error(L, "out of memory");
  lua_getiuservalue(L, 1, 1);
  lua_setiuservalue(L, 4, UV_VALUES);
  lua_pushvalue(L, 3);
  lua_setiuservalue(L, 4, UV_BB);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, 4, UV_TREE);
  /* 5: the agent table */
  lua_createtable(L, 1, 4);
  lua_pushvalue(L, 4);
  lua_rawseti(L, 5, 1);
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "owner");
    lua_setfield(L, 5, "owner");
  }
  lua_pushvalue(L, 3);
  lua_setfield(L, 5, "bb");
  lua_pushvalue(L, 1);
  lua_setfield(L, 5, "tree");
  lua_pushnumber(L, 0.0);
  lua_setfield(L, 5, "time");
  luaL_setmetatable(L, BS_AGENT_T);
  return 1;
}

int lb_tick_all(lua_State *L) {
  return tick_all(L);
}

static const luaL_Reg agent_methods[] = {
    {"tick", agent_tick},
    {"abort", agent_abort},
    {"reset", agent_reset},
    {"status", agent_status},
    {"running", agent_running},
    {"add_interrupt", agent_add_interrupt},
    {"remove_interrupt", agent_remove_interrupt},
    {NULL, NULL}};

/* stack: context. Makes the state and agent metatables; the agent
** functions get (context, state metatable) as upvalues. */
void lb_open_agent(lua_State *L) {
  int ctx = lua_gettop(L);
  luaL_newmetatable(L, BS_STATE_T);
  lua_pushcfunction(L, state_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "private");
  lua_setfield(L, -2, "__metatable");
  luaL_newmetatable(L, BS_AGENT_T); /* stack: ctx, statemeta, agentmeta */
  lua_newtable(L);
  lua_pushvalue(L, ctx);
  lua_pushvalue(L, ctx + 1);
  luaL_setfuncs(L, agent_methods, 2);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, ctx);
  lua_pushvalue(L, ctx + 1);
  lua_pushcclosure(L, agent_tostring, 2);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 2);
}
