/*
** lstep.c: the binding's half of the LuaJIT path. On LuaJIT with its JIT
** and FFI, bt.tick_all's loop, a:tick and a control node's c:tick are Lua
** functions (lua/bonsai/luajit.lua) that step their agents' ticks
** (bonsai.h, "Stepped ticks") through the entry points here, called
** through the FFI, and call the Lua leaves themselves: the JIT compiles the
** loop with the leaves in it. The entry points never touch the Lua state
** (compiled code calls them); what needs it is done by the functions of
** core._step, called the ordinary way: a call of another kind (a C leaf, a
** remapped leaf...), a bt.control's 'c', a recovery, the messages.
*/
#include <stdint.h>

#include "bonsai.h"
#include "lbonsai.h"

/*
** What the entry points return. 0 to 5: the run ended with that status
** (a tick's, or a control node's child's). Then:
*/
#define LB_ASLEEP 6  /* begin: the agent sleeps on (its clock moved) */
#define LB_CLASSIC 7 /* not stepped: take the lua_call path; nothing done */
#define LB_FAILED 8  /* the run failed: recorded (a tick's: recovered) */
#define LB_SLOW 16   /* a call to make with _step.call (a C leaf...) */
/* From LB_TICKET on: a Lua leaf's or a bt.control's callback for event ev,
** the function at key of the values table (named: of the named leaves):
** LB_TICKET + (key << 4 | control << 3 | ev << 1 | named). */
#define LB_TICKET 17

/* The ticket of callback ev of a Lua leaf or bt.control with data d, or
** LB_SLOW when it does not fit. */
static int ticket(const void *d, int ev, int control) {
  lua_Integer key = LEAF_SLOT(d) + ev;
  if (key < 0 || key > (INT32_MAX - LB_TICKET) >> 4)
    return LB_SLOW;
  return LB_TICKET + (int)(key << 4 | control << 3 | ev << 1 | LEAF_NAMED(d));
}

/* What the call c handed out by agent a's run at 'level' returns (what
** the Lua side reads of it in lb->out). */
static int handed(LBonsai *lb, bonsai_agent *a, const bonsai_call *c,
                  bonsai_leaf_fn fn, unsigned level) {
  LStepOut *o = &lb->out;
  o->level = (int32_t)level;
  o->node = (int32_t)c->node;
  o->status = c->status;
  o->args = (int32_t)(intptr_t)c->args;
  if (fn == lb_leaf_call)
    return ticket(c->data, c->event, 0);
  if (fn == lb_control_call) { /* its 'c' is known by node and version */
    o->version = (double)bonsai_agent_version_id(a);
    return ticket(c->data, c->event, 1);
  }
  return LB_SLOW;
}

/* What the end of a run with r returns. The end of a tick ends its LTick. */
static int over(LBonsai *lb, bonsai_agent *a, int r) {
  if (!bonsai_agent_busy(a))
    lb_step_untick(lb, a);
  return r >= 0 ? r : LB_FAILED;
}

/* What stepping call result r of agent a returns: the call handed out, or
** the end of a run. */
static int code(LBonsai *lb, bonsai_agent *a, int r) {
  if (r == BONSAI_STEP) {
    bonsai_leaf_fn fn;
    unsigned level;
    const bonsai_call *c = bonsai_agent_stepcall(a, &fn, &level);
    return handed(lb, a, c, fn, level);
  }
  return over(lb, a, r);
}

/*
** The entry points take an agent's state as the address the FFI gives for
** the userdata at its [1], which the Lua side passes only when the
** userdata's metatable is the states' (its __metatable, a mark no other
** value has): so la is a state of this Lua state's, and its magic tells
** whether it lives (a finalized one takes the lua_call path, which refuses
** it as the C API does).
*/

