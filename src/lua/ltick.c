/*
** ltick.c: the tick engine. a:tick and bt.tick_all run an agent's tick
** inside one protected call, with the leaf stack Lua leaves read (LTick);
** a Lua error from a leaf is caught there, the agent's running nodes are
** aborted, and the error is raised again naming the tree and the node.
** Also what runs an agent's callbacks outside a tick (a:abort, a:reset),
** the switch of a stale agent to its tree's current version, tick hooks
** and interrupts, bt.tick_all's error streaks, budgets and sleepers, the
** entry points of the LuaJIT path's stepped ticks (lstep.c), and bt.sleep.
** The agent object itself (bt.agent, its other methods) is lagent.c.
*/
#include "bonsai.h"
#include "lbonsai.h"

/* Upvalue 1 of the methods and module functions: the context (the
** functions run under lua_pcall get it as an argument). */
#define CONTEXT lua_upvalueindex(1)
/* The methods of this file also get the status names as upvalues 2-7. */
#define STATUSNAME(s) lua_upvalueindex(2 + (s))

/* Pushes the per-call part of the leaf stack: the named-leaf table; the
** caller pushes the values table's slot after it (ci: the context, lb its
** record). */
static void pushshared(lua_State *L, LTick *t, int ci, LBonsai *lb) {
  t->L = L;
  t->lb = lb;
  t->ctx = ci;
  lua_getiuservalue(L, ci, LB_NAMED);
  t->named = lua_gettop(L);
  t->values = t->named + 1;
}

/* Points t at the agent table ai and its state si, with a slot for the
** blackboard, and loads the values table of the version the agent runs
** unless it is already there (*loaded: the id of the blueprint whose
** values are; 0 for none). */
static void setagent(lua_State *L, LTick *t, int ai, int si, int bbslot,
                     uint64_t *loaded, bonsai_agent *a) {
  uint64_t version = bonsai_agent_version_id(a);
  t->agent = ai;
  t->state = si;
  t->a = a;
  t->bb = bbslot;
  t->bbready = 0;
  t->pending = 0;
  if (*loaded != version) {
    lua_getiuservalue(L, si, UV_VALUES);
    lua_replace(L, t->values);
    *loaded = version;
  }
}

void lb_pushcontext(lua_State *L, LTick *t, int ai, int si, int ci) {
  uint64_t none = 0;
  LAgent *la = (LAgent *)lua_touserdata(L, si);
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  if (ci > LUA_REGISTRYINDEX)
    ci = lua_absindex(L, ci);
  pushshared(L, t, ci, (LBonsai *)lua_touserdata(L, ci));
  lua_pushnil(L); /* values */
  lua_pushnil(L); /* blackboard slot */
  setagent(L, t, ai, si, lua_gettop(L), &none, agentof(la));
}

/* Pushes "tree 't': msg". */
static const char *pushtreeerror(lua_State *L, bonsai_agent *a,
                                 const char *msg) {
  return lua_pushfstring(L, "tree '%s': %s",
                         bonsai_tree_name(bonsai_agent_tree(a)), msg);
}

const char *lb_pusherror(lua_State *L, bonsai_agent *a) {
  const char *msg = bonsai_agent_errmsg(a);
  luaL_Buffer b;
  size_t len;
  if (bonsai_agent_errnode(a) == BONSAI_NONE)
    return pushtreeerror(L, a, msg);
  len = bonsai_agent_errpath(a, NULL, 0);
  bonsai_agent_errpath(a, luaL_buffinitsize(L, &b, len + 1), len + 1);
  luaL_pushresultsize(&b, len);
  lua_pushfstring(L, "tree '%s' node '%s': %s",
                  bonsai_tree_name(bonsai_agent_tree(a)), lua_tostring(L, -1),
                  msg);
  lua_remove(L, -2);
  return lua_tostring(L, -1);
}

/* dt at idx (none or nil is 0), refused as the core refuses it
** (bonsai_dt_check): an argument error of the call, raised before any agent
** ticks. (One call where luaL_optnumber makes three: this runs for every
** a:tick.) */
static lua_Number checkdt(lua_State *L, int idx) {
  int isnum;
  lua_Number dt = lua_tonumberx(L, idx, &isnum);
  if (lb_unlikely(!isnum || !(dt >= 0)) &&
      (isnum || !lua_isnoneornil(L, idx)))
    luaL_argerror(L, idx, lua_pushfstring(L, "%s, got %s",
                                          bonsai_dt_check(-1),
                                          isnum || lua_type(L, idx) ==
                                                       LUA_TSTRING
                                              ? lua_tostring(L, idx)
                                              : luaL_typename(L, idx)));
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
  int ran;     /* the tick began (not skipped by a freeze or a doze) */
  int inhook;  /* the agent's tick hook is running */
  int doze;    /* asleep: its interrupts are asked, its tree is not ticked */
  LTick *outer; /* the tick that was under way before this one */
  uint64_t loaded; /* id of the blueprint whose values are at t.values */
} Job;

