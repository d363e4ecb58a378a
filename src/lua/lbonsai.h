/*
** lbonsai.h: what the binding files (l*.c) share: the per-state context,
** the userdata layouts and their uservalue slots, the tick context that Lua
** leaves read their stack from, and the check/push helpers.
*/
#ifndef bonsai_lbonsai_h
#define bonsai_lbonsai_h

#include <stdint.h>

#include "bonsai.h"
#include "lcompat.h" /* every Lua's C API as 5.4's */

#if defined(__GNUC__)
#define lb_unlikely(x) __builtin_expect(!!(x), 0)
#define lb_noinline __attribute__((noinline)) /* off a hot path */
#define lb_inline inline __attribute__((always_inline)) /* on it */
#else
#define lb_unlikely(x) (x)
#define lb_noinline
#define lb_inline inline
#endif

#define BS_TREE_T "bonsai.tree"
#define BS_AGENT_T "bonsai.agent"
#define BS_STATE_T "bonsai.agentstate"
#define BS_BB_T "bonsai.blackboard"
#define BS_DEF_T "bonsai.definition"
#define LB_CONTROL_T "bonsai.control" /* the 'c' of bt.control callbacks */

/* One per lua_State: upvalue 1 of every module function and method. Its
** uservalues: */
#define LB_NAMED 1 /* named Lua leaves: slot NAMEDSLOTS*id+1.. = tick,
                   ** enter, exit, abort, save, restore */
#define LB_KEYS 2  /* key name -> interned id cache */
#define LB_ANCHOR 3 /* strings whose addresses the context keeps */
#define LB_IDS 4    /* weak: Lua value kept as a blackboard handle -> its id */
#define LB_EXTRAS 5 /* weak: agent state -> { interrupts = {...},
                    ** [node + 1] = task coroutine or bt.control's 'c',
                    ** [coroutine] = its cleanups (bt.defer) },
                    ** blackboard -> its side table; for the few that
                    ** have one (see lb_getbeside) */
#define LB_TICKING 6 /* the bt.tick_all calls under way: [depth] = true
                     ** (nested calls stack up); [-depth] = the batch
                     ** function of that depth (ltick.c) */
#define LB_TREES 7  /* weak values: tree name -> tree (bt.subtree by name) */
#define LB_VIEW 8   /* view(bb, map): a remapping view (init.lua) */
#define LB_SCRIPT 9 /* script(code, field): a condition's function, or nil
                    ** and a message (init.lua) */
#define LB_PAYLOADS 10 /* [handle] = an event payload only Lua holds (see
                       ** lb_payload_keep) */
#define LB_SEEN 11  /* the tables being written by lb_saveable (empty
                    ** between calls) */
#define LB_STEPPER 12 /* the LuaJIT path's maker of bt.tick_all's loops
                      ** (lstep.c), or nil: the lua_call path */
#define LB_NUV 12
#define NAMEDSLOTS 6 /* a named leaf's slots in LB_NAMED */
/* The handles of event payloads only Lua holds (lbonsai.c): slot h - 1
** for handle h. */
typedef struct LPaySlot {
  int32_t refs;  /* places the core keeps it (its hooks count them) */
  uint32_t link; /* free: the next free slot's handle, or 0 */
  uint8_t used;  /* its value is in LB_PAYLOADS */
  uint8_t dead;  /* in the list of handles to sweep */
} LPaySlot;
typedef struct LPayloads {
  LPaySlot *slot;
  uint32_t cap, n; /* slots allocated; handles given (the highest) */
  uint32_t free;   /* a free slot's handle, or 0 */
  uint32_t *dead;  /* handles to sweep (room for cap) */
  uint32_t ndead;
} LPayloads;

/* Where a Lua leaf finds its stack during a tick or an abort pass: stack
** indices of the agent table, its state userdata, its blackboard (fetched
** into its slot on first use: most leaves take only the agent), the values
** table of the version being run and the named-leaf table. A stepped tick
** (lstep.c) has one with only 'a' and 'outer' set. */
typedef struct LTick {
  lua_State *L;
  struct LBonsai *lb;
  bonsai_agent *a; /* the agent */
  int ctx; /* the context (a stack or upvalue index) */
  int agent, state, bb, values, named;
  int bbready;
  int pending; /* results of leaf calls left on the stack */
  struct LTick *outer; /* a stepped tick: the tick under way before it */
} LTick;

