/*
** levents.c: events from Lua: a:send(name, payload), bt.send(list, name,
** payload) and a:dropped_events(). The core queues events per agent and
** delivers them to its next tick (bonsai_agent_send); a payload C cannot
** hold (a table) stays in Lua (lb_payload_keep: one for a whole bt.send)
** and goes to the core as a handle, counted by the core's hooks. The environment's payload writer puts a delivered
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

/* The payload at idx as the core's value; a table's is kept per agent, so
** *table is set. Raises, naming argument idx, for a payload a:save could
** not save (a function, a table with a metatable or a cycle...). */
static void checkpayload(lua_State *L, int idx, bonsai_value *v, int *table) {
  const char *why;
  *table = 0;
  if (lb_tovalue(L, idx, v))
    return; /* nil, a boolean, a number, a string: the core's */
  if ((why = lb_saveable(L, idx, CONTEXT)) == NULL) {
    *table = 1;
    return;
  }
  luaL_argerror(L, idx, lua_pushfstring(L, "a payload is a value a:save "
                                           "can save (nil, a boolean, a "
                                           "number, a string or a plain "
                                           "table): %s", why));
}

/* Sends to the agent whose state is at si. */
static void sendone(lua_State *L, int si, const char *name, bonsai_value v) {
  if (bonsai_agent_send(agentof((LAgent *)lua_touserdata(L, si)), name, v) !=
      BONSAI_OK)
    luaL_error(L, "out of memory");
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
  if (table) { /* kept while the core holds it */
    v.type = BONSAI_THANDLE;
    v.u.handle = lb_payload_keep(L, CONTEXT, 3);
  }
  sendone(L, 4, name, v);
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
  if (table) { /* one handle for them all */
    v.type = BONSAI_THANDLE;
    v.u.handle = lb_payload_keep(L, CONTEXT, 3);
  }
  for (k = 1; k <= n; k++) {
    lua_rawgeti(L, 1, k);
    lb_checkagent(L, -1);
    sendone(L, lua_gettop(L), name, v);
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
  case BONSAI_THANDLE: lb_payload_push(L, t->ctx, v.u.handle); break;
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
