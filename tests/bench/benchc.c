/*
** benchc.c: the C half of scripts/bench. W1 "guard" with C leaves: the same
** decisions hand-written in C, calling the leaves through function pointers
** (the floor), and as a Bonsai tree whose leaves are the same C functions
** registered by name and ticked through the public C API,
** with no Lua in the loop; and C loops calling Lua leaves, W1's decisions
** hard-coded and W3's one leaf (the limit for Lua leaves). Loaded by
** scripts/bench.lua as the module "benchc"; it links its own copy of the
** core.
*/
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "bonsai.h"

typedef struct State {
  long hp, dist, clock, phase, dmg, act, left;
  long n_die, n_flee, n_attack, n_chase, n_patrol;
} State;

enum { RUNNING = BONSAI_RUNNING, SUCCESS = BONSAI_SUCCESS,
       FAILURE = BONSAI_FAILURE };

static long calls;   /* leaf calls, when counting */
static int counting;

static void step(State *s) {
  long p = (s->clock + s->phase) % 80;
  s->clock++;
  s->dist = p < 40 ? 40 - p : p - 40;
  if (s->dist <= 8)
    s->hp -= s->dmg;
  else if (s->hp < 100)
    s->hp++;
}

static int is_dead(State *s) { calls += counting; return s->hp <= 0; }
static int sees_enemy(State *s) { calls += counting; return s->dist <= 30; }
static int health_low(State *s) { calls += counting; return s->hp < 35; }
static int in_range(State *s) { calls += counting; return s->dist <= 5; }

static int act(State *s, long id, long dur, long *counter, int die) {
  calls += counting;
  if (s->act != id) {
    s->act = id;
    s->left = dur;
  }
  if (--s->left > 0)
    return RUNNING;
  s->act = 0;
  s->left = 0;
  (*counter)++;
  if (die)
    s->hp = 100;
  return SUCCESS;
}

static int die(State *s) { return act(s, 1, 3, &s->n_die, 1); }
static int flee(State *s) { return act(s, 2, 4, &s->n_flee, 0); }
static int attack(State *s) { return act(s, 3, 2, &s->n_attack, 0); }
static int chase(State *s) { return act(s, 4, 5, &s->n_chase, 0); }
static int patrol(State *s) { return act(s, 5, 6, &s->n_patrol, 0); }

/* The same leaves as registered C leaves. */
#define COND(name)                                                             \
  static int l_##name(const bonsai_call *c) {                                  \
    return name((State *)c->owner) ? SUCCESS : FAILURE;                        \
  }
#define ACT(name)                                                              \
  static int l_##name(const bonsai_call *c) { return name((State *)c->owner); }
COND(is_dead)
COND(sees_enemy)
COND(health_low)
COND(in_range)
ACT(die)
ACT(flee)
ACT(attack)
ACT(chase)
ACT(patrol)

/*
** The floor: W1's decisions written by hand in a C loop that calls the
** same leaves as the tree, through function pointers and with a call
** record, as the core calls them: the same work without a tree. (Called
** directly, the compiler would inline the leaves into the loop.)
*/
enum { F_IS_DEAD, F_DIE, F_SEES_ENEMY, F_HEALTH_LOW, F_FLEE, F_IN_RANGE,
       F_ATTACK, F_CHASE, F_PATROL, F_N };

static int floor_tick(bonsai_leaf_fn const *f, State *s) {
  bonsai_call c;
  int r;
  memset(&c, 0, sizeof c);
  c.owner = s;
  c.event = BONSAI_EV_TICK;
  if (f[F_IS_DEAD](&c) == SUCCESS && (r = f[F_DIE](&c)) != FAILURE)
    return r;
  if (f[F_SEES_ENEMY](&c) == SUCCESS) {
    if (f[F_HEALTH_LOW](&c) == SUCCESS && (r = f[F_FLEE](&c)) != FAILURE)
      return r;
    if (f[F_IN_RANGE](&c) == SUCCESS && (r = f[F_ATTACK](&c)) != FAILURE)
      return r;
    if ((r = f[F_CHASE](&c)) != FAILURE)
      return r;
  }
  return f[F_PATROL](&c);
}