/* What the LuaJIT path's entry points (lstep.c) tell its Lua side
** (lua/bonsai/luajit.lua, which declares the same layout) about the call
** they hand out. */
typedef struct LStepOut {
  double version; /* id of the version the agent runs (set as its tick
                  ** begins and with a control node's callback) */
  int32_t args;   /* the call's args: their index in the values table, or 0 */
  int32_t status; /* an exit call's: how the run ended */
  int32_t level;  /* the level of the run the call belongs to */
  int32_t node;   /* the call's node */
  int32_t strict; /* bt.strict's setting */
} LStepOut;

/* Stepped ticks nested in one another (a leaf ticking another agent) at
** most; deeper ones take the lua_call path. */
#define LB_FDEPTH 16

typedef struct LBonsai {
  bonsai_env *env;
  long long nextid; /* last handle id given */
  /* the status strings as objects (lua_topointer): a leaf's result is one
  ** of them when it is the very same string (short strings are interned,
  ** and these are anchored) */
  const void *s_success, *s_failure, *s_running;
  const void *s_skipped; /* from a control node's tick only */
  struct LTick *ticking; /* the innermost tick under way (bt.sleep) */
  int sleepers; /* sleep caches alive (lsleep.c); none: no list has one */
  lua_State *task; /* the task coroutine being resumed (bt.defer) */
  const struct LTick *tasktick; /* the tick that resumed it */
  int strict;   /* bt.strict: a Lua leaf returning nothing is an error */
  /* the LuaJIT path (lstep.c): what it hands out, the stepped ticks under
  ** way (lb->ticking points at the innermost while it is under way) */
  LStepOut out;
  int fdepth;
  double nstepped; /* stepped ticks begun (core._step.stats, for tests) */
  LTick ftick[LB_FDEPTH];
  LPayloads pay; /* event payloads only Lua holds */
} LBonsai;

/* Tree userdata. Its uservalues: */
#define TV_VALUES 1 /* the values table of the current version (leaf
                    ** functions and args tables, by index) */
#define TV_SOURCE 2 /* { root, opts }: the Lua definition (subtrees inline
                    ** it; reloads of the trees it uses walk it again) */
#define TV_USERS 3  /* weak keys: trees whose definition inlines this one */
#define TV_USES 4   /* the trees this one inlines (as keys) */
#define TV_N 4
typedef struct LTree {
  bonsai_tree *t;
  unsigned long long version; /* the version whose values are uservalue 1 */
} LTree;

/* Agent state userdata, at [1] of the agent table. Its uservalues: */
#define UV_VALUES 1 /* values table of the version the agent runs */
#define UV_BB 2     /* blackboard userdata */
#define UV_TREE 3   /* tree userdata */
#define UV_N 3
typedef struct LAgent {
  const LBonsai *magic; /* the context: tells an agent state apart cheaply;
                        ** NULL until the agent lives and once collected */
  int ninterrupts;
  uint8_t frozen; /* 1: not ticked (a breakpoint); 2: one step, then 1 */
  uint8_t hooked; /* a tick hook is set (a:on_tick, see ltrace.c) */
  uint8_t tasks;  /* it has had task coroutines or bt.control 'c' tables
                  ** (in its extras, by node): a switch to another version
                  ** moves them */
  uint8_t failing; /* bt.tick_all keeps its last error (ltick.c: streak) */
} LAgent;

/* The C agent, right after the header, and back. */
#define agentof(la) ((bonsai_agent *)((la) + 1))
#define stateofagent(a) ((LAgent *)(a)-1)

/* Blackboard userdata (see lblackboard.c for its uservalues). */
typedef struct LBB {
  bonsai_bb *bb;
  int nobs;    /* observers registered on it */
  int watched; /* some descendant has observers */
} LBB;

/* Results a tick may leave on the stack before they are dropped; whoever
** ticks makes room for them (lb_tick_room). */
#define LB_PENDING 8
#define lb_tick_room(L) luaL_checkstack(L, LB_PENDING + 16, "tick")

