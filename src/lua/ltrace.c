/*
** ltrace.c: the Lua side of traces and the debugger: a:trace, a:events,
** the per-agent tick hook behind subscriptions (a:_on_tick; subscribe.lua
** shares it among a:subscribe, a:on_tick, bt.record and bt.debug),
** freezing agents at breakpoints (a:freeze), tree:nodes, the structure
** of a tree version that trace files, tree:dot and tree:mermaid describe,
** tree:_profile, the counts of the tree's profile (bonsai.profile), and
** fault injection (a:force, tree:force), and a:_on_event, the trace hook
** behind bt.debug's step through a tick.
** Nothing here runs for an agent that is not traced, hooked or frozen.
** lb_open_trace adds these methods to those of agents (lagent.c) and trees
** (ltree.c); ltick.c reads the 'frozen' and 'hooked' flags set here.
*/
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

#define CONTEXT lua_upvalueindex(1)

/* Events read from the core per round (a:events loops until none). */
#define BATCH 64

static const char *const marknames[] = {"status",    "reload", "error",
                                        "interrupt", "reset",  "event"};

/* Pushes an event's payload: the core's value, or a Lua one kept for it
** (nil when the trace could not keep it). */
static void pushpayload(lua_State *L, const bonsai_value *v) {
  switch (v->type) {
  case BONSAI_TBOOLEAN: lua_pushboolean(L, v->u.b); break;
  case BONSAI_TINTEGER: lua_pushinteger(L, (lua_Integer)v->u.i); break;
  case BONSAI_TNUMBER: lua_pushnumber(L, v->u.n); break;
  case BONSAI_TSTRING: lua_pushlstring(L, v->u.str.s, v->u.str.len); break;
  case BONSAI_THANDLE: lb_payload_push(L, CONTEXT, v->u.handle); break;
  default: lua_pushnil(L); break;
  }
}

/* a:trace([n | false]): returns the agent */
static int agent_trace(lua_State *L) {
  bonsai_agent *a;
  lua_Integer n = 1024;
  int r;
  lua_settop(L, 2);
  a = agentof(lb_checkagent(L, 1));
  if (lua_isboolean(L, 2) && !lua_toboolean(L, 2))
    n = 0;
  else if (!lua_isnoneornil(L, 2) && !lua_isboolean(L, 2))
    n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0 && n <= 0x10000000, 2, "size out of range");
  if ((r = bonsai_agent_trace(a, (unsigned)n)) != BONSAI_OK)
    return luaL_error(L, "out of memory");
  lua_settop(L, 1);
  return 1;
}

/* Pushes the path of the event's node. */
static void pushpath(lua_State *L, const bonsai_agent *a,
                     const bonsai_event *e) {
  luaL_Buffer b;
  size_t len = bonsai_agent_event_path(a, e, NULL, 0);
  bonsai_agent_event_path(a, e, luaL_buffinitsize(L, &b, len + 1), len + 1);
  luaL_pushresultsize(&b, len);
}

/* One event as a table (stack: ..., list); ids: the node as its 0-based
** index ('id') instead of its path. */
static void pushevent(lua_State *L, const bonsai_agent *a,
                      const bonsai_event *e, int ids) {
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, (lua_Integer)e->tick);
  lua_setfield(L, -2, "tick");
  lua_pushnumber(L, e->time);
  lua_setfield(L, -2, "time");
  if (e->kind == BONSAI_TRACE_EVENT) { /* an event delivered: its name */
    lua_pushliteral(L, "event");
    lua_setfield(L, -2, "event");
    lua_pushstring(L, e->message);
    lua_setfield(L, -2, "name");
    pushpayload(L, &e->payload);
    lua_setfield(L, -2, "payload");
    return;
  }
  if (e->kind != BONSAI_TRACE_STATUS) {
    lua_pushstring(L, marknames[e->kind]);
    lua_setfield(L, -2, "event");
  } else {
    lua_pushstring(L, bonsai_status_name(e->status));
    lua_setfield(L, -2, "status");
    if (e->again) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "again");
    }
    if (e->forced) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "forced");
    }
    if (e->cutoff) { /* a latent abort cut off by its abort_timeout */
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "cutoff");
    }
  }
  if (e->node != BONSAI_NONE) {
    if (ids) {
      lua_pushinteger(L, (lua_Integer)e->node);
      lua_setfield(L, -2, "id");
    } else {
      pushpath(L, a, e);
      lua_setfield(L, -2, "node");
    }
  }
  if (e->message != NULL) { /* named as a:tick's error names it */
    const char *name = bonsai_tree_name(bonsai_agent_tree(a));
    if (e->node != BONSAI_NONE) {
      pushpath(L, a, e);
      lua_pushfstring(L, "tree '%s' node '%s': %s", name,
                      lua_tostring(L, -1), e->message);
      lua_remove(L, -2);
    } else {
      lua_pushfstring(L, "tree '%s': %s", name, e->message);
    }
    lua_setfield(L, -2, "message");
  }
}

