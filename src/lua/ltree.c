/*
** ltree.c: bt.tree and the tree userdata. Compiling walks the Lua node
** tables iteratively (an explicit stack in a Lua table, so a 10,000-deep
** tree needs no C stack), feeding bonsai_def_* and storing leaf functions
** and args tables in a fresh values table, the Lua half of the version.
** The definition lives in a userdata, so a Lua error during the walk
** leaks nothing. Node tables are read raw (no metamethod runs), strings
** with NUL bytes are refused, and the walk stops past max_nodes nodes, so a
** definition that lists a table many times costs at most the limit. A
** subtree is inlined: the other tree's Lua definition is walked again under
** the subtree node, with its args and key remap; each tree keeps its
** definition and the trees that inline it, so that a reload recompiles them
** all, or none.
*/
#include <stdint.h>
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

typedef struct DefBox {
  bonsai_def *def;
} DefBox;

/*
** {======================================================
** Walking node tables into a definition
** =======================================================
*/

static int defbox_gc(lua_State *L) {
  DefBox *box = (DefBox *)lua_touserdata(L, 1);
  bonsai_def_free(box->def);
  box->def = NULL;
  return 0;
}

/* Kind from a node's type string, or -1. */
static int kindof(const char *type) {
  int k;
  for (k = 0; k < BONSAI_NKINDS; k++)
    if (k != BONSAI_PRIORITY && strcmp(type, bonsai_kind_name(k)) == 0)
      return k;
  return -1;
}

/* The compile walk: indices of its stack slots and where it stands. */
typedef struct Walk {
  lua_State *L;
  DefBox *box;      /* owns def until the walk is over */
  bonsai_def *def;
  const char *tree; /* tree name, for messages */
  int values;       /* values table */
  int nvalues;      /* slots used */
  int stack;        /* frames: 3k+1 children list, 3k+2 next index, 3k+3 node */
  int onpath;       /* node tables currently open (cycle check) */
  int nframes;
  lua_Integer nodes; /* nodes added so far */
  lua_Integer max;   /* the limit on them */
  int ctx;          /* the innermost subtree's context, or nil: { args =,
                    ** map = inner key -> caller's key, tree =, prev =,
                    ** frame = its frame } */
  int inlining;     /* trees being inlined (recursion check) */
  int uses;         /* trees inlined, as keys */
  int child;        /* the node table being read (stack index), or 0 */
} Walk;

/* Pushes t[k] for the table at idx without metamethods; returns its type. */
static int rawfield(lua_State *L, int idx, const char *k) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, k);
  return lua_rawget(L, idx);
}

/* Whether the string on top is a name a path may show (the error being
** raised may be about a name too long or holding a NUL). */
static int goodname(lua_State *L) {
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  return len > 0 && len <= BONSAI_MAXNAME && strlen(s) == len;
}

/* Pushes the name that the node table being read (w->child, child 'place'
** of the open node) has in paths: its name, a named leaf's leaf name, else
** its kind and place ("action[2]"; the root: its kind); returns 0, pushing
** nothing, when it is no node (no table, no known type). Raises nothing. */
static int childname(Walk *w, int place) {
  lua_State *L = w->L;
  int kind;
  if (w->child == 0 || !lua_istable(L, w->child))
    return 0;
  if (rawfield(L, w->child, "type") != LUA_TSTRING ||
      (kind = kindof(lua_tostring(L, -1))) < 0) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pop(L, 1);
  if (rawfield(L, w->child, "name") == LUA_TSTRING && goodname(L))
    return 1;
  lua_pop(L, 1);
  if ((kind == BONSAI_ACTION || kind == BONSAI_CONDITION) &&
      rawfield(L, w->child, "leaf") == LUA_TSTRING && goodname(L))
    return 1;
  if (kind == BONSAI_ACTION || kind == BONSAI_CONDITION)
    lua_pop(L, 1);
  if (bonsai_def_open(w->def) == BONSAI_NONE)
    lua_pushstring(L, bonsai_kind_name(kind)); /* the root */
  else
    lua_pushfstring(L, "%s[%d]", bonsai_kind_name(kind), place);
  return 1;
}

/* Raises a definition error about the node being read: child 'place' of
** the open node, or the open node itself when place is 0. A child is named
** by its path when it is a node ("S/control[1]", "S/attack"), else by its
** parent and place ("S: child 2"). */
static int walkerror(Walk *w, int place, const char *fmt, const char *arg) {
  lua_State *L = w->L;
  const char *msg = lua_pushfstring(L, fmt, arg), *path;
  unsigned open = bonsai_def_open(w->def);
  luaL_Buffer b;
  size_t len;
  if (open == BONSAI_NONE) {
    if (place != 0 && childname(w, place)) /* the root */
      return luaL_error(L, "tree '%s': %s: %s", w->tree,
                        lua_tostring(L, -1), msg);
    return luaL_error(L, "tree '%s': %s", w->tree, msg);
  }
  len = bonsai_def_node_path(w->def, open, NULL, 0);
  bonsai_def_node_path(w->def, open, luaL_buffinitsize(L, &b, len + 1),
                       len + 1);
  luaL_pushresultsize(&b, len);
  path = len > 0 ? lua_tostring(L, -1) : "priority";
  if (place == 0)
    return luaL_error(L, "tree '%s': %s: %s", w->tree, path, msg);
  if (len > 0 && childname(w, place))
    return luaL_error(L, "tree '%s': %s/%s: %s", w->tree, path,
                      lua_tostring(L, -1), msg);
  return luaL_error(L, "tree '%s': %s: child %d: %s", w->tree, path, place,
                    msg);
}

/* The string at idx, refused (as what) when it holds a NUL byte or is
** longer than BONSAI_MAXNAME. */
static const char *cstring(Walk *w, int idx, int place, const char *what) {
  size_t len;
  const char *s = lua_tolstring(w->L, idx, &len);
  if (memchr(s, '\0', len) != NULL)
    walkerror(w, place, "%s contains a NUL byte", what);
  if (len > BONSAI_MAXNAME)
    walkerror(w, place, "%s is too long", what);
  return s;
}

/* Raises the definition's error, if it has one. */
static void checkdef(Walk *w) {
  const char *e = bonsai_def_errmsg(w->def);
  if (e != NULL)
    luaL_error(w->L, "tree '%s': %s", w->tree, e);
}

/* Pushes field f of the innermost subtree's context (nil outside
** subtrees); returns its type. */
static int ctxfield(Walk *w, const char *f) {
  if (lua_isnil(w->L, w->ctx)) {
    lua_pushnil(w->L);
    return LUA_TNIL;
  }
  return lua_getfield(w->L, w->ctx, f);
}

/* Inside a remapping subtree: the key that parameter p (at the top) of a
** node that reads keys names is renamed to the caller's key (map at index
** map). */
static void renamekey(lua_State *L, int map, const char *p) {
  const char *s;
  if (lua_type(L, -1) != LUA_TSTRING) /* (lua_tostring would convert) */
    return;
  s = lua_tostring(L, -1);
  if (strcmp(p, "key") == 0) {
    lua_pushvalue(L, -1);
    if (lua_rawget(L, map) == LUA_TSTRING)
      lua_replace(L, -2);
    else
      lua_pop(L, 1);
  } else if (strcmp(p, "value") == 0 && s[0] == '$') {
    if (lua_getfield(L, map, s + 1) == LUA_TSTRING) {
      lua_pushfstring(L, "$%s", lua_tostring(L, -1));
      lua_replace(L, -3);
    }
    lua_pop(L, 1);
  }
}