/* After a migration: the task coroutines of kept nodes move to their new
** node numbers (the others were closed by their aborts). */
static void rekey(lua_State *L, int si, int ci, const unsigned *map,
                  unsigned n) {
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
      if (k < 1 || k > (lua_Integer)n || map[k - 1] == BONSAI_NONE) {
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

/*
** Switches a stale agent to its tree's current version, a step at a time
** (an abort callback may reload the tree again): each step's aborts run
** with the callbacks of the version being left, then the values table of
** the version reached, fetched before the step, becomes the agent's, and
** its task coroutines move to their nodes' new numbers (the map of the
** step, in Lua's memory while Lua may raise; made only for an agent that
** has had tasks). Returns BONSAI_OK, or the first failure (recorded) once the
** agent runs the current version (or could not leave its own: out of
** memory).
*/
static int migrate(lua_State *L, Job *j) {
  bonsai_agent *a = agentof(j->la);
  bonsai_host h = {NULL, 0, NULL};
  int r = BONSAI_OK, top = lua_gettop(L);
  h.ud = &j->t;
  bonsai_agent_clearerr(a);
  while (bonsai_agent_stale(a)) {
    uint64_t old = bonsai_agent_version_id(a);
    unsigned oldn = bonsai_agent_nodes(a), *map = NULL;
    int s;
    lua_getiuservalue(L, j->t.state, UV_TREE);
    lb_tree_values(L, -1); /* the values of the version reached */
    lua_remove(L, -2);
    if (j->la->tasks)
      map = (unsigned *)lua_newuserdatauv(L, oldn * sizeof *map + 1, 0);
    s = bonsai_agent_switch(a, &h, map, oldn);
    if (r == BONSAI_OK)
      r = s;
    if (bonsai_agent_version_id(a) == old) { /* no memory for the new state */
      lua_settop(L, top);
      break;
    }
    lua_pushvalue(L, top + 1);
    lua_setiuservalue(L, j->t.state, UV_VALUES);
    lua_pushvalue(L, top + 1);
    lua_replace(L, j->t.values);
    j->loaded = bonsai_agent_version_id(a);
    if (map != NULL)
      rekey(L, j->t.state, j->t.ctx, map, oldn);
    lua_settop(L, top);
  }
  return r;
}

/*
** Calls the interrupts until one returns true (then 1). The list is taken
** before the calls: an interrupt added meanwhile waits for the next tick,
** and one removed before its turn is not called.
*/
static int interrupted(lua_State *L, LTick *t) {
  int top = lua_gettop(L), fired = 0, list, first;
  lua_Integer k, n;
  lb_extra(L, t->state, t->ctx, 0);
  if (!lua_istable(L, -1) ||
      lua_getfield(L, -1, "interrupts") != LUA_TTABLE) {
    lua_settop(L, top);
    return 0;
  }
  list = lua_gettop(L);
  n = (lua_Integer)lua_rawlen(L, list);
  luaL_checkstack(L, (int)n + 8, "too many interrupts");
  first = lua_gettop(L) + 1;
  for (k = 1; k <= n; k++)
    lua_rawgeti(L, list, k);
  lb_tick_bb(t);
  for (k = 0; !fired && k < n; k++) {
    lua_Integer m = (lua_Integer)lua_rawlen(L, list), x;
    for (x = 1; x <= m; x++) { /* still there? */
      int same = (lua_rawgeti(L, list, x), lua_rawequal(L, -1, first + k));
      lua_pop(L, 1);
      if (same)
        break;
    }
    if (x > m)
      continue;
    lua_pushvalue(L, first + (int)k);
    lua_pushvalue(L, t->agent);
    lua_pushvalue(L, t->bb);
    lua_call(L, 2, 1);
    fired = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  lua_settop(L, top);
  return fired;
}

/* The host's interrupt hook: the agent's Lua interrupts. */
static int hostinterrupt(bonsai_agent *a, void *ud) {
  (void)a;
  return interrupted(((LTick *)ud)->L, (LTick *)ud);
}

/* One tick of the agent table at ai, state si, with its blackboard slot
** at bbslot, on top of the stack; may raise. */
static int tickone(lua_State *L, Job *j, int ai, int si, int bbslot) {
  bonsai_agent *a = agentof(j->la);
  bonsai_host h;
  int s;
  j->ran = 0;
  if (lb_unlikely(j->la->frozen)) { /* at a breakpoint */
    if (j->la->frozen == 1)
      return bonsai_agent_status(a);
    j->la->frozen = 1; /* a step: this tick, then frozen again */
  }
  setagent(L, &j->t, ai, si, bbslot, &j->loaded, a);
  h.ud = &j->t;
  h.flags = BONSAI_HOST_RAISES | BONSAI_HOST_SWITCHES;
  h.interrupt = j->la->ninterrupts > 0 ? hostinterrupt : NULL;
  for (;;) {
    j->started = j->ran = 1; /* as far as a raise out of it can tell */
    j->outer = j->t.lb->ticking;
    j->t.lb->ticking = &j->t;
    if (j->doze) { /* asleep: only its interrupts are asked */
      s = bonsai_agent_doze(a, j->dt, &h);
      j->ran = s != 0;
      s = s == 1 ? BONSAI_ABORTED : s == 0 ? bonsai_agent_status(a) : s;
    } else {
      s = bonsai_agent_run(a, j->dt, &h);
    }
    j->t.lb->ticking = j->outer;
    j->started = 0;
    if (s != BONSAI_ESTALE)
      break;
    if (migrate(L, j) != BONSAI_OK) { /* it switches first */
      lb_pusherror(L, a);
      lua_error(L); /* no tick: the switch failed */
    }
  }
  if (s == BONSAI_EBUSY || s == BONSAI_EARG) /* refused: it did not start */
    j->ran = 0;
  return s;
}

/* After a Lua error escaped a tick of la (message at the top): clean the
** agent up and replace the message by one that names the tree and node. t:
** room for its leaf stack. */
static void recovered(lua_State *L, LAgent *la, LTick *t, int ai, int si,
                      int ci) {
  bonsai_agent *a = agentof(la);
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : "(error object is not "
                                                     "a string)";
  bonsai_host h = {NULL, 0, NULL};
  int top = lua_gettop(L);
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  lua_rawgeti(L, ai, 1);
  if (lua_touserdata(L, -1) == la && lua_touserdata(L, si) == la) {
    /* else its table was tampered with: its Lua leaves cannot run */
    lb_pushcontext(L, t, ai, si, ci);
    h.ud = t;
  }
  bonsai_agent_recover(a, msg, &h);
  lua_settop(L, top);
  lb_pusherror(L, a);
  lua_remove(L, -2);
}

/* The same for a tick begun by tickone (j). */
static void recover(lua_State *L, Job *j, int ai, int si, int ci) {
  if (!j->started)
    return;
  j->started = 0;
  j->t.lb->ticking = j->outer;
  recovered(L, j->la, &j->t, ai, si, ci);
}

void lb_step_recover(lua_State *L, int ai, int si, int ci) {
  LAgent *la = (LAgent *)lua_touserdata(L, si);
  LTick t;
  lb_step_untick(la->magic != NULL ? (LBonsai *)la->magic : lb_context(L),
                 agentof(la));
  recovered(L, la, &t, ai, si, ci);
}

int lb_stepable(const LBonsai *lb, const LAgent *la) {
  return la->magic == lb && !la->frozen && !la->hooked && !la->failing &&
         la->ninterrupts == 0 && lb->fdepth < LB_FDEPTH &&
         bonsai_agent_stepable(agentof(la), NULL);
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
  pushshared(L, &j->t, 4, (LBonsai *)j->la->magic); /* 5: named */
  lua_getiuservalue(L, 3, UV_VALUES); /* 6: the values of its version */
  j->loaded = bonsai_agent_version_id(agentof(j->la));
  lb_tick_room(L);
  lua_pushnil(L); /* 7: blackboard slot */
  j->status = tickone(L, j, 2, 3, 7);
  return 0;
}

/* After a:tick's protected call: the hook of a hooked agent that ticked,
** with the error message on top when s < 0. */
#define hookafter(L, j, s)                                                     \
  do {                                                                         \
    if (lb_unlikely((j)->la->hooked) && (j)->ran && !(j)->inhook)             \
      runhook(L, j, 1, 3, CONTEXT, s, (s) < 0 ? -1 : 0);                     \
  } while (0)

/* After a tick call: the event payloads delivered to its ticks go. */
#define sweep(L, ci)                                                           \
  do {                                                                         \
    if (lb_unlikely(lb_context(L)->pay.ndead != 0))                            \
      lb_payload_sweep(L, ci);                                                 \
  } while (0)

/* a:tick([dt]) */
static int agent_tick(lua_State *L) {
  LAgent *la;
  Job j;
  lua_settop(L, 2);
  la = lb_checkagent(L, 1); /* state at 3 */
  j.dt = checkdt(L, 2);
  j.la = la;
  j.started = j.ran = j.inhook = j.doze = 0;
  if (bonsai_agent_busy(agentof(la)))
    return luaL_error(L, "agent is already ticking");
  lua_pushcfunction(L, ptick);
  lua_pushlightuserdata(L, &j);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 3);
  lua_pushvalue(L, CONTEXT);
  if (lua_pcall(L, 4, 0, 0) != LUA_OK) {
    recover(L, &j, 1, 3, CONTEXT);
    hookafter(L, &j, -1);
    sweep(L, CONTEXT);
    return lua_error(L);
  }
  if (j.status < 0) {
    lb_pusherror(L, agentof(la));
    hookafter(L, &j, -1);
    sweep(L, CONTEXT);
    return lua_error(L);
  }
  hookafter(L, &j, j.status);
  sweep(L, CONTEXT);
  lua_pushvalue(L, STATUSNAME(j.status));
  return 1;
}

typedef struct Batch {
  Job j;
  double dt;        /* of this call */
  lua_Integer next, n, cur; /* visits: next to make, how many; the entry */
  lua_Integer slot; /* the depth of this call in the context's list */
  /* with a budget: at most 'budget' awake agents ticked, from entry
  ** 'start' on, around the list (whose clock, the sum of the dt of its
  ** calls, is its budget state's 'total') */
  lua_Integer budget, start, ticked;
  LSleepers *sc;     /* the list's sleep cache (not with a budget), or NULL */
  lua_Integer slept; /* sleepers skipped without it */
  /* on the LuaJIT path the Lua loop (lstep.c) ticks the agents it can
  ** step and hands the others back: pbatch ticks them from entry 'from'
  ** until the next one it can step ('back': then it hands that back) */
  int ffi, back;
  lua_Integer from;
} Batch;

/* The registry's key of the last error of each agent that failed in
** bt.tick_all (a weak-keyed table: agent -> { message, count }). */
static const char streakkey = 'e';

/* How many times in a row the agent at ai has now failed with the message
** at the top in bt.tick_all (1: a new error; the message holds the node's
** path, so this counts per agent and node), kept for its next error. */
static lua_Integer streak(lua_State *L, int ai) {
  lua_Integer n = 1;
  int msg = lua_gettop(L);
  if (!lua_istable(L, ai)) /* an entry that is no agent */
    return 1;
  lua_pushlightuserdata(L, (void *)&streakkey);
  if (lua_rawget(L, LUA_REGISTRYINDEX) != LUA_TTABLE) {
    lua_pop(L, 1);
    lb_newweak(L);
    lua_pushlightuserdata(L, (void *)&streakkey);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  lua_pushvalue(L, ai);
  if (lua_rawget(L, -2) == LUA_TTABLE) {
    lua_rawgeti(L, -1, 1);
    if (lua_rawequal(L, -1, msg)) {
      lua_rawgeti(L, -2, 2);
      n = lua_tointeger(L, -1) + 1;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else {
    lua_pop(L, 1);
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, ai);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_pushvalue(L, msg);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, n);
  lua_rawseti(L, -2, 2);
  lua_settop(L, msg);
  return n;
}

/* Forgets the last error of the agent at ai: it ticked without one. */
static void endstreak(lua_State *L, int ai, LAgent *la) {
  la->failing = 0;
  lua_pushlightuserdata(L, (void *)&streakkey);
  if (lua_rawget(L, LUA_REGISTRYINDEX) == LUA_TTABLE) {
    lua_pushvalue(L, ai);
    lua_pushnil(L);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}

/* Appends { agent = the agent at ai, error = msg, count = n } to the
** errors list at eidx, made at the first error (the slot holds nil until
** then); msg is at the top (popped); n: how many times in a row the agent
** has failed so (streak). */
static void adderror(lua_State *L, int eidx, int ai) {
  lua_Integer n;
  LAgent *la;
  ai = lua_absindex(L, ai);
  if (lua_isnil(L, eidx)) {
    lua_newtable(L);
    lua_replace(L, eidx);
  }
  n = streak(L, ai);
  if ((la = lb_toagent(L, ai)) != NULL) /* (an entry may be no agent) */
    la->failing = 1;
  lua_pop(L, 1);
  lua_createtable(L, 0, 3);
  lua_insert(L, -2);
  lua_setfield(L, -2, "error");
  lua_pushvalue(L, ai);
  lua_setfield(L, -2, "agent");
  lua_pushinteger(L, n);
  lua_setfield(L, -2, "count");
  lua_rawseti(L, eidx, (lua_Integer)lua_rawlen(L, eidx) + 1);
}

/* With a budget: the dt the agent at ai has missed on this list (the
** list's clock, in its budget state at 'state', less the clock at its last
** tick here, kept in the table at 'last'), which it is now given. The clock
** is read each time: a leaf may tick the same list meanwhile. */
static double owed(lua_State *L, int ai, int state, int last) {
  double since, now;
  lua_getfield(L, state, "total");
  now = lua_tonumber(L, -1);
  lua_pop(L, 1);
  lua_pushvalue(L, ai);
  since = lua_rawget(L, last) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
  lua_pop(L, 1);
  lua_pushvalue(L, ai);
  lua_pushnumber(L, now);
  lua_rawset(L, last);
  return now > since ? now - since : 0;
}

/* Keeps the sleep cache up with entry b->cur: la found asleep there, or
** (NULL) not. */
#define sleepnote(L, b, base, la)                                              \
  ((b)->sc != NULL                                                             \
       ? lb_sleepers_note(L, (b)->sc, 5, (b)->cur, (base) + 1, (base) + 2, la) \
       : (void)0)

/*
** Ticks the entries of the list (args: batch, list, context, budget state,
** sleep cache), reading each when it is reached (a leaf may edit the
** list). The agent being ticked is also kept in the closure's upvalue, so
** that after a Lua error the error and the recovery belong to it, whatever
** the list holds by then (one store: this runs for every agent). A
** sleeping agent is skipped (its clock still moves). Returns nothing when
** done, or the message of the first agent that failed or is no agent
** (entry b->cur), for bt.tick_all to record before it goes on.
*/
static int pbatch(lua_State *L) {
  Batch *b = (Batch *)lua_touserdata(L, 1);
  int base;
  b->j.loaded = 0;
  if (b->budget > 0) /* 6: the clocks of the list's agents */
    lua_getfield(L, 4, "last");
  else
    lua_pushnil(L);
  pushshared(L, &b->j.t, 3, (LBonsai *)lua_touserdata(L, 3)); /* 7: named */
  lua_pushnil(L); /* 8: values */
  lb_tick_room(L);
  base = lua_gettop(L);
  while (b->next <= b->n && (b->budget == 0 || b->ticked < b->budget)) {
    LAgent *la;
    bonsai_agent *a;
    int s;
    if (b->sc != NULL) { /* first the sleepers it knows, in a row */
      b->next = lb_sleepers_skip(L, b->sc, 2, b->next, b->n, b->dt);
      if (b->next > b->n)
        break;
    }
    b->cur = b->budget == 0 ? b->next : (b->start + b->next - 2) % b->n + 1;
    b->next++;
    b->j.started = 0;
    b->j.la = NULL; /* no agent's tick until its slot is filled */
    if (lua_rawgeti(L, 2, b->cur) != LUA_TTABLE || /* base+1: agent */
        (la = lb_stateof(L, base + 1, b->j.t.lb)) == NULL) {
      /* base+2: state */
      sleepnote(L, b, base, NULL);
      lua_pushvalue(L, base + 1);
      lua_pushfstring(L, "element %d is not an agent", (int)b->cur);
      return 2;
    }
    a = agentof(la);
    if (b->ffi && b->cur != b->from && lb_stepable(b->j.t.lb, la)) {
      b->next = b->cur; /* the Lua loop takes it on */
      b->back = 1;
      return 0;
    }
    b->j.dt = b->budget == 0 ? b->dt : owed(L, base + 1, 4, 6);
    b->j.doze = 0;
    if (la->ninterrupts == 0) {
      if (bonsai_agent_asleep(a, b->j.dt)) { /* skipped, its clock moved */
        sleepnote(L, b, base, la);
        b->slept++;
        lua_settop(L, base);
        continue;
      }
    } else if (bonsai_agent_sleeping(a) > b->j.dt) { /* its interrupts are
                                                     ** still asked */
      b->j.doze = bonsai_agent_asleep(a, 0);
    }
    if (b->sc != NULL) /* awake: kept if the cache names it */
      lb_sleepers_awake(L, b->sc, 5, b->cur, base + 1, base + 2, la);
    b->ticked += !b->j.doze;
    lua_copy(L, base + 1, lua_upvalueindex(1));
    b->j.la = la;
    lua_pushnil(L); /* base+3: blackboard slot */
    s = tickone(L, &b->j, base + 1, base + 2, base + 3);
    if (s < 0) {
      if (s == BONSAI_EBUSY) /* its own error is not touched */
        pushtreeerror(L, agentof(la), "agent is already ticking");
      else
        lb_pusherror(L, agentof(la));
      if (lb_unlikely(la->hooked) && b->j.ran)
        runhook(L, &b->j, base + 1, base + 2, 3, s, -1);
      lua_pushvalue(L, base + 1); /* the agent that failed, whatever its
                                  ** entry holds now */
      lua_insert(L, -2);
      return 2;
    }
    if (lb_unlikely(la->hooked) && b->j.ran)
      runhook(L, &b->j, base + 1, base + 2, 3, s, 0);
    if (lb_unlikely(la->failing))
      endstreak(L, base + 1, la);
    lua_settop(L, base);
  }
  return 0;
}

/* On the LuaJIT path: pushes the Lua loop of bt.tick_all's depth 'slot'
** and its place table (made by the stepper's 'make', once) and returns 1;
** else pushes two nils and returns 0. */
static int stepper(lua_State *L, lua_Integer slot) {
  if (lua_getiuservalue(L, CONTEXT, LB_STEPPER) != LUA_TTABLE) {
    lua_pushnil(L);
    return 0;
  }
  if (lua_rawgeti(L, -1, slot) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_getfield(L, -1, "make");
    lua_pushinteger(L, slot);
    lua_call(L, 1, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, slot);
  }
  lua_remove(L, -2);
  lua_rawgeti(L, -1, 2);
  lua_rawgeti(L, -2, 1);
  lua_replace(L, -3);
  return 1;
}

/* The Lua loop's place table (at 8) lets its agent go (it would keep the
** agent, and what it holds, until the next call at this depth). */
static void letgo(lua_State *L) {
  lua_pushboolean(L, 0);
  lua_rawseti(L, 8, 1);
  lua_pushboolean(L, 0);
  lua_rawseti(L, 8, 3);
}

/*
** Runs the Lua loop (at 7, its place table at 8: { agent, entry, state }
** of the tick under way) from entry b->next, with the list's sleep cache
** (at 5) and its anchors: it ticks the agents it can step (and skips the
** sleepers as pbatch does), and returns nil at the end of the list, or an
** entry and why it stopped there: "classic" (pbatch ticks it) or "failed"
** (its tick failed: recorded, recovered); and the sleepers it skipped
** without the cache. A leaf's error out of a stepped tick is recorded
** here, after the agent's recovery; one out of the loop itself is
** bt.tick_all's own.
*/
static void stepped(lua_State *L, Batch *b) {
  int r;
  lua_pushvalue(L, 7);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, b->next);
  lua_pushinteger(L, b->n);
  lua_pushnumber(L, b->dt);
  lua_pushvalue(L, 8);
  lua_pushvalue(L, 5);
  if (b->sc != NULL)
    lua_getiuservalue(L, 5, 1);
  else
    lua_pushnil(L);
  r = lua_pcall(L, 7, 3, 0);
  lua_pushnil(L); /* the depth is given back */
  lua_rawseti(L, 3, b->slot);
  if (r != LUA_OK) { /* stack: ..., msg */
    LAgent *la;
    lua_rawgeti(L, 8, 1);
    lua_rawgeti(L, 8, 3);
    la = (LAgent *)lua_touserdata(L, -1);
    if (la == NULL || la->magic == NULL || !bonsai_agent_busy(agentof(la))) {
      lua_pop(L, 2); /* no tick under way: bt.tick_all's own */
      letgo(L);
      lua_error(L);
    }
    lua_rotate(L, -3, 2); /* ..., agent, state, msg */
    lb_step_recover(L, -3, -2, CONTEXT);
    adderror(L, 2, -3);
    lua_rawgeti(L, 8, 2);
    b->next = lua_tointeger(L, -1) + 1;
  } else if ((b->slept += lua_tointeger(L, -1)), lua_isnil(L, -3)) {
    b->next = b->n + 1;
  } else if (*lua_tostring(L, -2) == 'c') { /* "classic" */
    b->next = lua_tointeger(L, -3);
    b->back = 0;
  } else { /* "failed", its error recorded */
    b->next = lua_tointeger(L, -3) + 1;
    lua_rawgeti(L, 8, 1);
    lua_rawgeti(L, 8, 3);
    lb_pusherror(L, agentof((LAgent *)lua_touserdata(L, -1)));
    adderror(L, 2, -3);
  }
  lua_settop(L, 8);
  letgo(L);
}

/* The budget state of the list at 1 (its entry in the context's extras,
** made on first use), pushed: { cursor =, total =, last = weak table }. */
static void budgetstate(lua_State *L) {
  lb_extra(L, 1, CONTEXT, 1);
  if (lua_getfield(L, -1, "last") != LUA_TTABLE) {
    lua_pop(L, 1);
    lb_newweak(L);
    lua_setfield(L, -2, "last");
  } else {
    lua_pop(L, 1);
  }
}

/* bt.tick_all's arguments into b: the list at 1 (a table, no agent), dt
** at 2, the options at 3 (budget). */
static void batchargs(lua_State *L, Batch *b) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_getmetatable(L, 1)) { /* an agent is no list of agents */
    luaL_getmetatable(L, BS_AGENT_T);
    if (lua_rawequal(L, -1, -2))
      luaL_argerror(L, 1, "a list of agents expected, got an agent: "
                          "bt.tick_all({ agent }, dt), or agent:tick(dt)");
    lua_pop(L, 2);
  }
  b->dt = checkdt(L, 2);
  b->next = 1;
  b->j.started = b->j.inhook = b->j.ran = 0;
  b->j.la = NULL;
  b->n = (lua_Integer)lua_rawlen(L, 1);
  b->budget = b->ticked = 0;
  b->start = 1;
  if (!lua_isnoneornil(L, 3)) {
    luaL_checktype(L, 3, LUA_TTABLE);
    lb_checkopts(L, 3, "bt.tick_all", "budget");
    lua_getfield(L, 3, "budget");
    b->budget = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
    luaL_argcheck(L, b->budget >= 0 || lua_isnil(L, -1), 3,
                  "budget must be a whole number >= 0");
    if (b->budget < 0)
      b->budget = 0;
  }
  lua_settop(L, 1);
}

/* The stack of bt.tick_all over the list at 1, slots 2 to 8 (see there),
** and b's place in the calls under way, its budget and sleep cache. */
static void batchstack(lua_State *L, Batch *b) {
  lua_pushnil(L); /* 2: errors */
  lua_getiuservalue(L, CONTEXT, LB_TICKING); /* 3: calls under way */
  b->slot = (lua_Integer)lua_rawlen(L, 3) + 1; /* nested calls stack up */
  if (b->budget > 0) { /* 4: the list's budget state */
    budgetstate(L);
    lua_getfield(L, 4, "cursor");
    b->start = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 1;
    if (b->start < 1 || b->start > b->n)
      b->start = 1;
    lua_getfield(L, 4, "total"); /* the list's clock moves on */
    lua_pushnumber(L, lua_tonumber(L, -1) + b->dt);
    lua_setfield(L, 4, "total");
    lua_pop(L, 2);
  } else {
    lua_pushnil(L);
  }
  /* 5: the list's sleep cache; a call with a budget does not use it and
  ** empties it (it would keep agents taken out of the list) */
  b->sc = lb_sleepers(L, 1, CONTEXT, b->budget > 0 ? 0 : b->n);
  if (b->budget > 0)
    b->sc = NULL;
  b->slept = 0;
  /* 6: the batch function of this depth, made once (kept at
  ** ticking[-slot]); its upvalue holds the agent being ticked */
  if (lua_rawgeti(L, 3, -b->slot) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_pushcclosure(L, pbatch, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 3, -b->slot);
  }
  /* 7, 8: on the LuaJIT path, its Lua loop and place table */
  b->ffi = stepper(L, b->slot) && b->budget == 0;
  b->back = b->ffi; /* it begins */
}

/* Runs the batch function (at 6) from entry b->next until it returns: at
** the end of the list or of the budget, at an agent the Lua loop takes on,
** or at an agent that failed or an entry that is no agent, whose error it
** records (the agent recovered, its hook called). */
static void batch(lua_State *L, Batch *b) {
  int r;
  b->from = b->next;
  lua_pushvalue(L, 6);
  lua_pushlightuserdata(L, b);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, CONTEXT);
  lua_pushvalue(L, 4);
  lua_pushvalue(L, 5);
  r = lua_pcall(L, 5, LUA_MULTRET, 0);
  lua_pushnil(L); /* and given back before anything that may raise */
  lua_rawseti(L, 3, b->slot);
  lua_getupvalue(L, 6, 1); /* the agent ticked last, let go */
  lua_pushnil(L);
  lua_setupvalue(L, 6, 1);
  if (r != LUA_OK) { /* stack: ..., msg, agent */
    if (b->j.la == NULL) { /* out of memory between two agents' ticks:
                           ** nobody's error, bt.tick_all's own */
      lua_pop(L, 1);
      lua_error(L);
    }
    lua_rawgeti(L, -1, 1); /* stack: ..., msg, agent, state */
    lua_rotate(L, -3, 2);  /* ..., agent, state, msg */
    recover(L, &b->j, -3, -2, CONTEXT);
    if (b->j.inhook) /* the hook raised: it is not called again */
      b->j.inhook = 0;
    else if (b->j.la->hooked && b->j.ran)
      runhook(L, &b->j, -3, -2, CONTEXT, -1, -1);
    adderror(L, 2, -3);
  } else if (lua_gettop(L) > 9) { /* stack: ..., agent, msg, last */
    lua_pop(L, 1);
    adderror(L, 2, -2);
  }
  lua_settop(L, 8);
}

/* bt.tick_all(list, dt [, { budget = n }]): returns nil, or a list of
** { agent =, error = }; nothing is allocated unless an agent fails (or a
** budget is given, or once: the list gets its sleep cache, a new depth of
** nested calls its batch function). Its stack: 1 the list, 2 the errors,
** 3 the calls under way, 4 the budget state, 5 the sleep cache, 6 the
** batch function, 7 and 8 the Lua loop and its place table. */
int lb_tick_all(lua_State *L) {
  Batch b;
  batchargs(L, &b);
  batchstack(L, &b);
  while (b.next <= b.n && (b.budget == 0 || b.ticked < b.budget)) {
    lua_pushboolean(L, 1); /* the depth is taken while its batch runs */
    lua_rawseti(L, 3, b.slot);
    if (b.back)
      stepped(L, &b);
    else
      batch(L, &b);
  }
  if (b.budget > 0) { /* the next call takes up after the last entry seen */
    lua_pushinteger(L, b.n > 0 ? (b.start + b.next - 2) % b.n + 1 : 1);
    lua_setfield(L, 4, "cursor");
  } else if (b.sc == NULL) {
    lb_sleepers_want(L, 1, CONTEXT, b.n, b.slept);
  }
  sweep(L, CONTEXT);
  lua_settop(L, 2);
  return 1;
}

/* bt.sleep(seconds): from a leaf's tick or a task's yield, puts the agent
** being ticked to sleep for that much of its time; returns bt.RUNNING. */
int lb_sleep(lua_State *L) {
  LBonsai *lb = lb_context(L);
  lua_Number s = luaL_checknumber(L, 1);
  luaL_argcheck(L, s >= 0, 1, "seconds must be a number >= 0");
  if (lb->ticking == NULL)
    return luaL_error(L, "bt.sleep: no agent is ticking");
  bonsai_agent_sleep(lb->ticking->a, s);
  lua_pushliteral(L, "running");
  return 1;
}

/* Runs an abort-like operation on an idle agent with its leaf stack set
** up, after switching it to its tree's current version (aborts belong to
** the version that runs); raises the first callback error. */
static int withcontext(lua_State *L,
                       int (*op)(bonsai_agent *, const bonsai_host *)) {
  LAgent *la;
  bonsai_agent *a;
  bonsai_host h = {NULL, 0, NULL};
  LTick t;
  int r = BONSAI_OK, s;
  lua_settop(L, 1);
  la = lb_checkagent(L, 1); /* state at 2 */
  a = agentof(la);
  if (bonsai_agent_busy(a))
    return luaL_error(L, "agent is already ticking");
  if (bonsai_agent_stale(a)) {
    Job j;
    j.la = la;
    lb_pushcontext(L, &j.t, 1, 2, CONTEXT);
    j.loaded = bonsai_agent_version_id(a);
    r = migrate(L, &j);
    lua_settop(L, 2);
    if (r != BONSAI_OK)
      lb_pusherror(L, a); /* 3: raised after op */
  }
  lb_pushcontext(L, &t, 1, 2, CONTEXT);
  h.ud = &t;
  s = op(a, &h);
  if (s != BONSAI_OK && r == BONSAI_OK) {
    r = s;
    lua_settop(L, 2);
    lb_pusherror(L, a);
  }
  if (r != BONSAI_OK) {
    lua_settop(L, 3);
    return lua_error(L);
  }
  return 0;
}

static int agent_abort(lua_State *L) {
  return withcontext(L, bonsai_agent_abort_hosted);
}

/* a:reset(): also forgets what the agent keeps per node in its extras
** (bt.control's 'c' and its memory; task coroutines are closed by then). */
static int agent_reset(lua_State *L) {
  withcontext(L, bonsai_agent_reset_hosted);
  lb_extra(L, 2, CONTEXT, 0);
  if (lua_istable(L, -1)) {
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pop(L, 1);
      if (lua_isinteger(L, -1)) {
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, -4); /* clearing a field during lua_next is allowed */
      }
    }
  }
  return 0;
}

/* The methods that run an agent's callbacks; lb_open_tick adds them to
** the agent methods. */
static const luaL_Reg tick_methods[] = {
    {"tick", agent_tick},
    {"abort", agent_abort},
    {"reset", agent_reset},
    {NULL, NULL}};

/* stack: context. Adds a:tick, a:abort and a:reset to the agent methods
** (after lb_open_agent), with the context and the status names as
** upvalues. */
void lb_open_tick(lua_State *L) {
  int ctx = lua_gettop(L);
  luaL_getmetatable(L, BS_AGENT_T);
  lua_getfield(L, -1, "methods");
  lua_pushvalue(L, ctx);
  lua_pushliteral(L, "idle");
  lua_pushliteral(L, "running");
  lua_pushliteral(L, "success");
  lua_pushliteral(L, "failure");
  lua_pushliteral(L, "aborted");
  lua_pushliteral(L, "skipped");
  luaL_setfuncs(L, tick_methods, 7);
  lua_settop(L, ctx);
}
