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
#include "reload.h"
#include "trace.h"
#include "vm.h"

/* Upvalue 1 of agent methods and module functions: the context (the
** functions run under lua_pcall get it as an argument). */
#define CONTEXT lua_upvalueindex(1)
/* Agent methods also get the status names as upvalues 2-6. */
#define STATUSNAME(s) lua_upvalueindex(2 + (s))

/* The state userdata of the agent table at idx (known to be a table),
** pushed; NULL if idx does not hold an agent of this context. Its 'magic'
** (the context's address) identifies it without a metatable lookup: this
** runs for every agent of every tick. */
static LAgent *stateof(lua_State *L, int idx, const LBonsai *lb) {
  LAgent *la;
  if (lua_rawgeti(L, idx, 1) != LUA_TUSERDATA ||
      lua_rawlen(L, -1) < sizeof(LAgent))
    return NULL;
  la = (LAgent *)lua_touserdata(L, -1);
  return la->magic == lb ? la : NULL;
}

static LAgent *toagent(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) {
    lua_pushnil(L);
    return NULL;
  }
  return stateof(L, idx, lb_context(L));
}

static LAgent *checkagent(lua_State *L, int idx) {
  LAgent *la = toagent(L, idx);
  if (la == NULL)
    luaL_typeerror(L, idx, BS_AGENT_T);
  return la;
}

LAgent *lb_checkagent(lua_State *L, int idx) { return checkagent(L, idx); }

/* Pushes the per-call part of the leaf stack: the named-leaf table and a
** slot for the values table (ci: the context). */
static void pushshared(lua_State *L, LTick *t, int ci) {
  t->L = L;
  t->lb = (LBonsai *)lua_touserdata(L, ci);
  t->ctx = ci;
  lua_getiuservalue(L, ci, LB_NAMED);
  t->named = lua_gettop(L);
  lua_pushnil(L);
  t->values = lua_gettop(L);
}

/* Points t at the agent table ai and its state si, with a slot for the
** blackboard, and loads the values table of the version the agent runs
** unless it is already there (*loaded: the id of the blueprint whose
** values are; 0 for none). */
static void setagent(lua_State *L, LTick *t, int ai, int si, int bbslot,
                     uint64_t *loaded, const Blueprint *bp) {
  t->agent = ai;
  t->state = si;
  t->bb = bbslot;
  t->bbready = 0;
  t->pending = 0;
  if (*loaded != bp->id) {
    lua_getiuservalue(L, si, UV_VALUES);
    lua_replace(L, t->values);
    *loaded = bp->id;
  }
}

/* Pushes a complete leaf stack for the agent table ai (state si). */
static void pushcontext(lua_State *L, LTick *t, int ai, int si, int ci) {
  uint64_t none = 0;
  LAgent *la = (LAgent *)lua_touserdata(L, si);
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  if (ci > LUA_REGISTRYINDEX)
    ci = lua_absindex(L, ci);
  pushshared(L, t, ci);
  lua_pushnil(L);
  setagent(L, t, ai, si, lua_gettop(L), &none, agentof(la)->bp);
}

/* Pushes "tree 't' node 'path': msg", naming node i of version bp (or
** "tree 't': msg" when i is no node). */
static const char *pushnodeerror(lua_State *L, bonsai_agent *a,
                                 const Blueprint *bp, uint32_t i,
                                 const char *msg) {
  const char *name = bonsai_tree_name(a->tree);
  luaL_Buffer b;
  size_t len;
  if (i == BS_NONE || i >= bp->n)
    return lua_pushfstring(L, "tree '%s': %s", name, msg);
  len = bs_bp_path(bp, i, NULL, 0);
  bs_bp_path(bp, i, luaL_buffinitsize(L, &b, len + 1), len + 1);
  luaL_pushresultsize(&b, len);
  lua_pushfstring(L, "tree '%s' node '%s': %s", name, lua_tostring(L, -1),
                  msg);
  lua_remove(L, -2);
  return lua_tostring(L, -1);
}

/* The message of the agent's last error, naming its node. */
#define pusherror(L, a, msg) pushnodeerror(L, a, (a)->bp, (a)->errnode, msg)

/* dt at idx: a number >= 0 is checked by the core; none or nil is 0. (One
** call where luaL_optnumber makes three: this runs for every a:tick.) */
static lua_Number checkdt(lua_State *L, int idx) {
  int isnum;
  lua_Number dt = lua_tonumberx(L, idx, &isnum);
  if (!isnum && !lua_isnoneornil(L, idx))
    luaL_typeerror(L, idx, "number");
  return dt; /* 0 when not a number */
}

