/*
** lleaf.c: Lua leaves and control nodes. To the core a Lua leaf is a C leaf
** whose data says where its functions sit: in the tree version's values
** table (anonymous leaves) or in the named-leaf table (bt.register); a
** bt.control is a C control node (bonsai_def_control) whose callbacks sit
** there too. The trampolines call them unprotected during a tick (one
** protected call wraps the whole tick) and protected during abort passes,
** so every abort callback runs.
*/
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

/*
** {======================================================
** Leaves: the trampoline of every Lua leaf
** =======================================================
*/

/* What a leaf may return, for messages. */
#define STATUSES "\"success\", \"failure\", \"running\", true or false"

/* Pushes the message for the invalid status string at the top: the status
** it likely meant, and the valid ones. */
static void invalid(lua_State *L) {
  const char *s = lua_tostring(L, -1);
  if (lb_nearest(L, s, "success failure running")) {
    lua_pushfstring(L, "invalid status '%s' (did you mean \"%s\"?): a leaf "
                    "returns " STATUSES, s, lua_tostring(L, -1));
    lua_remove(L, -2);
  } else {
    lua_pushfstring(L, "invalid status '%s': a leaf returns " STATUSES, s);
  }
}

/* Converts the value at the top of the stack to a status and leaves it
** there; -1 if it is not one, with a description of it pushed. Two calls
** for a status string or false, one for nil. */
static inline int tostatus(lua_State *L, const LBonsai *lb) {
  const void *p;
  if (!lua_toboolean(L, -1)) { /* false or nil */
    if (lb_unlikely(lb->strict) && lua_isnil(L, -1)) {
      lua_pushliteral(L, "returned nothing: did you forget return? (a leaf "
                         "returns " STATUSES "; bt.strict is on)");
      return -1;
    }
    return BONSAI_FAILURE;
  }
  p = lua_topointer(L, -1); /* a string: the object */
  if (p == lb->s_running)
    return BONSAI_RUNNING;
  if (p == lb->s_success)
    return BONSAI_SUCCESS;
  if (p == lb->s_failure)
    return BONSAI_FAILURE;
  if (lua_isboolean(L, -1)) /* true */
    return BONSAI_SUCCESS;
  if (lua_type(L, -1) == LUA_TSTRING)
    invalid(L);
  else
    lua_pushfstring(L, "invalid status (a %s value): a leaf returns "
                    STATUSES, luaL_typename(L, -1));
  return -1;
}

/* Pushes the message of a control node's tick that returned nothing (nil
** is no decision, bt.strict or not). */
static void nothing(lua_State *L) {
  lua_pushliteral(L, "its tick returned nothing: did you forget return? "
                     "(a control node's tick returns its status: "
                     "\"success\", \"failure\", \"running\", "
                     "\"skipped\", true or false)");
}

int lb_tostatus(lua_State *L, int control) {
  int s;
  if (control && lua_isnil(L, -1)) {
    nothing(L);
    return lua_error(L);
  }
  if ((s = tostatus(L, lb_context(L))) < 0)
    lua_error(L);
  return s;
}

/* A callback failed with the message at the top: in an abort pass, record
** it and return BONSAI_ERROR; during a tick, record it (the first error of
** the operation from now on: a raise the node's callback caught before is
** not the node's) and raise it. Recorded, it keeps naming this node on its
** way out, even through a control node whose callback caught an error of
** the same message. */
lb_noinline static int failed(lua_State *L, const bonsai_call *c) {
  const char *msg = lua_type(L, -1) == LUA_TSTRING
                        ? lua_tostring(L, -1)
                        : "(error object is not a string)";
  int r;
  if (c->mayraise) {
    bonsai_agent_clearerr(c->agent);
    (void)bonsai_agent_error(c->agent, "%s", msg);
    return lua_error(L);
  }
  r = bonsai_agent_error(c->agent, "%s", msg);
  lua_pop(L, 1);
  return r;
}

static int nohost(bonsai_agent *a) {
  return bonsai_agent_error(a, "a Lua leaf can only run from Lua");
}

/* Pushes the arguments of a call (up to n of: agent, bb, args, status);
** returns how many. */
static lb_inline int pushargs(lua_State *L, LTick *t, const bonsai_call *c,
                              int n) {
  if (n == 0)
    return 0;
  lua_pushvalue(L, t->agent);
  if (n == 1)
    return 1;
  lb_tick_bb(t);
  lua_pushvalue(L, t->bb);
  if (n == 2)
    return 2;
  if (c->args != NULL)
    lua_rawgeti(L, t->values, (lua_Integer)(intptr_t)c->args);
  else
    lua_pushnil(L);
  if (n == 3 || c->event != BONSAI_EV_EXIT)
    return 3;
  lb_pushstatus(L, c->status);
  return 4;
}

/* lb_pack of the value at 1, in place (a protected call's body). */
static int packone(lua_State *L) {
  lb_pack(L, 1);
  return 1;
}

