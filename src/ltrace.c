/*
** ltrace.c: the Lua side of traces and the debugger: a:trace, a:events,
** the per-agent tick hook that bt.record and bt.debug use (a:on_tick),
** freezing agents at breakpoints (a:freeze), and tree:nodes, the structure
** of a tree version that trace files, tree:dot and tree:mermaid describe.
** Nothing here runs for an agent that is not traced, hooked or frozen.
*/
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "lbonsai.h"
#include "names.h"
#include "trace.h"

#define CONTEXT lua_upvalueindex(1)

/* Events read from the core per round (a:events loops until none). */
#define BATCH 64

static const char *const statusnames[] = {"idle", "running", "success",
                                          "failure", "aborted"};
static const char *const marknames[] = {"status", "reload", "error",
                                        "interrupt", "reset"};

/* a:trace([n | false]): returns the agent */
int lb_agent_trace(lua_State *L) {
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
  if (e->kind != BONSAI_TRACE_STATUS) {
    lua_pushstring(L, marknames[e->kind]);
    lua_setfield(L, -2, "event");
  } else {
    lua_pushstring(L, statusnames[e->status]);
    lua_setfield(L, -2, "status");
    if (e->again) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "again");
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
    const char *name = bonsai_tree_name(a->tree);
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
int lb_agent_events(lua_State *L) {
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
** and forgotten: a list of codes id * 16 + status * 2 + again for the
** status events after the last reload (0-based ids, in the version the
** agent runs), the tick of the last event (or nil), and a bit set of the
** agent events seen (bit k: BONSAI_TRACE_* kind k). One table a tick. */
int lb_agent_tick_events(lua_State *L) {
  bonsai_agent *a;
  bonsai_event ev[BATCH];
  unsigned n, k;
  lua_Integer len = 0, tick = -1, marks = 0;
  lua_settop(L, 1);
  a = agentof(lb_checkagent(L, 1)); /* state at 2 */
  lua_createtable(L, (int)bonsai_agent_events(a, NULL, 0), 0); /* 3 */
  while ((n = bonsai_agent_events(a, ev, BATCH)) > 0)
    for (k = 0; k < n; k++) {
      const bonsai_event *e = &ev[k];
      tick = (lua_Integer)e->tick;
      if (e->kind == BONSAI_TRACE_STATUS) {
        lua_pushinteger(L, (lua_Integer)e->node * 16 + e->status * 2 +
                               e->again);
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
  if (tick < 0)
    lua_pushnil(L);
  else
    lua_pushinteger(L, tick);
  lua_pushinteger(L, marks);
  return 3;
}

/* a:freeze(true | false | "step"): frozen agents are not ticked; "step"
** lets exactly one tick run, then the agent is frozen again. */
int lb_agent_freeze(lua_State *L) {
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
int lb_agent_frozen(lua_State *L) {
  lua_pushboolean(L, lb_checkagent(L, 1)->frozen != 0);
  return 1;
}

/* a:on_tick(fn | nil): fn(agent, status, err) after each tick of the agent
** (status nil and err the message when the tick raised) */
int lb_agent_on_tick(lua_State *L) {
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

/* a:node_statuses(): { [id] = status } for the nodes that are not idle
** (0-based ids, in the version the agent runs) */
int lb_agent_node_statuses(lua_State *L) {
  bonsai_agent *a = agentof(lb_checkagent(L, 1));
  uint32_t i;
  lua_newtable(L);
  for (i = 0; i < a->bp->n; i++)
    if (a->state[i] != BONSAI_IDLE) {
      lua_pushstring(L, statusnames[a->state[i]]);
      lua_rawseti(L, -2, (lua_Integer)i);
    }
  return 1;
}

/* Sets the parameters of node n in the table on top. */
static void setparams(lua_State *L, const Blueprint *bp, const Node *n) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  static const char *const modes[] = {"none", "self", "lower", "both"};
  bonsai_env *env = bp->env;
  switch (n->kind) {
  case BONSAI_REPEATER: case BONSAI_RETRY: case BONSAI_LIMIT:
    lua_pushinteger(L, (lua_Integer)n->a);
    lua_setfield(L, -2, "times");
    break;
  case BONSAI_WAIT: case BONSAI_TIMEOUT: case BONSAI_TIME_LIMIT:
  case BONSAI_COOLDOWN:
    lua_pushnumber(L, n->secs);
    lua_setfield(L, -2, "seconds");
    break;
  case BONSAI_PARALLEL:
    lua_pushinteger(L, (lua_Integer)n->a);
    lua_setfield(L, -2, "success");
    lua_pushinteger(L, (lua_Integer)n->b);
    lua_setfield(L, -2, "failure");
    break;
  case BONSAI_CHECK: case BONSAI_IS_SET:
    lua_pushstring(L, bonsai_key_name(env, (int)n->a));
    lua_setfield(L, -2, "key");
    if (n->kind == BONSAI_IS_SET)
      break;
    lua_pushstring(L, ops[n->op]);
    lua_setfield(L, -2, "op");
    if (n->flags & NF_KEYREF)
      lua_pushfstring(L, "$%s", bonsai_key_name(env, (int)n->b));
    else
      switch (n->val.type) {
      case BONSAI_TBOOLEAN: lua_pushboolean(L, n->val.u.b); break;
      case BONSAI_TINTEGER: lua_pushinteger(L, n->val.u.i); break;
      case BONSAI_TNUMBER: lua_pushnumber(L, n->val.u.n); break;
      case BONSAI_TSTRING:
        lua_pushlstring(L, n->val.u.str.s, n->val.u.str.len);
        break;
      default: lua_pushnil(L); break;
      }
    lua_setfield(L, -2, "value");
    break;
  case BONSAI_GUARD:
    lua_pushstring(L, modes[n->mode]);
    lua_setfield(L, -2, "abort");
    break;
  case BONSAI_ACTION: case BONSAI_CONDITION:
    if (n->flags & NF_NAMED) {
      lua_pushstring(L, bs_name(BS_LEAVES, n->leaf));
      lua_setfield(L, -2, "leaf");
    }
    break;
  default:
    break;
  }
}

/* tree:nodes([agent]): the nodes of the version the agent runs (else the
** tree's current one) in pre-order, as { id, name, type, parent, path,
** params, hidden, status (with an agent) }, ids 0-based; then the
** version's id (unique among the versions of every tree) */
int lb_tree_nodes(lua_State *L) {
  LTree *lt;
  const bonsai_agent *a = NULL;
  const Blueprint *bp;
  uint32_t i;
  lua_settop(L, 2);
  lt = lb_checktree(L, 1);
  if (!lua_isnoneornil(L, 2)) {
    a = agentof(lb_checkagent(L, 2));
    luaL_argcheck(L, a->tree == lt->t, 2, "agent of another tree");
  }
  bp = a != NULL ? a->bp : lt->t->bp;
  lua_settop(L, 2);
  lua_createtable(L, (int)bp->n, 0);
  for (i = 0; i < bp->n; i++) {
    const Node *n = &bp->nodes[i];
    luaL_Buffer b;
    size_t len = bs_bp_path(bp, i, NULL, 0);
    lua_createtable(L, 0, 8);
    lua_pushinteger(L, (lua_Integer)i);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, bp->pool + n->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, bonsai_kind_name(n->kind));
    lua_setfield(L, -2, "type");
    if (n->parent != BONSAI_NONE) {
      lua_pushinteger(L, (lua_Integer)n->parent);
      lua_setfield(L, -2, "parent");
    }
    bs_bp_path(bp, i, luaL_buffinitsize(L, &b, len + 1), len + 1);
    luaL_pushresultsize(&b, len);
    lua_setfield(L, -2, "path");
    if (n->flags & NF_HIDDEN) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "hidden");
    }
    lua_newtable(L);
    setparams(L, bp, n);
    lua_setfield(L, -2, "params");
    if (a != NULL) {
      lua_pushstring(L, statusnames[a->state[i]]);
      lua_setfield(L, -2, "status");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_pushinteger(L, (lua_Integer)bp->id);
  return 2;
}
