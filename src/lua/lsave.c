/*
** lsave.c: a:save() and bt.agent(tree, { restore = s }). The core writes
** and reads the agent's state (bonsai_agent_save/restore); this file is its
** host for the blackboard values and event payloads only Lua holds: plain tables (nested, no
** metatables, no cycles) of booleans, numbers and strings, written after
** the tag BONSAI_SAVE_HOST with the core's scalar tags plus one for tables.
** The bytes read back are untrusted: bounded, depth-limited, checked.
** The same encoding carries a shared tree's args tables to other states
** (lb_pack, lb_unpack for ltree.c). Below trees and agents: lb_open_save
** adds a:save to the agent methods lagent.c made.
*/
#include <stdio.h>
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

/* A:save()'s prefix when bt.control memories come before the core's bytes
** (docs/SAVE_FORMAT.md). */
#define LUASAVE_MAGIC "BNSL"

/* Tags, as the core's (docs/SAVE_FORMAT.md), plus tables. */
enum { TAG_FALSE = 1, TAG_TRUE, TAG_INT, TAG_NUM, TAG_STR, TAG_TABLE = 7 };
#define MAXDEPTH 100

typedef struct Host {
  lua_State *L;
  bonsai_env *env;
  int bb;     /* stack index of the blackboard userdata */
  int ci;     /* the context (its event payloads) */
  int seen;   /* stack index of a table of tables being written (cycles) */
  const char *error;
  char msg[64];
  void (*write)(void *wud, const void *p, size_t n);
  void *wud;
} Host;

/* Where a:save() writes: bytes gathered in buf, then as pieces in the
** table at stack index 'pieces' (the stack is busy with the values being
** written, so no luaL_Buffer). */
typedef struct Sink {
  lua_State *L;
  int pieces;
  lua_Integer n;
  size_t len;
  char buf[1024];
} Sink;

static void flush(Sink *k) {
  if (k->len == 0)
    return;
  lua_pushlstring(k->L, k->buf, k->len);
  lua_rawseti(k->L, k->pieces, ++k->n);
  k->len = 0;
}

static void addpiece(void *ud, const void *p, size_t n) {
  Sink *k = (Sink *)ud;
  if (k->len + n > sizeof k->buf)
    flush(k);
  if (n > sizeof k->buf) {
    lua_pushlstring(k->L, (const char *)p, n);
    lua_rawseti(k->L, k->pieces, ++k->n);
    return;
  }
  memcpy(k->buf + k->len, p, n);
  k->len += n;
}

/* {======================================================
** Writing
** ======================================================= */

static void out(Host *h, const void *p, size_t n) { h->write(h->wud, p, n); }

static void out8(Host *h, unsigned v) {
  unsigned char b = (unsigned char)v;
  out(h, &b, 1);
}

static void out64(Host *h, unsigned long long v) {
  unsigned char b[8];
  int k;
  for (k = 0; k < 8; k++)
    b[k] = (unsigned char)(v >> (8 * k));
  out(h, b, 8);
}

static void out32(Host *h, size_t v) {
  unsigned char b[4];
  int k;
  for (k = 0; k < 4; k++)
    b[k] = (unsigned char)(v >> (8 * k));
  out(h, b, 4);
}

/* A value that cannot be saved: pops n, keeps why (NULL: already kept). */
static int refuse(lua_State *L, Host *h, int n, const char *why) {
  lua_pop(L, n);
  if (why != NULL)
    h->error = why;
  return -1;
}

/* Writes the Lua value at idx; 0, or -1 with h->error. */
static int encode(Host *h, int idx, int depth) {
  lua_State *L = h->L;
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TBOOLEAN:
    out8(h, lua_toboolean(L, idx) ? TAG_TRUE : TAG_FALSE);
    return 0;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      out8(h, TAG_INT);
      out64(h, (unsigned long long)lua_tointeger(L, idx));
    } else {
      double d = lua_tonumber(L, idx);
      unsigned long long v;
      memcpy(&v, &d, sizeof v);
      out8(h, TAG_NUM);
      out64(h, v);
    }
    return 0;
  case LUA_TSTRING: {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    if (len > 0xffffffffu)
      return refuse(L, h, 0, "a string too long to save");
    out8(h, TAG_STR);
    out32(h, len);
    out(h, s, len);
    return 0;
  }
  case LUA_TTABLE: {
    size_t n = 0;
    if (depth >= MAXDEPTH)
      return refuse(L, h, 0, "tables nested too deep to save");
    if (lua_getmetatable(L, idx))
      return refuse(L, h, 1, "a table with a metatable cannot be saved");
    lua_pushvalue(L, idx);
    if (lua_rawget(L, h->seen) != LUA_TNIL)
      return refuse(L, h, 1, "a table that contains itself cannot be saved");
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, h->seen);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
      lua_pop(L, 1);
      n++;
    }
    out8(h, TAG_TABLE);
    out32(h, n);
    luaL_checkstack(L, 4, "save");
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) { /* stack: key, value */
      int t = lua_type(L, -2);
      if (t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
        return refuse(L, h, 2, "a table key of this type cannot be saved");
      if (encode(h, -2, depth + 1) != 0 || encode(h, -1, depth + 1) != 0)
        return refuse(L, h, 2, NULL);
      lua_pop(L, 1);
    }
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_rawset(L, h->seen); /* the same table twice is fine, not nested */
    return 0;
  }
  default: /* functions, userdata, threads; nil only inside nothing */
    snprintf(h->msg, sizeof h->msg, "a %s value cannot be saved",
             luaL_typename(L, idx));
    h->error = h->msg;
    return -1;
  }
}

