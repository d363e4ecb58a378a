/*
** levents.c: events from Lua: a:send(name, payload), bt.send(list, name,
** payload) and a:dropped_events(). The core queues events per agent and
** delivers them to its next tick (bonsai_agent_send); a payload C cannot
** hold (a table) stays with the agent in Lua (lb_payload_keep) and goes to
** the core as a handle. The environment's payload writer puts a delivered
** payload into the blackboard as a Lua write (bb:set), so observers see
** it. Above agents: lb_open_events adds the methods lagent.c's type
** takes.
*/
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

#define CONTEXT lua_upvalueindex(1)

/* The event name at idx: a non-empty string of at most 1024 bytes without
** a NUL byte, or raises. */
static const char *checkname(lua_State *L, int idx) {
  size_t len;
  const char *s;
  if (lua_type(L, idx) != LUA_TSTRING)
    luaL_typeerror(L, idx, "string (an event name)");
  s = lua_tolstring(L, idx, &len);
  luaL_argcheck(L, len > 0, idx, "an event name is a non-empty string");
  luaL_argcheck(L, len <= BONSAI_MAXNAME, idx,
                "an event name is at most 1024 bytes");
  luaL_argcheck(L, memchr(s, '\0', len) == NULL, idx,
                "an event name cannot contain a NUL byte");
  return s;
}

/* lb_pack of the value at 1, its bytes dropped (a protected call). */
static int packs(lua_State *L) {
  lb_pack(L, 1);
  return 0;
}

/* The payload at idx as the core's value; a table's is kept per agent, so
** *table is set. Raises, naming argument idx, for a payload a:save could
** not save (a function, a table with a metatable or a cycle...). */
static void checkpayload(lua_State *L, int idx, bonsai_value *v, int *table) {
  *table = 0;
  if (lb_tovalue(L, idx, v))
    return; /* nil, a boolean, a number, a string: the core's */
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_pushcfunction(L, packs);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 0, 0) == LUA_OK) {
      *table = 1;
      return;
    }
  } else {
    lua_pushfstring(L, "a %s value cannot be saved", luaL_typename(L, idx));
  }
  luaL_argerror(L, idx, lua_pushfstring(L, "a payload is a value a:save "
                                           "can save (nil, a boolean, a "
                                           "number, a string or a plain "
                                           "table): %s",
                                        lua_tostring(L, -1)));
}

/* Sends to the agent whose state is at si; the payload at pidx (kept
** per agent when 'table'). */
static void sendone(lua_State *L, int si, const char *name, bonsai_value v,
                    int table, int pidx) {
  LAgent *la = (LAgent *)lua_touserdata(L, si);
  if (table) {
    v.type = BONSAI_THANDLE;
    v.u.handle = lb_payload_keep(L, si, CONTEXT, pidx);
  }
  if (bonsai_agent_send(agentof(la), name, v) != BONSAI_OK)
    luaL_error(L, "out of memory");
  if (la->payloads) /* a full queue dropped the oldest */
    lb_payload_prune(L, si, CONTEXT);
}

/* a:send(name [, payload]) */
static int agent_send(lua_State *L) {
  bonsai_value v;
  const char *name;
  int table;
  lua_settop(L, 3);
  lb_checkagent(L, 1); /* state at 4 */
  name = checkname(L, 2);
  checkpayload(L, 3, &v, &table);
  sendone(L, 4, name, v, table, 3);
  return 0;
}

/* bt.send(list, name [, payload]): every entry is checked first, so a bad
** one sends to none. */
int lb_send(lua_State *L) {
  bonsai_value v;
  const char *name;
  lua_Integer n, k;
  int table;
  lua_settop(L, 3);
  luaL_checktype(L, 1, LUA_TTABLE);
  name = checkname(L, 2);
  checkpayload(L, 3, &v, &table);
  n = (lua_Integer)lua_rawlen(L, 1);
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, 1, k);
    if (lb_toagent(L, -1) == NULL)
      return luaL_error(L, "bt.send: element %d is not an agent", (int)k);
    lua_pop(L, 2);
  }
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, 1, k);
    lb_checkagent(L, -1);
    sendone(L, lua_gettop(L), name, v, table, 3);
    lua_pop(L, 2);
  }
  return 0;
}

/* a:dropped_events(): events dropped from its full queue since it was
** made */
static int agent_dropped_events(lua_State *L) {
  lb_checkagent(L, 1);
  lua_pushinteger(L,
                  (lua_Integer)bonsai_agent_dropped_events(
                      agentof((LAgent *)lua_touserdata(L, -1))));
  return 1;
}

/* The environment's payload writer: bb:set(key, payload) on the agent's
** blackboard, so its observers see the write (they may raise, as a leaf
** may). */
static int writepayload(bonsai_agent *a, void *host, int key,
                        bonsai_value v) {
  LTick *t = (LTick *)host;
  lua_State *L;
  if (t == NULL || t->a != a) /* not ticked from Lua: as C writes */
    return bonsai_bb_set(bonsai_agent_bb(a), key, v);
  L = t->L;
  luaL_checkstack(L, 6, "event payload");
  lb_tick_bb(t);
  lua_getfield(L, t->bb, "set"); /* no method shadows it */
  lua_pushvalue(L, t->bb);
  lua_pushstring(L, bonsai_key_name(t->lb->env, key));
  switch (v.type) {
  case BONSAI_TBOOLEAN: lua_pushboolean(L, v.u.b); break;
  case BONSAI_TINTEGER: lua_pushinteger(L, (lua_Integer)v.u.i); break;
  case BONSAI_TNUMBER: lua_pushnumber(L, v.u.n); break;
  case BONSAI_TSTRING: lua_pushlstring(L, v.u.str.s, v.u.str.len); break;
  case BONSAI_THANDLE: lb_payload_push(L, t->state, t->ctx, v.u.handle); break;
  default: lua_pushnil(L); break;
  }
  lua_call(L, 3, 0);
  return BONSAI_OK;
}

static const luaL_Reg agent_methods[] = {
    {"send", agent_send},
    {"dropped_events", agent_dropped_events},
    {NULL, NULL}};

/* stack: context. After lb_open_agent: a:send, a:dropped_events, and the
** environment's payload writer. */
void lb_open_events(lua_State *L) {
  lb_addmethods(L, BS_AGENT_T, agent_methods);
  bonsai_env_payload_writer(((LBonsai *)lua_touserdata(L, -1))->env,
                            writepayload);
}