/* Reads the parameters of the node at idx (of kind 'kind') into the node
** just added; the definition refuses values C cannot hold. */
static void params(Walk *w, int idx, int kind) {
  lua_State *L = w->L;
  const char *k;
  bonsai_kindinfo ki;
  int i, map = 0;
  if (bonsai_kind_info(kind, &ki) == BONSAI_OK &&
      (ki.takes & (1u << BONSAI_P_KEY))) { /* it reads a key */
    if (ctxfield(w, "map") == LUA_TTABLE)
      map = lua_gettop(L);
    else
      lua_pop(L, 1);
  }
  for (i = 0; (k = bonsai_param_name(i)) != NULL; i++) {
    bonsai_value v;
    if (rawfield(L, idx, k) != LUA_TNIL) {
      if (map != 0)
        renamekey(L, map, k);
      lb_tovalue(L, -1, &v);
      bonsai_def_value(w->def, k, v);
      checkdef(w);
    }
    lua_pop(L, 1);
  }
  if (map != 0)
    lua_pop(L, 1);
}

/* Stores the value at the top in the values table; returns its slot. */
static int keep(Walk *w) {
  lua_rawseti(w->L, w->values, ++w->nvalues);
  return w->nvalues;
}

/* Pushes the args of the leaf at idx and returns 1, or pushes nothing and
** returns 0. Inside a subtree that gives args, a leaf without its own sees
** the subtree's; a leaf with its own table sees a copy of it whose missing
** fields are read from the subtree's (through __index). */
static int leafargs(Walk *w, int idx) {
  lua_State *L = w->L;
  int own = rawfield(L, idx, "args") != LUA_TNIL;
  if (ctxfield(w, "args") == LUA_TNIL) {
    lua_pop(L, own ? 1 : 2);
    return own;
  }
  if (!own) {
    lua_remove(L, -2);
    return 1;
  }
  if (!lua_istable(L, -2) || !lua_istable(L, -1)) {
    lua_pop(L, 1); /* only tables merge: the leaf's own args win */
    return 1;
  }
  lua_newtable(L); /* stack: own, inherited, copy */
  lua_pushnil(L);
  while (lua_next(L, -4) != 0) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_replace(L, -3);
  lua_pop(L, 1);
  return 1;
}

/* Inside a remapping subtree a Lua leaf is called through lb_remap_call,
** which hands it a view of the blackboard: keeps { map, how, at, nargs }
** (how: 0 a function leaf at values[at], 1 a task there, 2 the leaf
** registered with id 'at') and returns its slot. */
static int remapped(Walk *w, int map, int how, int at, int nargs) {
  lua_State *L = w->L;
  lua_createtable(L, 4, 0);
  lua_pushvalue(L, map);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, how);
  lua_rawseti(L, -2, 2);
  lua_pushinteger(L, at);
  lua_rawseti(L, -2, 3);
  lua_pushinteger(L, nargs);
  lua_rawseti(L, -2, 4);
  return keep(w);
}