/* What a tick needs besides the agent: the leaf stack, dt, and where it
** stands (for recovery after an error). */
typedef struct Job {
  LTick t;
  LAgent *la;
  double dt;
  int status;
  int started; /* the tick began: a failure must be recovered */
  int ran;     /* the tick began (not skipped by a freeze) */
  int inhook;  /* the agent's tick hook is running */
  uint64_t loaded; /* id of the blueprint whose values are at t.values */
} Job;

/* After a migration: the task coroutines of kept nodes move to their new
** node numbers (the others were closed by their aborts). */
static void rekey(lua_State *L, int si, int ci, const uint32_t *map,
                  uint32_t n) {
  lb_extra(L, si, ci, 0);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return;
  }
  lua_newtable(L); /* stack: old, new */
  lua_pushnil(L);
  while (lua_next(L, -3) != 0) {
    if (lua_isinteger(L, -2)) {
      lua_Integer k = lua_tointeger(L, -2);
      if (map == NULL || k < 1 || k > (lua_Integer)n || map[k - 1] == BS_NONE) {
        lua_pop(L, 1);
        continue;
      }
      lua_pushinteger(L, (lua_Integer)map[k - 1] + 1);
    } else {
      lua_pushvalue(L, -2);
    }
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  lb_setextra(L, si, ci);
  lua_pop(L, 1);
}

/* Switches the agent to the reloaded version of its tree: aborts in the
** old version run with the old values table, then the new one is in. */
static int migrate(lua_State *L, Job *j) {
  bonsai_agent *a = agentof(j->la);
  const Blueprint *old = a->bp; /* kept alive by the tree's plan */
  int r;
  a->host = &j->t;
  a->busy = a->protect = 1;
  r = bs_agent_migrate(a);
  a->busy = a->protect = 0;
  a->host = NULL;
  rekey(L, j->t.state, j->t.ctx, bs_reload_map(a, old), old->n);
  lua_getiuservalue(L, j->t.state, UV_TREE);
  lua_getiuservalue(L, -1, 1);
  lua_remove(L, -2);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, j->t.state, UV_VALUES);
  lua_replace(L, j->t.values);
  j->loaded = a->bp->id;
  if (r != BONSAI_OK && a->current < old->n &&
      bs_reload_map(a, old) != NULL) { /* an abort callback failed */
    pushnodeerror(L, a, old, a->current, bonsai_agent_errmsg(a));
    lua_error(L); /* the agent runs the new version already */
  }
  a->errnode = BS_NONE; /* out of memory: no node to name */
  return r;
}