/* Entry point: begins a stepped tick of la by dt; with 'all' (bt.tick_all)
** a sleeping agent is skipped, as bt.tick_all skips it, and one whose last
** tick there failed takes the lua_call path, which counts its errors in a
** row and forgets them after a tick without one (ltick.c: streak). */
static int step_begin(LBonsai *lb, LAgent *la, double dt, int all) {
  bonsai_agent *a = agentof(la);
  const bonsai_call *c;
  bonsai_leaf_fn fn;
  bonsai_host h;
  int r;
  if (la->magic != lb || la->frozen || la->hooked || la->ninterrupts != 0 ||
      (all && la->failing))
    return LB_CLASSIC;
  if (all && bonsai_agent_asleep(a, dt))
    return LB_ASLEEP;
  if ((h.ud = lb_step_tick(lb, a)) == NULL)
    return LB_CLASSIC;
  h.flags = BONSAI_HOST_RAISES | BONSAI_HOST_SWITCHES;
  h.interrupt = NULL;
  r = bonsai_agent_stepfirst(a, dt, &h, &c, &fn);
  if (r == BONSAI_ENOSTEP || r == BONSAI_EBUSY || r == BONSAI_EARG ||
      r == BONSAI_ESTALE) {
    lb_step_untick(lb, a);
    return LB_CLASSIC;
  }
  lb->out.version = (double)bonsai_agent_version_id(a);
  lb->nstepped++;
  if (r == BONSAI_STEP)
    return handed(lb, a, c, fn, 0);
  return over(lb, a, r);
}

/* Entry point: the call handed out at 'level' returned r (la is under way:
** it was checked when its tick began). */
static int step_on(LBonsai *lb, LAgent *la, int level, int r) {
  bonsai_agent *a = agentof(la);
  const bonsai_call *c;
  bonsai_leaf_fn fn;
  if (la->magic != lb || level < 0)
    return LB_FAILED;
  r = bonsai_agent_stepnext(a, (unsigned)level, r, &c, &fn);
  if (r == BONSAI_STEP)
    return handed(lb, a, c, fn, (unsigned)level);
  return over(lb, a, r);
}

/* Entry point: c:tick(k + 1) of control node 'node'. */
static int step_child(LBonsai *lb, LAgent *la, int node, int k) {
  bonsai_agent *a = agentof(la);
  int r;
  if (la->magic != lb || node < 0 || k < 0 ||
      (unsigned)k >= bonsai_control_children(a, (unsigned)node))
    return LB_CLASSIC; /* c:tick's checks and messages */
  r = bonsai_control_step(a, (unsigned)node, (unsigned)k, NULL);
  if (r == BONSAI_ENOSTEP || r == BONSAI_EARG)
    return LB_CLASSIC;
  return code(lb, a, r);
}

/* Entry point: a.time, or -1 for a finalized state. */
static double step_time(LBonsai *lb, LAgent *la) {
  return la->magic == lb ? bonsai_agent_time(agentof(la)) : -1;
}

/* Entry point: bt.tick_all's skip of an agent its list's sleep cache
** (lsleep.c) knows asleep: 1 when it sleeps on (its clock moved), as
** lb_sleepers_skip tells it; 0: the ordinary path takes it. */
static int step_asleep(LBonsai *lb, LAgent *la, double dt) {
  return la->magic == lb && la->ninterrupts == 0 &&
         bonsai_agent_asleep(agentof(la), dt);
}

/* The entry points, as the Lua side declares them. */
typedef struct LStepApi {
  int (*begin)(LBonsai *lb, LAgent *la, double dt, int all);
  int (*on)(LBonsai *lb, LAgent *la, int level, int r);
  int (*child)(LBonsai *lb, LAgent *la, int node, int k);
  double (*time)(LBonsai *lb, LAgent *la);
  int (*asleep)(LBonsai *lb, LAgent *la, double dt);
} LStepApi;

static const LStepApi api = {step_begin, step_on, step_child, step_time,
                             step_asleep};

/*
** {======================================================
** core._step: what needs the Lua state
** =======================================================
*/

