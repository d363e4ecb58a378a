/*
** test_api.c: lifecycle and failure paths of the public C API: leaf errors
** in every callback, invalid statuses, re-entrant ticks, bad arguments,
** reference counting of trees, re-registration, very deep and very wide
** trees, running lists, dumps, node names, definition errors, memory
** accounting and allocation failures.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "bonsai.h"
#include "fixture.h"

#define NONODE ((unsigned)-1)

/* Path of node i (or "-" for no node). */
static const char *path(const bonsai_tree *t, unsigned i) {
  static char buf[256];
  if (i == NONODE)
    return "-";
  bonsai_tree_node_path(t, i, buf, sizeof buf);
  return buf;
}

static const char *errpath(const bonsai_agent *ag) {
  return path(bonsai_agent_tree(ag), bonsai_agent_errnode(ag));
}


/* A leaf that returns, for each event, a fixed value (tick: a status). */
typedef struct Fixed {
  const char *name;
  int ret[4]; /* by BONSAI_EV_* */
} Fixed;

static int fixed_leaf(const bonsai_call *c) {
  const Fixed *f = c->data;
  static const char *const ev[] = {"tick", "enter", "exit", "abort"};
  char line[64];
  snprintf(line, sizeof line, "%s %s", ev[c->event], f->name);
  trace_clear(&trace); /* keep only the last event */
  strcpy(trace.buf, line);
  trace.n = strlen(line);
  return f->ret[c->event];
}

/* {====== leaf errors */

static void tick_error_recovers(void **state) {
  bonsai_agent *ag;
  Script *b;
  (void)state;
  leaf("A", "S");
  b = leaf("B", "RR");
  ag = start("sequence(A, sequence(B, A))");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  b->fail_event = BONSAI_EV_TICK + 1;
  STEP(ag, 1, BONSAI_ELEAF, "tick B; abort B");
  assert_string_equal(bonsai_agent_errmsg(ag), "B failed on purpose");
  assert_string_equal(errpath(ag), "sequence/sequence[2]/B");
  assert_int_equal(bonsai_agent_status(ag), A);
  assert_string_equal(states(ag), "ASAA.");
  /* usable again, from the root */
  b->fail_event = 0;
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  assert_string_equal(bonsai_agent_errmsg(ag), "");
  assert_int_equal(bonsai_agent_errnode(ag), NONODE);
  bonsai_agent_free(ag);
}

/* Under plain sequences a tick starts at the running action itself (the
** resume point): its bad status and its failing exit are recovered the
** same way as anywhere else. */
static void resumed_action_errors(void **state) {
  bonsai_agent *ag;
  Script *b;
  (void)state;
  leaf("A", "RX");
  ag = start("sequence(sequence(A))");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, BONSAI_ELEAF, "tick A; abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "tick returned 42");
  assert_string_equal(errpath(ag), "sequence/sequence[1]/A");
  assert_string_equal(states(ag), "AAA");
  bonsai_agent_free(ag);
  b = leaf("B", "RS");
  ag = start("sequence(sequence(B))");
  STEP(ag, 1, R, "enter B; tick B");
  b->fail_event = BONSAI_EV_EXIT + 1;
  STEP(ag, 1, BONSAI_ELEAF, "tick B; exit B success");
  assert_string_equal(bonsai_agent_errmsg(ag), "B failed on purpose");
  assert_string_equal(errpath(ag), "sequence/sequence[1]/B");
  assert_int_equal(bonsai_agent_status(ag), A);
  b->fail_event = 0;
  STEP(ag, 1, S, "enter B; tick B; exit B success"); /* from the root */
  bonsai_agent_free(ag);
}

/* A leaf whose enter failed never started its run: it is not aborted. */
static void enter_error(void **state) {
  bonsai_agent *ag;
  Script *b;
  (void)state;
  leaf("A", "R");
  b = leaf("B", "R");
  b->fail_event = BONSAI_EV_ENTER + 1;
  ag = start("parallel(A, B)");
  STEP(ag, 1, BONSAI_ELEAF, "enter A; tick A; enter B; abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "B failed on purpose");
  assert_string_equal(errpath(ag), "parallel/B");
  assert_string_equal(states(ag), "AA.");
  b->fail_event = 0;
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B");
  bonsai_agent_free(ag);
}

/* A leaf whose exit failed has finished: the others are aborted. */
static void exit_error(void **state) {
  bonsai_agent *ag;
  Script *b;
  (void)state;
  leaf("A", "R");
  b = leaf("B", "S");
  b->fail_event = BONSAI_EV_EXIT + 1;
  ag = start("parallel(A, B)");
  STEP(ag, 1, BONSAI_ELEAF,
       "enter A; tick A; enter B; tick B; exit B success; abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "B failed on purpose");
  assert_string_equal(errpath(ag), "parallel/B");
  assert_int_equal(bonsai_agent_status(ag), A);
  assert_int_equal(bonsai_agent_node_status(ag, 0), A);
  assert_int_equal(bonsai_agent_node_status(ag, 1), A);
  bonsai_agent_free(ag);
}

/* An abort callback fails in bonsai_agent_abort: every other abort still
** runs, the first message is kept. */
static void abort_error_in_agent_abort(void **state) {
  bonsai_agent *ag;
  Script *a, *b;
  (void)state;
  a = leaf("A", "R");
  b = leaf("B", "R");
  a->fail_event = BONSAI_EV_ABORT + 1;
  ag = start("parallel(A, B)");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_ELEAF);
  assert_string_equal(trace_take(&trace), "abort A; abort B");
  assert_string_equal(bonsai_agent_errmsg(ag), "A failed on purpose");
  assert_string_equal(errpath(ag), "parallel/A");
  assert_string_equal(states(ag), "AAA");
  assert_int_equal(bonsai_agent_status(ag), A);
  /* both fail: the first message and node are kept */
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B");
  b->fail_event = BONSAI_EV_ABORT + 1;
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_ELEAF);
  assert_string_equal(trace_take(&trace), "abort A; abort B");
  assert_string_equal(bonsai_agent_errmsg(ag), "A failed on purpose");
  assert_string_equal(errpath(ag), "parallel/A");
  a->fail_event = b->fail_event = 0;
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B");
  bonsai_agent_free(ag);
}

/* An abort callback fails while a reactive node cuts off a branch: the
** tick fails and everything else is aborted. */
static void abort_error_in_tick(void **state) {
  bonsai_agent *ag;
  Script *lo;
  (void)state;
  leaf("C", "FS");
  leaf("Hi", "R");
  lo = leaf("Lo", "R");
  lo->fail_event = BONSAI_EV_ABORT + 1;
  ag = start("reactive_selector(reactive_sequence(?C, Hi), Lo)");
  STEP(ag, 1, R, "tick C; enter Lo; tick Lo");
  STEP(ag, 1, BONSAI_ELEAF, "tick C; enter Hi; tick Hi; abort Lo; abort Hi");
  assert_string_equal(bonsai_agent_errmsg(ag), "Lo failed on purpose");
  assert_string_equal(errpath(ag), "reactive_selector/Lo");
  assert_string_equal(states(ag), "AASAA");
  bonsai_agent_free(ag);
}

