/*
** test_conditions.c: pre- and post-conditions (bonsai_def_when) and the
** SKIPPED status in the VM, through the public C API, tick by tick: the
** order of the checks, when each is evaluated, run_while aborting a
** running subtree, on_halted on every abort, post scripts as nodes end
** (through the jump table too), skipped children in composites and
** decorators, and the plain copies of the tick left untouched.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"
#include "fixture.h"

#define K BONSAI_SKIPPED

/* A condition: logs "<name>" and returns its flag (true: success). */
typedef struct Cond {
  const char *name;
  int value;
} Cond;

static int cond_fn(const bonsai_call *c) {
  const Cond *k = (const Cond *)c->data;
  trace_append(&trace, k->name);
  return k->value ? BONSAI_SUCCESS : BONSAI_FAILURE;
}

/* A condition that reports an error. */
static int cond_error(const bonsai_call *c) {
  return bonsai_agent_error(c->agent, "broken condition");
}

/* Gives the node added last condition 'which'. */
static void when(bonsai_def *d, int which, Cond *k) {
  assert_int_equal(bonsai_def_when(d, which, cond_fn, k), BONSAI_OK);
}

/* An agent on the definition d (freed). */
static bonsai_agent *agent_of(bonsai_def *d) {
  bonsai_tree *t = NULL;
  bonsai_agent *ag;
  char err[256];
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("compile: %s", err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  assert_non_null(ag);
  return ag;
}

/* failure_if, success_if, skip_if, run_while: checked in that order when
** the node starts; the first that holds decides, the rest are not asked. */
static void pre_order(void **state) {
  Cond fi = {"failure_if", 0}, si = {"success_if", 0}, ki = {"skip_if", 0},
       rw = {"run_while", 1};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  when(d, BONSAI_RUN_WHILE, &rw); /* given out of order: kept in order */
  when(d, BONSAI_SKIP_IF, &ki);
  when(d, BONSAI_SUCCESS_IF, &si);
  when(d, BONSAI_FAILURE_IF, &fi);
  bonsai_def_end(d);
  ag = agent_of(d);
  STEP(ag, 1, S, "failure_if; success_if; skip_if; run_while; enter A; "
                 "tick A; exit A success");
  rw.value = 0;
  STEP(ag, 1, K, "failure_if; success_if; skip_if; run_while");
  assert_string_equal(states(ag), "KK");
  ki.value = 1;
  STEP(ag, 1, K, "failure_if; success_if; skip_if");
  si.value = 1;
  STEP(ag, 1, S, "failure_if; success_if");
  assert_string_equal(states(ag), "SS");
  fi.value = 1;
  STEP(ag, 1, F, "failure_if");
  bonsai_agent_free(ag);
}

/* While the node runs, only run_while is asked; false aborts the running
** subtree deepest first (each node's on_halted after its own abort), the
** node is skipped and its sequence goes on. */
static void run_while_aborts(void **state) {
  Cond rw = {"run_while", 1}, ki = {"skip_if", 0}, hs = {"halted S", 1},
       ha = {"halted A", 1};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "S");
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_begin(d, BONSAI_SEQUENCE, "S");
  when(d, BONSAI_RUN_WHILE, &rw);
  when(d, BONSAI_SKIP_IF, &ki);
  when(d, BONSAI_ON_HALTED, &hs);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  when(d, BONSAI_ON_HALTED, &ha);
  bonsai_def_end(d);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "B", NULL);
  bonsai_def_end(d);
  ag = agent_of(d);
  STEP(ag, 1, R, "skip_if; run_while; enter A; tick A");
  ki.value = 1; /* not asked while it runs */
  STEP(ag, 1, R, "run_while; tick A");
  rw.value = 0;
  STEP(ag, 1, S, "run_while; abort A; halted A; halted S; enter B; tick B; "
                 "exit B success");
  assert_string_equal(states(ag), "SKAS");
  bonsai_agent_free(ag);
}