/* Gives the node just added (an action or a control node) the
** abort_timeout of its table at idx, if it has one. */
static void abort_timeout(Walk *w, int idx, int place) {
  lua_State *L = w->L;
  const char *why;
  bonsai_value v;
  if (rawfield(L, idx, "abort_timeout") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if ((why = lb_abort_timeout(L, idx)) != NULL)
    walkerror(w, place, "%s", why);
  lb_tovalue(L, -1, &v);
  bonsai_def_value(w->def, "abort_timeout", v);
  lua_pop(L, 1);
  checkdef(w);
}

/* For a node table at idx with a script (its field 'script': the code it
** was made from), pushes the code and the keys it reads or writes (through
** init.lua's script maker, which refuses code that does not compile) and
** returns 1; else pushes nothing and returns 0. */
static int scripttext(Walk *w, int idx, int place) {
  lua_State *L = w->L;
  int ty = rawfield(L, idx, "script");
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  if (ty != LUA_TSTRING)
    walkerror(w, place, "'script' must be a string (got %s)",
              luaL_typename(L, -1));
  lua_getiuservalue(L, lua_upvalueindex(1), LB_SCRIPT);
  lua_pushvalue(L, -2);
  lua_pushliteral(L, "script");
  lua_pushvalue(L, idx);
  ctxfield(w, "map");
  if (lua_pcall(L, 4, 2, 0) != LUA_OK) { /* nil, the error */
    lua_pushnil(L);
    lua_insert(L, -2);
  }
  if (lua_type(L, -2) != LUA_TSTRING)
    walkerror(w, place, "%s", luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1); /* stack: code, keys */
  return 1;
}

/* Adds the leaf node at idx. */
static void addleaf(Walk *w, int idx, int kind, const char *name, int place) {
  lua_State *L = w->L;
  const void *args = NULL;
  int top = lua_gettop(L), map = 0;
  if (kind != BONSAI_ACTION && kind != BONSAI_CONDITION) {
    bonsai_def_leaf(w->def, kind, name, NULL, NULL);
    checkdef(w);
    params(w, idx, kind); /* an action's 'abort' is its callback */
    return;
  }
  if (leafargs(w, idx))
    args = (const void *)(intptr_t)keep(w);
  if (ctxfield(w, "map") == LUA_TTABLE)
    map = lua_gettop(L);
  if (rawfield(L, idx, "leaf") == LUA_TSTRING) {
    const char *leaf = cstring(w, -1, place, "'leaf'");
    int id;
    if (map == 0) {
      bonsai_def_leaf(w->def, kind, name, leaf, args);
    } else if ((id = bonsai_leaf_find(lb_context(L)->env, leaf)) < 0) {
      lb_leafnames(L);
      lua_pushfstring(L, "no leaf registered as '%s'%s", leaf,
                      lb_suggest(L, leaf, lua_tostring(L, -1)));
      walkerror(w, place, "%s", lua_tostring(L, -1));
    } else {
      int slot = remapped(w, map, 2, id, 0);
      bonsai_def_cleaf(w->def, kind, name != NULL ? name : leaf, lb_remap_call,
                       LEAFDATA(slot, 0, 0),
                       BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT |
                           BONSAI_LEAF_ABORT | BONSAI_LEAF_SAVE,
                       args);
    }
  } else {
    bonsai_leaf_fn fn;
    unsigned flags;
    int slot = w->nvalues + 1, nargs, used;
    const char *err;
    lua_pop(L, 1);
    if ((err = lb_leafdef(L, idx, w->values, slot, &fn, &flags, &nargs,
                          &used)))
      walkerror(w, place, "%s", err);
    if ((flags & BONSAI_LEAF_SAVE) && kind == BONSAI_CONDITION)
      walkerror(w, place, "a condition keeps no state ('save', 'restore'): "
                "it never runs across ticks", NULL);
    w->nvalues += used;
    if (map != 0) {
      slot = remapped(w, map, fn == lb_task_call, slot, nargs);
      fn = lb_remap_call;
      nargs = 0;
    }
    bonsai_def_cleaf(w->def, kind, name, fn, LEAFDATA(slot, nargs, 0), flags,
                     args);
  }
  lua_settop(L, top);
  checkdef(w);
  abort_timeout(w, idx, place);
}

/* Opens the control node at idx (bt.control): its callbacks and args go
** to the values table; inside a remapping subtree they get the view of the
** blackboard, as leaves do. */
static void addcontrol(Walk *w, int idx, const char *name, int place) {
  lua_State *L = w->L;
  const void *args = NULL;
  int top = lua_gettop(L), slot, map = 0;
  bonsai_leaf_fn fn = lb_control_call;
  unsigned flags;
  const char *err;
  if (leafargs(w, idx))
    args = (const void *)(intptr_t)keep(w);
  slot = w->nvalues + 1;
  if ((err = lb_controldef(L, idx, w->values, slot, &flags)) != NULL)
    walkerror(w, place, "%s", err);
  w->nvalues += 4;
  if (ctxfield(w, "map") == LUA_TTABLE) {
    map = lua_gettop(L);
    slot = remapped(w, map, 3, slot, 4);
    fn = lb_remap_call;
  }
  bonsai_def_control(w->def, name, fn, LEAFDATA(slot, 4, 0), flags, args);
  lua_settop(L, top);
  checkdef(w);
  abort_timeout(w, idx, 0); /* (the open node now: it is named) */
}

/* Gives the node just added the utility function of the node table at idx
** (its field 'utility'), if it has one. */
static void utility(Walk *w, int idx, int place) {
  lua_State *L = w->L;
  void *data;
  int ty = rawfield(L, idx, "utility");
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (ty != LUA_TFUNCTION)
    walkerror(w, place, "'utility' must be a function (got %s)",
              lua_typename(L, ty));
  data = lb_utilitydef(L, w->values, ++w->nvalues);
  if (ctxfield(w, "map") == LUA_TTABLE) { /* it gets the view too */
    int slot = remapped(w, lua_gettop(L), 0, w->nvalues, LEAF_NARGS(data));
    data = LEAFDATA(slot, 0, 1);
  }
  lua_pop(L, 1);
  bonsai_def_utility(w->def, lb_utility_call, data);
  checkdef(w);
}

/* Gives the node just added the pre- and post-conditions of the node
** table at idx (its fields skip_if, run_while, on_success...): each a
** script, compiled by init.lua's script maker (a pre-condition that is one
** comparison of a key becomes a check, evaluated in C), or a function
** fn(agent, bb) whose result is taken as true or false. Inside a remapping
** subtree a script's keys are renamed as it compiles (the script maker
** gets the map: a comparison is still a check in C), and a function sees
** the blackboard through the view, as leaves do. */
/* Gives the node added last the function at the top (popped) as its
** condition k; with view, seeing the view when the walk is inside a
** remapping subtree (a script's function has its keys renamed already). */
static void whenfn(Walk *w, int k, int view) {
  lua_State *L = w->L;
  bonsai_leaf_fn fn = lb_leaf_call;
  void *data = lb_utilitydef(L, w->values, ++w->nvalues);
  if (view) {
    if (ctxfield(w, "map") == LUA_TTABLE) { /* it sees the view */
      data = LEAFDATA(remapped(w, lua_gettop(L), 0, w->nvalues,
                               LEAF_NARGS(data)), 0, 0);
      fn = lb_remap_call;
    }
    lua_pop(L, 1);
  }
  bonsai_def_when(w->def, k, fn, data);
}

static void conditions(Walk *w, int idx, int place) {
  lua_State *L = w->L;
  int k;
  for (k = 0; k < BONSAI_NCONDS; k++) {
    const char *f = bonsai_cond_name(k);
    int ty = rawfield(L, idx, f);
    if (ty == LUA_TNIL) {
      lua_pop(L, 1);
      continue;
    }
    if (ty == LUA_TSTRING) { /* fn, key, op, value (a check), the keys,
                              ** the code the file wrote (or nil) */
      int top = lua_gettop(L) - 1;
      lua_getiuservalue(L, lua_upvalueindex(1), LB_SCRIPT);
      lua_pushvalue(L, top + 1); /* code */
      lua_pushstring(L, f);
      lua_pushvalue(L, idx);
      ctxfield(w, "map"); /* its keys renamed through it */
      if (lua_pcall(L, 4, 6, 0) != LUA_OK) { /* nil, the error */
        lua_pushnil(L);
        lua_insert(L, -2);
      }
      if (lua_isnil(L, top + 2)) {
        lua_pushfstring(L, "'%s': %s", f, luaL_tolstring(L, top + 3, NULL));
        walkerror(w, place, "%s", lua_tostring(L, -1));
      }
      if (lua_type(L, top + 3) == LUA_TSTRING) { /* in C */
        bonsai_value v;
        lb_tovalue(L, top + 5, &v);
        bonsai_def_when_check(w->def, k, lua_tostring(L, top + 3),
                              lua_tostring(L, top + 4), v);
      } else {
        lua_pushvalue(L, top + 2);
        whenfn(w, k, 0);
      }
      checkdef(w);
      bonsai_def_text(w->def, k, lua_tostring(L, lua_type(L, top + 7) ==
                      LUA_TSTRING ? top + 7 : top + 1),
                      lua_tostring(L, top + 6));
      lua_settop(L, top);
      checkdef(w);
      continue;
    } else if (ty != LUA_TFUNCTION) {
      lua_pushfstring(L, "'%s' must be a script (got %s)", f,
                      luaL_typename(L, -1));
      walkerror(w, place, "%s", lua_tostring(L, -1));
    }
    lua_pushvalue(L, -1); /* kept for its text, below */
    whenfn(w, k, 1);
    checkdef(w);
    /* a function compiled from a script (a file's): its source and keys */
    lua_getiuservalue(L, lua_upvalueindex(1), LB_SCRIPT);
    lua_insert(L, -2);
    lua_pushstring(L, f);
    if (lua_pcall(L, 2, 2, 0) != LUA_OK) {
      lua_pop(L, 1); /* (the error: no text) */
      continue;
    }
    if (lua_type(L, -2) == LUA_TSTRING) {
      bonsai_def_text(w->def, k, lua_tostring(L, -2), lua_tostring(L, -1));
      checkdef(w);
    }
    lua_pop(L, 2);
  }
}

/* Pushes a frame for the node at idx (0: none) whose children are the list
** at the top (popped). */
static void pushframe(Walk *w, int idx) {
  lua_State *L = w->L;
  lua_rawseti(L, w->stack, 3 * w->nframes + 1);
  lua_pushinteger(L, 1);
  lua_rawseti(L, w->stack, 3 * w->nframes + 2);
  if (idx != 0)
    lua_pushvalue(L, idx);
  else
    lua_pushnil(L);
  lua_rawseti(L, w->stack, 3 * w->nframes + 3);
  w->nframes++;
}

/* Pushes the children list of the node at idx: its array part, after its
** conditions for a filter or a monitor. */
static void pushchildren(Walk *w, int idx, int kind, int place) {
  lua_State *L = w->L;
  lua_Integer n, k, m = 0;
  if (kind != BONSAI_FILTER && kind != BONSAI_MONITOR) {
    lua_pushvalue(L, idx);
    return;
  }
  lua_newtable(L);
  switch (rawfield(L, idx, "conditions")) {
  case LUA_TNIL:
    break;
  case LUA_TTABLE: /* past the limit the walk stops anyway */
    if (rawfield(L, -1, "type") != LUA_TNIL)
      walkerror(w, 0, "'conditions' is a list: write conditions = { cond } "
                "(got one node)", NULL);
    lua_pop(L, 1);
    n = (lua_Integer)lua_rawlen(L, -1);
    for (n = n < w->max ? n : w->max + 1, k = 1; k <= n; k++) {
      lua_rawgeti(L, -1, k);
      lua_rawseti(L, -3, ++m);
    }
    break;
  default:
    (void)place;
    walkerror(w, 0, "'conditions' must be a list of conditions", NULL);
  }
  lua_pop(L, 1);
  for (n = (lua_Integer)lua_rawlen(L, idx), k = 1; k <= n; k++) {
    lua_rawgeti(L, idx, k);
    lua_rawseti(L, -2, ++m);
  }
}

/* The composed remap of a subtree inside the current context: its own
** remap r (inner key -> key of the tree around it) followed by the
** context's map; pushes it, or nil when neither maps anything. */
static void composemap(Walk *w, int idx) {
  lua_State *L = w->L;
  int r, pm, m;
  switch (rawfield(L, idx, "remap")) {
  case LUA_TNIL:
    lua_pop(L, 1);
    ctxfield(w, "map");
    return;
  case LUA_TTABLE:
    break;
  default:
    walkerror(w, 0, "'remap' must be a table of key names", NULL);
  }
  r = lua_gettop(L);
  ctxfield(w, "map");
  pm = lua_gettop(L);
  lua_newtable(L);
  m = lua_gettop(L);
  if (lua_istable(L, pm)) { /* what the tree around maps stays mapped */
    lua_pushnil(L);
    while (lua_next(L, pm) != 0) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, m);
    }
  }
  lua_pushnil(L);
  while (lua_next(L, r) != 0) { /* m[inner] = pm[outer] or outer */
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
      walkerror(w, 0, "'remap' must map key names to key names", NULL);
    if (lua_istable(L, pm)) {
      lua_pushvalue(L, -1);
      if (lua_rawget(L, pm) == LUA_TSTRING)
        lua_replace(L, -2);
      else
        lua_pop(L, 1);
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, m);
  }
  lua_replace(L, r);
  lua_settop(L, r);
}