/* Calls the interrupts; true when one of them fired. */
static int interrupted(lua_State *L, LTick *t) {
  int top = lua_gettop(L), fired = 0;
  lua_Integer k;
  lb_extra(L, t->state, t->ctx, 0);
  if (lua_istable(L, -1) &&
      lua_getfield(L, -1, "interrupts") == LUA_TTABLE) {
    lb_tick_bb(t);
    for (k = 1; !fired && lua_rawgeti(L, -1, k) != LUA_TNIL; k++) {
      lua_pushvalue(L, t->agent);
      lua_pushvalue(L, t->bb);
      lua_call(L, 2, 1);
      fired = lua_toboolean(L, -1);
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  return fired;
}

/* One tick of the agent table at ai, state si, with its blackboard slot
** bbslot on top of the stack; may raise. */
static int tickone(lua_State *L, Job *j, int ai, int si) {
  bonsai_agent *a = agentof(j->la);
  int s;
  j->ran = 0;
  if (bs_unlikely(j->la->frozen)) { /* at a breakpoint */
    if (j->la->frozen == 1)
      return a->last;
    j->la->frozen = 1; /* a step: this tick, then frozen again */
  }
  setagent(L, &j->t, ai, si, lua_gettop(L), &j->loaded, a->bp);
  if (bs_agent_stale(a) && !a->busy && migrate(L, j) != BONSAI_OK)
    return BONSAI_ELEAF;
  if ((s = bs_agent_start(a, j->dt)) != BONSAI_OK)
    return s;
  j->started = j->ran = 1;
  a->host = &j->t;
  a->current = BS_NONE;
  if (j->la->ninterrupts > 0 && interrupted(L, &j->t)) {
    if (a->trace != NULL)
      bs_trace_mark(a, BONSAI_TRACE_INTERRUPT, BS_NONE, NULL);
    s = bs_agent_abort(a) == BONSAI_OK ? BONSAI_ABORTED : BONSAI_ELEAF;
  } else
    s = bs_vm_tick(a);
  a->host = NULL;
  bs_agent_finish(a, s);
  j->started = 0;
  return s;
}

/* After a Lua error escaped a tick (message at the top): clean the agent
** up and replace the message by one that names the tree and node. */
static void recover(lua_State *L, Job *j, int ai, int si, int ci) {
  bonsai_agent *a = agentof(j->la);
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : "(error object is not "
                                                     "a string)";
  int top = lua_gettop(L);
  if (!j->started)
    return;
  j->started = 0;
  pushcontext(L, &j->t, ai, si, ci);
  a->host = &j->t;
  bs_vm_recover(a, msg);
  a->host = NULL;
  bs_agent_finish(a, BONSAI_ELEAF);
  lua_settop(L, top);
  pusherror(L, a, bonsai_agent_errmsg(a));
  lua_remove(L, -2);
}

/* Calls the tick hook of the agent table at ai (state si, context ci) as
** hook(agent, status, err): status s, or nil and the error message at
** index msg when msg is not 0. The hook may raise. */
static void runhook(lua_State *L, Job *j, int ai, int si, int ci, int s,
                    int msg) {
  int top = lua_gettop(L);
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  if (msg != 0)
    msg = lua_absindex(L, msg);
  if (ci > LUA_REGISTRYINDEX)
    ci = lua_absindex(L, ci);
  lb_extra(L, si, ci, 0);
  if (lua_istable(L, -1) && lua_getfield(L, -1, "hook") == LUA_TFUNCTION) {
    lua_pushvalue(L, ai);
    if (msg != 0) {
      lua_pushnil(L);
      lua_pushvalue(L, msg);
    } else {
      lb_pushstatus(L, s);
      lua_pushnil(L);
    }
    j->inhook = 1;
    lua_call(L, 3, 0);
    j->inhook = 0;
  }
  lua_settop(L, top);
}

/* args: job, agent, state, context */
static int ptick(lua_State *L) {
  Job *j = (Job *)lua_touserdata(L, 1);
  j->loaded = 0;
  pushshared(L, &j->t, 4);
  lb_tick_room(L);
  lua_pushnil(L); /* blackboard slot */
  j->status = tickone(L, j, 2, 3);
  return 0;
}

/* After a:tick's protected call: the hook of a hooked agent that ticked,
** with the error message on top when s < 0. */
#define hookafter(L, j, s)                                                     \
  do {                                                                         \
    if (bs_unlikely((j)->la->hooked) && (j)->ran && !(j)->inhook)             \
      runhook(L, j, 1, 3, CONTEXT, s, (s) < 0 ? -1 : 0);                     \
  } while (0)

/* a:tick([dt]) */
static int agent_tick(lua_State *L) {
  LAgent *la;
  Job j;
  lua_settop(L, 2);
  la = checkagent(L, 1); /* state at 3 */
  j.dt = checkdt(L, 2);
  j.la = la;
  j.started = j.ran = j.inhook = 0;
  if (agentof(la)->busy)
    return luaL_error(L, "agent is already ticking");
  lua_pushcfunction(L, ptick);
  lua_pushlightuserdata(L, &j);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, CONTEXT);
  if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
    recover(L, &j, 1, 3, CONTEXT);
    hookafter(L, &j, -1);
    return lua_error(L);
  }
  if (j.status < 0) {
    pusherror(L, agentof(la), bonsai_agent_errmsg(agentof(la)));
    hookafter(L, &j, -1);
    return lua_error(L);
  }
  hookafter(L, &j, j.status);
  lua_pushvalue(L, STATUSNAME(j.status));
  return 1;
}

typedef struct Batch {
  Job j;
  lua_Integer next, n, cur;
} Batch;

/* Appends { agent = list[cur], error = msg } to the errors list at eidx,
** made at the first error (the slot holds nil until then); msg is at the
** top (popped). */
static void adderror(lua_State *L, int list, int eidx, lua_Integer cur) {
  if (lua_isnil(L, eidx)) {
    lua_newtable(L);
    lua_replace(L, eidx);
  }
  lua_createtable(L, 0, 2);
  lua_insert(L, -2);
  lua_setfield(L, -2, "error");
  lua_rawgeti(L, list, cur);
  lua_setfield(L, -2, "agent");
  lua_rawseti(L, eidx, (lua_Integer)lua_rawlen(L, eidx) + 1);
}