/*
** A leaf's SAVE and RESTORE (docs/SAVE_FORMAT.md): save(agent, bb, args)
** returns what its run keeps (nil: nothing), written as a:save writes a
** blackboard table; restore(agent, bb, args, value) gets it back, nil when
** the save holds none. Both are called protected (an abort pass's way):
** an error is recorded, named "save: ..." or "restore: ...".
*/
lb_noinline static int leafstate(const bonsai_call *c, LTick *t) {
  lua_State *L = t->L;
  int save = c->event == BONSAI_EV_SAVE, top = lua_gettop(L), r;
  luaL_checkstack(L, 8, "leaf state");
  lua_rawgeti(L, LEAF_NAMED(c->data) ? t->named : t->values,
              LEAF_SLOT(c->data) + (save ? 4 : 5));
  if (!lua_isfunction(L, -1)) { /* (one without the other) */
    lua_settop(L, top);
    return BONSAI_OK;
  }
  pushargs(L, t, c, 3);
  if (!save && c->saved == NULL)
    lua_pushnil(L);
  else if (!save && lb_unpack(L, c->saved, c->savedlen) != 0) {
    lua_settop(L, top);
    lua_pushliteral(L, "its saved state is corrupted");
    goto failed;
  }
  if (lua_pcall(L, save ? 3 : 4, 1, 0) != LUA_OK)
    goto failed;
  if (save && !lua_isnil(L, -1)) { /* packed, then written */
    size_t len;
    const char *p;
    lua_pushcfunction(L, packone);
    lua_insert(L, -2);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
      goto failed;
    p = lua_tolstring(L, -1, &len);
    c->write(c->wud, p, len);
  }
  lua_settop(L, top);
  return BONSAI_OK;
failed:
  r = bonsai_agent_error(c->agent, "%s: %s", save ? "save" : "restore",
                         lua_type(L, -1) == LUA_TSTRING
                             ? lua_tostring(L, -1)
                             : "(error object is not a string)");
  lua_settop(L, top);
  return r;
}

/*
** During a tick the results of calls are not popped one by one: they stay
** on the stack (the caller made room for LB_PENDING of them) and are
** dropped together, which saves a lua_settop per leaf.
*/
int lb_leaf_call(const bonsai_call *c) {
  bonsai_agent *a = c->agent;
  LTick *t = (LTick *)c->host;
  lua_State *L;
  int n, s;
  if (t == NULL)
    return nohost(a);
  if (lb_unlikely(c->event >= BONSAI_EV_SAVE))
    return leafstate(c, t);
  L = t->L;
  lua_rawgeti(L, LEAF_NAMED(c->data) ? t->named : t->values,
              LEAF_SLOT(c->data) + c->event);
  n = pushargs(L, t, c, LEAF_NARGS(c->data));
  if (c->mayraise)
    lua_call(L, n, 1);
  else if (lua_pcall(L, n, 1, 0) != LUA_OK)
    return failed(L, c);
  if (c->event != BONSAI_EV_TICK) /* an abort may take its time */
    s = c->event == BONSAI_EV_ABORT &&
                lua_topointer(L, -1) == t->lb->s_running
            ? BONSAI_RUNNING
            : BONSAI_OK;
  else if ((s = tostatus(L, t->lb)) < 0) {
    lua_remove(L, -2);
    return failed(L, c);
  }
  if (!c->mayraise)
    lua_settop(L, -2);
  else if (++t->pending == LB_PENDING) {
    lua_settop(L, -1 - LB_PENDING);
    t->pending = 0;
  }
  return s;
}

/* }====================================================== */

/*
** {======================================================
** Tasks: a coroutine per run
** =======================================================
*/

/* The agent's extras table, created on first use (pushed). */
static void pushextra(lua_State *L, const LTick *t) {
  lb_extra(L, t->state, t->ctx, 1);
}

/* Whether the coroutine co is running now (or resumed another one): only
** game code that resumed it from outside its agent's tick can have done
** that. */
static int active(lua_State *co) {
  lua_Debug ar;
  return lua_status(co) == LUA_OK && lua_getstack(co, 0, &ar);
}

/* Runs the cleanups the body of the task co registered (bt.defer: in the
** agent's extras, at x, under the coroutine), the last first, each
** given the value at err (the run's error; 0: nil), and forgets them.
** Returns LUA_OK, or the status of the first that failed, with its error
** pushed (the others still run). */
static int rundefers(lua_State *L, int x, lua_State *co, int err) {
  lua_Integer n;
  int st = LUA_OK, r;
  lua_pushvalue(L, x);
  lua_pushthread(co);
  lua_xmove(co, L, 1);
  lua_pushvalue(L, -1);
  if (lua_rawget(L, -3) != LUA_TTABLE) { /* none: the usual case */
    lua_pop(L, 3);
    return LUA_OK;
  }
  lua_pushvalue(L, -2);
  lua_pushnil(L);
  lua_rawset(L, -5);
  lua_pushnil(L); /* defers, co, list, first error */
  for (n = (lua_Integer)lua_rawlen(L, -2); n >= 1; n--) {
    lua_rawgeti(L, -2, n);
    if (err != 0)
      lua_pushvalue(L, err);
    else
      lua_pushnil(L);
    if ((r = lua_pcall(L, 1, 0, 0)) == LUA_OK)
      continue;
    if (st == LUA_OK) {
      st = r;
      lua_replace(L, -2);
    } else {
      lua_pop(L, 1);
    }
  }
  if (st != LUA_OK)
    lua_replace(L, -4);
  lua_pop(L, st != LUA_OK ? 2 : 4);
  return st;
}