/* Whether kind is a leaf (its class, in the table of kinds). */
static int isleafkind(int kind) {
  bonsai_kindinfo ki;
  return bonsai_kind_info(kind, &ki) == BONSAI_OK &&
         ki.cls == BONSAI_CLASS_LEAF;
}

/* Refuses a key of the node table at idx (the open node when place is 0,
** else its child 'place', not added yet) that its kind does not take
** (lb_kindwords: kinds.c is the one list), with the key it likely meant; a
** key that is no name and no child's place; a child of a leaf; a nil hole
** in its list of children (a misspelt variable). */
static void checkkeys(Walk *w, int idx, int kind, int place) {
  lua_State *L = w->L;
  const char *words = lb_kindwords(L, kind), *kn = bonsai_kind_name(kind);
  lua_Integer n = 0, max = 0, i;
  int leaf = isleafkind(kind), isint;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      if (!lb_hasword(words, lua_tostring(L, -1))) {
        lua_pushfstring(L, "'%s'", kn);
        walkerror(w, place, "%s", lb_badkey(L, lua_tostring(L, -1),
                                            lua_tostring(L, -2), words));
      }
      continue;
    }
    i = lua_tointegerx(L, -1, &isint);
    if (lua_type(L, -1) != LUA_TNUMBER || !isint || i < 1)
      walkerror(w, place, "a node table's keys are names and places of "
                "children (got a %s key)", luaL_typename(L, -1));
    if (leaf)
      walkerror(w, place, kind <= BONSAI_CONDITION
                              ? "'%s' is a leaf: it takes no children (its "
                                "function goes in fn or tick: bt.action(f), "
                                "bt.action{ tick = f })"
                              : "'%s' is a leaf: it takes no children", kn);
    n++;
    if (i > max)
      max = i;
  }
  for (i = 1; n < max && i <= max; i++) {
    if (lua_rawgeti(L, idx, i) == LUA_TNIL) {
      lua_pushfstring(L, "'%s': its child %d is nil (a misspelt variable?)",
                      kn, (int)i); /* i <= the count of children */
      walkerror(w, place, "%s", lua_tostring(L, -1));
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1); /* the words */
}

/* Raises "unknown node type", with the kind type likely meant. */
static void badtype(Walk *w, int place, const char *type) {
  lua_State *L = w->L;
  luaL_Buffer b;
  int k;
  luaL_buffinit(L, &b);
  for (k = 0; k < BONSAI_NKINDS; k++)
    if (k != BONSAI_PRIORITY) {
      luaL_addstring(&b, bonsai_kind_name(k));
      luaL_addchar(&b, ' ');
    }
  luaL_pushresult(&b);
  lua_pushfstring(L, "unknown node type '%s'%s", type,
                  lb_suggest(L, type, lua_tostring(L, -1)));
  walkerror(w, place, "%s", lua_tostring(L, -1));
}

/* Adds the subtree node at idx (with name, or the tree's name): the
** tree's root follows as its child, walked again in a context of its own
** (args, remap). The tree is a tree or the name of one (bt.tree and
** bt.load register them); one that is being inlined already is a
** recursion. */
static void subtree(Walk *w, int idx, const char *name, int place) {
  lua_State *L = w->L;
  int tree, src, ctx;
  LTree *lt;
  switch (rawfield(L, idx, "tree")) {
  case LUA_TSTRING:
    lua_getiuservalue(L, lua_upvalueindex(1), LB_TREES);
    lua_pushvalue(L, -2);
    if (lua_rawget(L, -2) == LUA_TNIL)
      walkerror(w, place, "no tree named '%s'", lua_tostring(L, -3));
    lua_replace(L, -3);
    lua_pop(L, 1);
    break;
  case LUA_TUSERDATA:
    if (luaL_testudata(L, -1, BS_TREE_T) != NULL)
      break;
    /* FALLTHROUGH */
  default:
    walkerror(w, place, "'tree' must be a tree or the name of one (got %s)",
              luaL_typename(L, -1));
  }
  tree = lua_gettop(L);
  lt = (LTree *)lua_touserdata(L, tree);
  if (lt->t == NULL)
    walkerror(w, place, "released tree", NULL);
  lua_pushvalue(L, tree);
  if (lua_rawget(L, w->inlining) != LUA_TNIL)
    walkerror(w, place, "subtree '%s' contains itself",
              bonsai_tree_name(lt->t));
  lua_pop(L, 1);
  if (lua_getiuservalue(L, tree, TV_SOURCE) != LUA_TTABLE)
    walkerror(w, place, "tree '%s' has no Lua definition in this state (a "
              "shared tree): it cannot be a subtree", bonsai_tree_name(lt->t));
  src = lua_gettop(L);
  bonsai_def_begin(w->def, BONSAI_SUBTREE,
                   name != NULL ? name : bonsai_tree_name(lt->t));
  checkdef(w);
  checkkeys(w, idx, BONSAI_SUBTREE, 0);
  utility(w, idx, 0);
  conditions(w, idx, 0);
  lua_createtable(L, 0, 5); /* the context */
  ctx = lua_gettop(L);
  if (rawfield(L, idx, "args") == LUA_TNIL) {
    lua_pop(L, 1);
    ctxfield(w, "args"); /* the nearest subtree's that gives some */
  }
  lua_setfield(L, ctx, "args");
  composemap(w, idx);
  lua_setfield(L, ctx, "map");
  lua_pushvalue(L, tree);
  lua_setfield(L, ctx, "tree");
  lua_pushvalue(L, w->ctx);
  lua_setfield(L, ctx, "prev");
  lua_pushinteger(L, w->nframes);
  lua_setfield(L, ctx, "frame");
  lua_replace(L, w->ctx);
  lua_pushvalue(L, tree);
  lua_pushboolean(L, 1);
  lua_rawset(L, w->inlining);
  lua_pushvalue(L, tree);
  lua_pushboolean(L, 1);
  lua_rawset(L, w->uses);
  lua_pushvalue(L, idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, w->onpath);
  lua_createtable(L, 1, 0); /* its one child: the tree's root */
  lua_getfield(L, src, "root");
  lua_rawseti(L, -2, 1);
  pushframe(w, idx);
}