/* a:events(["id"]): the recorded events, oldest first, then forgets them;
** with "id", nodes are given as 0-based indices (field id). */
static int agent_events(lua_State *L) {
  bonsai_agent *a;
  int ids;
  bonsai_event ev[BATCH];
  unsigned n, k;
  lua_Integer len = 0;
  lua_settop(L, 2);
  a = agentof(lb_checkagent(L, 1));
  ids = lua_type(L, 2) == LUA_TSTRING &&
        strcmp(lua_tostring(L, 2), "id") == 0;
  lua_createtable(L, (int)bonsai_agent_events(a, NULL, 0), 0);
  while ((n = bonsai_agent_events(a, ev, BATCH)) > 0)
    for (k = 0; k < n; k++) {
      pushevent(L, a, &ev[k], ids);
      lua_rawseti(L, -2, ++len);
    }
  return 1;
}

/* a:_tick_events(): the waiting events as the recorder wants them, read
** and forgotten: a list of codes id * 32 + forced * 16 + status * 2 + again
** for the
** status events after the last reload (0-based ids, in the version the
** agent runs), the tick of the last event (or nil), a bit set of the
** agent events seen (bit k: BONSAI_TRACE_* kind k), and the events
** delivered ({ name, payload } each), or nil. One table a tick. */
static int agent_tick_events(lua_State *L) {
  bonsai_agent *a;
  bonsai_event ev[BATCH];
  unsigned n, k;
  lua_Integer len = 0, tick = -1, marks = 0, nev = 0;
  lua_settop(L, 1);
  a = agentof(lb_checkagent(L, 1)); /* state at 2 */
  lua_createtable(L, (int)bonsai_agent_events(a, NULL, 0), 0); /* 3 */
  lua_pushnil(L); /* 4: the events delivered */
  while ((n = bonsai_agent_events(a, ev, BATCH)) > 0)
    for (k = 0; k < n; k++) {
      const bonsai_event *e = &ev[k];
      tick = (lua_Integer)e->tick;
      if (e->kind == BONSAI_TRACE_EVENT) {
        if (nev == 0) {
          lua_newtable(L);
          lua_replace(L, 4);
        }
        lua_createtable(L, 2, 0);
        lua_pushstring(L, e->message);
        lua_rawseti(L, -2, 1);
        pushpayload(L, &e->payload);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, 4, ++nev);
        continue;
      }
      if (e->kind == BONSAI_TRACE_STATUS) {
        lua_pushinteger(L, (lua_Integer)e->node * 32 + e->forced * 16 +
                               e->status * 2 + e->again);
        lua_rawseti(L, 3, ++len);
        continue;
      }
      marks |= (lua_Integer)1 << e->kind;
      if (e->kind == BONSAI_TRACE_RELOAD) /* the old version's events go */
        for (; len > 0; len--) {
          lua_pushnil(L);
          lua_rawseti(L, 3, len);
        }
    }
  lua_pushvalue(L, 3);
  if (tick < 0)
    lua_pushnil(L);
  else
    lua_pushinteger(L, tick);
  lua_pushinteger(L, marks);
  lua_pushvalue(L, 4);
  return 4;
}