/* Makes sure the blackboard is in its slot. */
#define lb_tick_bb(t)                                                          \
  ((t)->bbready ? (void)0                                                      \
                : (lua_getiuservalue((t)->L, (t)->state, UV_BB),               \
                   lua_replace((t)->L, (t)->bb), (void)((t)->bbready = 1)))

/* A Lua leaf's data: its first slot, how many arguments its functions
** take (0-4: agent, bb, args, status), and which table holds it. */
#define LEAFDATA(slot, nargs, named)                                           \
  ((void *)(((intptr_t)(slot) << 4) | ((intptr_t)(nargs) << 1) | (named)))
#define LEAF_SLOT(d) ((lua_Integer)((intptr_t)(d) >> 4))
#define LEAF_NARGS(d) ((int)(((intptr_t)(d) >> 1) & 7))
#define LEAF_NAMED(d) ((int)((intptr_t)(d)&1))

/*
** The functions each file offers the others, file by file from the bottom
** of the binding up: a file calls only files listed before it (no
** circles; tests/build/layers.lua checks it). lbonsai.c calls none; linit.c
** calls the openers and module functions and is called by none.
*/

/* lbonsai.c: shared helpers */
LBonsai *lb_context(lua_State *L); /* upvalue 1 */
/* Removes the first element raw-equal to the value at v from the list at
** the top, moving the later ones down; 1 if there was one. */
int lb_list_remove(lua_State *L, int v);
/* Pushes a new table with weak keys. */
void lb_newweak(lua_State *L);
/* Pushes the extras table of the agent state at si (ci: the context);
** creates it if make, else pushes nil when there is none. */
void lb_extra(lua_State *L, int si, int ci, int make);
/* Makes the table at the top (popped) the extras of the state at si. */
void lb_setextra(lua_State *L, int si, int ci);
/* Event payloads only Lua holds (ci: the context): keeps the value at vidx
** (for as long as the core holds it) and returns its handle; pushes the
** value of handle h (nil when gone) and returns its type; lets go of those
** the core holds no more; the core's hooks (ud: the context); frees the
** handles' memory (the context is collected). */
long long lb_payload_keep(lua_State *L, int ci, int vidx);
int lb_payload_push(lua_State *L, int ci, long long h);
void lb_payload_sweep(lua_State *L, int ci);
void lb_payload_retain(void *ud, long long h);
void lb_payload_release(void *ud, long long h);
void lb_payload_free(lua_State *L, LBonsai *lb);
/* Pushes the name of a status ("idle", "running"...). */
void lb_pushstatus(lua_State *L, int status);
/* The Lua value at idx as a C value; 0 (and BONSAI_THANDLE) for values C
** cannot hold (tables, functions...). Strings point into Lua. */
int lb_tovalue(lua_State *L, int idx, bonsai_value *v);
/* Key string at idx -> interned id (created if add), or -1; the cache of
** ids is the context's (lb_keyid) or the table at stack index cache. */
int lb_keyid(lua_State *L, int idx, int add);
int lb_keyid_in(lua_State *L, int idx, int add, int cache);
/* stack: context. Adds the functions of l, with the context as upvalue 1,
** to the methods of the type tname, made by its opener (the field 'methods'
** of its metatable, or for agents upvalue 2 of their __index). So a file
** adds its own methods to a type a file below it made. */
void lb_addmethods(lua_State *L, const char *tname, const luaL_Reg *l);

/* lcheck.c: typos refused with a suggestion; words: space-separated */
/* Whether words holds w. */
int lb_hasword(const char *words, const char *w);
/* Pushes the word of words that word most likely means and returns 1, or
** returns 0 and pushes nothing. */
int lb_nearest(lua_State *L, const char *word, const char *words);
/* Pushes and returns " (did you mean 'x'?)" (or "'x' or 'y'", up to three
** words equally near), or "" when no word of words is near word. */
const char *lb_suggest(lua_State *L, const char *word, const char *words);
/* Pushes and returns "<what> has no option '<key>' (did you mean 'x'?)",
** or "(it takes: <words>)" when no word is near. */
const char *lb_badkey(lua_State *L, const char *what, const char *key,
                      const char *words);