/* Reads one node (at the top of the stack, popped). */
static void addnode(Walk *w, int place) {
  lua_State *L = w->L;
  int idx = lua_gettop(L), kind;
  const char *name = NULL, *type;
  /* the checks of a node push a dozen values over the walk's own (keys,
  ** conditions, a subtree's context): room for them, as nothing else
  ** makes any (a C function is given LUA_MINSTACK slots; the walk's own
  ** and those of tree:reload fill most of them); past the stack, in a
  ** task's coroutine or a stack the GC shrank, they overwrote the heap */
  luaL_checkstack(L, LUA_MINSTACK, "tree definition");
  w->child = idx;
  if (!lua_istable(L, idx))
    walkerror(w, place, "not a node (got %s)", luaL_typename(L, idx));
  if (rawfield(L, idx, "type") != LUA_TSTRING)
    walkerror(w, place, "not a node (a table without a 'type')", NULL);
  type = cstring(w, -1, place, "'type'");
  if ((kind = kindof(type)) < 0)
    badtype(w, place, type);
  if (++w->nodes > w->max) {
    lua_pushfstring(L, "more than %d nodes (a node table listed several "
                    "times counts each time; raise max_nodes)", (int)w->max);
    walkerror(w, 0, "%s", lua_tostring(L, -1));
  }
  switch (rawfield(L, idx, "name")) {
  case LUA_TNIL:
    break;
  case LUA_TSTRING:
    name = cstring(w, -1, place, "'name'");
    break;
  default:
    walkerror(w, place, "'name' must be a string", NULL);
  }
  if (isleafkind(kind)) {
    int text;
    checkkeys(w, idx, kind, place);
    text = scripttext(w, idx, place) ? lua_gettop(L) : 0; /* code, keys */
    addleaf(w, idx, kind, name, place);
    if (text) {
      bonsai_def_text(w->def, BONSAI_TEXT_NODE, lua_tostring(L, text - 1),
                      lua_tostring(L, text));
      checkdef(w);
    }
    utility(w, idx, place);
    conditions(w, idx, place);
  } else if (kind == BONSAI_SUBTREE) {
    lua_pushvalue(L, idx);
    if (lua_rawget(L, w->onpath) != LUA_TNIL)
      walkerror(w, place, "a node cannot contain itself", NULL);
    lua_pop(L, 1);
    subtree(w, idx, name, place);
  } else {
    lua_pushvalue(L, idx);
    if (lua_rawget(L, w->onpath) != LUA_TNIL)
      walkerror(w, place, "a node cannot contain itself", NULL);
    lua_pop(L, 1);
    if (kind == BONSAI_CONTROL) { /* its 'abort' is its callback */
      addcontrol(w, idx, name, place);
    } else {
      bonsai_def_begin(w->def, kind, name);
      checkdef(w);
    }
    checkkeys(w, idx, kind, 0);
    if (kind != BONSAI_CONTROL)
      params(w, idx, kind);
    utility(w, idx, 0);
    conditions(w, idx, 0);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, w->onpath);
    pushchildren(w, idx, kind, place);
    pushframe(w, idx);
  }
  w->child = 0;
  lua_settop(L, idx - 1);
}

/* Walks the frames until the stack is empty. The first frame belongs to no
** node (or to the priority wrapper when 'wrapped'). */
static void walk(Walk *w, int wrapped) {
  lua_State *L = w->L;
  while (w->nframes > 0) {
    lua_Integer at, f = w->nframes - 1;
    lua_rawgeti(L, w->stack, 3 * f + 1); /* children list */
    lua_rawgeti(L, w->stack, 3 * f + 2);
    at = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (lua_rawgeti(L, -1, at) == LUA_TNIL) { /* frame done */
      lua_pop(L, 2);
      w->nframes--;
      if (lua_rawgeti(L, w->stack, 3 * f + 3) != LUA_TNIL) {
        lua_pushnil(L); /* the node is no longer on the path */
        lua_rawset(L, w->onpath);
      } else {
        lua_pop(L, 1);
      }
      if (ctxfield(w, "frame") == LUA_TNUMBER && lua_tointeger(L, -1) == f) {
        lua_getfield(L, w->ctx, "tree"); /* a subtree ends */
        lua_pushnil(L);
        lua_rawset(L, w->inlining);
        lua_getfield(L, w->ctx, "prev");
        lua_replace(L, w->ctx);
      }
      lua_pop(L, 1);
      if (w->nframes > 0 || wrapped) {
        bonsai_def_end(w->def);
        checkdef(w);
      }
      continue;
    }
    lua_remove(L, -2);
    lua_pushinteger(L, at + 1);
    lua_rawseti(L, w->stack, 3 * f + 2);
    addnode(w, (int)at);
  }
}

/* The options of bt.tree and tree:reload. */
#define TREE_OPTS "name priority max_nodes"