/* a:freeze(true | false | "step"): frozen agents are not ticked; "step"
** lets exactly one tick run, then the agent is frozen again. */
static int agent_freeze(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  la = lb_checkagent(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING) {
    luaL_argcheck(L, strcmp(lua_tostring(L, 2), "step") == 0, 2,
                  "true, false or \"step\" expected");
    la->frozen = 2;
  } else {
    la->frozen = lua_toboolean(L, 2) ? 1 : 0;
  }
  lua_settop(L, 1);
  return 1;
}

/* a:frozen(): true while frozen (a step not yet taken counts) */
static int agent_frozen(lua_State *L) {
  lua_pushboolean(L, lb_checkagent(L, 1)->frozen != 0);
  return 1;
}

/* a:_on_tick(fn | nil): fn(agent, status, err) after each tick of the
** agent (status nil and err the message when the tick raised); the one
** hook that bonsai.subscribe multiplexes */
static int agent_on_tick(lua_State *L) {
  LAgent *la;
  lua_settop(L, 2);
  la = lb_checkagent(L, 1); /* state at 3 */
  if (!lua_isnil(L, 2))
    luaL_checktype(L, 2, LUA_TFUNCTION);
  lb_extra(L, 3, CONTEXT, 1);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "hook");
  la->hooked = !lua_isnil(L, 2);
  return 0;
}

/* a:_kept(name [, value]): the Lua value the Lua modules keep with the
** agent under name (bonsai.subscribe: its subscriptions); with value
** given (nil too), sets it first. Kept in the agent's own storage, beside
** its state (its environment on Lua 5.1 and LuaJIT), so a value that refers
** to the agent (a subscriber that names it) does not keep it alive, as a
** weak-keyed table would where weak tables are no ephemerons. */
static int agent_kept(lua_State *L) {
  int set = lua_gettop(L) >= 3;
  lua_settop(L, 3);
  lb_checkagent(L, 1); /* state at 4 */
  luaL_checkstring(L, 2);
  lb_extra(L, 4, CONTEXT, set); /* 5 */
  if (!lua_istable(L, 5))
    return 0;
  if (lua_getfield(L, 5, "kept") != LUA_TTABLE) { /* 6 */
    if (!set)
      return 0;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, 5, "kept");
  }
  if (set) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, 3);
    lua_rawset(L, 6);
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, 6);
  return 1;
}

/* The core's trace hook of an agent with a:_on_event: during the agent's
** own tick (the innermost under way), calls its function with the event's
** kind ("status", "reload", ...) and, for a status event, its code as
** a:_tick_events gives it; an error from it is dropped. */
static void eventhook(bonsai_agent *a, const bonsai_event *e, void *ud) {
  LTick *t = ((LBonsai *)ud)->ticking;
  lua_State *L;
  int top;
  if (t == NULL || t->a != a)
    return;
  L = t->L;
  if (!lua_checkstack(L, 4))
    return;
  top = lua_gettop(L);
  lb_extra(L, t->state, t->ctx, 0);
  if (lua_istable(L, -1) && lua_getfield(L, -1, "evhook") == LUA_TFUNCTION) {
    lua_pushstring(L, marknames[e->kind]);
    lua_pushinteger(L, (lua_Integer)e->node * 32 + e->forced * 16 +
                           e->status * 2 + e->again);
    (void)lua_pcall(L, 2, 0, 0);
  }
  lua_settop(L, top);
}

/* a:_on_event(fn | nil): fn(kind, code) after each event that the agent's trace
** records during its own ticks, at the status door (bonsai_agent_trace_hook:
** fn may read the blackboard, nothing more); the agent must be traced, and
** the hook goes with its trace. For bt.debug's step through a tick. */
static int agent_on_event(lua_State *L) {
  bonsai_agent *a;
  lua_settop(L, 2);
  a = agentof(lb_checkagent(L, 1)); /* state at 3 */
  if (!lua_isnil(L, 2))
    luaL_checktype(L, 2, LUA_TFUNCTION);
  if (bonsai_agent_trace_hook(a, lua_isnil(L, 2) ? NULL : eventhook,
                              lb_context(L)) != BONSAI_OK)
    return luaL_error(L, "the agent is not traced");
  lb_extra(L, 3, CONTEXT, 1);
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "evhook");
  return 0;
}