/* on_halted runs on an abort from outside; post scripts run as nodes end,
** child first, also for the ancestors that end with it through the jump
** table; a pre-condition's success or failure runs them too. */
static void post_and_halted(void **state) {
  Cond os = {"A ok", 1}, of = {"A failed", 1}, po = {"A post", 1},
       sp = {"seq post", 1}, ha = {"A halted", 1}, si = {"success_if", 0};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RSF");
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  when(d, BONSAI_POST, &sp);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  when(d, BONSAI_ON_SUCCESS, &os);
  when(d, BONSAI_ON_FAILURE, &of);
  when(d, BONSAI_POST, &po);
  when(d, BONSAI_ON_HALTED, &ha);
  when(d, BONSAI_SUCCESS_IF, &si);
  bonsai_def_end(d);
  ag = agent_of(d);
  STEP(ag, 1, R, "success_if; enter A; tick A");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A; A halted");
  STEP(ag, 1, S, "success_if; enter A; tick A; exit A success; A ok; "
                 "A post; seq post");
  STEP(ag, 1, F, "success_if; enter A; tick A; exit A failure; A failed; "
                 "A post; seq post");
  si.value = 1;
  STEP(ag, 1, S, "success_if; A ok; A post; seq post");
  bonsai_agent_free(ag);
}

/* Skipped children: a selector passes them over, a parallel counts them
** for neither policy (its default success "all" counts them as successes)
** and a composite of skipped children only is skipped. */
static void skipped_in_composites(void **state) {
  Cond k1 = {"k1", 1}, k2 = {"k2", 1};
  static const int kinds[] = {BONSAI_SEQUENCE, BONSAI_SELECTOR,
                              BONSAI_REACTIVE_SEQUENCE,
                              BONSAI_REACTIVE_SELECTOR, BONSAI_PARALLEL};
  size_t j;
  (void)state;
  leaf("A", "S");
  leaf("B", "F");
  for (j = 0; j < sizeof kinds / sizeof *kinds; j++) {
    bonsai_def *d = bonsai_def_new(env);
    bonsai_agent *ag;
    k1.value = k2.value = 1;
    bonsai_def_begin(d, kinds[j], NULL);
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
    when(d, BONSAI_SKIP_IF, &k1);
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, "B", NULL);
    when(d, BONSAI_SKIP_IF, &k2);
    bonsai_def_end(d);
    ag = agent_of(d);
    STEP(ag, 1, K, "k1; k2");
    assert_string_equal(states(ag), "KKK");
    k2.value = 0; /* B fails */
    STEP(ag, 1, F, "k1; k2; enter B; tick B; exit B failure");
    bonsai_agent_free(ag);
  }
}

/* Decorators: invert and force_* pass a skipped child's status; run_once
** and cooldown do not remember a run that was skipped; keep_running runs
** on. */
static void skipped_in_decorators(void **state) {
  Cond k = {"k", 1};
  static const int kinds[] = {BONSAI_INVERT, BONSAI_FORCE_SUCCESS,
                              BONSAI_FORCE_FAILURE, BONSAI_RUN_ONCE,
                              BONSAI_COOLDOWN, BONSAI_REPEATER,
                              BONSAI_KEEP_RUNNING_UNTIL_FAILURE};
  size_t j;
  (void)state;
  leaf("A", "S");
  for (j = 0; j < sizeof kinds / sizeof *kinds; j++) {
    bonsai_def *d = bonsai_def_new(env);
    bonsai_agent *ag;
    int want = kinds[j] == BONSAI_KEEP_RUNNING_UNTIL_FAILURE ? R : K;
    bonsai_def_begin(d, kinds[j], NULL);
    if (kinds[j] == BONSAI_COOLDOWN)
      bonsai_def_number(d, "seconds", 5);
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
    when(d, BONSAI_SKIP_IF, &k);
    bonsai_def_end(d);
    ag = agent_of(d);
    STEP(ag, 1, want, "k");
    STEP(ag, 1, want, "k"); /* run_once, cooldown: asked again */
    bonsai_agent_free(ag);
  }
}