/* Reset still forgets the state when an abort callback fails. */
static void abort_error_in_reset(void **state) {
  bonsai_agent *ag;
  Script *a;
  (void)state;
  a = leaf("A", "R");
  a->fail_event = BONSAI_EV_ABORT + 1;
  ag = start("limit{times=1}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_ELEAF);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "A failed on purpose");
  assert_string_equal(states(ag), "..");
  assert_int_equal(bonsai_agent_status(ag), BONSAI_IDLE);
  STEP(ag, 1, R, "enter A; tick A"); /* the limit was reset too */
  bonsai_agent_free(ag);
}

/* The error leaf has only EXIT: recovery cuts it off with exit aborted. */
static void error_exit_only_leaf(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf_flags("X", "R", BONSAI_LEAF_EXIT);
  leaf("Y", "RX");
  ag = start("parallel(X, Y)");
  STEP(ag, 1, R, "tick X; enter Y; tick Y");
  STEP(ag, 1, BONSAI_ELEAF, "tick X; tick Y; exit X aborted; abort Y");
  assert_string_equal(bonsai_agent_errmsg(ag), "tick returned 42");
  assert_string_equal(errpath(ag), "parallel/Y");
  bonsai_agent_free(ag);
}

static void invalid_statuses(void **state) {
  Fixed en = {"En", {S, 42, BONSAI_OK, BONSAI_OK}};
  Fixed ex = {"Ex", {S, BONSAI_OK, 42, BONSAI_OK}};
  Fixed ab = {"Ab", {R, BONSAI_OK, BONSAI_OK, 42}};
  Fixed er = {"Er", {BONSAI_ERROR, BONSAI_OK, BONSAI_OK, BONSAI_OK}};
  bonsai_agent *ag;
  (void)state;
  leaf("A", "X");
  ag = start("A");
  STEP(ag, 1, BONSAI_ELEAF, "enter A; tick A; abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "tick returned 42");
  assert_string_equal(errpath(ag), "A");
  assert_string_equal(states(ag), "A");
  bonsai_agent_free(ag);
  bonsai_leaf_register(env, "En", fixed_leaf, &en, ALL);
  bonsai_leaf_register(env, "Ex", fixed_leaf, &ex, ALL);
  bonsai_leaf_register(env, "Ab", fixed_leaf, &ab, ALL);
  bonsai_leaf_register(env, "Er", fixed_leaf, &er, ALL);
  ag = start("En");
  STEP(ag, 1, BONSAI_ELEAF, "enter En");
  assert_string_equal(bonsai_agent_errmsg(ag), "enter returned 42");
  assert_string_equal(errpath(ag), "En");
  bonsai_agent_free(ag);
  ag = start("Ex");
  STEP(ag, 1, BONSAI_ELEAF, "exit Ex");
  assert_string_equal(bonsai_agent_errmsg(ag), "exit returned 42");
  bonsai_agent_free(ag);
  ag = start("Ab");
  STEP(ag, 1, R, "tick Ab");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_ELEAF);
  assert_string_equal(trace_take(&trace), "abort Ab");
  assert_string_equal(bonsai_agent_errmsg(ag), "abort returned 42");
  assert_string_equal(errpath(ag), "Ab");
  bonsai_agent_free(ag);
  /* BONSAI_ERROR without a message still gives one */
  ag = start("Er");
  STEP(ag, 1, BONSAI_ELEAF, "abort Er");
  assert_string_equal(bonsai_agent_errmsg(ag), "tick failed");
  bonsai_agent_free(ag);
}

static void condition_cannot_run(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("C", "R");
  leaf("D", "X");
  ag = start("parallel(A, ?C)");
  STEP(ag, 1, BONSAI_ELEAF, "enter A; tick A; tick C; abort A");
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "a condition cannot return running");
  assert_string_equal(errpath(ag), "parallel/C");
  assert_string_equal(states(ag), "AA.");
  bonsai_agent_free(ag);
  ag = start("?D");
  STEP(ag, 1, BONSAI_ELEAF, "tick D");
  assert_string_equal(bonsai_agent_errmsg(ag), "condition returned 42");
  assert_int_equal(bonsai_agent_status(ag), A);
  bonsai_agent_free(ag);
  /* a filter condition that runs is an error too */
  ag = start("filter(wait{seconds=5}, A)");
  STEP(ag, 1, BONSAI_ELEAF, "");
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "a condition cannot return running");
  assert_string_equal(errpath(ag), "filter/wait[1]");
  assert_string_equal(states(ag), "AA.");
  bonsai_agent_free(ag);
}

/* A guard's check that cannot compare, met when the guard wakes up. */
static void guard_check_error(void **state) {
  bonsai_agent *ag;
  bonsai_value v;
  int x = bonsai_key(env, "x", 1);
  (void)state;
  leaf("A", "R");
  ag = start("guard{abort=self}(check{key=x, op='<', value=10}, A)");
  v.type = BONSAI_TNUMBER;
  v.u.n = 1;
  bonsai_bb_set(bonsai_agent_bb(ag), x, v);
  STEP(ag, 1, R, "enter A; tick A");
  v.type = BONSAI_TSTRING;
  v.u.str.s = "one";
  v.u.str.len = 3;
  bonsai_bb_set(bonsai_agent_bb(ag), x, v);
  STEP(ag, 1, BONSAI_ELEAF, "abort A");
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "'x' is a string, compared with a number");
  assert_string_equal(errpath(ag), "guard/check[1]");
  assert_string_equal(states(ag), "ASA");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== re-entrant calls and bad arguments */

typedef struct Nest {
  int mode; /* 0: succeed; 1: report an error; 2: return the code */
  int tick_r, abort_r, reset_r;
  double time;
} Nest;

static int nest_leaf(const bonsai_call *c) {
  Nest *n = c->data;
  n->tick_r = bonsai_agent_tick(c->agent, 1);
  n->abort_r = bonsai_agent_abort(c->agent);
  n->reset_r = bonsai_agent_reset(c->agent);
  n->time = bonsai_agent_time(c->agent);
  if (n->mode == 1)
    return bonsai_agent_error(c->agent, "nested tick returned %d", n->tick_r);
  if (n->mode == 2)
    return n->tick_r;
  return BONSAI_SUCCESS;
}