/* a:node_statuses(): { [id] = status } for the nodes that are not idle
** (0-based ids, in the version the agent runs) */
static int agent_node_statuses(lua_State *L) {
  bonsai_agent *a = agentof(lb_checkagent(L, 1));
  unsigned i, n = bonsai_agent_nodes(a);
  lua_newtable(L);
  for (i = 0; i < n; i++) {
    int s = bonsai_agent_node_status(a, i);
    if (s != BONSAI_IDLE) {
      lua_pushstring(L, bonsai_status_name(s));
      lua_rawseti(L, -2, (lua_Integer)i);
    }
  }
  return 1;
}

/* Pushes parameter p (BONSAI_P_*) of the node n describes. */
static void pushparam(lua_State *L, const bonsai_nodeinfo *n, int p) {
  switch (p) {
  case BONSAI_P_TIMES: lua_pushinteger(L, (lua_Integer)n->times); break;
  case BONSAI_P_SECONDS: lua_pushnumber(L, n->seconds); break;
  case BONSAI_P_SUCCESS: lua_pushinteger(L, (lua_Integer)n->success); break;
  case BONSAI_P_FAILURE: lua_pushinteger(L, (lua_Integer)n->failure); break;
  case BONSAI_P_KEY: lua_pushstring(L, n->key); break; /* (NULL: nil) */
  case BONSAI_P_OP: lua_pushstring(L, n->op); break;
  case BONSAI_P_VALUE:
    if (n->valuekey != NULL)
      lua_pushfstring(L, "$%s", n->valuekey);
    else
      switch (n->value.type) {
      case BONSAI_TBOOLEAN: lua_pushboolean(L, n->value.u.b); break;
      case BONSAI_TINTEGER: lua_pushinteger(L, n->value.u.i); break;
      case BONSAI_TNUMBER: lua_pushnumber(L, n->value.u.n); break;
      case BONSAI_TSTRING:
        lua_pushlstring(L, n->value.u.str.s, n->value.u.str.len);
        break;
      default: lua_pushnil(L); break;
      }
    break;
  case BONSAI_P_ABORT: lua_pushstring(L, n->abort); break;
  case BONSAI_P_WAIT: lua_pushboolean(L, n->wait); break;
  case BONSAI_P_THEN_SKIP: lua_pushboolean(L, n->then_skip); break;
  case BONSAI_P_EVENT: lua_pushstring(L, n->event); break;
  case BONSAI_P_TIMEOUT: /* -1: none */
    if (n->timeout >= 0)
      lua_pushnumber(L, n->timeout);
    else
      lua_pushnil(L);
    break;
  case BONSAI_P_ABORT_TIMEOUT:
    if (n->abort_timeout >= 0)
      lua_pushnumber(L, n->abort_timeout);
    else
      lua_pushnil(L);
    break;
  default: lua_pushnil(L); break;
  }
}

/* Sets the parameters of the node in the table on top: each its kind takes
** (bonsai_kindinfo.takes), and a named leaf's name. */
static void setparams(lua_State *L, const bonsai_nodeinfo *n) {
  bonsai_kindinfo ki;
  int p;
  if (n->leaf != NULL) {
    lua_pushstring(L, n->leaf);
    lua_setfield(L, -2, "leaf");
  }
  if (bonsai_kind_info(n->kind, &ki) != BONSAI_OK)
    return;
  for (p = 0; p < BONSAI_NPARAMS; p++)
    if (ki.takes & (1u << p)) {
      pushparam(L, n, p);
      lua_setfield(L, -2, bonsai_param_name(p));
    }
}

/* Pushes the path of node i, of the version the agent runs (a not NULL)
** or of the tree's current one. */
static void pushnodepath(lua_State *L, const bonsai_tree *t,
                         const bonsai_agent *a, unsigned i) {
  luaL_Buffer b;
  size_t len = a != NULL ? bonsai_agent_node_path(a, i, NULL, 0)
                         : bonsai_tree_node_path(t, i, NULL, 0);
  char *buf = luaL_buffinitsize(L, &b, len + 1);
  if (a != NULL)
    bonsai_agent_node_path(a, i, buf, len + 1);
  else
    bonsai_tree_node_path(t, i, buf, len + 1);
  luaL_pushresultsize(&b, len);
}