/* The state userdata at idx, of an agent of this context (its [1]), or
** raises. */
static LAgent *checkstate(lua_State *L, int idx) {
  LAgent *la = (LAgent *)lua_touserdata(L, idx);
  if (la == NULL || lua_type(L, idx) != LUA_TUSERDATA ||
      lua_rawlen(L, idx) < sizeof(LAgent) || la->magic != lb_context(L))
    luaL_argerror(L, idx, "not an agent's state");
  return la;
}

/* _step.call(agent, state): makes the call handed out, as the tick would
** call it (a C leaf, a remapped leaf, a leaf re-registered meanwhile...);
** returns its result. */
static int s_call(lua_State *L) {
  LAgent *la;
  const bonsai_call *pc;
  bonsai_leaf_fn fn;
  bonsai_call c;
  LTick t;
  int r;
  lua_settop(L, 2);
  la = checkstate(L, 2);
  if ((pc = bonsai_agent_stepcall(agentof(la), &fn, NULL)) == NULL)
    return luaL_error(L, "no call waits");
  c = *pc;
  lb_pushcontext(L, &t, 1, 2, lua_upvalueindex(1));
  lb_tick_room(L);
  c.host = &t;
  r = fn(&c);
  lua_pushinteger(L, r);
  return 1;
}

/* _step.control(agent, state): the 'c' of the control node whose callback
** was handed out. */
static int s_control(lua_State *L) {
  LAgent *la;
  const bonsai_call *pc;
  LTick t;
  lua_settop(L, 2);
  la = checkstate(L, 2);
  if ((pc = bonsai_agent_stepcall(agentof(la), NULL, NULL)) == NULL)
    return luaL_error(L, "no call waits");
  lb_pushcontext(L, &t, 1, 2, lua_upvalueindex(1));
  lb_pushcontrol(L, &t, pc);
  return 1;
}

/* _step.message(state): the agent's last error, naming tree and node. */
static int s_message(lua_State *L) {
  lb_pusherror(L, agentof(checkstate(L, 1)));
  return 1;
}

/* _step.errmsg(state): the agent's last error as recorded (c:tick's). */
static int s_errmsg(lua_State *L) {
  lua_pushstring(L, bonsai_agent_errmsg(agentof(checkstate(L, 1))));
  return 1;
}

/* _step.crecover(state, node, msg): c:tick of control node 'node' raises
** msg (the child's error: nil for the one recorded), as lleaf.c's c:tick
** does after telling the core (bonsai_control_recover: a raise under the
** child leaves no frame of its run behind; the callback's node fails if it
** catches it). */
static int s_crecover(lua_State *L) {
  bonsai_agent *a = agentof(checkstate(L, 1));
  const char *msg = lua_isnil(L, 3) ? bonsai_agent_errmsg(a)
                    : lua_type(L, 3) == LUA_TSTRING
                        ? lua_tostring(L, 3)
                        : "(error object is not a string)";
  bonsai_control_recover(a, (unsigned)luaL_checkinteger(L, 2), msg);
  return 0;
}

/* _step.recover(agent, state, msg): after msg escaped the agent's stepped
** tick, the agent recovered; returns the message naming tree and node (msg
** when no tick of the agent was under way). */
static int s_recover(lua_State *L) {
  LAgent *la;
  lua_settop(L, 3);
  la = checkstate(L, 2);
  if (bonsai_agent_busy(agentof(la)))
    lb_step_recover(L, 1, 2, lua_upvalueindex(1));
  return 1;
}

/* _step.status(r [, control]): the status of a leaf's result r (with
** control, a control node's tick's), or raises the message a tick raises
** for it. */
static int s_status(lua_State *L) {
  int control = lua_toboolean(L, 2);
  lua_settop(L, 1);
  lua_pushinteger(L, lb_tostatus(L, control));
  return 1;
}

/* _step.values(state), _step.bb(state): the values table of the version
** the agent runs, its blackboard. */
static int s_values(lua_State *L) {
  checkstate(L, 1);
  lua_getiuservalue(L, 1, UV_VALUES);
  return 1;
}

static int s_bb(lua_State *L) {
  checkstate(L, 1);
  lua_getiuservalue(L, 1, UV_BB);
  return 1;
}