/* Ends a task's run: the coroutine is closed (its to-be-closed variables
** run, from Lua 5.4), then its body's cleanups (bt.defer, given the error
** at err, 0 for none), as when a run returns; the coroutine is forgotten. Stack: the extras table on top; returns the
** first failure's status, with its error pushed when it is not LUA_OK. A
** coroutine that is running cannot be closed: it is only forgotten. */
static int closetask(lua_State *L, lua_State *co, lua_Integer key,
                     int err) {
  int st, x = lua_gettop(L);
  if (active(co)) {
    st = LUA_ERRRUN;
    lua_pushliteral(L, "cannot close the task's coroutine: it is running "
                       "(resumed from outside its agent's tick)");
  } else {
    if ((st = lb_closethread(co, L)) != LUA_OK) {
      lua_xmove(co, L, 1);
      if (rundefers(L, x, co, err) != LUA_OK)
        lua_pop(L, 1); /* keep the first error */
    } else {
      st = rundefers(L, x, co, err);
    }
  }
  lua_pushnil(L);
  lua_rawseti(L, st != LUA_OK ? -3 : -2, key);
  return st;
}

/* Creates the coroutine of a new run, with its function and arguments on
** its stack, in extras[key]. Stack: the extras table on top. */
static lua_State *newtask(lua_State *L, LTick *t, const bonsai_call *c,
                          lua_Integer key) {
  stateofagent(t->a)->tasks = 1;
  lua_State *co = lua_newthread(L);
  lua_rawseti(L, -2, key);
  lua_rawgeti(L, LEAF_NAMED(c->data) ? t->named : t->values,
              LEAF_SLOT(c->data));
  lua_xmove(L, co, 1 + pushargs(L, t, c, LEAF_NARGS(c->data)));
  return co;
}

/* Whether the first of the n values the coroutine co yielded ends a run:
** "success", "failure", true or false. */
static int finalstatus(lua_State *co, int n, const LBonsai *lb) {
  const void *p = lua_topointer(co, -n);
  return lua_isboolean(co, -n) ||
         (lua_type(co, -n) == LUA_TSTRING &&
          (p == lb->s_success || p == lb->s_failure));
}

/*
** A bt.task: enter creates the run's coroutine (closing a stale one, e.g.
** of a run cut off while the leaf was re-registered as a plain function),
** tick resumes it, abort closes it.
*/
int lb_task_call(const bonsai_call *c) {
  bonsai_agent *a = c->agent;
  LTick *t = (LTick *)c->host;
  lua_Integer key = (lua_Integer)c->node + 1;
  lua_State *L, *co = NULL, *outer;
  const LTick *outertick;
  int nargs = 0, nres, st, s;
  if (t == NULL)
    return nohost(a);
  L = t->L;
  pushextra(L, t);
  if (lua_rawgeti(L, -1, key) == LUA_TTHREAD)
    co = lua_tothread(L, -1);
  lua_pop(L, 1);
  if (c->event == BONSAI_EV_ABORT || c->event == BONSAI_EV_ENTER) {
    if (co != NULL && closetask(L, co, key, 0) != LUA_OK) {
      lua_remove(L, -2);
      return failed(L, c);
    }
    if (c->event == BONSAI_EV_ENTER)
      newtask(L, t, c, key);
    lua_pop(L, 1);
    return BONSAI_OK;
  }
  if (co == NULL) /* re-registered as a task while running */
    co = newtask(L, t, c, key);
  if (lua_status(co) == LUA_OK) { /* a new run: its function, arguments */
    const char *why = active(co) ? "is running"
                      : lua_gettop(co) == 0 ? "has ended" : NULL;
    if (why != NULL) { /* game code resumed it outside the tick */
      lua_pushnil(L);
      lua_rawseti(L, -2, key);
      lua_pop(L, 1);
      lua_pushfstring(L, "the task's coroutine %s: it was resumed from "
                         "outside its agent's tick", why);
      return failed(L, c);
    }
    nargs = lua_gettop(co) - 1;
  } else if (lua_status(co) != LUA_YIELD) { /* failed outside the tick */
    lua_pushnil(L);
    lua_rawseti(L, -2, key);
    lua_pop(L, 1);
    lua_pushliteral(L, "the task's coroutine failed: it was resumed from "
                       "outside its agent's tick");
    return failed(L, c);
  }
  outer = t->lb->task;
  outertick = t->lb->tasktick;
  t->lb->task = co;
  t->lb->tasktick = t;
  st = lua_resume(co, L, nargs, &nres);
  t->lb->task = outer;
  t->lb->tasktick = outertick;
  if (st == LUA_YIELD) {
    if (lb_unlikely(t->lb->strict) && nres > 0 &&
        finalstatus(co, nres, t->lb)) {
      int b = lua_isboolean(co, -nres);
      const char *v = b ? (lua_toboolean(co, -nres) ? "true" : "false")
                        : lua_tostring(co, -nres);
      lua_pushfstring(L, "yielded %s%s%s: a yield means running (return the "
                      "status to end the task; bt.strict is on)",
                      b ? "" : "\"", v, b ? "" : "\"");
      lua_pop(co, nres);
      lua_remove(L, -2); /* the extras */
      return failed(L, c);
    }
    lua_pop(co, nres);
    lua_pop(L, 1);
    return BONSAI_RUNNING;
  }
  if (st != LUA_OK) {
    lua_xmove(co, L, 1); /* the error */
    lua_insert(L, -2);
    if (closetask(L, co, key, lua_gettop(L) - 1) != LUA_OK)
      lua_pop(L, 1); /* a second error while closing: keep the first */
    lua_pop(L, 1);
    return failed(L, c);
  }
  if (rundefers(L, lua_gettop(L), co, 0) != LUA_OK) { /* returned: its cleanups */
    lua_pushnil(L);
    lua_rawseti(L, -3, key);
    lua_remove(L, -2);
    return failed(L, c);
  }
  if (nres > 0) {
    lua_xmove(co, L, 1);
    lua_pop(co, nres - 1);
  } else {
    lua_pushnil(L);
  }
  lua_pushnil(L);
  lua_rawseti(L, -3, key); /* the run is over */
  lua_remove(L, -2);
  if ((s = tostatus(L, t->lb)) < 0) {
    lua_remove(L, -2);
    return failed(L, c);
  }
  lua_settop(L, -2);
  if (s == BONSAI_RUNNING) {
    lua_pushliteral(L, "a task returned running (yield to keep running)");
    return failed(L, c);
  }
  return s;
}