static void reentrant_tick_is_busy(void **state) {
  Nest n = {0, 0, 0, 0, 0};
  bonsai_agent *ag;
  (void)state;
  bonsai_leaf_register(env, "Nest", nest_leaf, &n, 0);
  leaf("A", "S");
  ag = start("sequence(Nest, A)");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  assert_int_equal(n.tick_r, BONSAI_EBUSY);
  assert_int_equal(n.abort_r, BONSAI_EBUSY);
  assert_int_equal(n.reset_r, BONSAI_EBUSY);
  assert_true(n.time == 1); /* the inner tick did not move the clock */
  assert_true(bonsai_agent_time(ag) == 1);
  n.mode = 1;
  STEP(ag, 1, BONSAI_ELEAF, "");
  assert_string_equal(bonsai_agent_errmsg(ag), "nested tick returned -5");
  assert_string_equal(errpath(ag), "sequence/Nest");
  n.mode = 2;
  STEP(ag, 1, BONSAI_ELEAF, "");
  assert_string_equal(bonsai_agent_errmsg(ag), "tick returned -5");
  n.mode = 0;
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

/* A leaf may tick another agent. */
static bonsai_agent *other;

static int tick_other(const bonsai_call *c) {
  (void)c;
  return bonsai_agent_tick(other, 1);
}

static void leaf_ticks_other_agent(void **state) {
  bonsai_agent *ag;
  (void)state;
  bonsai_leaf_register(env, "Other", tick_other, NULL, 0);
  leaf("A", "RS");
  other = start("A");
  ag = start("Other");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  bonsai_agent_free(ag);
  bonsai_agent_free(other);
}

static void bad_dt(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("A");
  assert_int_equal(bonsai_agent_tick(ag, -1), BONSAI_EARG);
  assert_int_equal(bonsai_agent_tick(ag, NAN), BONSAI_EARG);
  assert_int_equal(bonsai_agent_tick(ag, -INFINITY), BONSAI_EARG);
  assert_string_equal(trace_take(&trace), "");
  assert_true(bonsai_agent_time(ag) == 0);
  assert_int_equal(bonsai_agent_status(ag), BONSAI_IDLE);
  assert_string_equal(bonsai_agent_errmsg(ag), ""); /* the call's error */
  assert_string_equal(bonsai_dt_check(-1), "dt must be a number >= 0");
  assert_true(bonsai_dt_check(NAN) != NULL);
  assert_null(bonsai_dt_check(0));
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_tick(ag, -0.5), BONSAI_EARG);
  assert_true(bonsai_agent_time(ag) == 1);
  assert_int_equal(bonsai_agent_status(ag), R);
  STEP(ag, 0, R, "tick A"); /* 0 is fine */
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== lifetimes and registration */

static void tree_release_while_agents_run(void **state) {
  bonsai_tree *t;
  bonsai_agent *a1, *a2;
  size_t m0;
  (void)state;
  leaf("A", "R");
  m0 = bonsai_env_memory(env);
  t = build("sequence(A)");
  a1 = bonsai_agent_new(t, NULL, NULL);
  a2 = bonsai_agent_new(t, NULL, NULL);
  STEP(a1, 1, R, "enter A; tick A");
  bonsai_tree_release(t);
  STEP(a2, 1, R, "enter A; tick A");
  STEP(a1, 1, R, "tick A");
  assert_string_equal(bonsai_tree_name(bonsai_agent_tree(a1)), "t");
  bonsai_agent_free(a1);
  STEP(a2, 1, R, "tick A");
  assert_int_equal(bonsai_agent_abort(a2), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  bonsai_agent_free(a2);
  assert_int_equal(bonsai_env_memory(env), m0);
}

/* Reloads a tree from a spec; returns bonsai_tree_reload's result. */
static int reload(bonsai_tree *t, const char *spec, char *err, size_t size) {
  bonsai_def *d = bonsai_def_new(env);
  int r;
  if (trace_def(d, spec) != 0)
    fail_msg("syntax error in %s", spec);
  r = bonsai_tree_reload(t, d, err, size);
  bonsai_def_free(d);
  return r;
}

/* Hot reload through the C API: agents switch at their next tick; a kept
** running node is not entered again; a removed one is aborted; a bad
** definition leaves the old version running. */
static void reload_from_c(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  bonsai_env *env2;
  bonsai_def *d;
  char err[256];
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  t = build("sequence:root(A, B)");
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  /* B is kept, found by name although a sibling came before it */
  assert_int_equal(reload(t, "sequence:root(C, A, B)", err, sizeof err),
                   BONSAI_OK);
  STEP(ag, 1, R, "tick B");
  /* a definition error: the old version keeps running */
  assert_int_equal(reload(t, "sequence:root(retry)", err, sizeof err),
                   BONSAI_EDEF);
  assert_non_null(strstr(err, "'retry' needs a child"));
  STEP(ag, 1, R, "tick B");
  /* B is gone: aborted, and the sequence starts again from its first child */
  assert_int_equal(reload(t, "sequence:root(A, C)", err, sizeof err),
                   BONSAI_OK);
  STEP(ag, 1, R,
       "abort B; enter A; tick A; exit A success; enter C; tick C");
  /* a definition from another environment is refused */
  env2 = bonsai_env_new(NULL, NULL);
  d = bonsai_def_new(env2);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_reload(t, d, err, sizeof err), BONSAI_EARG);
  bonsai_def_free(d);
  bonsai_env_release(env2);
  STEP(ag, 1, R, "tick C");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* Re-entrancy during a version switch, through the C API: the abort that
** a switch runs reloads the tree once more and ticks another agent still on
** the first version, which switches meanwhile; both end on the current
** version, and nothing is freed under either (the sanitizer build checks). */
static bonsai_tree *switch_tree;
static bonsai_agent *switch_other;
static int switch_reloads;

static int reloading_abort(const bonsai_call *c) {
  char err[128];
  if (c->event != BONSAI_EV_ABORT)
    return BONSAI_RUNNING;
  trace_append(&trace, "abort X");
  if (switch_reloads++ == 0) {
    assert_int_equal(reload(switch_tree, "sequence:root(Z)", err, sizeof err),
                     BONSAI_OK);
    assert_int_equal(bonsai_agent_tick(switch_other, 0), R);
  } else {
    assert_int_equal(bonsai_agent_tick(c->agent, 0), BONSAI_EBUSY);
  }
  return BONSAI_OK;
}

static void reentrant_switch(void **state) {
  bonsai_agent *a1, *a2;
  char err[128];
  (void)state;
  switch_reloads = 0;
  bonsai_leaf_register(env, "X", reloading_abort, NULL, BONSAI_LEAF_ABORT);
  leaf("Y", "R");
  leaf("Z", "R");
  switch_tree = build("sequence:root(X)");
  a1 = bonsai_agent_new(switch_tree, NULL, NULL);
  a2 = bonsai_agent_new(switch_tree, NULL, NULL);
  STEP(a1, 1, R, "");
  STEP(a2, 1, R, "");
  assert_int_equal(reload(switch_tree, "sequence:root(Y)", err, sizeof err),
                   BONSAI_OK);
  switch_other = a1;
  /* a2 leaves v1 (its X aborted: v3 made, a1 ticked from v1 to v3, whose
  ** X's abort finds a1 busy), then v2 to v3, then ticks Z */
  STEP(a2, 1, R, "abort X; abort X; enter Z; tick Z; enter Z; tick Z");
  assert_string_equal(states(a1), "RR");
  assert_string_equal(states(a2), "RR");
  STEP(a1, 1, R, "tick Z");
  bonsai_agent_free(a1);
  bonsai_agent_free(a2);
  bonsai_tree_release(switch_tree);
}

/* A failed abort during a switch is reported with its node, in the version
** it belonged to, and the agent runs the new version. */
static void switch_abort_error(void **state) {
  bonsai_agent *ag;
  char err[128], path[64];
  bonsai_tree *t;
  (void)state;
  leaf_flags("A", "R", ALL)->fail_event = BONSAI_EV_ABORT + 1;
  leaf_flags("B", "R", ALL)->fail_event = BONSAI_EV_ABORT + 1;
  leaf("C", "R");
  t = build("parallel:p(A, B)");
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B");
  assert_int_equal(reload(t, "parallel:p(C)", err, sizeof err), BONSAI_OK);
  STEP(ag, 1, BONSAI_ELEAF, "abort A; abort B");
  assert_string_equal(bonsai_agent_errmsg(ag), "A failed on purpose");
  bonsai_agent_errpath(ag, path, sizeof path);
  assert_string_equal(path, "p/A");
  STEP(ag, 1, R, "enter C; tick C");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* Interrupts and traces through the public API alone, as a C engine has
** them: an interrupt that fires aborts the running nodes and the tick
** returns BONSAI_ABORTED (the trace shows the interrupt and the abort);
** one that removes another before its turn; one that fails. */
typedef struct Alarm {
  int fire, asked, fail;
  bonsai_interrupt_fn other;
} Alarm;

static int alarm_fn(bonsai_agent *ag, void *data) {
  Alarm *al = (Alarm *)data;
  al->asked++;
  if (al->other != NULL)
    bonsai_agent_remove_interrupt(ag, al->other, data);
  if (al->fail)
    return bonsai_agent_error(ag, "alarm broken");
  return al->fire;
}

static int never_fn(bonsai_agent *ag, void *data) {
  (void)ag;
  ((Alarm *)data)->asked += 100;
  return 0;
}

static void interrupts_and_traces(void **state) {
  Alarm al = {0, 0, 0, NULL};
  bonsai_agent *ag;
  bonsai_event ev[16];
  char path[64];
  unsigned n, k;
  int sawint = 0, sawabort = 0;
  (void)state;
  leaf("A", "R");
  ag = start("sequence:root(A)");
  assert_int_equal(bonsai_agent_trace(ag, 16), BONSAI_OK);
  assert_int_equal(bonsai_agent_add_interrupt(ag, alarm_fn, &al), BONSAI_OK);
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(al.asked, 1);
  bonsai_agent_events(ag, ev, 16); /* the first tick's, forgotten */
  al.fire = 1;
  STEP(ag, 1, BONSAI_ABORTED, "abort A");
  n = bonsai_agent_events(ag, ev, 16);
  for (k = 0; k < n; k++) {
    assert_int_equal(ev[k].tick, 2);
    if (ev[k].kind == BONSAI_TRACE_INTERRUPT)
      sawint = 1;
    if (ev[k].kind == BONSAI_TRACE_STATUS && ev[k].status == A) {
      bonsai_agent_event_path(ag, &ev[k], path, sizeof path);
      if (strcmp(path, "root/A") == 0)
        sawabort = sawint; /* after the interrupt */
    }
  }
  assert_true(sawint && sawabort);
  assert_int_equal(bonsai_agent_status(ag), BONSAI_ABORTED);
  /* one removes the next before its turn: that one is not asked */
  al.fire = 0;
  al.other = never_fn;
  assert_int_equal(bonsai_agent_add_interrupt(ag, never_fn, &al), BONSAI_OK);
  al.asked = 0;
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(al.asked, 1);
  assert_int_equal(bonsai_agent_remove_interrupt(ag, never_fn, &al),
                   BONSAI_EARG);
  /* one that fails: the tick fails, running nodes aborted */
  al.other = NULL;
  al.fail = 1;
  STEP(ag, 1, BONSAI_ELEAF, "abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "alarm broken");
  assert_int_equal(bonsai_agent_errnode(ag), NONODE);
  assert_int_equal(bonsai_agent_remove_interrupt(ag, alarm_fn, &al),
                   BONSAI_OK);
  STEP(ag, 1, R, "enter A; tick A");
  bonsai_agent_free(ag);
}

/* The environment lives as long as anything made from it. */
static void env_released_first(void **state) {
  AllocStats st;
  bonsai_env *e;
  bonsai_def *d;
  bonsai_tree *t;
  bonsai_agent *ag;
  bonsai_bb *bb;
  Script s;
  (void)state;
  memset(&st, 0, sizeof st);
  e = bonsai_env_new(trace_alloc, &st);
  trace_script(&s, "A", &trace, "RS");
  trace_register(e, &s);
  d = bonsai_def_new(e);
  assert_int_equal(trace_def(d, "sequence(A)"), 0);
  assert_int_equal(bonsai_tree_new(d, NULL, &t, NULL, 0), BONSAI_OK);
  assert_string_equal(bonsai_tree_name(t), "tree");
  bonsai_def_free(d);
  bb = bonsai_bb_new(e, NULL);
  ag = bonsai_agent_new(t, bb, NULL);
  bonsai_env_release(e);
  bonsai_tree_release(t);
  bonsai_bb_release(bb);
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  bonsai_agent_free(ag);
  assert_int_equal(st.blocks, 0);
  assert_int_equal(st.bad_osize, 0);
}

static void reregister_leaf(void **state) {
  Script s2, s3;
  bonsai_agent *ag, *ag2;
  (void)state;
  leaf("A", "R");
  ag = start("sequence(A)");
  STEP(ag, 1, R, "enter A; tick A");
  trace_script(&s2, "A2", &trace, "R");
  assert_int_equal(bonsai_leaf_register(env, "A", trace_leaf, &s2, ALL),
                   BONSAI_OK);
  STEP(ag, 1, R, "tick A2"); /* running on: not entered again */
  trace_script(&s3, "A3", &trace, "RS");
  bonsai_leaf_register(env, "A", trace_leaf, &s3, BONSAI_LEAF_EXIT);
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "exit A3 aborted");
  STEP(ag, 1, R, "tick A3");
  /* a tree compiled now uses it as well */
  ag2 = start("A");
  STEP(ag2, 1, S, "tick A3; exit A3 success");
  bonsai_agent_free(ag2);
  bonsai_agent_free(ag);
  assert_int_equal(bonsai_leaf_register(env, "", trace_leaf, &s3, 0),
                   BONSAI_EARG);
  assert_int_equal(bonsai_leaf_register(env, NULL, trace_leaf, &s3, 0),
                   BONSAI_EARG);
  assert_int_equal(bonsai_leaf_register(env, "B", NULL, &s3, 0), BONSAI_EARG);
}

/* What a leaf sees in its call record. */
typedef struct Probe {
  bonsai_agent *agent;
  void *owner;
  const void *args;
  unsigned node;
  int events;
} Probe;

static int probe_leaf(const bonsai_call *c) {
  Probe *p = c->data;
  p->agent = c->agent;
  p->owner = c->owner;
  p->args = c->args;
  p->node = c->node;
  p->events |= 1 << c->event;
  if (c->event == BONSAI_EV_EXIT)
    assert_int_equal(c->status, S);
  return c->event == BONSAI_EV_TICK ? S : BONSAI_OK;
}

static void call_record(void **state) {
  Probe named, anon;
  int owner, args1, args2;
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  (void)state;
  memset(&named, 0, sizeof named);
  memset(&anon, 0, sizeof anon);
  bonsai_leaf_register(env, "Probe", probe_leaf, &named, ALL);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Probe", &args1);
  bonsai_def_cleaf(d, BONSAI_ACTION, "anon", probe_leaf, &anon,
                   BONSAI_LEAF_ENTER, &args2);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, &owner);
  assert_ptr_equal(bonsai_agent_owner(ag), &owner);
  assert_ptr_equal(bonsai_agent_tree(ag), t);
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_ptr_equal(named.agent, ag);
  assert_ptr_equal(named.owner, &owner);
  assert_ptr_equal(named.args, &args1);
  assert_int_equal(named.node, 1);
  assert_int_equal(named.events, 7); /* tick, enter, exit */
  assert_ptr_equal(anon.args, &args2);
  assert_int_equal(anon.node, 2);
  assert_int_equal(anon.events, 3); /* tick, enter */
  assert_string_equal(bonsai_tree_node_name(t, 2), "anon");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* }====== */

/* {====== deep and wide trees */

#define DEEP 10000

static void deep_sequences(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  unsigned *nodes, i, n;
  Script *a;
  (void)state;
  a = leaf("A", "RRS");
  for (i = 0; i < DEEP; i++)
    bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  for (i = 0; i < DEEP; i++)
    bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "deep", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  assert_int_equal(bonsai_tree_size(t), DEEP + 1);
  /* "sequence", then "/sequence[1]" per level, then "/A" */
  assert_int_equal(bonsai_tree_node_path(t, DEEP, NULL, 0),
                   8 + 12 * (DEEP - 1) + 2);
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter A; tick A");
  nodes = test_malloc((DEEP + 1) * sizeof *nodes);
  n = bonsai_agent_running(ag, nodes, DEEP + 1);
  assert_int_equal(n, DEEP + 1);
  for (i = 0; i <= DEEP; i++)
    assert_int_equal(nodes[i], i);
  test_free(nodes);
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_int_equal(bonsai_agent_node_status(ag, 0), A);
  assert_int_equal(bonsai_agent_node_status(ag, DEEP / 2), A);
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  assert_int_equal(bonsai_agent_node_status(ag, 0), S);
  /* an error deep down unwinds the whole chain */
  a->fail_event = BONSAI_EV_TICK + 1;
  STEP(ag, 1, BONSAI_ELEAF, "enter A; tick A; abort A");
  assert_int_equal(bonsai_agent_errnode(ag), DEEP);
  assert_int_equal(bonsai_agent_node_status(ag, 0), A);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* 10,000 nested decorators of every kind; each group of eight turns the
** leaf's success into success. */
static void deep_decorators(void **state) {
  static const char *const group[] = {
      "force_success", "invert",   "timeout",  "repeater",
      "limit",         "reactive_sequence", "filter", "cooldown"};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  unsigned i;
  (void)state;
  leaf("A", "RRS");
  for (i = 0; i < DEEP; i++) {
    const char *k = group[i % 8];
    int kind;
    if (strcmp(k, "force_success") == 0) kind = BONSAI_FORCE_SUCCESS;
    else if (strcmp(k, "invert") == 0) kind = BONSAI_INVERT;
    else if (strcmp(k, "timeout") == 0) kind = BONSAI_TIMEOUT;
    else if (strcmp(k, "repeater") == 0) kind = BONSAI_REPEATER;
    else if (strcmp(k, "limit") == 0) kind = BONSAI_LIMIT;
    else if (strcmp(k, "reactive_sequence") == 0)
      kind = BONSAI_REACTIVE_SEQUENCE;
    else if (strcmp(k, "filter") == 0) kind = BONSAI_FILTER;
    else kind = BONSAI_COOLDOWN;
    bonsai_def_begin(d, kind, NULL);
    if (kind == BONSAI_TIMEOUT)
      bonsai_def_number(d, "seconds", 1e9);
    else if (kind == BONSAI_REPEATER)
      bonsai_def_number(d, "times", 1);
    else if (kind == BONSAI_LIMIT)
      bonsai_def_number(d, "times", 1000);
    else if (kind == BONSAI_COOLDOWN)
      bonsai_def_number(d, "seconds", 0);
  }
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  for (i = 0; i < DEEP; i++)
    bonsai_def_end(d);
  assert_null(bonsai_def_errmsg(d));
  assert_int_equal(bonsai_tree_new(d, "deep", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_running(ag, NULL, 0), DEEP + 1);
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_int_equal(bonsai_agent_running(ag, NULL, 0), 0);
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

static int count_failure(const bonsai_call *c) {
  ++*(long *)c->data;
  return F;
}

static int succeed(const bonsai_call *c) {
  (void)c;
  return S;
}

/* Runs until aborted; aborts must come in node order. */
typedef struct Order {
  long ticks, aborts;
  unsigned last;
  int sorted;
} Order;

static int runner(const bonsai_call *c) {
  Order *o = c->data;
  if (c->event == BONSAI_EV_TICK) {
    o->ticks++;
    return R;
  }
  if (c->event == BONSAI_EV_ABORT) {
    if (o->aborts > 0 && c->node <= o->last)
      o->sorted = 0;
    o->last = c->node;
    o->aborts++;
  }
  return BONSAI_OK;
}

#define WIDE 50000

static void wide_selector(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  long fails = 0;
  unsigned i;
  (void)state;
  bonsai_def_begin(d, BONSAI_SELECTOR, NULL);
  for (i = 1; i < WIDE; i++)
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, count_failure, &fails, 0, NULL);
  bonsai_def_cleaf(d, BONSAI_ACTION, NULL, succeed, NULL, 0, NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "wide", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  assert_string_equal(bonsai_tree_node_name(t, WIDE), "action[50000]");
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_int_equal(fails, WIDE - 1);
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_int_equal(fails, 2 * (WIDE - 1));
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* A parallel of many running leaves: every child ticked each tick, all
** aborted in child order. */
static void wide_parallel(unsigned n) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  Order o = {0, 0, 0, 1};
  unsigned i;
  bonsai_def_begin(d, BONSAI_PARALLEL, NULL);
  for (i = 0; i < n; i++)
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, runner, &o, BONSAI_LEAF_ABORT,
                     NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "wide", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_int_equal(o.ticks, 2 * (long)n);
  assert_int_equal(bonsai_agent_running(ag, NULL, 0), n + 1);
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_int_equal(o.aborts, n);
  assert_true(o.sorted);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

static void wide_parallel_abort(void **state) {
  (void)state;
  wide_parallel(5000);
}

/* Aborting is linear in the number of running nodes. */
static void wide_parallel_abort_fast(void **state) {
  (void)state;
  wide_parallel(WIDE);
}

/* Many siblings using the same registered leaf get "step", "step#2"...
** Compiling them should take about as long as unnamed siblings. */
static void wide_same_names(void **state) {
  bonsai_def *d;
  bonsai_tree *t;
  unsigned i;
  (void)state;
  d = bonsai_def_new(env);
  bonsai_leaf_register(env, "step", succeed, NULL, 0);
  bonsai_def_begin(d, BONSAI_SELECTOR, NULL);
  for (i = 0; i < WIDE; i++)
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, "step", NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "wide", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  assert_string_equal(bonsai_tree_node_name(t, WIDE), "step#50000");
  bonsai_tree_release(t);
}

/* }====== */

/* {====== inspection: running lists, names, dumps */

static void running_outermost_first(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  unsigned nodes[8] = {99, 99, 99, 99, 99, 99, 99, 99};
  (void)state;
  leaf("A", "S");
  leaf("B", "RF");
  leaf("C", "RS");
  leaf("D", "R");
  t = build("sequence:root(A, parallel(invert(B), C), D)");
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_running(ag, nodes, 8), 0);
  STEP(ag, 1, R,
       "enter A; tick A; exit A success; enter B; tick B; enter C; tick C");
  assert_int_equal(bonsai_agent_running(ag, nodes, 8), 5);
  assert_string_equal(path(t, nodes[0]), "root");
  assert_string_equal(path(t, nodes[1]), "root/parallel[2]");
  assert_string_equal(path(t, nodes[2]), "root/parallel[2]/invert[1]");
  assert_string_equal(path(t, nodes[3]), "root/parallel[2]/invert[1]/B");
  assert_string_equal(path(t, nodes[4]), "root/parallel[2]/C");
  assert_int_equal(nodes[5], 99);
  /* max limits what is written, not what is counted */
  nodes[0] = nodes[1] = nodes[2] = 99;
  assert_int_equal(bonsai_agent_running(ag, nodes, 2), 5);
  assert_int_equal(nodes[0], 0);
  assert_int_equal(nodes[1], 2);
  assert_int_equal(nodes[2], 99);
  STEP(ag, 1, R, "tick B; exit B failure; tick C; exit C success; "
                 "enter D; tick D");
  assert_int_equal(bonsai_agent_running(ag, nodes, 8), 2);
  assert_string_equal(path(t, nodes[1]), "root/D");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

static void node_names(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  char buf[8];
  (void)state;
  bonsai_leaf_register(env, "step", succeed, NULL, 0);
  bonsai_leaf_register(env, "other", succeed, NULL, 0);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "step", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "step", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, "step", "other", NULL);
  bonsai_def_cleaf(d, BONSAI_ACTION, NULL, succeed, NULL, 0, NULL);
  bonsai_def_cleaf(d, BONSAI_ACTION, "action[4]", succeed, NULL, 0, NULL);
  bonsai_def_begin(d, BONSAI_SELECTOR, NULL);
  bonsai_def_cleaf(d, BONSAI_CONDITION, NULL, succeed, NULL, 0, NULL);
  bonsai_def_end(d);
  bonsai_def_leaf(d, BONSAI_WAIT, NULL, NULL, NULL);
  bonsai_def_number(d, "seconds", 1);
  bonsai_def_leaf(d, BONSAI_CONDITION, "ready", "other", NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "names", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  assert_string_equal(bonsai_tree_name(t), "names");
  assert_int_equal(bonsai_tree_size(t), 10);
  assert_string_equal(bonsai_tree_node_name(t, 0), "sequence");
  assert_string_equal(bonsai_tree_node_name(t, 1), "step");
  assert_string_equal(bonsai_tree_node_name(t, 2), "step#2");
  assert_string_equal(bonsai_tree_node_name(t, 3), "step#3");
  assert_string_equal(bonsai_tree_node_name(t, 4), "action[4]");
  assert_string_equal(bonsai_tree_node_name(t, 5), "action[4]#2");
  assert_string_equal(bonsai_tree_node_name(t, 6), "selector[6]");
  assert_string_equal(path(t, 7), "sequence/selector[6]/condition[1]");
  assert_string_equal(bonsai_tree_node_name(t, 8), "wait[7]");
  assert_string_equal(bonsai_tree_node_name(t, 9), "ready");
  assert_null(bonsai_tree_node_name(t, 10));
  /* paths are cut to the buffer but their full length is returned */
  assert_int_equal(bonsai_tree_node_path(t, 7, buf, sizeof buf), 33);
  assert_string_equal(buf, "sequenc");
  assert_int_equal(bonsai_tree_node_path(t, 7, NULL, 0), 33);
  assert_int_equal(bonsai_tree_node_path(t, 10, buf, sizeof buf), 0);
  assert_string_equal(buf, "");
  bonsai_tree_release(t);
}

static void priority_names(void **state) {
  bonsai_tree *t;
  (void)state;
  leaf("C", "S");
  leaf("X", "S");
  t = build("priority(filter(?C, X), filter:named(?C, X), filter(?C, X), "
            "sequence(X))");
  assert_string_equal(bonsai_tree_node_name(t, 0), "");
  assert_string_equal(path(t, 0), "");
  assert_string_equal(path(t, 1), "priority[1]");
  assert_string_equal(path(t, 2), "priority[1]/C");
  assert_string_equal(path(t, 4), "named");
  assert_string_equal(path(t, 7), "priority[3]");
  assert_string_equal(path(t, 10), "sequence");
  assert_string_equal(path(t, 11), "sequence/X");
  bonsai_tree_release(t);
  t = build("priority(filter(?C, X), sequence:main(X))");
  assert_string_equal(path(t, 5), "main/X");
  bonsai_tree_release(t);
}

typedef struct Text {
  char buf[2048];
  size_t n;
} Text;

static void collect(void *ud, const char *s, size_t n) {
  Text *t = ud;
  if (t->n + n < sizeof t->buf) {
    memcpy(t->buf + t->n, s, n);
    t->n += n;
  }
  t->buf[t->n] = '\0';
}

static void dump_text(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  Text out;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  leaf("D", "R");
  t = build("sequence:root(A, repeater{times=3}(invert(B)), "
            "parallel{success=one}(C, wait{seconds=1.5}), retry(D:named))");
  memset(&out, 0, sizeof out);
  bonsai_tree_dump(t, NULL, collect, &out);
  assert_string_equal(out.buf, "root (sequence)\n"
                               "  A (action)\n"
                               "  repeater[2] x3\n"
                               "    invert[1]\n"
                               "      B (action)\n"
                               "  parallel[3] success>=1 failure>=1\n"
                               "    C (action)\n"
                               "    wait[2] 1.5s\n"
                               "  retry[4] forever\n"
                               "    named (action)\n");
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_tick(ag, 1);
  memset(&out, 0, sizeof out);
  bonsai_tree_dump(t, ag, collect, &out);
  assert_string_equal(out.buf, "root (sequence) [running]\n"
                               "  A (action) [success]\n"
                               "  repeater[2] x3 [running]\n"
                               "    invert[1] [running]\n"
                               "      B (action) [running]\n"
                               "  parallel[3] success>=1 failure>=1 [idle]\n"
                               "    C (action) [idle]\n"
                               "    wait[2] 1.5s [idle]\n"
                               "  retry[4] forever [idle]\n"
                               "    named (action) [idle]\n");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
  t = build("priority(filter(?A, B), C)");
  memset(&out, 0, sizeof out);
  bonsai_tree_dump(t, NULL, collect, &out);
  assert_string_equal(out.buf, "priority\n"
                               "  priority[1] (filter)\n"
                               "    A (condition)\n"
                               "    B (action)\n"
                               "  C (action)\n");
  bonsai_tree_release(t);
}

/* }====== */

/* {====== definition errors */

static void definition_errors(void **state) {
  (void)state;
  leaf("A", "S");
  leaf("B", "S");
  assert_string_equal(deferr("sequence"),
                      "sequence: 'sequence' needs children");
  assert_string_equal(deferr("sequence:root(A, selector)"),
                      "root/selector[2]: 'selector' needs children");
  assert_string_equal(deferr("parallel"),
                      "parallel: 'parallel' needs children");
  assert_string_equal(deferr("filter"), "filter: 'filter' needs a child");
  assert_string_equal(deferr("invert"), "invert: 'invert' needs a child");
  assert_string_equal(deferr("sequence(A, invert(A, B))"),
                      "sequence/invert[2]: 'invert' takes one child");
  assert_string_equal(deferr("repeater{times=-1}(A)"),
                      "repeater: argument 'times' must be a whole number >= 0");
  assert_string_equal(deferr("retry{times=1.5}(A)"),
                      "retry: argument 'times' must be a whole number >= 0");
  assert_string_equal(deferr("limit{times=many}(A)"),
                      "limit: argument 'times' must be a whole number >= 0");
  assert_string_equal(deferr("timeout{seconds=-1}(A)"),
                      "timeout: argument 'seconds' must be a number >= 0");
  assert_string_equal(deferr("parallel{success=some}(A, B)"),
                      "parallel: argument 'success' must be \"all\", \"one\" "
                      "or a count >= 1");
  assert_string_equal(deferr("parallel{failure=0}(A, B)"),
                      "parallel: argument 'failure' must be \"all\", \"one\" "
                      "or a count >= 1");
  assert_string_equal(deferr("parallel{success=3}(A, B)"),
                      "parallel: 'parallel' policy count is larger than its 2 "
                      "children");
  assert_string_equal(deferr("sequence{times=2}(A)"),
                      "sequence: 'sequence' takes no argument 'times'");
  assert_string_equal(deferr("invert{seconds=2}(A)"),
                      "invert: 'invert' takes no argument 'seconds'");
  assert_string_equal(deferr("repeater{count=2}(A)"),
                      "repeater: 'repeater' takes no argument 'count'");
  assert_string_equal(deferr("limit(A)"), "limit: 'limit' needs 'times'");
  assert_string_equal(deferr("wait"), "wait: 'wait' needs 'seconds'");
  assert_string_equal(deferr("cooldown(A)"),
                      "cooldown: 'cooldown' needs 'seconds'");
  assert_string_equal(deferr("check{key=hp}"),
                      "check: 'check' needs a key and an operator");
  assert_string_equal(deferr("check{key=hp, op='<'}"),
                      "check: 'check' can order only numbers and strings");
  assert_string_equal(deferr("check{key=hp, op=is}"),
                      "check: argument 'op' must be one of == ~= < <= > >=");
  assert_string_equal(deferr("is_set"), "is_set: 'is_set' needs a key");
  assert_string_equal(deferr("sequence(A, Nope)"),
                      "sequence/Nope: no leaf registered as 'Nope'");
  assert_string_equal(deferr("guard(A, B)"),
                      "guard: 'guard' needs a check (bt.check or bt.is_set) "
                      "and a child");
  assert_string_equal(deferr("guard(is_set{key=x})"),
                      "guard: 'guard' needs a check (bt.check or bt.is_set) "
                      "and a child");
  assert_string_equal(deferr("guard{abort=sometimes}(is_set{key=x}, A)"),
                      "guard: argument 'abort' must be \"none\", \"self\", "
                      "\"lower\" or \"both\"");
  assert_string_equal(deferr("priority(sequence(A), B)"),
                      "priority[1]: a priority branch must be a filter");
  assert_string_equal(deferr("priority(filter(?A, B), A, B)"),
                      "A: a priority branch must be a filter");
}

/* Errors met while building: the first is kept and reported. */
static void definition_call_errors(void **state) {
  bonsai_def *d;
  bonsai_tree *t;
  char err[256];
  (void)state;
  leaf("A", "S");
  /* unknown kind */
  d = bonsai_def_new(env);
  assert_null(bonsai_def_errmsg(d));
  assert_int_equal(bonsai_def_begin(d, 99, NULL), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "unknown node kind 99");
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_string_equal(err, "unknown node kind 99");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  assert_int_equal(bonsai_def_begin(d, -1, NULL), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "sequence: unknown node kind -1");
  /* the first error stays */
  assert_int_equal(bonsai_def_begin(d, BONSAI_ACTION, NULL), BONSAI_EDEF);
  assert_int_equal(bonsai_def_end(d), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "sequence: unknown node kind -1");
  bonsai_def_free(d);
  /* leaf kinds cannot be begun, others cannot be leaves */
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  assert_int_equal(bonsai_def_begin(d, BONSAI_ACTION, NULL), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "sequence: 'action' is a leaf");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_begin(d, BONSAI_WAIT, NULL), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "'wait' is a leaf");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  assert_int_equal(bonsai_def_leaf(d, BONSAI_SELECTOR, NULL, "A", NULL),
                   BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d),
                      "sequence: 'selector' is not a leaf");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_leaf(d, BONSAI_ACTION, NULL, NULL, NULL),
                   BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "a leaf needs a registered name");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_cleaf(d, BONSAI_WAIT, NULL, succeed, NULL, 0,
                                    NULL),
                   BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d),
                      "a function leaf is an action or a condition");
  bonsai_def_free(d);
  /* parameters */
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_number(d, "times", 2), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d),
                      "parameter 'times' before any node");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_TIMEOUT, NULL);
  assert_int_equal(bonsai_def_number(d, "seconds", NAN), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d),
                      "timeout: argument 'seconds' must be a number >= 0");
  bonsai_def_free(d);
  /* an unclosed node, an extra end, two roots, nothing at all */
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_begin(d, BONSAI_SELECTOR, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  assert_null(bonsai_def_errmsg(d));
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_string_equal(err,
                      "sequence/selector[1]: node not closed (bonsai_def_end)");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  assert_int_equal(bonsai_def_end(d), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d),
                      "bonsai_def_end without an open node");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  assert_int_equal(bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL),
                   BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "a tree has one root");
  assert_int_equal(bonsai_tree_new(d, "t", &t, NULL, 0), BONSAI_EDEF);
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_string_equal(err, "empty tree definition");
  /* a small buffer gets a cut, terminated message */
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, 6), BONSAI_EDEF);
  assert_string_equal(err, "empty");
  bonsai_def_free(d);
}