/* The core asks for the Lua value of a blackboard handle. */
static int savehandle(void *ud, bonsai_agent *a, int key, long long handle,
                      void (*write)(void *wud, const void *p, size_t n),
                      void *wud) {
  Host *h = (Host *)ud;
  lua_State *L = h->L;
  int r;
  (void)handle;
  h->write = write;
  h->wud = wud;
  lua_getfield(L, h->bb, "get"); /* bb:get(name): no method shadows it */
  lua_pushvalue(L, h->bb);
  (void)a;
  lua_pushstring(L, bonsai_key_name(h->env, key));
  lua_call(L, 2, 1);
  r = encode(h, -1, 0);
  lua_pop(L, 1);
  return r == 0 ? BONSAI_OK : BONSAI_ERROR;
}

/* The core asks for the Lua value of a queued event's payload. */
static int savepayload(void *ud, bonsai_agent *a, long long handle,
                       void (*write)(void *wud, const void *p, size_t n),
                       void *wud) {
  Host *h = (Host *)ud;
  int r;
  (void)a;
  h->write = write;
  h->wud = wud;
  lb_payload_push(h->L, h->ci, handle);
  r = encode(h, -1, 0);
  lua_pop(h->L, 1);
  return r == 0 ? BONSAI_OK : BONSAI_ERROR;
}

static const char *saveerror(void *ud) { return ((Host *)ud)->error; }

/* }====================================================== */

/* {======================================================
** Reading
** ======================================================= */

typedef struct Src {
  const unsigned char *p;
  size_t n, at;
} Src;

static int need(Src *s, size_t n) { return n <= s->n - s->at; }

static unsigned long long in64(Src *s) {
  unsigned long long v = 0;
  int k;
  for (k = 7; k >= 0; k--)
    v = (v << 8) | s->p[s->at + (size_t)k];
  s->at += 8;
  return v;
}

static size_t in32(Src *s) {
  size_t v = 0;
  int k;
  for (k = 3; k >= 0; k--)
    v = (v << 8) | s->p[s->at + (size_t)k];
  s->at += 4;
  return v;
}

/* Pushes the value read from s; 0, or -1 (nothing pushed) on bad bytes. */
static int decode(lua_State *L, Src *s, int depth) {
  unsigned tag;
  if (!need(s, 1) || depth > MAXDEPTH)
    return -1;
  tag = s->p[s->at++];
  switch (tag) {
  case TAG_FALSE: case TAG_TRUE:
    lua_pushboolean(L, tag == TAG_TRUE);
    return 0;
  case TAG_INT:
    if (!need(s, 8))
      return -1;
    lua_pushinteger(L, (lua_Integer)in64(s));
    return 0;
  case TAG_NUM: {
    unsigned long long v;
    double d;
    if (!need(s, 8))
      return -1;
    v = in64(s);
    memcpy(&d, &v, sizeof d);
    lua_pushnumber(L, d);
    return 0;
  }
  case TAG_STR: {
    size_t len;
    if (!need(s, 4))
      return -1;
    len = in32(s);
    if (!need(s, len))
      return -1;
    lua_pushlstring(L, (const char *)s->p + s->at, len);
    s->at += len;
    return 0;
  }
  case TAG_TABLE: {
    size_t n, k;
    if (!need(s, 4))
      return -1;
    n = in32(s);
    if (n > s->n - s->at) /* each pair takes at least two bytes */
      return -1;
    luaL_checkstack(L, 4, "restore");
    lua_createtable(L, 0, 0);
    for (k = 0; k < n; k++) {
      int t;
      if (decode(L, s, depth + 1) != 0) {
        lua_pop(L, 1);
        return -1;
      }
      t = lua_type(L, -1);
      if ((t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TBOOLEAN) ||
          (t == LUA_TNUMBER && lua_tonumber(L, -1) != lua_tonumber(L, -1)) ||
          decode(L, s, depth + 1) != 0) { /* a bad key, or no value */
        lua_pop(L, 2);
        return -1;
      }
      lua_rawset(L, -3);
    }
    return 0;
  }
  default:
    return -1;
  }
}