/* Ticks list[next..n] (args: batch, list, context). Returns nothing when
** done, or the message of the first agent that failed or is no agent
** (b->cur), for bt.tick_all to record before it goes on; a Lua error
** leaves b->cur at the agent that raised it. */
static int pbatch(lua_State *L) {
  Batch *b = (Batch *)lua_touserdata(L, 1);
  int base;
  b->j.loaded = 0;
  pushshared(L, &b->j.t, 3); /* 4: named, 5: values */
  lb_tick_room(L);
  base = lua_gettop(L);
  while (b->next <= b->n) {
    LAgent *la;
    int s;
    b->cur = b->next++;
    b->j.started = 0;
    if (lua_rawgeti(L, 2, b->cur) != LUA_TTABLE || /* base+1: agent */
        (la = stateof(L, base + 1, b->j.t.lb)) == NULL) { /* base+2: state */
      lua_pushfstring(L, "element %d is not an agent", (int)b->cur);
      return 1;
    }
    b->j.la = la;
    lua_pushnil(L); /* base+3: blackboard slot */
    s = tickone(L, &b->j, base + 1, base + 2);
    if (s < 0) {
      pusherror(L, agentof(la), bonsai_agent_errmsg(agentof(la)));
      if (bs_unlikely(la->hooked) && b->j.ran)
        runhook(L, &b->j, base + 1, base + 2, 3, s, -1);
      return 1;
    }
    if (bs_unlikely(la->hooked) && b->j.ran)
      runhook(L, &b->j, base + 1, base + 2, 3, s, 0);
    lua_settop(L, base);
  }
  return 0;
}

/* bt.tick_all(list, dt): returns nil, or a list of { agent =, error = };
** nothing is allocated unless an agent fails. */
int lb_tick_all(lua_State *L) {
  Batch b;
  luaL_checktype(L, 1, LUA_TTABLE);
  b.j.dt = checkdt(L, 2);
  b.next = 1;
  b.j.inhook = b.j.ran = 0;
  b.n = (lua_Integer)lua_rawlen(L, 1);
  lua_settop(L, 1);
  lua_pushnil(L); /* errors: 2 */
  while (b.next <= b.n) {
    lua_pushcfunction(L, pbatch);
    lua_pushlightuserdata(L, &b);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, CONTEXT);
    if (lua_pcall(L, 3, LUA_MULTRET, 0) != LUA_OK) {
      lua_rawgeti(L, 1, b.cur);
      lua_rawgeti(L, -1, 1); /* stack: list, errors, msg, agent, state */
      lua_rotate(L, -3, 2);  /* list, errors, agent, state, msg */
      recover(L, &b.j, -3, -2, CONTEXT);
      if (b.j.inhook) /* the hook raised: it is not called again */
        b.j.inhook = 0;
      else if (b.j.la->hooked && b.j.ran)
        runhook(L, &b.j, 3, 4, CONTEXT, -1, 5);
      adderror(L, 1, 2, b.cur);
    } else if (lua_gettop(L) > 2) {
      adderror(L, 1, 2, b.cur);
    }
    lua_settop(L, 2);
  }
  return 1;
}

/* Runs an abort-like operation on an idle agent with its leaf stack set
** up; raises the first callback error. */
static int withcontext(lua_State *L, int (*op)(bonsai_agent *)) {
  LAgent *la;
  bonsai_agent *a;
  int r;
  lua_settop(L, 1);
  la = checkagent(L, 1); /* state at 2 */
  a = agentof(la);
  if (a->busy)
    return luaL_error(L, "agent is already ticking");
  if (bs_agent_stale(a)) { /* aborts belong to the version that runs */
    Job j;
    j.la = la;
    pushcontext(L, &j.t, 1, 2, CONTEXT);
    j.loaded = a->bp->id;
    (void)migrate(L, &j);
    lua_settop(L, 2);
  }
  {
    LTick t;
    pushcontext(L, &t, 1, 2, CONTEXT);
    a->host = &t;
    r = op(a);
    a->host = NULL;
  }
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
  lb_pushstatus(L, bonsai_agent_status(agentof(checkagent(L, 1))));
  return 1;
}