/* A node's path in an error message never looks broken. */
static void priority_placement_errors(void **state) {
  const char *e;
  (void)state;
  leaf("A", "S");
  e = deferr("sequence(priority(A))");
  assert_non_null(strstr(e, "a priority section belongs at the top of a tree"));
  assert_null(strstr(e, "/:"));
  e = deferr("priority");
  assert_non_null(strstr(e, "'priority' needs a root"));
  assert_true(e[0] != ':');
}

/* The reason survives a long path. */
static void deep_definition_error(void **state) {
  bonsai_def *d;
  bonsai_tree *t;
  char err[256];
  int i;
  (void)state;
  d = bonsai_def_new(env);
  for (i = 0; i < 30; i++)
    bonsai_def_begin(d, BONSAI_SEQUENCE, "a_rather_long_node_name");
  bonsai_def_begin(d, BONSAI_RETRY, NULL);
  bonsai_def_end(d);
  for (i = 0; i < 30; i++)
    bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_non_null(strstr(err, "'retry' needs a child"));
  bonsai_def_free(d);
}

/* }====== */

/* {====== memory */

/* Builds, runs and drops a tree with agents and blackboards. */
static void lifecycle(const char *spec) {
  bonsai_tree *t = build(spec);
  bonsai_bb *parent = bonsai_bb_new(env, NULL);
  bonsai_bb *child = bonsai_bb_new(env, parent);
  bonsai_agent *a1 = bonsai_agent_new(t, child, NULL);
  bonsai_agent *a2 = bonsai_agent_new(t, NULL, NULL);
  bonsai_value v;
  Text out;
  int k = bonsai_key(env, "name", 4);
  v.type = BONSAI_TSTRING;
  v.u.str.s = "a string value";
  v.u.str.len = strlen(v.u.str.s);
  bonsai_bb_set(parent, k, v);
  bonsai_bb_set(child, k, v);
  bonsai_bb_release(child);
  bonsai_agent_tick(a1, 1);
  bonsai_agent_tick(a2, 1);
  bonsai_agent_tick(a1, -1); /* an error message */
  memset(&out, 0, sizeof out);
  bonsai_tree_dump(t, a1, collect, &out);
  bonsai_agent_abort(a1);
  bonsai_agent_reset(a2);
  bonsai_tree_release(t);
  bonsai_agent_free(a1);
  bonsai_agent_free(a2);
  bonsai_bb_release(parent);
  assert_int_equal(bonsai_env_memory(env), mem.bytes);
}