/* Decodes the table saved in p[0..n) onto the stack (*used: its bytes);
** -1 for anything else (a scalar is the core's), nothing pushed. */
static int gettable(Host *h, const unsigned char *p, size_t n, size_t *used) {
  Src s;
  s.p = p;
  s.n = n;
  s.at = 0;
  if (decode(h->L, &s, 0) != 0)
    return -1;
  if (lua_type(h->L, -1) != LUA_TTABLE) {
    lua_pop(h->L, 1);
    return -1;
  }
  *used = s.at;
  return 0;
}

/* The core hands over the bytes of a Lua value for key (-1: check only). */
static int loadhandle(void *ud, bonsai_agent *a, int key,
                      const unsigned char *p, size_t n, size_t *used) {
  Host *h = (Host *)ud;
  (void)a;
  if (gettable(h, p, n, used) != 0)
    return BONSAI_ERROR;
  if (key >= 0)
    lb_bb_store(h->L, h->bb, key, -1);
  lua_pop(h->L, 1);
  return BONSAI_OK;
}

/* The core hands over the bytes of a queued event's payload (hp NULL:
** check only): the agent keeps it, the core gets its handle. */
static int loadpayload(void *ud, bonsai_agent *a, const unsigned char *p,
                       size_t n, size_t *used, long long *hp) {
  Host *h = (Host *)ud;
  (void)a;
  if (gettable(h, p, n, used) != 0)
    return BONSAI_ERROR;
  if (hp != NULL)
    *hp = lb_payload_keep(h->L, h->ci, -1);
  lua_pop(h->L, 1);
  return BONSAI_OK;
}

/* }====================================================== */