/* Walks the definition of root (with options opts, 0 if none) into a new
** definition; leaves the definition box and the values table on the
** stack (w->values). Raises definition errors. */
static void build(lua_State *L, Walk *w, int root, int opts,
                  const char *name, int self) {
  LBonsai *lb = lb_context(L);
  DefBox *box;
  int wrapped = 0;
  luaL_checkstack(L, LUA_MINSTACK, "tree definition"); /* the walk's slots */
  memset(w, 0, sizeof *w);
  w->L = L;
  w->tree = name;
  w->max = BONSAI_DEFMAXNODES;
  if (opts != 0)
    lb_checkopts(L, opts, self != 0 ? "tree:reload" : "bt.tree", TREE_OPTS);
  if (opts != 0 && rawfield(L, opts, "max_nodes") != LUA_TNIL) {
    int isint;
    lua_Integer m = lua_tointegerx(L, -1, &isint);
    if (lua_type(L, -1) != LUA_TNUMBER || !isint || m < 1 ||
        (lua_Unsigned)m > BONSAI_MAXNODES)
      luaL_error(L, "tree '%s': 'max_nodes' must be a whole number from 1 "
                 "to %d", name, (int)BONSAI_MAXNODES);
    w->max = m;
  }
  if (opts != 0)
    lua_pop(L, 1);
  box = (DefBox *)lua_newuserdatauv(L, sizeof *box, 0);
  box->def = NULL;
  if (luaL_newmetatable(L, BS_DEF_T)) {
    lua_pushcfunction(L, defbox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if ((box->def = bonsai_def_new(lb->env)) == NULL)
    luaL_error(L, "out of memory");
  w->box = box;
  w->def = box->def;
  bonsai_def_max_nodes(w->def, (unsigned)w->max);
  lua_newtable(L);
  w->values = lua_gettop(L);
  lua_newtable(L);
  w->uses = lua_gettop(L);
  lua_newtable(L);
  w->stack = lua_gettop(L);
  lua_newtable(L);
  w->onpath = lua_gettop(L);
  lua_newtable(L);
  w->inlining = lua_gettop(L);
  if (self != 0) { /* the tree being reloaded cannot contain itself */
    lua_pushvalue(L, self);
    lua_pushboolean(L, 1);
    lua_rawset(L, w->inlining);
  }
  lua_pushnil(L);
  w->ctx = lua_gettop(L);
  lua_newtable(L); /* the first frame's list */
  if (opts != 0 && rawfield(L, opts, "priority") != LUA_TNIL) {
    lua_Integer n, k;
    if (!lua_istable(L, -1))
      luaL_error(L, "tree '%s': 'priority' must be a list of filters", name);
    n = (lua_Integer)lua_rawlen(L, -1);
    if (n > w->max)
      luaL_error(L, "tree '%s': more than %d nodes (raise max_nodes)", name,
                 (int)w->max);
    for (k = 1; k <= n; k++) {
      lua_rawgeti(L, -1, k);
      lua_rawseti(L, -3, k);
    }
    lua_pop(L, 1);
    lua_pushvalue(L, root);
    lua_rawseti(L, -2, n + 1);
    bonsai_def_begin(w->def, BONSAI_PRIORITY, NULL);
    wrapped = 1;
  } else {
    if (opts != 0)
      lua_pop(L, 1);
    lua_pushvalue(L, root);
    lua_rawseti(L, -2, 1);
  }
  pushframe(w, 0);
  walk(w, wrapped);
  lua_settop(L, w->uses);
}

/* }====================================================== */

/*
** {======================================================
** Trees: bt.tree, bt.shared, their values
** =======================================================
*/

/* Records that the tree at ti inlines the trees that are keys of the
** table at uses: its TV_USES, and it is in each one's TV_USERS. */
static void setuses(lua_State *L, int ti, int uses) {
  ti = lua_absindex(L, ti);
  uses = lua_absindex(L, uses);
  lua_pushvalue(L, uses);
  lua_setiuservalue(L, ti, TV_USES);
  lua_pushnil(L);
  while (lua_next(L, uses) != 0) {
    lua_pop(L, 1);
    lua_getiuservalue(L, -1, TV_USERS);
    lua_pushvalue(L, ti);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
}

/* Pushes { root = root, opts = opts } (opts: 0 for none). */
static void pushsource(lua_State *L, int root, int opts) {
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, root);
  lua_setfield(L, -2, "root");
  if (opts != 0) {
    lua_pushvalue(L, opts);
    lua_setfield(L, -2, "opts");
  }
}

/* The values table at idx as bytes for other states (pushed): only args
** tables can go; a function is a leaf only this state has. */
static void packvalues(lua_State *L, int idx, const char *name) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_isfunction(L, -1))
      luaL_error(L, "tree '%s': cannot share a tree with leaves that are Lua "
                    "functions: register them (bt.register) and use them by "
                    "name", name);
    lua_pop(L, 1);
  }
  lb_pack(L, idx);
}

void lb_tree_values(lua_State *L, int idx) {
  LTree *lt = (LTree *)lua_touserdata(L, idx);
  size_t len;
  unsigned long long v;
  const void *host = bonsai_tree_host(lt->t, &len, &v);
  idx = lua_absindex(L, idx);
  if (v == lt->version) {
    lua_getiuservalue(L, idx, 1);
    return;
  }
  /* another state reloaded the shared tree: its args from the bytes */
  if (host == NULL || lb_unpack(L, host, len) != 0) {
    lua_newtable(L);
  } else if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, idx, 1);
  lt->version = v;
}

/* tree:share(): a handle for bt.shared in other states of the process */
static int tree_share(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  char handle[64];
  size_t len = 0;
  const char *bytes = NULL;
  int r;
  lua_settop(L, 1);
  if (!bonsai_tree_is_shared(lt->t)) {
    lua_getiuservalue(L, 1, 1);
    packvalues(L, 2, bonsai_tree_name(lt->t));
    bytes = lua_tolstring(L, -1, &len);
  }
  r = bonsai_tree_share(lt->t, bytes, len, handle, sizeof handle);
  if (r != BONSAI_OK)
    return luaL_error(L, "out of memory");
  lt->version = bonsai_tree_version_id(lt->t);
  lua_pushstring(L, handle);
  return 1;
}

/* bt.shared(handle): this state's tree on a tree shared by another */
int lb_shared(lua_State *L) {
  char err[256];
  const char *h = luaL_checkstring(L, 1);
  bonsai_tree *t;
  LTree *lt = (LTree *)lua_newuserdatauv(L, sizeof *lt, TV_N); /* empty */
  lt->t = NULL;
  lt->version = 0;
  luaL_setmetatable(L, BS_TREE_T);
  lb_newweak(L); /* no source here: it cannot be a subtree */
  lua_setiuservalue(L, -2, TV_USERS);
  if (bonsai_tree_shared(lb_context(L)->env, h, &t, err, sizeof err) !=
      BONSAI_OK)
    return luaL_error(L, "bt.shared: %s", err);
  lt->t = t;
  lb_tree_values(L, -1); /* made from the shared bytes */
  lua_pop(L, 1);
  return 1;
}

/* bt.tree(root [, {name = s, priority = {filters}}]) */
int lb_tree(lua_State *L) {
  char err[512];
  Walk w;
  LTree *lt;
  bonsai_tree *t;
  const char *name = "tree";
  size_t len;
  int opts;
  lua_settop(L, 2);
  if (!lua_isnoneornil(L, 2))
    luaL_checktype(L, 2, LUA_TTABLE);
  if ((lua_istable(L, 2) && rawfield(L, 2, "name") == LUA_TSTRING) ||
      (lua_settop(L, 2),
       lua_istable(L, 1) && rawfield(L, 1, "name") == LUA_TSTRING)) {
    name = lua_tolstring(L, -1, &len);
    if (memchr(name, '\0', len) != NULL)
      return luaL_error(L, "the tree name contains a NUL byte");
    if (len > BONSAI_MAXNAME)
      return luaL_error(L, "the tree name is too long");
  } else {
    lua_settop(L, 2);
    lua_pushnil(L);
  }
  /* stack: root, opts, name */
  opts = lua_istable(L, 2) ? 2 : 0;
  build(L, &w, 1, opts, name, 0);
  /* the userdata first, empty and valid: a memory error leaks nothing */
  lt = (LTree *)lua_newuserdatauv(L, sizeof *lt, TV_N);
  lt->t = NULL;
  lt->version = 0;
  luaL_setmetatable(L, BS_TREE_T);
  if (bonsai_tree_new(w.def, name, &t, err, sizeof err) != BONSAI_OK)
    return luaL_error(L, "tree '%s': %s", name, err);
  lt->t = t;
  lt->version = bonsai_tree_version_id(t);
  bonsai_def_free(w.def);
  w.box->def = NULL;
  lua_pushvalue(L, w.values);
  lua_setiuservalue(L, -2, TV_VALUES);
  pushsource(L, 1, opts);
  lua_setiuservalue(L, -2, TV_SOURCE);
  lb_newweak(L);
  lua_setiuservalue(L, -2, TV_USERS);
  setuses(L, -1, w.uses);
  lua_getiuservalue(L, lua_upvalueindex(1), LB_TREES); /* by name */
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  return 1;
}