/* Raises lb_badkey's message for the first key of the table at idx that is
** not among words. */
void lb_checkopts(lua_State *L, int idx, const char *what, const char *words);
/* Pushes and returns the keys a node table of kind takes: those of every
** node, its parameters, its other keys (kinds.c). */
const char *lb_kindwords(lua_State *L, int kind);
int lb_checkopts_lua(lua_State *L); /* core._checkopts(t, what, words) */
int lb_nearest_lua(lua_State *L);   /* core._nearest(word, words) */
int lb_suggest_lua(lua_State *L);   /* core._suggest(word, words) */
/* Pushes and returns the names of the leaves registered in the context's
** environment, space-separated. */
const char *lb_leafnames(lua_State *L);
int lb_leafnames_lua(lua_State *L); /* core._leafnames() */

/* lsleep.c: the sleep cache of a bt.tick_all list (see there) */
typedef struct LSleepers LSleepers;
/* Pushes the cache of the list at 'list' (ci: the context), ready for a
** call over its n entries (those past them emptied), or nil when it has
** none (or none that large, and no memory for one); returns it or NULL.
** Costs nothing while no list has a cache. */
LSleepers *lb_sleepers(lua_State *L, int list, int ci, lua_Integer n);
/* After a call without a cache over n entries that skipped 'slept'
** sleepers: with enough of them, the list gets a cache (at its second
** such call; never raises). */
void lb_sleepers_want(lua_State *L, int list, int ci, lua_Integer n,
                      lua_Integer slept);
/* Skips entries i to n of the list at 'list' while the cache knows them
** and they are still asleep without interrupts (their clocks move by dt),
** as the ordinary path would; returns the first entry it did not skip. */
lua_Integer lb_sleepers_skip(lua_State *L, const LSleepers *c, int list,
                             lua_Integer i, lua_Integer n, double dt);
/* Records entry i as the agent table at ai, state si (la), found asleep;
** with la NULL, forgets it. The cache is at idx. Never allocates. */
void lb_sleepers_note(lua_State *L, LSleepers *c, int idx, lua_Integer i,
                      int ai, int si, LAgent *la);
/* The agent at entry i (table at ai, state si: la) is awake: its entry is
** kept when it names that agent (woken, it likely sleeps again), else
** forgotten. */
void lb_sleepers_awake(lua_State *L, LSleepers *c, int idx, lua_Integer i,
                       int ai, int si, LAgent *la);

/* lfiles.c */
int lb_mtime(lua_State *L); /* bt._mtime(path) */
int lb_dir(lua_State *L);   /* bt._dir(path) */
int lb_realpath(lua_State *L); /* bt._realpath(path) */
int lb_readfile(lua_State *L); /* bt._readfile(path, max) */

/* lblackboard.c */
int lb_blackboard(lua_State *L); /* bt.blackboard([init]) */
/* The blackboard userdata at idx, or raises. */
LBB *lb_checkbb(lua_State *L, int idx);
/* Pushes a new, empty blackboard; parentidx is the parent's userdata or 0.
** Needs the context as upvalue 1. */
LBB *lb_newbb(lua_State *L, int parentidx);
/* Writes the value at vidx under key id 'key' in the userdata at bbidx,
** as a C write does: guards see it, Lua observers are not called. */
void lb_bb_store(lua_State *L, int bbidx, int key, int vidx);
/* Copies the string-keyed fields of the table at idx into the userdata. */
void lb_bb_fill(lua_State *L, int bbidx, int tidx);
/* stack: context. Makes the blackboard metatable and methods. */
void lb_open_blackboard(lua_State *L);