/* Pushes text (which, part) of node i (bonsai_*_node_text) as a string, or
** nothing and returns 0 when it has none. */
static int pushtext(lua_State *L, const bonsai_tree *t, const bonsai_agent *a,
                    unsigned i, int which, int part) {
  luaL_Buffer b;
  size_t len = a != NULL ? bonsai_agent_node_text(a, i, which, part, NULL, 0)
                         : bonsai_tree_node_text(t, i, which, part, NULL, 0);
  char *buf;
  if (len == 0)
    return 0;
  buf = luaL_buffinitsize(L, &b, len + 1);
  if (a != NULL)
    bonsai_agent_node_text(a, i, which, part, buf, len + 1);
  else
    bonsai_tree_node_text(t, i, which, part, buf, len + 1);
  luaL_pushresultsize(&b, len);
  return 1;
}

/* Appends to the list on top the keys of text (which, 1) of node i not in
** it yet. */
static void addkeys(lua_State *L, const bonsai_tree *t, const bonsai_agent *a,
                    unsigned i, int which) {
  const char *p;
  if (!pushtext(L, t, a, i, which, 1))
    return;
  for (p = lua_tostring(L, -1); *p != '\0';) {
    size_t len = strcspn(p, " ");
    lua_Integer j, n = (lua_Integer)lua_rawlen(L, -2);
    for (j = 1; j <= n && len > 0; j++) { /* a few keys: a linear scan */
      size_t l;
      const char *k;
      lua_rawgeti(L, -2, j);
      k = lua_tolstring(L, -1, &l);
      lua_pop(L, 1);
      if (l == len && memcmp(k, p, len) == 0)
        break;
    }
    if (len > 0 && j > n) {
      lua_pushlstring(L, p, len);
      lua_rawseti(L, -3, n + 1);
    }
    p += len + (p[len] == ' ');
  }
  lua_pop(L, 1);
}

/* Sets in the node table on top what node i's texts say: 'script' (its
** script's source, or a check's comparison), 'conditions' ({ skip_if =
** source, ... } for its conditions given as scripts or checks) and 'keys'
** (the keys they read or write, a list, each once; absent when none). */
static void settexts(lua_State *L, const bonsai_tree *t, const bonsai_agent *a,
                     unsigned i) {
  int k, any = 0;
  if (pushtext(L, t, a, i, BONSAI_TEXT_NODE, 0)) {
    lua_setfield(L, -2, "script");
    any = 1;
  }
  for (k = 0; k < BONSAI_NCONDS; k++)
    if (pushtext(L, t, a, i, k, 0)) {
      if (lua_getfield(L, -2, "conditions") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -4, "conditions");
      }
      lua_insert(L, -2);
      lua_setfield(L, -2, bonsai_cond_name(k));
      lua_pop(L, 1);
      any = 1;
    }
  if (!any)
    return;
  lua_newtable(L);
  for (k = BONSAI_TEXT_NODE; k < BONSAI_NCONDS; k++)
    addkeys(L, t, a, i, k);
  if (lua_rawlen(L, -1) > 0)
    lua_setfield(L, -2, "keys");
  else
    lua_pop(L, 1); /* ("true" reads none) */
}