/* a:running(): names of the running nodes, outermost first */
static int agent_running(lua_State *L) {
  bonsai_agent *a = agentof(checkagent(L, 1));
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

/* a:add_interrupt(fn) */
static int agent_add_interrupt(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  la = checkagent(L, 1); /* state at 3 */
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
  la = checkagent(L, 1); /* state at 3 */
  lb_extra(L, 3, CONTEXT, 1);
  if (lua_getfield(L, -1, "interrupts") != LUA_TTABLE)
    return lua_pushboolean(L, 0), 1;
  if (!lb_list_remove(L, 2))
    return lua_pushboolean(L, 0), 1;
  la->ninterrupts--;
  return lua_pushboolean(L, 1), 1;
}

static int agent_tostring(lua_State *L) {
  LAgent *la = toagent(L, 1);
  if (la == NULL)
    return lua_pushliteral(L, "bonsai.agent (broken)"), 1;
  lb_pushstatus(L, agentof(la)->last);
  lua_pushfstring(L, "bonsai.agent of '%s' (%s)",
                  bonsai_tree_name(agentof(la)->tree), lua_tostring(L, -1));
  return 1;
}

static int state_gc(lua_State *L) {
  LAgent *la = (LAgent *)lua_touserdata(L, 1);
  if (la->magic != NULL)
    bs_agent_done(agentof(la));
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
  if (!lua_isnil(L, 2))
    luaL_checktype(L, 2, LUA_TTABLE);
  /* 3: the agent table: a.owner and a.bb are plain fields; a.tree and
  ** a.time come from __index */
  lua_createtable(L, 1, 2);
  /* 4: state userdata holding the C agent, created empty, then filled */
  la = (LAgent *)lua_newuserdatauv(L, sizeof *la + bs_agent_size(lt->t),
                                   UV_N);
  la->magic = NULL;
  la->ninterrupts = 0;
  la->frozen = la->hooked = 0;
  luaL_setmetatable(L, BS_STATE_T);
  /* 5: blackboard userdata */
  if (lua_istable(L, 2) && lua_getfield(L, 2, "blackboard") != LUA_TNIL) {
    if (lua_istable(L, 5)) { /* initial values, and maybe a parent */
      int parent = lua_getfield(L, 5, "parent") != LUA_TNIL ? 6 : 0;
      lb_newbb(L, parent);
      lb_bb_fill(L, -1, 5);
      lua_replace(L, 5);
      lua_settop(L, 5);
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
  if (bs_agent_init(agentof(la), lt->t, bb->bb, owner) != BONSAI_OK)
    return luaL_error(L, "out of memory");
  la->magic = lb_context(L);
  lua_getiuservalue(L, 1, 1);
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
  return 1;
}

static const luaL_Reg agent_methods[] = {
    {"tick", agent_tick},
    {"abort", agent_abort},
    {"reset", agent_reset},
    {"status", agent_status},
    {"running", agent_running},
    {"add_interrupt", agent_add_interrupt},
    {"remove_interrupt", agent_remove_interrupt},
    {"trace", lb_agent_trace},
    {"events", lb_agent_events},
    {"freeze", lb_agent_freeze},
    {"frozen", lb_agent_frozen},
    {"on_tick", lb_agent_on_tick},
    {"node_statuses", lb_agent_node_statuses},
    {NULL, NULL}};

/* a.tree, a.time and the methods: what an agent table does not hold
** (upvalues: the context, the methods, "tree", "time"). Reading a.time
** costs a call, but no tick has to write it. */
static int agent_index(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL)
    return 1;
  if (lua_rawequal(L, 2, lua_upvalueindex(4)) &&
      (la = toagent(L, 1)) != NULL)
    lua_pushnumber(L, agentof(la)->time);
  else if (lua_rawequal(L, 2, lua_upvalueindex(3)) && toagent(L, 1) != NULL)
    lua_getiuservalue(L, -1, UV_TREE);
  else
    lua_pushnil(L);
  return 1;
}

/* stack: context. Makes the state and agent metatables; the agent
** methods get the context and the status names as upvalues. */
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
  lua_pushliteral(L, "idle");
  lua_pushliteral(L, "running");
  lua_pushliteral(L, "success");
  lua_pushliteral(L, "failure");
  lua_pushliteral(L, "aborted");
  luaL_setfuncs(L, agent_methods, 6);
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