/* }====================================================== */

/* Stack: extras, the task's coroutine, fn. Appends fn to the coroutine's
** list of cleanups in the extras (made on its first). */
static int adddefer(lua_State *L) {
  lua_pushvalue(L, 2);
  if (lua_rawget(L, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
  }
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  return 0;
}

/* The list is kept in the agent's extras (as the coroutine is: they go
** with the agent), read from the stack of the tick that resumed the task
** (made before the resume; only read there: what allocates is done on the
** task's own stack). Without the memory to keep fn, fn runs at once, given
** the memory error, which ends the run. */
int lb_defer(lua_State *L) {
  const LBonsai *lb = lb_context(L);
  const LTick *t = lb->tasktick;
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  if (lb->task != L)
    return luaL_error(L, "bt.defer: not called from the body of a running "
                         "bt.task");
  if (!lua_checkstack(t->L, 2))
    return luaL_error(L, "bt.defer: stack overflow");
  lb_extra(t->L, t->state, t->ctx, 0);
  lua_xmove(t->L, L, 1); /* 2: extras */
  lua_pushcfunction(L, adddefer);
  lua_pushvalue(L, 2);
  lua_pushthread(L);
  lua_pushvalue(L, 1);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
    return lua_error(L);
  }
  return 0;
}

/*
** {======================================================
** Utilities and remapped leaves
** =======================================================
*/

/* How many arguments the function at the top needs (0-4): a function
** that declares fewer parameters cannot see the others, so they are not
** pushed. Leaves the function in place. */
static int needs(lua_State *L) {
  int n;
  lua_pushvalue(L, -1);
  n = lb_nparams(L);
  return n >= 0 && n < 4 ? n : 4;
}

/* Puts in the leaf stack's blackboard slot the agent's view of its
** blackboard through the map at the top (popped): made by the view maker
** of init.lua on first use, then kept in the agent's extras (views, weak
** by map). The slot is fetched again by the next leaf. */
static void setview(lua_State *L, LTick *t) {
  int map = lua_gettop(L);
  luaL_checkstack(L, 8, "remapped leaf");
  lb_tick_bb(t);
  lb_extra(L, t->state, t->ctx, 1);
  if (lua_getfield(L, -1, "views") != LUA_TTABLE) {
    lua_pop(L, 1);
    lb_newweak(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "views");
  }
  lua_pushvalue(L, map);
  if (lua_rawget(L, -2) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_getiuservalue(L, t->ctx, LB_VIEW);
    lua_pushvalue(L, t->bb);
    lua_pushvalue(L, map);
    lua_call(L, 2, 1);
    lua_pushvalue(L, map);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
  }
  lua_replace(L, t->bb);
  lua_settop(L, map - 1);
}

/*
** A utility function of a utility selector's child: fn(agent, bb) must
** return a number. Called during ticks only (unprotected, like a leaf's
** tick): an error propagates to the tick's protected call. Inside a
** remapping subtree (the data's 'named' bit) its slot holds { map, 0, slot
** of the function, nargs }, and bb is the view.
*/
int lb_utility_call(const bonsai_call *c) {
  bonsai_agent *a = c->agent;
  LTick *t = (LTick *)c->host;
  lua_Integer slot = LEAF_SLOT(c->data);
  int n = LEAF_NARGS(c->data), view = LEAF_NAMED(c->data);
  lua_State *L;
  if (t == NULL)
    return nohost(a);
  L = t->L;
  if (view) { /* { map, how, slot, nargs }, as for lb_remap_call */
    lua_rawgeti(L, t->values, slot);
    lua_rawgeti(L, -1, 3);
    lua_rawgeti(L, -2, 4);
    slot = lua_tointeger(L, -2);
    n = (int)lua_tointeger(L, -1);
    lua_pop(L, 2);
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
    setview(L, t);
  }
  lua_rawgeti(L, t->values, slot);
  n = pushargs(L, t, c, n);
  if (c->mayraise)
    lua_call(L, n, 1);
  else if (lua_pcall(L, n, 1, 0) != LUA_OK) {
    t->bbready = 0;
    return failed(L, c);
  }
  if (view)
    t->bbready = 0; /* the next leaf fetches the blackboard again */
  if (lua_type(L, -1) != LUA_TNUMBER) {
    lua_pushfstring(L, "utility returned %s (a number expected)",
                    luaL_typename(L, -1));
    lua_remove(L, -2);
    return failed(L, c);
  }
  *c->utility = (double)lua_tonumber(L, -1);
  lua_pop(L, 1);
  return BONSAI_OK;
}