/* lleaf.c: leaf trampolines (their data: LEAFDATA) and bt.register */
/* A Lua leaf's call: tick, enter, exit or abort. */
int lb_leaf_call(const bonsai_call *c);
/* A bt.task: a coroutine per run. */
int lb_task_call(const bonsai_call *c);
/* bt.defer(fn), from a task's body: fn runs when the run ends. */
int lb_defer(lua_State *L);
/* bt.register(name, leafdef) */
int lb_register(lua_State *L);
/* bt.strict([on]): with on, a Lua leaf returning nothing is an error */
int lb_strict(lua_State *L);
/* A utility function: lb_utility_call with the data lb_utilitydef returns
** for the function at the top (popped, stored in values[slot]). */
int lb_utility_call(const bonsai_call *c);
/* A Lua leaf inside a remapping subtree (ltree.c's 'remapped'): called
** with a view of the blackboard that renames keys. */
int lb_remap_call(const bonsai_call *c);
void *lb_utilitydef(lua_State *L, int values, int slot);
/* core._isleaf(name): whether a leaf is registered under name. */
int lb_isleaf(lua_State *L);
/* A bt.control's callbacks (their data: LEAFDATA of their first slot). */
int lb_control_call(const bonsai_call *c);
/* Pushes the 'c' of the control node of call c (made on first use), its
** node number and child count brought up to the version the agent runs. */
void lb_pushcontrol(lua_State *L, LTick *t, const bonsai_call *c);
/* The key of a 'c' table's private part, { agent, state, node, version }. */
const void *lb_control_key(void);
/* The status a leaf's result at the top (left there) stands for, or raises
** the message a tick raises for it (invalid status, nothing returned under
** bt.strict; with 'control', a control node's tick's: nothing at all). */
int lb_tostatus(lua_State *L, int control);
/* Reads bt.control's tick, enter and abort from the table at idx into
** values[slot..slot+3] (by event); sets flags. NULL, or a message. */
const char *lb_controldef(lua_State *L, int idx, int values, int slot,
                          unsigned *flags);
/* Gives the restored agent (table at ai, state si, ci: the context) the
** memories at the top (popped; nil: none) for its control nodes, matched
** by path. */
void lb_control_restore(lua_State *L, int ai, int si, int ci);
/* stack: context. Makes the metatable of bt.control's 'c'. */
void lb_open_control(lua_State *L);
/* Checks the abort_timeout of the leaf table at idx (a number >= 0, and no
** task's): NULL, or why not. */
const char *lb_abort_timeout(lua_State *L, int idx);
/* Reads the leaf definition at idx (a function, or a table with fn, task or
** tick/enter/exit/abort, and save/restore) into values[slot..], *used
** slots (1, 4, or 6 with save and restore); sets fn and flags. Returns
** NULL, or a message. */
const char *lb_leafdef(lua_State *L, int idx, int values, int slot,
                       bonsai_leaf_fn *fn, unsigned *flags, int *nargs,
                       int *used);

/* lsave.c: Lua values as bytes, a:save and restore */
/* Pushes the value at idx as bytes (a string): booleans, numbers,
** strings and plain tables; raises "msg" for anything else. */
void lb_pack(lua_State *L, int idx);
/* Whether a:save can save the value at idx: NULL, or why not (a string
** pushed on the stack). Allocates nothing in the usual case. ci: the
** context. */
const char *lb_saveable(lua_State *L, int idx, int ci);
/* Pushes the value read from p[0..n); 0, or -1 (nothing pushed) when the
** bytes are not exactly one packed value. */
int lb_unpack(lua_State *L, const void *p, size_t n);
/* Restores the agent (table at ai, state si) from the string at sidx;
** raises "tree 'T': cannot restore: msg". Pushes the saved memories of its
** bt.control nodes ({ [path] = memory }) or nil, for lb_control_restore. */
void lb_agent_restore(lua_State *L, int ai, int si, int sidx);
/* stack: context. Adds a:save to the agent methods (after lb_open_agent). */
void lb_open_save(lua_State *L);

/* ltree.c */
int lb_tree(lua_State *L);   /* bt.tree(root [, opts]) */
int lb_shared(lua_State *L); /* bt.shared(handle) */
/* Pushes the values table of the tree's current version (for a tree
** shared with other states, made again from the version's bytes when
** another state reloaded it). */
void lb_tree_values(lua_State *L, int idx);
/* The tree userdata at idx, or raises (also for a released tree). */
LTree *lb_checktree(lua_State *L, int idx);
int lb_istree(lua_State *L); /* bt.istree(x) */
/* stack: context. Makes the tree metatable and methods. */
void lb_open_tree(lua_State *L);