/* A leaf of the branch that is never reached: counted if it were. */
static int l_never(const bonsai_call *c) {
  (void)c;
  calls += counting;
  return FAILURE;
}

/* W1's tree; with 'big', a 200-node branch that is never reached (a
** sequence of 33 sequences of a condition and five actions, and an
** action) after chase, which never fails: patrol comes 200 nodes later. */
static bonsai_tree *w1_tree(bonsai_env *env, int big) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = NULL;
  int k, j;
  bonsai_leaf_register(env, "is_dead", l_is_dead, NULL, 0);
  bonsai_leaf_register(env, "sees_enemy", l_sees_enemy, NULL, 0);
  bonsai_leaf_register(env, "health_low", l_health_low, NULL, 0);
  bonsai_leaf_register(env, "in_range", l_in_range, NULL, 0);
  bonsai_leaf_register(env, "die", l_die, NULL, 0);
  bonsai_leaf_register(env, "flee", l_flee, NULL, 0);
  bonsai_leaf_register(env, "attack", l_attack, NULL, 0);
  bonsai_leaf_register(env, "chase", l_chase, NULL, 0);
  bonsai_leaf_register(env, "patrol", l_patrol, NULL, 0);
  bonsai_leaf_register(env, "never", l_never, NULL, 0);
  bonsai_def_begin(d, BONSAI_REACTIVE_SELECTOR, NULL);
  bonsai_def_begin(d, BONSAI_REACTIVE_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_CONDITION, NULL, "is_dead", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "die", NULL);
  bonsai_def_end(d);
  bonsai_def_begin(d, BONSAI_REACTIVE_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_CONDITION, NULL, "sees_enemy", NULL);
  bonsai_def_begin(d, BONSAI_REACTIVE_SELECTOR, NULL);
  bonsai_def_begin(d, BONSAI_REACTIVE_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_CONDITION, NULL, "health_low", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "flee", NULL);
  bonsai_def_end(d);
  bonsai_def_begin(d, BONSAI_REACTIVE_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_CONDITION, NULL, "in_range", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "attack", NULL);
  bonsai_def_end(d);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "chase", NULL);
  if (big) {
    bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
    for (k = 0; k < 33; k++) {
      bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
      bonsai_def_leaf(d, BONSAI_CONDITION, NULL, "never", NULL);
      for (j = 0; j < 5; j++)
        bonsai_def_leaf(d, BONSAI_ACTION, NULL, "never", NULL);
      bonsai_def_end(d);
    }
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, "never", NULL);
    bonsai_def_end(d);
  }
  bonsai_def_end(d);
  bonsai_def_end(d);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "patrol", NULL);
  bonsai_def_end(d);
  bonsai_tree_new(d, "w1c", &t, NULL, 0);
  bonsai_def_free(d);
  return t;
}

/*
** benchc.w1(n, "floor" | "bonsai" | "bonsai_big" [, count]) -> a run of W1
** over n agents (bonsai_big: its tree with a 200-node branch never reached):
** run:step(k) ticks every agent k times, run:sum() is the checksum,
** run:calls() the leaf calls made (when count is true) and run:reset()
** puts states and agents back to their start. scripts/bench alternates
** the steps of a floor run and a Bonsai run.
*/
typedef struct Run {
  long n, calls;
  int bonsai, counting;
  int big; /* the tree with a branch never reached */
  bonsai_leaf_fn leaves[F_N]; /* the floor's: set at run time */
  State *st;
  bonsai_env *env;
  bonsai_tree *tree;
  bonsai_agent **agents;
} Run;

#define RUN_T "benchc.run"

static int run_gc(lua_State *L) {
  Run *r = (Run *)luaL_checkudata(L, 1, RUN_T);
  long i;
  if (r->agents != NULL) {
    for (i = 0; i < r->n; i++)
      bonsai_agent_free(r->agents[i]);
    free(r->agents);
  }
  bonsai_tree_release(r->tree);
  if (r->env != NULL)
    bonsai_env_release(r->env);
  r->agents = NULL;
  r->tree = NULL;
  r->env = NULL;
  return 0;
}