int lb_remap_call(const bonsai_call *c) {
  bonsai_agent *a = c->agent;
  LTick *t = (LTick *)c->host;
  bonsai_call in = *c;
  bonsai_leaf_fn fn;
  lua_Integer how, at, nargs;
  lua_State *L;
  int r;
  if (t == NULL)
    return nohost(a);
  L = t->L;
  lua_rawgeti(L, t->values, LEAF_SLOT(c->data)); /* { map, how, at, nargs } */
  lua_rawgeti(L, -1, 2);
  lua_rawgeti(L, -2, 3);
  lua_rawgeti(L, -3, 4);
  how = lua_tointeger(L, -3);
  at = lua_tointeger(L, -2);
  nargs = lua_tointeger(L, -1);
  lua_pop(L, 3);
  lua_rawgeti(L, -1, 1);
  lua_remove(L, -2);
  setview(L, t);
  if (how == 2) { /* a registered leaf: its events as it was registered */
    unsigned f;
    if (bonsai_leaf_get(t->lb->env, (int)at, &fn, &in.data, &f) != BONSAI_OK)
      return bonsai_agent_error(a, "no leaf %d", (int)at);
    if ((c->event == BONSAI_EV_ENTER && !(f & BONSAI_LEAF_ENTER)) ||
        (c->event == BONSAI_EV_EXIT && !(f & BONSAI_LEAF_EXIT)) ||
        (c->event == BONSAI_EV_ABORT &&
         !(f & (BONSAI_LEAF_ABORT | BONSAI_LEAF_EXIT))) ||
        (c->event >= BONSAI_EV_SAVE && !(f & BONSAI_LEAF_SAVE))) {
      t->bbready = 0;
      return BONSAI_OK;
    }
    if (c->event == BONSAI_EV_ABORT && !(f & BONSAI_LEAF_ABORT)) {
      in.event = BONSAI_EV_EXIT;
      in.status = BONSAI_ABORTED;
    }
  } else {
    fn = how == 1 ? lb_task_call : how == 3 ? lb_control_call : lb_leaf_call;
    in.data = LEAFDATA(at, nargs, 0);
  }
  t->bbready = 1; /* the view, for this call */
  r = fn(&in);
  t->bbready = 0;
  return r;
}

/* }====================================================== */

/*
** {======================================================
** Control nodes: bt.control's callbacks and their 'c'
** =======================================================
*/

/* The key of a 'c' table's private part: { agent, agent state, node,
** version } with weak values (an agent is not kept alive by its own
** extras). */
static const char CREFS = 0;

/* Makes the 'c' of control node 'key' - 1 for the agent of t (pushed) and
** keeps it in the agent's extras (table at the top, below it), where a
** switch to another version moves it with its node. Its memory is the
** table at 'memory', or a new one (0). */
static void newcontrol(lua_State *L, LTick *t, lua_Integer key, int memory) {
  lua_createtable(L, 0, 3);
  if (memory != 0)
    lua_pushvalue(L, memory);
  else
    lua_newtable(L);
  lua_setfield(L, -2, "memory");
  luaL_getmetatable(L, LB_CONTROL_T);
  lua_setmetatable(L, -2);
  lua_pushlightuserdata(L, (void *)&CREFS);
  lua_createtable(L, 4, 0);
  lua_pushvalue(L, t->agent);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, t->state);
  lua_rawseti(L, -2, 2);
  luaL_getmetatable(L, LB_CONTROL_T ".refs");
  lua_setmetatable(L, -2);
  lua_rawset(L, -3);
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, key);
  stateofagent(t->a)->tasks = 1;
}

/* Pushes the 'c' of the control node of call c, its node number and child
** count brought up to the version the agent runs. */
void lb_pushcontrol(lua_State *L, LTick *t, const bonsai_call *c) {
  lua_Integer key = (lua_Integer)c->node + 1;
  lua_Number version = (lua_Number)bonsai_agent_version_id(t->a);
  lb_extra(L, t->state, t->ctx, 1);
  if (lua_rawgeti(L, -1, key) != LUA_TTABLE) {
    lua_pop(L, 1);
    newcontrol(L, t, key, 0);
  }
  lua_remove(L, -2);
  lua_pushlightuserdata(L, (void *)&CREFS);
  lua_rawget(L, -2);
  lua_rawgeti(L, -1, 4);
  if (lua_tonumber(L, -1) != version) { /* new, or after a switch */
    lua_pushnumber(L, version);
    lua_rawseti(L, -3, 4);
    lua_pushinteger(L, (lua_Integer)c->node);
    lua_rawseti(L, -3, 3);
    lua_pushinteger(L, (lua_Integer)bonsai_control_children(t->a, c->node));
    lua_setfield(L, -4, "n");
  }
  lua_pop(L, 2);
}