/* Agent tables, inline: the tick engine reads them for every agent of
** every tick. */
/* The state userdata of the agent table at idx (known to be a table),
** pushed; NULL if idx does not hold an agent of this context. Its 'magic'
** (the context's address) identifies it without a metatable lookup. */
static lb_inline LAgent *lb_stateof(lua_State *L, int idx,
                                    const LBonsai *lb) {
  LAgent *la;
  if (lua_rawgeti(L, idx, 1) != LUA_TUSERDATA ||
      lua_rawlen(L, -1) < sizeof(LAgent))
    return NULL;
  la = (LAgent *)lua_touserdata(L, -1);
  return la->magic == lb ? la : NULL;
}
/* The agent table at idx: its state, pushed; or NULL (nil pushed, or what
** its [1] holds) for anything but an agent of this context. */
static inline LAgent *lb_toagent(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) {
    lua_pushnil(L);
    return NULL;
  }
  return lb_stateof(L, idx, lb_context(L));
}
/* The same, or raises. */
static inline LAgent *lb_checkagent(lua_State *L, int idx) {
  LAgent *la = lb_toagent(L, idx);
  if (la == NULL)
    luaL_typeerror(L, idx, BS_AGENT_T);
  return la;
}

/* lagent.c: the agent object */
int lb_agent(lua_State *L); /* bt.agent(tree [, opts]) */
/* stack: context. Makes the agent and agent state metatables, and the
** agent methods that only read or set it. */
void lb_open_agent(lua_State *L);

/* ltick.c: the tick engine */
/* Pushes a complete leaf stack for the agent table ai (state si, ci: the
** context) and points t at it. */
void lb_pushcontext(lua_State *L, LTick *t, int ai, int si, int ci);
/* Pushes and returns the message of the agent's last error, naming its
** node (in the version it belonged to): "tree 't' node 'path': msg". */
const char *lb_pusherror(lua_State *L, bonsai_agent *a);
int lb_tick_all(lua_State *L); /* bt.tick_all(list, dt [, opts]) */
/* Stepped ticks (lstep.c) keep lb->ticking as a tick from C does: each has
** an LTick of its own, in the context, while it is under way. The LTick of
** a stepped tick of a beginning (NULL: too deeply nested), and its end
** (with the stepped ticks nested in it, left by an error). */
static inline LTick *lb_step_tick(LBonsai *lb, bonsai_agent *a) {
  LTick *t;
  if (lb->fdepth == LB_FDEPTH)
    return NULL;
  t = &lb->ftick[lb->fdepth++];
  t->a = a;
  t->lb = lb;
  t->L = NULL;
  t->outer = lb->ticking;
  lb->ticking = t;
  return t;
}

static inline void lb_step_untick(LBonsai *lb, const bonsai_agent *a) {
  int d = lb->fdepth;
  while (d > 0 && lb->ftick[d - 1].a != a)
    d--;
  if (d == 0)
    return; /* not under way */
  lb->ticking = lb->ftick[d - 1].outer;
  lb->fdepth = d - 1;
}
/* After a Lua error out of a stepped tick of the agent table at ai (state
** si, ci: the context), message at the top: the agent recovered, the
** message replaced by one that names the tree and node. */
void lb_step_recover(lua_State *L, int ai, int si, int ci);
/* Whether bt.tick_all's tick of la would be stepped now (lstep.c: not an
** agent whose last tick there failed, which pbatch ticks). */
int lb_stepable(const LBonsai *lb, const LAgent *la);
int lb_sleep(lua_State *L);    /* bt.sleep(seconds) */
/* stack: context. Adds a:tick, a:abort and a:reset to the agent methods
** (after lb_open_agent). */
void lb_open_tick(lua_State *L);

/* lstep.c: the LuaJIT path's entry points */
/* stack: context, module. Adds core._step. */
void lb_open_step(lua_State *L);

/* levents.c */
int lb_send(lua_State *L); /* bt.send(list, name [, payload]) */
/* stack: context. Adds a:send and a:dropped_events (after lb_open_agent)
** and sets the environment's payload writer. */
void lb_open_events(lua_State *L);

/* ltrace.c */
/* stack: context. Adds a:trace, a:events, a:freeze, a:on_tick... and
** tree:nodes (after lb_open_tree and lb_open_agent). */
void lb_open_trace(lua_State *L);

/* linit.c: luaopen_bonsai_core and bonsai_lua_env (bonsai_lua.h) */

#endif