/* Puts the states and agents of a run back to their start. */
static void run_init(Run *r) {
  long i;
  memset(r->st, 0, (size_t)r->n * sizeof *r->st);
  for (i = 0; i < r->n; i++) {
    long k = i + 1;
    r->st[i].hp = 100 - (k * 13) % 60;
    r->st[i].dist = 40;
    r->st[i].phase = (k * 37) % 80;
    r->st[i].dmg = 1 + k % 7;
    if (r->agents != NULL)
      bonsai_agent_reset(r->agents[i]);
  }
}

static int run_reset(lua_State *L) {
  run_init((Run *)luaL_checkudata(L, 1, RUN_T));
  return 0;
}

static int run_step(lua_State *L) {
  Run *r = (Run *)luaL_checkudata(L, 1, RUN_T);
  long k = (long)luaL_checkinteger(L, 2), t, i, n = r->n;
  State *st = r->st;
  calls = 0;
  counting = r->counting;
  if (r->bonsai) {
    for (t = 0; t < k; t++)
      for (i = 0; i < n; i++) {
        step(&st[i]);
        bonsai_agent_tick(r->agents[i], 1);
      }
  } else {
    for (t = 0; t < k; t++)
      for (i = 0; i < n; i++) {
        step(&st[i]);
        floor_tick(r->leaves, &st[i]);
      }
  }
  r->calls += calls;
  return 0;
}

static int run_sum(lua_State *L) {
  Run *r = (Run *)luaL_checkudata(L, 1, RUN_T);
  State sum;
  long i;
  memset(&sum, 0, sizeof sum);
  for (i = 0; i < r->n; i++) {
    sum.act += r->st[i].act;
    sum.hp += r->st[i].hp;
    sum.left += r->st[i].left;
    sum.n_attack += r->st[i].n_attack;
    sum.n_chase += r->st[i].n_chase;
    sum.n_die += r->st[i].n_die;
    sum.n_flee += r->st[i].n_flee;
    sum.n_patrol += r->st[i].n_patrol;
  }
  lua_pushfstring(L, "act=%I hp=%I left=%I n_attack=%I n_chase=%I n_die=%I "
                     "n_flee=%I n_patrol=%I",
                  (lua_Integer)sum.act, (lua_Integer)sum.hp,
                  (lua_Integer)sum.left, (lua_Integer)sum.n_attack,
                  (lua_Integer)sum.n_chase, (lua_Integer)sum.n_die,
                  (lua_Integer)sum.n_flee, (lua_Integer)sum.n_patrol);
  return 1;
}

static int run_calls(lua_State *L) {
  lua_pushinteger(L, ((Run *)luaL_checkudata(L, 1, RUN_T))->calls);
  return 1;
}