/* A bt.control's callback: tick(c, agent, bb, args) returns a status
** ("skipped" too); enter and abort get the same arguments. */
int lb_control_call(const bonsai_call *c) {
  LTick *t = (LTick *)c->host;
  lua_State *L;
  int s;
  if (t == NULL)
    return nohost(c->agent);
  L = t->L;
  lua_rawgeti(L, LEAF_NAMED(c->data) ? t->named : t->values,
              LEAF_SLOT(c->data) + c->event);
  lb_pushcontrol(L, t, c);
  pushargs(L, t, c, 3);
  if (c->mayraise)
    lua_call(L, 4, 1);
  else if (lua_pcall(L, 4, 1, 0) != LUA_OK)
    return failed(L, c);
  if (c->event != BONSAI_EV_TICK) /* an abort may take its time */
    s = c->event == BONSAI_EV_ABORT &&
                lua_topointer(L, -1) == t->lb->s_running
            ? BONSAI_RUNNING
            : BONSAI_OK;
  else if (lua_topointer(L, -1) == t->lb->s_skipped)
    s = BONSAI_SKIPPED; /* (the core refuses it where no node is skipped) */
  else if (lb_unlikely(lua_isnil(L, -1))) { /* nil is no decision */
    nothing(L);
    lua_remove(L, -2);
    return failed(L, c);
  } else if ((s = tostatus(L, t->lb)) < 0) {
    lua_remove(L, -2);
    return failed(L, c);
  }
  lua_pop(L, 1);
  return s;
}

/*
** c:tick(i) and c:abort(i). A child's run calls Lua leaves, which find
** their stack through a LTick, and so do the hooks of the tick (the trace
** hook of a:_on_event, bt.sleep) through the context's 'ticking': the
** indices of the tick's own LTick belong to the frame that started it, not
** to this one. So the child's run is a protected call of its own (pchild)
** that pushes the agent, its state, blackboard slot, values and named
** leaves again and is the innermost tick under way while it runs; however
** it ends the outer tick is the innermost again before Lua code of the
** callback runs. A raise under the child is caught there, the core told
** (bonsai_control_recover: no frame of the run is left behind, the error
** is recorded at its node, the callback's own errors are the node's), and
** raised again in the callback, which may catch it.
*/
typedef struct Child {
  LTick t;
  LTick *outer; /* the tick under way before the child's run */
  unsigned node, k;
  int abort;
  int r; /* what the core returned */
} Child;

/* args: the Child, agent, state, context */
static int pchild(lua_State *L) {
  Child *ch = (Child *)lua_touserdata(L, 1);
  LTick *t = &ch->t;
  t->L = L;
  t->agent = 2;
  t->state = 3;
  t->ctx = 4;
  lua_getiuservalue(L, 4, LB_NAMED); /* 5 */
  t->named = 5;
  lua_getiuservalue(L, 3, UV_VALUES); /* 6 */
  t->values = 6;
  lua_pushnil(L); /* 7: blackboard slot */
  t->bb = 7;
  t->bbready = 0;
  t->pending = 0;
  lb_tick_room(L);
  t->lb->ticking = t;
  ch->r = ch->abort ? bonsai_control_abort(t->a, ch->node, ch->k, t)
                    : bonsai_control_tick(t->a, ch->node, ch->k, t);
  t->lb->ticking = ch->outer;
  return 0;
}

static int childop(lua_State *L, int abort) {
  const char *what = abort ? "c:abort" : "c:tick";
  lua_Integer k = luaL_checkinteger(L, 2);
  unsigned n;
  LAgent *la;
  Child ch;
  int r;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  lua_pushlightuserdata(L, (void *)&CREFS);
  if (lua_rawget(L, 1) != LUA_TTABLE) /* 3: refs */
    return luaL_error(L, "%s: not a control node's 'c'", what);
  lua_rawgeti(L, 3, 1); /* 4: agent */
  lua_rawgeti(L, 3, 2); /* 5: state, known by its magic (as ltick.c does) */
  lua_rawgeti(L, 3, 3);
  ch.node = (unsigned)lua_tointeger(L, -1);
  lua_pop(L, 1);
  ch.t.lb = lb_context(L);
  la = (LAgent *)lua_touserdata(L, 5);
  if (la == NULL || lua_type(L, 5) != LUA_TUSERDATA ||
      lua_rawlen(L, 5) < sizeof(LAgent) || la->magic != ch.t.lb)
    return luaL_error(L, "%s: its agent is gone", what);
  ch.t.a = agentof(la);
  n = bonsai_control_children(ch.t.a, ch.node);
  if (k < 1 || k > (lua_Integer)n) {
    lua_pushinteger(L, k); /* as text: 5.1's lua_pushfstring has no %I */
    return luaL_error(L, "%s: no child %s (the node has %d)", what,
                      lua_tostring(L, -1), (int)n);
  }
  ch.k = (unsigned)k - 1;
  ch.abort = abort;
  ch.outer = ch.t.lb->ticking;
  lua_pushcfunction(L, pchild);
  lua_pushlightuserdata(L, &ch);
  lua_pushvalue(L, 4);
  lua_pushvalue(L, 5);
  lua_pushvalue(L, lua_upvalueindex(1));
  if (lua_pcall(L, 4, 0, 0) != LUA_OK) { /* a raise under the child */
    ch.t.lb->ticking = ch.outer;
    bonsai_control_recover(ch.t.a, ch.node,
                           lua_type(L, -1) == LUA_TSTRING
                               ? lua_tostring(L, -1)
                               : "(error object is not a string)");
    return lua_error(L);
  }
  r = ch.r;
  if (r == BONSAI_EARG)
    return luaL_error(L, "%s: only during its node's %s", what,
                      abort ? "callbacks" : "tick callback (not in enter or "
                                            "abort, nor while a child runs)");
  if (r < 0) { /* the error is recorded, at the node that failed: raised
               ** here, caught or not by the callback */
    lua_pushstring(L, bonsai_agent_errmsg(ch.t.a));
    bonsai_control_recover(ch.t.a, ch.node, lua_tostring(L, -1));
    return lua_error(L);
  }
  if (abort)
    return 0;
  lb_pushstatus(L, r);
  return 1;
}