static void memory_returns_to_start(void **state) {
  size_t m0, m1;
  Script *e;
  (void)state;
  leaf("A", "RS");
  leaf("B", "R");
  e = leaf("E", "R");
  e->fail_event = BONSAI_EV_TICK + 1;
  bonsai_key(env, "name", 4); /* used by lifecycle */
  m0 = bonsai_env_memory(env);
  assert_int_equal(m0, mem.bytes);
  lifecycle("sequence(A, parallel(B, wait{seconds=1}), repeater(A))");
  assert_int_equal(bonsai_env_memory(env), m0);
  lifecycle("parallel(B, E)"); /* a leaf error */
  assert_int_equal(bonsai_env_memory(env), m0);
  /* blackboard keys are interned for the environment's life */
  lifecycle("sequence(check{key=hp, op='<', value=3}, is_set{key=x})");
  m1 = bonsai_env_memory(env);
  lifecycle("sequence(check{key=hp, op='<', value=3}, is_set{key=x})");
  assert_int_equal(bonsai_env_memory(env), m1);
}

static int fails(const bonsai_call *c) {
  if (c->event == BONSAI_EV_TICK)
    return bonsai_agent_error(c->agent, "fails");
  return BONSAI_OK;
}

static int runs(const bonsai_call *c) {
  (void)c;
  return R;
}