/* tree:nodes([agent]): the nodes of the version the agent runs (else the
** tree's current one) in pre-order, as { id, name, type, parent, path,
** params, hidden, status (with an agent), script, keys, conditions (see
** settexts) }, ids 0-based; then the version's id (unique among the
** versions of every tree) */
static int tree_nodes(lua_State *L) {
  LTree *lt;
  const bonsai_agent *a = NULL;
  unsigned i, n;
  bonsai_nodeinfo info;
  lua_settop(L, 2);
  lt = lb_checktree(L, 1);
  if (!lua_isnoneornil(L, 2)) {
    a = agentof(lb_checkagent(L, 2));
    luaL_argcheck(L, bonsai_agent_tree(a) == lt->t, 2,
                  "agent of another tree");
  }
  n = a != NULL ? bonsai_agent_nodes(a) : bonsai_tree_size(lt->t);
  lua_settop(L, 2);
  lua_createtable(L, (int)n, 0);
  for (i = 0; i < n; i++) {
    if ((a != NULL ? bonsai_agent_node_info(a, i, &info)
                   : bonsai_tree_node_info(lt->t, i, &info)) != BONSAI_OK)
      break; /* a shared tree reloaded meanwhile by another thread */
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, (lua_Integer)i);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, bonsai_kind_name(info.kind));
    lua_setfield(L, -2, "type");
    if (info.parent != BONSAI_NONE) {
      lua_pushinteger(L, (lua_Integer)info.parent);
      lua_setfield(L, -2, "parent");
    }
    pushnodepath(L, lt->t, a, i);
    lua_setfield(L, -2, "path");
    if (info.hidden) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "hidden");
    }
    lua_newtable(L);
    setparams(L, &info);
    lua_setfield(L, -2, "params");
    settexts(L, lt->t, a, i);
    if (a != NULL) {
      lua_pushstring(L, bonsai_status_name(bonsai_agent_node_status(a, i)));
      lua_setfield(L, -2, "status");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushinteger(L, (lua_Integer)(a != NULL ? bonsai_agent_version_id(a)
                                             : bonsai_tree_version_id(lt->t)));
  return 2;
}

/* tree:_profile([on]): on true starts the tree's profile from zero, false
** stops it; returns { on =, version = (id, as tree:nodes), ticks =, time =,
** nodes = { { id, path, name,
** type, calls, runtime, leaf }... } } (nodes empty when there is no
** profile of the current version). bonsai.profile makes it tree:profile. */
static int tree_profile(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  bonsai_profile pr;
  bonsai_profile_node *nodes;
  unsigned i, n;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TBOOLEAN);
    if (bonsai_tree_profile(lt->t, lua_toboolean(L, 2)) != BONSAI_OK)
      return luaL_error(L, "out of memory");
  }
  n = bonsai_tree_profile_read(lt->t, &pr, NULL, 0);
  nodes = lua_newuserdata(L, (n > 0 ? n : 1) * sizeof *nodes);
  n = bonsai_tree_profile_read(lt->t, &pr, nodes, n);
  lua_createtable(L, 0, 5);
  lua_pushboolean(L, pr.on);
  lua_setfield(L, -2, "on");
  lua_pushinteger(L, (lua_Integer)bonsai_tree_version_id(lt->t));
  lua_setfield(L, -2, "version");
  lua_pushinteger(L, (lua_Integer)pr.ticks);
  lua_setfield(L, -2, "ticks");
  lua_pushnumber(L, pr.time);
  lua_setfield(L, -2, "time");
  lua_createtable(L, (int)n, 0);
  for (i = 0; i < n; i++) {
    bonsai_nodeinfo info;
    if (bonsai_tree_node_info(lt->t, i, &info) != BONSAI_OK)
      break; /* a shared tree reloaded meanwhile by another thread */
    lua_createtable(L, 0, 7);
    lua_pushinteger(L, (lua_Integer)i);
    lua_setfield(L, -2, "id");
    pushnodepath(L, lt->t, NULL, i);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, bonsai_kind_name(info.kind));
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, (lua_Integer)nodes[i].calls);
    lua_setfield(L, -2, "calls");
    lua_pushnumber(L, nodes[i].runtime);
    lua_setfield(L, -2, "runtime");
    lua_pushnumber(L, nodes[i].leaf);
    lua_setfield(L, -2, "leaf");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "nodes");
  return 1;
}

/*
** {======================================================
** Fault injection: a:force, a:forced, tree:force
** =======================================================
*/

/* The node at idx: a 0-based index or a path, in the version the agent
** runs (a not NULL) or the tree's current one. */
static unsigned checknode(lua_State *L, int idx, const bonsai_tree *t,
                          const bonsai_agent *a) {
  unsigned i, n = a != NULL ? bonsai_agent_nodes(a) : bonsai_tree_size(t);
  const char *path;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    lua_Integer id = luaL_checkinteger(L, idx);
    if (id < 0 || id >= (lua_Integer)n)
      luaL_argerror(L, idx, lua_pushfstring(L, "no node %d in tree '%s' "
                    "(ids 0 to %d)", (int)id, bonsai_tree_name(t), (int)n - 1));
    return (unsigned)id;
  }
  path = luaL_checkstring(L, idx);
  for (i = 0; i < n; i++) {
    pushnodepath(L, t, a, i);
    if (strcmp(lua_tostring(L, -1), path) == 0) {
      lua_pop(L, 1);
      return i;
    }
    lua_pop(L, 1);
  }
  luaL_argerror(L, idx, lua_pushfstring(L, "no node '%s' in tree '%s'", path,
                                        bonsai_tree_name(t)));
  return 0;
}