void lb_control_restore(lua_State *L, int ai, int si, int ci) {
  int mem = lua_gettop(L);
  LTick t;
  unsigned i, n;
  if (lua_isnil(L, mem)) {
    lua_pop(L, 1);
    return;
  }
  t.L = L;
  t.a = agentof((LAgent *)lua_touserdata(L, si));
  t.agent = lua_absindex(L, ai);
  t.state = lua_absindex(L, si);
  lb_extra(L, t.state, ci, 1); /* mem + 1 */
  n = bonsai_agent_nodes(t.a);
  for (i = 0; i < n; i++) {
    bonsai_nodeinfo info;
    size_t len;
    luaL_Buffer b;
    if (bonsai_agent_node_info(t.a, i, &info) != BONSAI_OK ||
        info.kind != BONSAI_CONTROL)
      continue;
    len = bonsai_agent_node_path(t.a, i, NULL, 0);
    bonsai_agent_node_path(t.a, i, luaL_buffinitsize(L, &b, len + 1),
                           len + 1);
    luaL_pushresultsize(&b, len);
    if (lua_rawget(L, mem) == LUA_TTABLE) {
      int m = lua_gettop(L);
      lua_pushvalue(L, mem + 1); /* the extras, where newcontrol keeps c */
      newcontrol(L, &t, (lua_Integer)i + 1, m);
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  }
  lua_settop(L, mem - 1);
}

const void *lb_control_key(void) { return &CREFS; }

static int control_tick(lua_State *L) { return childop(L, 0); }

static int control_abort(lua_State *L) { return childop(L, 1); }

/* Reads bt.control's callbacks (the table at idx: tick, and enter and
** abort if given) into values[slot..slot+3] by event; sets flags. Returns
** NULL, or a message. */
const char *lb_controldef(lua_State *L, int idx, int values, int slot,
                          unsigned *flags) {
  static const char *const fields[] = {"tick", "enter", NULL, "abort"};
  int k;
  idx = lua_absindex(L, idx);
  values = lua_absindex(L, values);
  *flags = 0;
  for (k = 0; k < 4; k++) {
    int ty;
    if (fields[k] == NULL)
      continue;
    ty = lua_getfield(L, idx, fields[k]);
    if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
      return lua_pushfstring(L, "control field '%s' must be a function "
                                "(got %s)", fields[k], lua_typename(L, ty));
    if (k == 0 && ty == LUA_TNIL)
      return "a control node needs a tick function";
    if (ty == LUA_TFUNCTION && k > 0)
      *flags |= k == 1 ? BONSAI_LEAF_ENTER : BONSAI_LEAF_ABORT;
    lua_rawseti(L, values, slot + k);
  }
  return NULL;
}

void lb_open_control(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"tick", control_tick}, {"abort", control_abort}, {NULL, NULL}};
  luaL_newmetatable(L, LB_CONTROL_T);
  lua_newtable(L);
  lua_pushvalue(L, -3); /* the context */
  luaL_setfuncs(L, methods, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newmetatable(L, LB_CONTROL_T ".refs");
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_pop(L, 1);
}

/* }====================================================== */

/*
** {======================================================
** Leaf definitions and bt.register
** =======================================================
*/

void *lb_utilitydef(lua_State *L, int values, int slot) {
  int n = needs(L);
  lua_rawseti(L, values, slot);
  return LEAFDATA(slot, n < 2 ? n : 2, 0);
}

const char *lb_leafdef(lua_State *L, int idx, int values, int slot,
                       bonsai_leaf_fn *fn, unsigned *flags, int *nargs,
                       int *used) {
  static const char *const fields[] = {"tick",  "enter", "exit",
                                       "abort", "save",  "restore"};
  int k, kept, n;
  idx = lua_absindex(L, idx);
  values = lua_absindex(L, values);
  *fn = lb_leaf_call;
  *flags = 0;
  *nargs = 0;
  *used = 1;
  if (lua_isfunction(L, idx)) {
    lua_pushvalue(L, idx);
    *nargs = needs(L);
    lua_rawseti(L, values, slot);
    return NULL;
  }
  if (!lua_istable(L, idx))
    return lua_pushfstring(L, "a leaf is a function or a table of functions "
                              "(got %s)", luaL_typename(L, idx));
  kept = lua_getfield(L, idx, "save") != LUA_TNIL; /* the run's state */
  kept |= lua_getfield(L, idx, "restore") != LUA_TNIL;
  lua_pop(L, 2);
  if (lua_getfield(L, idx, "task") == LUA_TFUNCTION) {
    if (kept)
      return "a task cannot keep a state ('save', 'restore'): its body "
             "starts again when its agent is restored";
    *nargs = needs(L);
    lua_rawseti(L, values, slot);
    *fn = lb_task_call;
    *flags = BONSAI_LEAF_ENTER | BONSAI_LEAF_ABORT;
    return NULL;
  }
  lua_pop(L, 1);
  if (!kept && lua_getfield(L, idx, "fn") == LUA_TFUNCTION) {
    *nargs = needs(L);
    lua_rawseti(L, values, slot);
    return NULL;
  }
  if (!kept)
    lua_pop(L, 1);
  n = *used = kept ? 6 : 4;
  for (k = 0; k < n; k++) {
    int ty = lua_getfield(L, idx, fields[k]);
    if (k == 0 && ty == LUA_TNIL) { /* fn, with a state: as tick */
      lua_pop(L, 1);
      ty = lua_getfield(L, idx, "fn");
    }
    if (ty != LUA_TNIL && ty != LUA_TFUNCTION)
      return lua_pushfstring(L, "leaf field '%s' must be a function (got %s)",
                             fields[k], lua_typename(L, ty));
    if (k == 0 && ty == LUA_TNIL)
      return "a leaf needs a function (fn, tick or task)";
    if (ty == LUA_TFUNCTION && k < 4) {
      int m = needs(L);
      if (m > *nargs)
        *nargs = m;
      if (k > 0)
        *flags |= 1u << (k - 1); /* ENTER, EXIT, ABORT */
    } else if (ty == LUA_TFUNCTION) { /* save, restore: all their args */
      *flags |= BONSAI_LEAF_SAVE;
    }
    lua_rawseti(L, values, slot + k);
  }
  if (*flags == 0)
    *used = 1; /* the tick alone (the nils after it are not kept) */
  return NULL;
}