/* Everything a program does, under an allocator that fails once. */
static void oom_scenario(AllocStats *st) {
  bonsai_env *e = bonsai_env_new(trace_alloc, st);
  bonsai_def *d;
  bonsai_tree *t = NULL;
  bonsai_agent *ag = NULL;
  bonsai_bb *bb, *child = NULL;
  bonsai_value v;
  char err[256];
  int r, k, i;
  Text out;
  if (e == NULL)
    return;
  bb = bonsai_bb_new(e, NULL);
  if (bb != NULL) {
    child = bonsai_bb_new(e, bb);
    for (i = 0; i < 8; i++) {
      char name[8];
      snprintf(name, sizeof name, "k%d", i);
      k = bonsai_key(e, name, strlen(name));
      if (k < 0)
        continue;
      v.type = BONSAI_TSTRING;
      v.u.str.s = "full";
      v.u.str.len = 4;
      r = bonsai_bb_set(bb, k, v);
      assert_true(r == BONSAI_OK || r == BONSAI_ENOMEM);
    }
  }
  d = bonsai_def_new(e);
  if (d != NULL) {
    bonsai_def_begin(d, BONSAI_SEQUENCE, "root");
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, succeed, NULL, 0, NULL);
    bonsai_def_leaf(d, BONSAI_CHECK, "check", NULL, NULL);
    bonsai_def_string(d, "key", "k1");
    bonsai_def_string(d, "op", "==");
    bonsai_def_string(d, "value", "full");
    bonsai_def_leaf(d, BONSAI_IS_SET, NULL, NULL, NULL);
    bonsai_def_string(d, "key", "other");
    bonsai_def_begin(d, BONSAI_REPEATER, NULL);
    bonsai_def_number(d, "times", 2);
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, succeed, NULL, 0, NULL);
    bonsai_def_end(d);
    bonsai_def_begin(d, BONSAI_PARALLEL, "both");
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, runs, NULL, 0, NULL);
    bonsai_def_leaf(d, BONSAI_WAIT, NULL, NULL, NULL);
    bonsai_def_number(d, "seconds", 1);
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, fails, NULL, 0, NULL);
    bonsai_def_end(d);
    bonsai_def_end(d);
    r = bonsai_tree_new(d, "oom", &t, err, sizeof err);
    assert_true(r == BONSAI_OK || r == BONSAI_ENOMEM ||
                (r == BONSAI_EDEF && strstr(err, "out of memory") != NULL));
    bonsai_def_free(d);
  }
  if (t != NULL) {
    ag = bonsai_agent_new(t, child, NULL);
    bonsai_tree_release(t);
  }
  if (ag != NULL) {
    r = bonsai_agent_tick(ag, 1);
    assert_true(r == F || r == BONSAI_ELEAF);
    r = bonsai_agent_tick(ag, 1);
    assert_true(r == F || r == BONSAI_ELEAF);
    bonsai_agent_abort(ag);
    bonsai_agent_reset(ag);
    memset(&out, 0, sizeof out);
    bonsai_tree_dump(bonsai_agent_tree(ag), ag, collect, &out);
    bonsai_agent_free(ag);
  }
  assert_int_equal(bonsai_env_memory(e), st->bytes);
  bonsai_bb_release(child);
  bonsai_bb_release(bb);
  bonsai_env_release(e);
}