/* A pre-condition evaluated in C: a key with a constant or another key. */
static void check_conditions(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_agent *ag;
  bonsai_value v;
  (void)state;
  leaf("A", "S");
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  v.type = BONSAI_TINTEGER;
  v.u.i = 10;
  assert_int_equal(bonsai_def_when_check(d, BONSAI_SKIP_IF, "hp", "<", v),
                   BONSAI_OK);
  v.type = BONSAI_TSTRING;
  v.u.str.s = "$max";
  v.u.str.len = 4;
  assert_int_equal(
      bonsai_def_when_check(d, BONSAI_SUCCESS_IF, "hp", ">=", v), BONSAI_OK);
  bonsai_def_end(d);
  ag = agent_of(d);
  v.type = BONSAI_TINTEGER;
  v.u.i = 5;
  bonsai_bb_set(bonsai_agent_bb(ag), bonsai_key(env, "hp", 2), v);
  v.u.i = 100;
  bonsai_bb_set(bonsai_agent_bb(ag), bonsai_key(env, "max", 3), v);
  STEP(ag, 1, K, ""); /* hp < 10: skipped */
  v.u.i = 50;
  bonsai_bb_set(bonsai_agent_bb(ag), bonsai_key(env, "hp", 2), v);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  v.u.i = 100;
  bonsai_bb_set(bonsai_agent_bb(ag), bonsai_key(env, "hp", 2), v);
  STEP(ag, 1, S, ""); /* hp >= max: success without running */
  v.type = BONSAI_TBOOLEAN;
  v.u.b = 1;
  bonsai_bb_set(bonsai_agent_bb(ag), bonsai_key(env, "hp", 2), v);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "'hp' is a boolean, compared with a number");
  bonsai_agent_free(ag);
  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  v.type = BONSAI_TINTEGER;
  assert_int_equal(bonsai_def_when_check(d, BONSAI_POST, "hp", "<", v),
                   BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d),
                      "A: 'post' runs a function, not a check");
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  assert_int_equal(bonsai_def_when_check(d, BONSAI_SKIP_IF, "hp", "=", v),
                   BONSAI_EDEF);
  bonsai_def_free(d);
}

/* A control node whose TICK callback returns SKIPPED (its children were,
** say): logs "tick C". */
static int skipper(const bonsai_call *c) {
  (void)c;
  trace_append(&trace, "tick C");
  return BONSAI_SKIPPED;
}

/* A control node may return SKIPPED: it is skipped, its children still
** running aborted, and its sequence goes on; in a tree without
** conditions, where no node is skipped, that is an error of the node. */
static void control_skipped(void **state) {
  Cond ok = {"on_success", 1};
  bonsai_def *d;
  bonsai_agent *ag;
  int with;
  (void)state;
  leaf("B", "S");
  for (with = 1; with >= 0; with--) {
    d = bonsai_def_new(env);
    bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
    if (with)
      when(d, BONSAI_ON_SUCCESS, &ok);
    bonsai_def_control(d, "C", skipper, NULL, 0, NULL);
    bonsai_def_end(d);
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, "B", NULL);
    bonsai_def_end(d);
    ag = agent_of(d);
    if (with) {
      STEP(ag, 1, S, "tick C; enter B; tick B; exit B success; on_success");
      assert_string_equal(states(ag), "SKS");
    } else {
      STEP(ag, 1, BONSAI_ELEAF, "tick C");
      assert_string_equal(bonsai_agent_errmsg(ag), "tick returned skipped in "
                          "a tree without conditions, where no node is "
                          "skipped");
    }
    bonsai_agent_free(ag);
  }
}

/* A condition that fails is a leaf error naming the node; a bad call is
** refused; a guard's check takes none. */
static void errors(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_agent *ag;
  char buf[128];
  (void)state;
  leaf("A", "S");
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  assert_int_equal(bonsai_def_when(d, BONSAI_SKIP_IF, cond_error, NULL),
                   BONSAI_OK);
  bonsai_def_end(d);
  ag = agent_of(d);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag), "broken condition");
  bonsai_agent_errpath(ag, buf, sizeof buf);
  assert_string_equal(buf, "sequence/A");
  bonsai_agent_free(ag);
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_when(d, BONSAI_SKIP_IF, cond_fn, NULL),
                   BONSAI_EDEF);
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  assert_int_equal(bonsai_def_when(d, BONSAI_NCONDS, cond_fn, NULL),
                   BONSAI_EDEF);
  bonsai_def_free(d);
  assert_string_equal(bonsai_cond_name(BONSAI_RUN_WHILE), "run_while");
  assert_null(bonsai_cond_name(BONSAI_NCONDS));
  assert_string_equal(bonsai_status_name(BONSAI_SKIPPED), "skipped");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(pre_order, setup, teardown),
      cmocka_unit_test_setup_teardown(run_while_aborts, setup, teardown),
      cmocka_unit_test_setup_teardown(post_and_halted, setup, teardown),
      cmocka_unit_test_setup_teardown(skipped_in_composites, setup, teardown),
      cmocka_unit_test_setup_teardown(skipped_in_decorators, setup, teardown),
      cmocka_unit_test_setup_teardown(check_conditions, setup, teardown),
      cmocka_unit_test_setup_teardown(control_skipped, setup, teardown),
      cmocka_unit_test_setup_teardown(errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