/* A compiled version not yet in place (released if it never is). */
typedef struct VersionBox {
  bonsai_version *v;
} VersionBox;

/* }====================================================== */

/*
** {======================================================
** Reload: every tree that inlines this one, all or none
** =======================================================
*/

static int versionbox_gc(lua_State *L) {
  VersionBox *b = (VersionBox *)lua_touserdata(L, 1);
  bonsai_version_release(b->v);
  b->v = NULL;
  return 0;
}

/* Walks and compiles a new version of the tree at ti from its source (the
** table at src) and appends { tree, box, values, uses, host bytes of a
** shared tree } to the plan at plan. Raises definition errors. */
static void prepare(lua_State *L, int ti, int src, int plan) {
  LTree *lt = (LTree *)lua_touserdata(L, ti);
  const char *name = bonsai_tree_name(lt->t);
  int top = lua_gettop(L), root, opts = 0;
  char err[512];
  VersionBox *box;
  Walk w;
  lua_getfield(L, src, "root");
  root = lua_gettop(L);
  if (lua_getfield(L, src, "opts") == LUA_TTABLE)
    opts = lua_gettop(L);
  build(L, &w, root, opts, name, ti); /* stack: def box, values, uses */
  box = (VersionBox *)lua_newuserdatauv(L, sizeof *box, 0);
  box->v = NULL;
  if (luaL_newmetatable(L, "bonsai.version")) {
    lua_pushcfunction(L, versionbox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if (bonsai_def_compile(w.def, &box->v, err, sizeof err) != BONSAI_OK)
    luaL_error(L, "tree '%s': %s", name, err);
  bonsai_def_free(w.def);
  w.box->def = NULL;
  lua_createtable(L, 5, 0);
  lua_pushvalue(L, ti);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, 2);
  lua_pushvalue(L, w.values);
  lua_rawseti(L, -2, 3);
  lua_pushvalue(L, w.uses);
  lua_rawseti(L, -2, 4);
  /* a user tree finalized meanwhile (a GC step while building) has no
  ** tree: it is left out when the plan is applied */
  if (lt->t != NULL && bonsai_tree_is_shared(lt->t)) { /* the others get
                                                        ** its args too */
    packvalues(L, w.values, name);
    lua_rawseti(L, -2, 5);
  }
  lua_rawseti(L, plan, (lua_Integer)lua_rawlen(L, plan) + 1);
  lua_settop(L, top);
}

/* Appends to the plan a new version of every tree that inlines a tree of
** the plan (from entry 'from' on), all the way up; 'seen' holds the trees
** already planned. */
static void planusers(lua_State *L, int plan, int seen) {
  lua_Integer k;
  for (k = 1; k <= (lua_Integer)lua_rawlen(L, plan); k++) {
    int x, users;
    lua_rawgeti(L, plan, k);
    lua_rawgeti(L, -1, 1);
    x = lua_gettop(L);
    lua_getiuservalue(L, x, TV_USERS);
    users = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, users) != 0) {
      int u = lua_gettop(L) - 1;
      lua_pop(L, 1);
      lua_pushvalue(L, u);
      if (lua_rawget(L, seen) != LUA_TNIL ||
          ((LTree *)lua_touserdata(L, u))->t == NULL) {
        lua_pop(L, 1);
        continue;
      }
      lua_pop(L, 1);
      lua_getiuservalue(L, u, TV_USES); /* still a user? */
      lua_pushvalue(L, x);
      if (lua_rawget(L, -2) != LUA_TNIL) {
        lua_pushvalue(L, u);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
        lua_getiuservalue(L, u, TV_SOURCE);
        prepare(L, u, lua_gettop(L), plan);
        lua_pop(L, 1);
      }
      lua_pop(L, 2);
    }
    lua_pop(L, 3);
  }
}

/* Whether the tree at x inlines the tree at t, directly or not (through
** the TV_USES of the trees in between). */
static int inlines(lua_State *L, int x, int t) {
  int top = lua_gettop(L), seen, queue, found = 0;
  lua_Integer k, n = 1;
  lua_newtable(L);
  seen = lua_gettop(L);
  lua_newtable(L);
  queue = lua_gettop(L);
  lua_pushvalue(L, x);
  lua_rawseti(L, queue, 1);
  for (k = 1; k <= n && !found; k++) {
    lua_rawgeti(L, queue, k);
    if (lua_getiuservalue(L, -1, TV_USES) != LUA_TTABLE) {
      lua_pop(L, 2);
      continue;
    }
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pop(L, 1);
      if (lua_rawequal(L, -1, t))
        found = 1;
      lua_pushvalue(L, -1);
      if (lua_rawget(L, seen) == LUA_TNIL) {
        lua_pushvalue(L, -2);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
        lua_pushvalue(L, -2);
        lua_rawseti(L, queue, ++n);
      }
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
  }
  lua_settop(L, top);
  return found;
}