const char *lb_abort_timeout(lua_State *L, int idx) {
  int ty = lua_getfield(L, idx, "abort_timeout"), task;
  lua_Number t = lua_tonumber(L, -1);
  lua_pop(L, 1);
  if (ty == LUA_TNIL)
    return NULL;
  task = lua_getfield(L, idx, "task") != LUA_TNIL;
  lua_pop(L, 1);
  if (task)
    return "a task cannot abort latently: 'abort_timeout' is for an "
           "action's abort callback";
  if (ty != LUA_TNUMBER || !(t >= 0))
    return "'abort_timeout' must be a number >= 0 (seconds)";
  return NULL;
}

/* bt.strict([on]): the previous setting; with on given, sets it for every
** tree of this Lua state */
int lb_strict(lua_State *L) {
  LBonsai *lb = lb_context(L);
  lua_pushboolean(L, lb->strict);
  if (!lua_isnone(L, 1)) {
    luaL_checktype(L, 1, LUA_TBOOLEAN);
    lb->strict = lb->out.strict = lua_toboolean(L, 1);
  }
  return 1;
}

/* bt.register(name, leafdef). The definition is read into a scratch table
** first, so a bad one leaves the name as it was. */
int lb_register(lua_State *L) {
  LBonsai *lb = lb_context(L);
  size_t len;
  const char *name = luaL_checklstring(L, 1, &len);
  bonsai_leaf_fn fn;
  unsigned flags;
  int id, k, slot, nargs, used;
  const char *err;
  luaL_argcheck(L, len > 0, 1, "empty leaf name");
  luaL_argcheck(L, strlen(name) == len, 1, "a leaf name cannot contain a NUL "
                                           "byte");
  luaL_argcheck(L, lua_isfunction(L, 2) || lua_istable(L, 2), 2,
                "a function or a leaf table expected");
  lua_settop(L, 2);
  if (lua_istable(L, 2)) { /* a lifecycle table, or bt.action(fn)'s node */
    const char *what = lua_pushfstring(L, "bt.register '%s': the leaf", name);
    const char *why;
    lb_checkopts(L, 2, what, lb_kindwords(L, BONSAI_ACTION));
    lua_settop(L, 2);
    if ((why = lb_abort_timeout(L, 2)) != NULL)
      return luaL_error(L, "bt.register '%s': %s", name, why);
  }
  lua_createtable(L, 6, 0); /* 3: scratch */
  if ((err = lb_leafdef(L, 2, 3, 1, &fn, &flags, &nargs, &used)) != NULL)
    return luaL_error(L, "bt.register '%s': %s", name, err);
  if ((id = bonsai_leaf_find(lb->env, name)) < 0) { /* a new name: a slot */
    if (bonsai_leaf_register(lb->env, name, lb_leaf_call, NULL, 0) != BONSAI_OK)
      return luaL_error(L, "out of memory");
    id = bonsai_leaf_find(lb->env, name);
  }
  if (id > (INT32_MAX - 8) / NAMEDSLOTS)
    return luaL_error(L, "too many named leaves");
  slot = NAMEDSLOTS * id + 1;
  lua_getiuservalue(L, lua_upvalueindex(1), LB_NAMED); /* 4 */
  lua_rawgeti(L, 4, slot + NAMEDSLOTS - 1); /* make room first: the last */
  lua_rawseti(L, 4, slot + NAMEDSLOTS - 1);
  for (k = 0; k < NAMEDSLOTS; k++) {
    lua_rawgeti(L, 3, 1 + k);
    lua_rawseti(L, 4, slot + k);
  }
  /* the functions are in place: switch the registry entry over */
  if (bonsai_leaf_register(lb->env, name, fn, LEAFDATA(slot, nargs, 1),
                           flags) != BONSAI_OK)
    return luaL_error(L, "out of memory");
  if (lua_istable(L, 2) && lua_getfield(L, 2, "abort_timeout") != LUA_TNIL)
    bonsai_leaf_abort_timeout(lb->env, name, lua_tonumber(L, -1));
  return 0;
}

/* core._isleaf(name): whether a leaf is registered under name (from Lua or
** from C), so that importers can name the file's place of an unknown one. */
int lb_isleaf(lua_State *L) {
  LBonsai *lb = lb_context(L);
  lua_pushboolean(L, bonsai_leaf_find(lb->env, luaL_checkstring(L, 1)) >= 0);
  return 1;
}

/* }====================================================== */