static int b_w1(lua_State *L) {
  long n = (long)luaL_checkinteger(L, 1), i;
  Run *r = (Run *)lua_newuserdatauv(L, sizeof *r, 1);
  memset(r, 0, sizeof *r);
  r->n = n;
  r->bonsai = strcmp(luaL_checkstring(L, 2), "floor") != 0;
  r->big = strcmp(luaL_checkstring(L, 2), "bonsai_big") == 0;
  r->counting = lua_toboolean(L, 3);
  if (luaL_newmetatable(L, RUN_T)) {
    static const luaL_Reg methods[] = {{"step", run_step}, {"sum", run_sum},
                                       {"calls", run_calls},
                                       {"reset", run_reset}, {NULL, NULL}};
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, run_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  r->leaves[F_IS_DEAD] = l_is_dead;
  r->leaves[F_DIE] = l_die;
  r->leaves[F_SEES_ENEMY] = l_sees_enemy;
  r->leaves[F_HEALTH_LOW] = l_health_low;
  r->leaves[F_FLEE] = l_flee;
  r->leaves[F_IN_RANGE] = l_in_range;
  r->leaves[F_ATTACK] = l_attack;
  r->leaves[F_CHASE] = l_chase;
  r->leaves[F_PATROL] = l_patrol;
  /* the states live in a userdata kept as the run's uservalue */
  r->st = (State *)lua_newuserdatauv(L, (size_t)n * sizeof *r->st, 0);
  lua_setiuservalue(L, -2, 1);
  run_init(r);
  if (r->bonsai) {
    if ((r->env = bonsai_env_new(NULL, NULL)) == NULL ||
        (r->tree = w1_tree(r->env, r->big)) == NULL ||
        (r->agents = (bonsai_agent **)calloc((size_t)n, sizeof *r->agents)) ==
            NULL)
      return luaL_error(L, "out of memory");
    for (i = 0; i < n; i++)
      if ((r->agents[i] = bonsai_agent_new(r->tree, NULL, &r->st[i])) == NULL)
        return luaL_error(L, "out of memory");
  }
  return 1;
}

/*
** benchc.w1_loop(agents, leaves, FAILURE): one tick of every agent, W1's
** decisions hard-coded in C calling the same Lua leaves as Bonsai does
** (function(a) local s = a.owner ... end). No runtime can call Lua leaves
** for less: this is the limit the Lua-leaf ratios are measured against.
*/
enum { L_IS_DEAD = 4, L_SEES_ENEMY, L_HEALTH_LOW, L_IN_RANGE, L_DIE, L_FLEE,
       L_ATTACK, L_CHASE, L_PATROL, L_FAILURE, L_AGENT };

static int lcond(lua_State *L, int f) {
  int r;
  lua_pushvalue(L, f);
  lua_pushvalue(L, L_AGENT);
  lua_call(L, 1, 1);
  r = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return r;
}

/* An action: 1 unless it failed. */
static int lact(lua_State *L, int f) {
  int r;
  lua_pushvalue(L, f);
  lua_pushvalue(L, L_AGENT);
  lua_call(L, 1, 1);
  r = !lua_rawequal(L, -1, L_FAILURE);
  lua_pop(L, 1);
  return r;
}

static int b_w1_loop(lua_State *L) {
  static const char *const names[] = {"is_dead", "sees_enemy", "health_low",
                                      "in_range", "die", "flee", "attack",
                                      "chase", "patrol"};
  lua_Integer i, n = luaL_len(L, 1);
  int k;
  lua_settop(L, 3);
  for (k = 0; k < 9; k++)
    lua_getfield(L, 2, names[k]);
  lua_pushvalue(L, 3); /* L_FAILURE */
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i); /* L_AGENT */
    if (lcond(L, L_IS_DEAD) && lact(L, L_DIE))
      goto next;
    if (lcond(L, L_SEES_ENEMY)) {
      if (lcond(L, L_HEALTH_LOW) && lact(L, L_FLEE))
        goto next;
      if (lcond(L, L_IN_RANGE) && lact(L, L_ATTACK))
        goto next;
      if (lact(L, L_CHASE))
        goto next;
    }
    lact(L, L_PATROL);
  next:
    lua_pop(L, 1);
  }
  return 0;
}

/*
** W3 "deep" the same way: one Lua leaf per agent table, called from a C
** loop that pushes the leaf and the agent and reads the status: what any
** runtime with its loop in C pays to call a Lua leaf, the limit of the W3
** ratio. w3_loop(list, leaf, RUNNING).
*/
static int b_w3_loop(lua_State *L) {
  lua_Integer i, n = luaL_len(L, 1);
  int running = 1;
  lua_settop(L, 3);
  for (i = 1; i <= n; i++) {
    lua_pushvalue(L, 2);
    lua_rawgeti(L, 1, i);
    lua_call(L, 1, 1);
    running &= lua_rawequal(L, -1, 3);
    lua_pop(L, 1);
  }
  lua_pushboolean(L, running);
  return 1;
}

/* nothing(...): a C method that does nothing, for the least a call from a
** Lua loop into C costs (scripts/bench, W3's a:tick bound). */
static int b_nothing(lua_State *L) {
  (void)L;
  return 0;
}

BONSAI_API int luaopen_benchc(lua_State *L);
BONSAI_API int luaopen_benchc(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, b_w1);
  lua_setfield(L, -2, "w1");
  lua_pushcfunction(L, b_w1_loop);
  lua_setfield(L, -2, "w1_loop");
  lua_pushcfunction(L, b_w3_loop);
  lua_setfield(L, -2, "w3_loop");
  lua_pushcfunction(L, b_nothing);
  lua_setfield(L, -2, "nothing");
  return 1;
}