static void allocation_failures(void **state) {
  AllocStats st;
  long n;
  (void)state;
  for (n = 1;; n++) {
    memset(&st, 0, sizeof st);
    st.fail_at = n;
    oom_scenario(&st);
    assert_int_equal(st.blocks, 0);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.bad_osize, 0);
    if (st.failed == 0)
      break;
  }
  assert_true(n > 20);
}

/* Registering leaves when memory runs out keeps the accounting right. */
static void allocation_failures_in_registry(void **state) {
  AllocStats st;
  long n;
  (void)state;
  for (n = 1;; n++) {
    bonsai_env *e;
    int i;
    memset(&st, 0, sizeof st);
    st.fail_at = n;
    e = bonsai_env_new(trace_alloc, &st);
    if (e != NULL) {
      for (i = 0; i < 40; i++) {
        char name[8];
        snprintf(name, sizeof name, "L%d", i);
        bonsai_leaf_register(e, name, succeed, NULL, 0);
      }
      assert_int_equal(bonsai_env_memory(e), st.bytes);
      bonsai_env_release(e);
    }
    assert_int_equal(st.blocks, 0);
    assert_int_equal(st.bad_osize, 0);
    if (st.failed == 0)
      break;
  }
}

/* Out of memory while compiling is reported as such. */
static void compile_out_of_memory(void **state) {
  AllocStats st;
  bonsai_env *e;
  bonsai_def *d;
  bonsai_tree *t;
  long n;
  int r;
  (void)state;
  for (n = 1;; n++) {
    memset(&st, 0, sizeof st);
    e = bonsai_env_new(trace_alloc, &st);
    d = bonsai_def_new(e);
    bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
    bonsai_def_cleaf(d, BONSAI_ACTION, NULL, succeed, NULL, 0, NULL);
    bonsai_def_end(d);
    st.fail_at = st.calls + n;
    r = bonsai_tree_new(d, "t", &t, NULL, 0);
    bonsai_def_free(d);
    if (r == BONSAI_OK)
      bonsai_tree_release(t);
    bonsai_env_release(e);
    if (st.failed == 0)
      break;
    assert_int_equal(r, BONSAI_ENOMEM);
  }
}