/* The body of tree:reload, run protected: (tree, root or tree, opts). The
** new version and those of every tree that inlines this one (bt.subtree)
** are compiled first, then all put in place: either all change or none. */
static int doreload(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  lua_Integer k;
  int plan, seen;
  lua_settop(L, 3);
  if (!lua_isnil(L, 3) && !lua_istable(L, 3))
    return luaL_error(L, "tree '%s': the options must be a table (got %s)",
                      bonsai_tree_name(lt->t), luaL_typename(L, 3));
  lua_newtable(L);
  plan = lua_gettop(L);
  lua_newtable(L);
  seen = lua_gettop(L);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, seen);
  if (luaL_testudata(L, 2, BS_TREE_T)) { /* take another tree's version */
    LTree *other = lb_checktree(L, 2);
    if (bonsai_tree_env(other->t) != bonsai_tree_env(lt->t))
      return luaL_error(L, "tree '%s': a tree of another state",
                        bonsai_tree_name(lt->t));
    if (inlines(L, 2, 1))
      return luaL_error(L, "tree '%s': subtree '%s' contains itself",
                        bonsai_tree_name(lt->t), bonsai_tree_name(lt->t));
    lua_getiuservalue(L, 2, TV_SOURCE);
    lua_setiuservalue(L, 1, TV_SOURCE);
    lua_createtable(L, 4, 0); /* { tree, other, values, uses } */
    lua_pushvalue(L, 1);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, 2);
    lua_rawseti(L, -2, 2);
    lb_tree_values(L, 2);
    lua_rawseti(L, -2, 3);
    lua_getiuservalue(L, 2, TV_USES);
    lua_rawseti(L, -2, 4);
    lua_rawseti(L, plan, 1);
  } else {
    pushsource(L, 2, lua_istable(L, 3) ? 3 : 0);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, 1, TV_SOURCE); /* tree_reload puts it back on error */
    prepare(L, 1, lua_gettop(L), plan);
    lua_pop(L, 1);
  }
  planusers(L, plan, seen);
  for (k = 1; k <= (lua_Integer)lua_rawlen(L, plan); k++) { /* all in place */
    LTree *x;
    int r;
    lua_rawgeti(L, plan, k);
    lua_rawgeti(L, -1, 1);
    x = (LTree *)lua_touserdata(L, -1);
    lua_rawgeti(L, -2, 2);
    if (x->t == NULL) { /* finalized while the plan was made */
      lua_pop(L, 3);
      continue;
    }
    if (luaL_testudata(L, -1, BS_TREE_T) != NULL) {
      r = bonsai_tree_adopt(x->t, ((LTree *)lua_touserdata(L, -1))->t);
    } else { /* a shared tree carries its args to the other states */
      VersionBox *box = (VersionBox *)lua_touserdata(L, -1);
      bonsai_version *v = box->v;
      size_t len = 0;
      const char *host = NULL;
      if (lua_rawgeti(L, -3, 5) == LUA_TSTRING)
        host = lua_tolstring(L, -1, &len);
      box->v = NULL;
      r = bonsai_tree_set_version(x->t, v, host, len);
      lua_pop(L, 1);
    }
    if (r != BONSAI_OK)
      return luaL_error(L, "tree '%s': out of memory",
                        bonsai_tree_name(x->t));
    x->version = bonsai_tree_version_id(x->t);
    lua_rawgeti(L, -3, 3);
    lua_setiuservalue(L, -3, TV_VALUES);
    lua_rawgeti(L, -3, 4);
    setuses(L, -3, -1);
    lua_pop(L, 4);
  }
  return 0;
}

/* tree:reload(new_root_or_tree [, opts]): true, or nil and a message (the
** old version keeps running). Agents switch at their next tick. */
static int tree_reload(lua_State *L) {
  lb_checktree(L, 1);
  lua_settop(L, 3);
  lua_getiuservalue(L, 1, TV_SOURCE); /* 4: to put back on failure */
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, doreload, 1);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, 3);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    lua_pushvalue(L, 4);
    lua_setiuservalue(L, 1, TV_SOURCE);
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* }====================================================== */

/*
** {======================================================
** Tree methods
** =======================================================
*/

/* bt.istree(x): true if x is a tree (not any userdata) */
int lb_istree(lua_State *L) {
  lua_pushboolean(L, luaL_testudata(L, 1, BS_TREE_T) != NULL);
  return 1;
}

LTree *lb_checktree(lua_State *L, int idx) {
  LTree *lt = (LTree *)luaL_checkudata(L, idx, BS_TREE_T);
  if (lt->t == NULL)
    luaL_argerror(L, idx, "released tree");
  return lt;
}

static int tree_gc(lua_State *L) {
  LTree *lt = (LTree *)lua_touserdata(L, 1);
  bonsai_tree_release(lt->t);
  lt->t = NULL;
  return 0;
}

static void addbuf(void *ud, const char *s, size_t n) {
  luaL_addlstring((luaL_Buffer *)ud, s, n);
}

/* tree:dump([agent]) */
static int tree_dump(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  const bonsai_agent *a = NULL;
  const LAgent *la;
  luaL_Buffer b;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_rawgeti(L, 2, 1);
    la = (LAgent *)luaL_testudata(L, -1, BS_STATE_T);
    luaL_argexpected(L, la != NULL, 2, BS_AGENT_T);
    luaL_argcheck(L, la->magic != NULL, 2, "collected agent");
    a = agentof(la);
    luaL_argcheck(L, bonsai_agent_tree(a) == lt->t, 2,
                  "agent of another tree");
  }
  luaL_buffinit(L, &b);
  bonsai_tree_dump(lt->t, a, addbuf, &b);
  luaL_pushresult(&b);
  return 1;
}

static int tree_tostring(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  lua_pushfstring(L, "bonsai.tree '%s' (%d nodes)", bonsai_tree_name(lt->t),
                  (int)bonsai_tree_size(lt->t));
  return 1;
}

/* tree.name, tree.size, then methods */
static int tree_index(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "name") == 0) {
    lua_pushstring(L, bonsai_tree_name(lt->t));
    return 1;
  }
  if (strcmp(k, "size") == 0) {
    lua_pushinteger(L, (lua_Integer)bonsai_tree_size(lt->t));
    return 1;
  }
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "methods");
  lua_getfield(L, -1, k);
  return 1;
}

/* tree:_source(): { root =, opts = }, the Lua definition of the current
** version, or nil (a shared tree's): kept in the tree's own uservalue, so
** a definition whose leaves refer to the tree does not keep it alive (a
** weak-keyed table would on Lua 5.1 and LuaJIT). For tree:export. */
static int tree_source(lua_State *L) {
  lb_checktree(L, 1);
  lua_getiuservalue(L, 1, TV_SOURCE);
  return 1;
}

/* tree:_register(): the tree is again the one bt.subtree finds by its name
** (bt.tree registers each tree it makes under its name: a check that
** compiles a draft under that name, as the live page's do, took its
** place). */
static int tree_register(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  if (lt->t == NULL)
    return luaL_error(L, "released tree");
  lua_getiuservalue(L, lua_upvalueindex(1), LB_TREES);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, bonsai_tree_name(lt->t));
  return 0;
}

/* tree:hold(on): keeps every agent of the tree on the version it runs
** across reloads, but those with a pass (a:pass), or lets them switch at
** their next tick (false: the passes are taken back); tree:held() */
static int tree_hold(lua_State *L) {
  LTree *lt = lb_checktree(L, 1);
  luaL_checkany(L, 2);
  bonsai_tree_hold(lt->t, lua_toboolean(L, 2));
  return 0;
}

static int tree_held(lua_State *L) {
  lua_pushboolean(L, bonsai_tree_held(lb_checktree(L, 1)->t));
  return 1;
}

/* ltrace.c adds tree:nodes. */
static const luaL_Reg tree_methods[] = {{"dump", tree_dump},
                                        {"_source", tree_source},
                                        {"_register", tree_register},
                                        {"reload", tree_reload},
                                        {"hold", tree_hold},
                                        {"held", tree_held},
                                        {"share", tree_share},
                                        {NULL, NULL}};

static const luaL_Reg tree_meta[] = {{"__gc", tree_gc},
                                     {"__index", tree_index},
                                     {"__tostring", tree_tostring},
                                     {NULL, NULL}};

/* stack: context */
void lb_open_tree(lua_State *L) {
  luaL_newmetatable(L, BS_TREE_T);
  lua_pushvalue(L, -2);
  luaL_setfuncs(L, tree_meta, 1);
  lua_newtable(L);
  lua_pushvalue(L, -3);
  luaL_setfuncs(L, tree_methods, 1);
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
}

/* }====================================================== */