/* _step.tickets(state): the tickets the agent's version may hand out
** (its Lua leaves' and bt.controls' callbacks), as a list. */
static int s_tickets(lua_State *L) {
  bonsai_agent *a = agentof(checkstate(L, 1));
  unsigned i, n = bonsai_agent_nodes(a);
  lua_Integer k = 0;
  lua_newtable(L);
  for (i = 0; i < n; i++) {
    bonsai_leaf_fn fn;
    void *data;
    unsigned flags;
    int control, ev;
    if (bonsai_agent_node_leaf(a, i, &fn, &data, &flags) != BONSAI_OK ||
        (fn != lb_leaf_call && fn != lb_control_call))
      continue;
    control = fn == lb_control_call;
    for (ev = BONSAI_EV_TICK; ev <= BONSAI_EV_EXIT; ev++) {
      int t;
      if ((ev == BONSAI_EV_ENTER && !(flags & BONSAI_LEAF_ENTER)) ||
          (ev == BONSAI_EV_EXIT && (control || !(flags & BONSAI_LEAF_EXIT))))
        continue;
      if ((t = ticket(data, ev, control)) != LB_SLOW) {
        lua_pushinteger(L, t);
        lua_rawseti(L, -2, ++k);
      }
    }
  }
  return 1;
}

/* _step.note(cache, entry, agent, state): bt.tick_all's sleep cache
** records the agent at entry as asleep; without agent, forgets the
** entry (lb_sleepers_note). */
static int s_note(lua_State *L) {
  LSleepers *c = (LSleepers *)lua_touserdata(L, 1);
  LAgent *la = lua_isnoneornil(L, 3) ? NULL : checkstate(L, 4);
  luaL_checktype(L, 1, LUA_TUSERDATA);
  lua_settop(L, 4);
  lb_sleepers_note(L, c, 1, luaL_checkinteger(L, 2), 3, 4, la);
  return 0;
}

/* _step.stats(): the stepped ticks begun so far in this Lua state. */
static int s_stats(lua_State *L) {
  lua_pushnumber(L, lb_context(L)->nstepped);
  return 1;
}

/* _step.use(stepper | nil): bt.tick_all's Lua loops are stepper.make's
** (ltick.c); nil: the lua_call path. */
static int s_use(lua_State *L) {
  lua_settop(L, 1);
  if (!lua_isnil(L, 1))
    luaL_checktype(L, 1, LUA_TTABLE);
  lua_setiuservalue(L, lua_upvalueindex(1), LB_STEPPER);
  return 0;
}

void lb_open_step(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"call", s_call},       {"control", s_control},
      {"message", s_message}, {"errmsg", s_errmsg},   {"recover", s_recover},
      {"crecover", s_crecover},
      {"status", s_status},   {"values", s_values},   {"bb", s_bb},
      {"tickets", s_tickets}, {"note", s_note},       {"use", s_use},
      {"stats", s_stats},     {NULL, NULL}};
  LBonsai *lb = (LBonsai *)lua_touserdata(L, -2);
  lua_newtable(L); /* stack: context, module, _step */
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, funcs, 1);
  lua_pushlightuserdata(L, (void *)&api);
  lua_setfield(L, -2, "api");
  lua_pushlightuserdata(L, lb);
  lua_setfield(L, -2, "context");
  lua_pushlightuserdata(L, &lb->out);
  lua_setfield(L, -2, "out");
  lua_pushlightuserdata(L, (void *)lb_control_key());
  lua_setfield(L, -2, "key");
  lua_getiuservalue(L, -3, LB_NAMED);
  lua_setfield(L, -2, "named");
  lua_getiuservalue(L, -3, LB_EXTRAS);
  lua_setfield(L, -2, "extras");
  luaL_getmetatable(L, BS_STATE_T);
  lua_getfield(L, -1, "__metatable");
  lua_setfield(L, -3, "mark");
  lua_pop(L, 1);
  lua_setfield(L, -2, "_step");
}

/* }====================================================== */