/* The did-you-mean of every message: the nearest words within a bound
** growing with the word, all at the nearest distance, in list order; a
** swap of two letters is one edit; a buffer too small gets nothing. */
static void nearest_words(void **state) {
  char buf[64], msg[80];
  (void)state;
  assert_int_equal(bonsai_nearest("sel", "buy sell look", buf, sizeof buf), 1);
  assert_string_equal(buf, "sell");
  assert_int_equal(bonsai_nearest("cout", "times count cost", buf, sizeof buf),
                   2);
  assert_string_equal(buf, "count cost");
  assert_int_equal(bonsai_nearest("sucess", "success failure", buf,
                                  sizeof buf), 1);
  assert_int_equal(bonsai_nearest("satck", "stack", buf, sizeof buf), 1);
  assert_int_equal(bonsai_nearest("y", "x hp", buf, sizeof buf), 0);
  assert_string_equal(buf, "");
  assert_int_equal(bonsai_nearest("xyzzy", "sell buy", buf, sizeof buf), 0);
  assert_int_equal(bonsai_nearest("", "a", buf, sizeof buf), 0);
  assert_int_equal(bonsai_nearest("a", NULL, NULL, 0), 0);
  assert_int_equal(bonsai_did_you_mean("a", msg, sizeof msg),
                   strlen(" (did you mean 'a'?)"));
  assert_string_equal(msg, " (did you mean 'a'?)");
  bonsai_did_you_mean("a b c", msg, sizeof msg);
  assert_string_equal(msg, " (did you mean 'a', 'b' or 'c'?)");
  bonsai_did_you_mean("a b", msg, sizeof msg);
  assert_string_equal(msg, " (did you mean 'a' or 'b'?)");
  assert_int_equal(bonsai_did_you_mean("abc", msg, 10), 22);
  assert_string_equal(msg, "");
  assert_int_equal(bonsai_did_you_mean("", msg, sizeof msg), 0);
}

/* }====== */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(tick_error_recovers),
      T(nearest_words),
      T(resumed_action_errors),
      T(enter_error),
      T(exit_error),
      T(abort_error_in_agent_abort),
      T(abort_error_in_tick),
      T(abort_error_in_reset),
      T(error_exit_only_leaf),
      T(invalid_statuses),
      T(condition_cannot_run),
      T(guard_check_error),
      T(reentrant_tick_is_busy),
      T(leaf_ticks_other_agent),
      T(bad_dt),
      T(reload_from_c),
      T(reentrant_switch),
      T(interrupts_and_traces),
      T(switch_abort_error),
      T(tree_release_while_agents_run),
      T(env_released_first),
      T(reregister_leaf),
      T(call_record),
      T(deep_sequences),
      T(deep_decorators),
      T(wide_selector),
      T(wide_parallel_abort),
      T(wide_parallel_abort_fast),
      T(wide_same_names),
      T(running_outermost_first),
      T(node_names),
      T(priority_names),
      T(dump_text),
      T(definition_errors),
      T(definition_call_errors),
      T(priority_placement_errors),
      T(deep_definition_error),
      T(memory_returns_to_start),
      T(allocation_failures),
      T(allocation_failures_in_registry),
      T(compile_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