void lb_pack(lua_State *L, int idx) {
  Host h;
  Sink k;
  luaL_Buffer b;
  lua_Integer i;
  idx = lua_absindex(L, idx);
  lua_newtable(L); /* tables being written */
  lua_newtable(L); /* pieces */
  h.L = L;
  h.seen = lua_gettop(L) - 1;
  h.error = NULL;
  h.write = addpiece;
  h.wud = &k;
  k.L = L;
  k.pieces = lua_gettop(L);
  k.n = 0;
  k.len = 0;
  if (encode(&h, idx, 0) != 0)
    luaL_error(L, "%s", h.error);
  flush(&k);
  luaL_buffinit(L, &b);
  for (i = 1; i <= k.n; i++) {
    lua_rawgeti(L, k.pieces, i);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

int lb_unpack(lua_State *L, const void *p, size_t n) {
  Src s;
  s.p = (const unsigned char *)p;
  s.n = n;
  s.at = 0;
  if (decode(L, &s, 0) != 0)
    return -1;
  if (s.at != n) {
    lua_pop(L, 1);
    return -1;
  }
  return 0;
}

static void discard(void *ud, const void *p, size_t n) {
  (void)ud;
  (void)p;
  (void)n;
}

const char *lb_saveable(lua_State *L, int idx, int ci) {
  Host h;
  int top = lua_gettop(L);
  idx = lua_absindex(L, idx);
  lua_getiuservalue(L, ci, LB_SEEN); /* kept: empty after a success */
  h.L = L;
  h.seen = lua_gettop(L);
  h.error = NULL;
  h.write = discard;
  h.wud = NULL;
  if (encode(&h, idx, 0) == 0) {
    lua_settop(L, top);
    return NULL;
  }
  lua_newtable(L); /* a failure may leave tables marked: a new one */
  lua_setiuservalue(L, ci, LB_SEEN);
  lua_settop(L, top);
  lua_pushstring(L, h.error); /* (h.msg dies with this frame) */
  return lua_tostring(L, -1);
}

/* The C agent of the agent table at idx (its state userdata pushed). */
static bonsai_agent *agentat(lua_State *L, int idx) {
  LAgent *la;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_rawgeti(L, idx, 1);
  la = (LAgent *)luaL_checkudata(L, -1, BS_STATE_T);
  luaL_argcheck(L, la->magic != NULL, idx, "collected agent");
  return agentof(la);
}

static void sethost(Host *h, bonsai_savehost *sh, lua_State *L, int bb,
                    int seen) {
  h->L = L;
  h->env = lb_context(L)->env;
  h->bb = bb;
  h->seen = seen;
  h->ci = lua_upvalueindex(1);
  h->error = NULL;
  sh->ud = h;
  sh->leafhost = NULL;
  sh->save = savehandle;
  sh->load = loadhandle;
  sh->error = saveerror;
  sh->save_payload = savepayload;
  sh->load_payload = loadpayload;
}

/* Pushes the leaf stack of the agent table at ai (state si) for its
** leaves' SAVE and RESTORE (their save and restore functions), as a tick
** makes it; the context is upvalue 1. */
static void leafstack(lua_State *L, LTick *t, int ai, int si) {
  t->L = L;
  t->lb = lb_context(L);
  t->a = agentof((LAgent *)lua_touserdata(L, si));
  t->ctx = lua_upvalueindex(1);
  t->agent = lua_absindex(L, ai);
  t->state = lua_absindex(L, si);
  lua_getiuservalue(L, t->ctx, LB_NAMED);
  t->named = lua_gettop(L);
  lua_getiuservalue(L, t->state, UV_VALUES);
  t->values = lua_gettop(L);
  lua_pushnil(L);
  t->bb = lua_gettop(L);
  t->bbready = 0;
  t->pending = 0;
}

/* Raises "tree 'T': cannot <what> node 'path': msg" for the agent's error
** at a node (a leaf's SAVE or RESTORE), else "tree 'T': <prefix>msg". */
static int raisefailure(lua_State *L, bonsai_agent *a, const char *what,
                        const char *prefix) {
  const char *tree = bonsai_tree_name(bonsai_agent_tree(a));
  if (bonsai_agent_errnode(a) != BONSAI_NONE) {
    luaL_Buffer b;
    size_t len = bonsai_agent_errpath(a, NULL, 0);
    bonsai_agent_errpath(a, luaL_buffinitsize(L, &b, len + 1), len + 1);
    luaL_pushresultsize(&b, len);
    return luaL_error(L, "tree '%s': cannot %s node '%s': %s", tree, what,
                      lua_tostring(L, -1), bonsai_agent_errmsg(a));
  }
  return luaL_error(L, "tree '%s': %s%s", tree, prefix,
                    bonsai_agent_errmsg(a));
}

/* lb_pack of the value at the top, in place (a protected call's body). */
static int packtop(lua_State *L) {
  lb_pack(L, 1);
  return 1;
}

/* Pushes the bt.control memories of the agent (state at si) that hold
** something, packed: { [node path] = memory } as bytes, or nil when there
** are none. Raises, naming the node, for a memory that cannot be saved. */
static void packmemories(lua_State *L, bonsai_agent *a, int si) {
  int top = lua_gettop(L), n = 0;
  lb_extra(L, si, lua_upvalueindex(1), 0); /* top + 1 */
  if (!lua_istable(L, -1)) {
    lua_settop(L, top);
    lua_pushnil(L);
    return;
  }
  luaL_getmetatable(L, LB_CONTROL_T); /* top + 2 */
  lua_newtable(L);                    /* top + 3: path -> memory */
  lua_pushnil(L);
  while (lua_next(L, top + 1) != 0) { /* stack: ..., key, value */
    if (lua_isinteger(L, -2) && lua_getmetatable(L, -1)) {
      int control = lua_rawequal(L, -1, top + 2);
      lua_pop(L, 1);
      if (control && lua_getfield(L, -1, "memory") != LUA_TTABLE) {
        lua_pop(L, 1);
      } else if (control) {
        lua_pushnil(L);
        if (lua_next(L, -2) != 0) { /* not empty */
          unsigned node = (unsigned)lua_tointeger(L, -5) - 1;
          size_t len = bonsai_agent_node_path(a, node, NULL, 0);
          luaL_Buffer b;
          lua_pop(L, 2);
          bonsai_agent_node_path(a, node, luaL_buffinitsize(L, &b, len + 1),
                                 len + 1);
          luaL_pushresultsize(&b, len);
          lua_pushcfunction(L, packtop);
          lua_pushvalue(L, -3);
          if (lua_pcall(L, 1, 1, 0) != LUA_OK)
            luaL_error(L, "tree '%s': cannot save node '%s': c.memory: %s",
                       bonsai_tree_name(bonsai_agent_tree(a)),
                       lua_tostring(L, -2), lua_tostring(L, -1));
          lua_pop(L, 1); /* packed: a check; saved with the rest below */
          lua_pushvalue(L, -2);
          lua_rawset(L, top + 3); /* paths[path] = memory */
          n++;
        }
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  if (n == 0) {
    lua_settop(L, top);
    lua_pushnil(L);
    return;
  }
  lb_pack(L, top + 3);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

/* a:save(): the agent's state as a string */
static int agent_save(lua_State *L) {
  bonsai_agent *a = agentat(L, 1); /* 2: state */
  bonsai_savehost sh;
  LTick t;
  Host h;
  Sink k;
  luaL_Buffer b;
  lua_Integer i;
  int r;
  lua_settop(L, 2);
  lua_getfield(L, 1, "bb"); /* 3 */
  lb_checkbb(L, 3);
  lua_newtable(L); /* 4: tables being written */
  lua_newtable(L); /* 5: the pieces */
  packmemories(L, a, 2); /* 6: the memories of bt.control nodes, or nil */
  if (!lua_isnil(L, 6)) { /* "BNSL", their length, them, the core's bytes */
    size_t len = lua_rawlen(L, 6);
    unsigned char n[4];
    n[0] = (unsigned char)len;
    n[1] = (unsigned char)(len >> 8);
    n[2] = (unsigned char)(len >> 16);
    n[3] = (unsigned char)(len >> 24);
    lua_pushliteral(L, LUASAVE_MAGIC);
    lua_rawseti(L, 5, 1);
    lua_pushlstring(L, (const char *)n, 4);
    lua_rawseti(L, 5, 2);
    lua_pushvalue(L, 6);
    lua_rawseti(L, 5, 3);
  }
  sethost(&h, &sh, L, 3, 4);
  leafstack(L, &t, 1, 2); /* 7, 8, 9 */
  sh.leafhost = &t;
  lb_tick_room(L);
  k.L = L;
  k.pieces = 5;
  k.n = (lua_Integer)lua_rawlen(L, 5);
  k.len = 0;
  r = bonsai_agent_save(a, &sh, addpiece, &k);
  if (r == BONSAI_EBUSY)
    return luaL_error(L, "tree '%s': agent is already ticking",
                      bonsai_tree_name(bonsai_agent_tree(a)));
  if (r != BONSAI_OK)
    return raisefailure(L, a, "save", "");
  flush(&k);
  luaL_buffinit(L, &b);
  for (i = 1; i <= k.n; i++) {
    lua_rawgeti(L, 5, i);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

void lb_agent_restore(lua_State *L, int ai, int si, int sidx) {
  bonsai_agent *a = agentof((LAgent *)lua_touserdata(L, si));
  const char *tree = bonsai_tree_name(bonsai_agent_tree(a));
  bonsai_savehost sh;
  LTick t;
  Host h;
  size_t len, mlen = 0;
  const char *s;
  int top = lua_gettop(L);
  ai = lua_absindex(L, ai);
  si = lua_absindex(L, si);
  sidx = lua_absindex(L, sidx);
  if (lua_type(L, sidx) != LUA_TSTRING)
    luaL_error(L, "'restore' must be a string from a:save()");
  s = lua_tolstring(L, sidx, &len);
  if (len >= 8 && memcmp(s, LUASAVE_MAGIC, 4) == 0) { /* memories first */
    const unsigned char *n = (const unsigned char *)s + 4;
    mlen = (size_t)n[0] | (size_t)n[1] << 8 | (size_t)n[2] << 16 |
           (size_t)n[3] << 24;
    if (mlen > len - 8 || lb_unpack(L, s + 8, mlen) != 0 ||
        !lua_istable(L, -1))
      luaL_error(L, "tree '%s': cannot restore: corrupted bt.control "
                    "memories", tree);
    s += 8 + mlen;
    len -= 8 + mlen;
  } else {
    lua_pushnil(L);
  }
  lua_getfield(L, ai, "bb");
  sethost(&h, &sh, L, lua_gettop(L), 0);
  leafstack(L, &t, ai, si);
  sh.leafhost = &t;
  lb_tick_room(L);
  if (bonsai_agent_restore(a, s, len, &sh) != BONSAI_OK)
    raisefailure(L, a, "restore", "cannot restore: ");
  lua_settop(L, top + 1);
}

static const luaL_Reg agent_methods[] = {{"save", agent_save}, {NULL, NULL}};

/* stack: context. After lb_open_agent. */
void lb_open_save(lua_State *L) {
  lb_addmethods(L, BS_AGENT_T, agent_methods);
}