/* The status at idx: "success", "failure", or nil/false (removed). */
static int checkforced(lua_State *L, int idx) {
  static const char *const names[] = {"success", "failure", NULL};
  if (lua_isnoneornil(L, idx) ||
      (lua_isboolean(L, idx) && !lua_toboolean(L, idx)))
    return BONSAI_IDLE;
  return luaL_checkoption(L, idx, NULL, names) == 0 ? BONSAI_SUCCESS
                                                     : BONSAI_FAILURE;
}

static unsigned checkticks(lua_State *L, int idx) {
  lua_Integer n = luaL_optinteger(L, idx, 0);
  luaL_argcheck(L, n >= 0 && n <= 0x7fffffff, idx,
                "ticks: a count of ticks (0: until removed)");
  return (unsigned)n;
}

/* a:force(node, status [, ticks]): node (path or 0-based id) returns
** status ("success" or "failure") without running for the agent's next
** ticks ticks (0 or nil: until removed); status nil removes it. Returns
** the agent. */
static int agent_force(lua_State *L) {
  bonsai_agent *a;
  lua_settop(L, 4);
  a = agentof(lb_checkagent(L, 1));
  unsigned node = checknode(L, 2, bonsai_agent_tree(a), a);
  int status = checkforced(L, 3);
  if (bonsai_agent_force(a, node, status, checkticks(L, 4)) != BONSAI_OK)
    return luaL_error(L, "out of memory");
  lua_settop(L, 1);
  return 1;
}

/* a:forced(node): the status forced on the node and the ticks it has left
** (0: until removed), or nil. */
static int agent_forced(lua_State *L) {
  bonsai_agent *a;
  unsigned left, node;
  int s;
  lua_settop(L, 2);
  a = agentof(lb_checkagent(L, 1));
  node = checknode(L, 2, bonsai_agent_tree(a), a);
  s = bonsai_agent_forced(a, node, &left);
  if (s == BONSAI_IDLE)
    return 0;
  lb_pushstatus(L, s);
  lua_pushinteger(L, (lua_Integer)left);
  return 2;
}

/* tree:force(node, status [, ticks]): a:force on every agent of the tree
** that runs its current version. Returns the tree. */
static int tree_force(lua_State *L) {
  LTree *lt;
  lua_settop(L, 4);
  lt = lb_checktree(L, 1);
  unsigned node = checknode(L, 2, lt->t, NULL);
  int status = checkforced(L, 3);
  if (bonsai_tree_force(lt->t, node, status, checkticks(L, 4)) != BONSAI_OK)
    return luaL_error(L, "out of memory");
  lua_settop(L, 1);
  return 1;
}

/* }====================================================== */

static const luaL_Reg agent_methods[] = {
    {"trace", agent_trace},
    {"events", agent_events},
    {"_tick_events", agent_tick_events}, /* for bonsai.subscribe */
    {"freeze", agent_freeze},
    {"frozen", agent_frozen},
    {"_on_tick", agent_on_tick}, /* for bonsai.subscribe */
    {"_kept", agent_kept}, /* for bonsai.subscribe and bonsai.record */
    {"_on_event", agent_on_event}, /* for bonsai.debug */
    {"node_statuses", agent_node_statuses},
    {"force", agent_force},
    {"forced", agent_forced},
    {NULL, NULL}};

static const luaL_Reg tree_methods[] = {{"nodes", tree_nodes},
                                        {"_profile", tree_profile},
                                        {"force", tree_force},
                                        {NULL, NULL}};

/* stack: context. After lb_open_tree and lb_open_agent. */
void lb_open_trace(lua_State *L) {
  lb_addmethods(L, BS_AGENT_T, agent_methods);
  lb_addmethods(L, BS_TREE_T, tree_methods);
}
