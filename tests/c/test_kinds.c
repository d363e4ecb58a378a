/*
** test_kinds.c: the node kinds added since the second round (delay,
** parallel with wait, utility selector, subtree, BehaviorTree.CPP's
** if_then_else, while_do_else, skip_unless_updated, wait_value_update)
** through the public C API, tick by tick: statuses and the exact order of
** enter/tick/exit/abort events, including every way a running node can be
** cut off.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"
#include "fixture.h"

/* {====== delay */

/* Running for 'seconds' of agent time without its child, then the child's
** status; a new run waits again. */
static void delay_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RSF");
  ag = start("delay{seconds=2}(A)");
  STEP(ag, 1, R, ""); /* starts at time 1 */
  assert_string_equal(states(ag), "R.");
  STEP(ag, 1, R, "");
  STEP(ag, 1, R, "enter A; tick A"); /* time 3: 2 seconds passed */
  assert_string_equal(states(ag), "RR");
  STEP(ag, 1, S, "tick A; exit A success");
  assert_string_equal(states(ag), "SS");
  STEP(ag, 1, R, ""); /* a new run waits again */
  STEP(ag, 1, R, "");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  bonsai_agent_free(ag);
}

static void delay_zero_and_uneven_dt(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  ag = start("delay{seconds=0}(A)");
  STEP(ag, 0, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
  ag = start("sequence(delay{seconds=1}(A), A)");
  STEP(ag, 0.5, R, ""); /* starts at time 0.5 */
  STEP(ag, 0.25, R, "");
  STEP(ag, 0.5, R, ""); /* 0.75 s since it started */
  STEP(ag, 0.25, S,
       "enter A; tick A; exit A success; enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

/* An abort while waiting aborts nothing below; an abort while the child
** runs aborts the child; either way the next run waits again. */
static void delay_aborts(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("delay{seconds=1}(A)");
  STEP(ag, 1, R, "");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  assert_string_equal(states(ag), "A.");
  STEP(ag, 1, R, ""); /* waits again from time 2 */
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_string_equal(states(ag), "AA");
  STEP(ag, 1, R, "");
  bonsai_agent_free(ag);
}

/* Under a reactive selector: a higher child that runs cuts the waiting
** delay off (no call below it), and later the running child. */
static void delay_under_reactive(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FFSFFFS");
  leaf("A", "R");
  ag = start("reactive_selector(?C, delay{seconds=1}(A))");
  STEP(ag, 1, R, "tick C");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, S, "tick C; abort A");
  assert_string_equal(states(ag), "SSAA");
  STEP(ag, 1, R, "tick C");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; tick A");
  STEP(ag, 1, S, "tick C; abort A");
  bonsai_agent_free(ag);
  leaf("C", "FS");
  ag = start("reactive_selector(?C, delay{seconds=5}(A))");
  STEP(ag, 1, R, "tick C");
  STEP(ag, 1, S, "tick C"); /* the waiting delay is aborted, A untouched */
  assert_string_equal(states(ag), "SSA.");
  bonsai_agent_free(ag);
}

static void delay_definition_errors(void **state) {
  (void)state;
  leaf("A", "S");
  assert_string_equal(deferr("delay(A)"), "delay: 'delay' needs 'seconds'");
  assert_string_equal(deferr("delay{seconds=1}"),
                      "delay: 'delay' needs a child");
}

/* }====== */

/* {====== parallel with wait */

/* The failure policy is met at once, but every child runs to its end; then
** the policies decide (success first). */
/* keep_running_until_failure: running after each success of its child,
** whose next run starts at the next tick (one run per tick at most); it
** fails when the child fails. */
static void keep_running_until_failure(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "SRSF");
  ag = start("keep_running_until_failure(A)");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  assert_string_equal(states(ag), "RS");
  STEP(ag, 1, R, "enter A; tick A");
  assert_string_equal(states(ag), "RR");
  STEP(ag, 1, R, "tick A; exit A success");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  assert_string_equal(states(ag), "FF");
  STEP(ag, 1, F, "enter A; tick A; exit A failure"); /* a new run (the
                                                       ** script's last) */
  bonsai_agent_free(ag);
}

/* Under a selector the next child waits for the failure; an abort cuts
** off a running child, not a finished one. */
static void keep_running_until_failure_aborts(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  ag = start("selector(keep_running_until_failure(A), B)");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  assert_string_equal(states(ag), "RRS.");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  assert_string_equal(states(ag), "AAS.");
  bonsai_agent_free(ag);
  ag = start("keep_running_until_failure(B)");
  STEP(ag, 1, R, "enter B; tick B");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort B");
  assert_string_equal(states(ag), "AA");
  bonsai_agent_free(ag);
}

/* A leaf error under it aborts the run like anywhere else; the next tick
** starts it again. */
static void keep_running_until_failure_leaf_error(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S")->fail_event = BONSAI_EV_TICK + 1;
  ag = start("keep_running_until_failure(A)");
  STEP(ag, 1, BONSAI_ELEAF, "enter A; tick A; abort A");
  assert_string_equal(states(ag), "AA");
  assert_string_equal(bonsai_agent_errmsg(ag), "A failed on purpose");
  bonsai_agent_free(ag);
}

static void parallel_wait_finishes_all(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  leaf("B", "F");
  leaf("C", "RRS");
  ag = start("parallel{wait=true}(A, B, C)");
  STEP(ag, 1, R,
       "enter A; tick A; enter B; tick B; exit B failure; enter C; tick C");
  assert_string_equal(states(ag), "RRFR");
  STEP(ag, 1, R, "tick A; exit A success; tick C");
  STEP(ag, 1, F, "tick C; exit C success"); /* 2 of 3 successes */
  assert_string_equal(states(ag), "FSFS");
  /* a new run ticks every child again (scripts repeat their last status) */
  STEP(ag, 1, F, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B failure; enter C; tick C; exit C success");
  bonsai_agent_free(ag);
}

static void parallel_wait_policies(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "RRF");
  ag = start("parallel{success=one,wait=true}(A, B)");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  STEP(ag, 1, R, "tick B");
  STEP(ag, 1, S, "tick B; exit B failure");
  bonsai_agent_free(ag);
  /* both policies met: success is checked first */
  leaf("A", "F");
  leaf("B", "S");
  ag = start("parallel{success=one,failure=one,wait=true}(A, B)");
  STEP(ag, 1, S, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B success");
  bonsai_agent_free(ag);
  /* neither met */
  ag = start("parallel{success=all,failure=all,wait=true}(A, B)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B success");
  bonsai_agent_free(ag);
  /* all succeed */
  leaf("A", "RS");
  ag = start("parallel{wait=true}(A, B)");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B; exit B success");
  STEP(ag, 1, S, "tick A; exit A success");
  bonsai_agent_free(ag);
  /* wait=false is the plain parallel */
  leaf("A", "R");
  leaf("B", "F");
  ag = start("parallel{wait=false}(A, B)");
  STEP(ag, 1, F, "enter A; tick A; enter B; tick B; exit B failure; "
                 "abort A");
  bonsai_agent_free(ag);
}

/* A waiting parallel cut off from above aborts its running children, in
** child order, each deepest first. */
static void parallel_wait_aborted(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "F");
  leaf("C", "R");
  leaf("D", "FFS");
  ag = start("reactive_selector(?D, parallel{wait=true}(A, B, "
             "sequence(C)))");
  STEP(ag, 1, R, "tick D; enter A; tick A; enter B; tick B; "
                 "exit B failure; enter C; tick C");
  STEP(ag, 1, R, "tick D; tick A; tick C");
  STEP(ag, 1, S, "tick D; abort A; abort C");
  assert_string_equal(states(ag), "SSAAFAA");
  bonsai_agent_free(ag);
}

static void parallel_wait_errors(void **state) {
  (void)state;
  leaf("A", "S");
  assert_string_equal(deferr("parallel{wait=1}(A)"),
                      "parallel: argument 'wait' must be a boolean");
  assert_string_equal(deferr("sequence{wait=true}(A)"),
                      "sequence: 'sequence' takes no argument 'wait'");
}

/* }====== */

/* {====== utility selector */

/* A utility function: the number at data, or an error when it is 1e9. */
static int calls;
static int util(const bonsai_call *c) {
  const double *v = c->data;
  assert_int_equal(c->event, BONSAI_EV_UTILITY);
  assert_null(c->args);
  calls++;
  if (*v == 1e9)
    return bonsai_agent_error(c->agent, "no utility for node %u", c->node);
  *c->utility = *v;
  return BONSAI_OK;
}

/* A utility selector over the registered leaves names[0..n), each with the
** utility at u[k] (none when u[k] is NULL); the child of names[k] == "SEQ"
** is a sequence of one leaf "S1". */
static bonsai_agent *utility_agent(const char *const *names, double **u,
                                   int n) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  char err[256];
  int k;
  bonsai_def_begin(d, BONSAI_UTILITY_SELECTOR, "u");
  for (k = 0; k < n; k++) {
    if (strcmp(names[k], "SEQ") == 0) {
      bonsai_def_begin(d, BONSAI_SEQUENCE, "seq");
      if (u[k] != NULL)
        bonsai_def_utility(d, util, u[k]);
      bonsai_def_leaf(d, BONSAI_ACTION, NULL, "S1", NULL);
      bonsai_def_end(d);
      continue;
    }
    bonsai_def_leaf(d, BONSAI_ACTION, NULL, names[k], NULL);
    if (u[k] != NULL)
      bonsai_def_utility(d, util, u[k]);
  }
  bonsai_def_end(d);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("%s", err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  return ag;
}

/* Children are tried highest utility first; ties keep child order; no
** utility is 0. */
static void utility_order(void **state) {
  static const char *const names[] = {"A", "B", "C", "D"};
  double ua = 1, ub = 3, uc = 1, *u[4];
  bonsai_agent *ag;
  (void)state;
  u[0] = &ua, u[1] = &ub, u[2] = &uc, u[3] = NULL;
  leaf("A", "F");
  leaf("B", "F");
  leaf("C", "F");
  leaf("D", "S");
  ag = utility_agent(names, u, 4);
  calls = 0;
  STEP(ag, 1, S, "enter B; tick B; exit B failure; enter A; tick A; "
                 "exit A failure; enter C; tick C; exit C failure; "
                 "enter D; tick D; exit D success");
  assert_int_equal(calls, 3); /* D has none */
  ua = -1; /* now below D's 0 */
  STEP(ag, 1, S, "enter B; tick B; exit B failure; enter C; tick C; "
                 "exit C failure; enter D; tick D; exit D success");
  ub = -2, uc = -2;
  leaf("D", "F");
  STEP(ag, 1, F, "enter D; tick D; exit D failure; enter A; tick A; "
                 "exit A failure; enter B; tick B; exit B failure; "
                 "enter C; tick C; exit C failure");
  assert_string_equal(states(ag), "FFFFF");
  bonsai_agent_free(ag);
}

/* A running child is aborted (after the other was ticked) when a child of
** higher utility succeeds or runs; it goes on when it is reached. */
static void utility_reactive(void **state) {
  static const char *const names[] = {"A", "SEQ", "C"};
  double ua = 1, us = 2, uc = 0, *u[3];
  bonsai_agent *ag;
  (void)state;
  u[0] = &ua, u[1] = &us, u[2] = &uc;
  leaf("A", "R");
  leaf("S1", "R");
  leaf("C", "FFS");
  ag = utility_agent(names, u, 3);
  STEP(ag, 1, R, "enter S1; tick S1");
  assert_string_equal(states(ag), "R.RR.");
  STEP(ag, 1, R, "tick S1"); /* still the highest */
  ua = 5;
  STEP(ag, 1, R, "enter A; tick A; abort S1");
  assert_string_equal(states(ag), "RRAA.");
  ua = 1;
  STEP(ag, 1, R, "enter S1; tick S1; abort A");
  /* a higher child that fails does not cut the running one off */
  uc = 9;
  STEP(ag, 1, R, "enter C; tick C; exit C failure; tick S1");
  STEP(ag, 1, R, "enter C; tick C; exit C failure; tick S1");
  STEP(ag, 1, S, "enter C; tick C; exit C success; abort S1");
  assert_string_equal(states(ag), "SAAAS");
  /* an abort from outside reaches the running child */
  uc = -1;
  STEP(ag, 1, R, "enter S1; tick S1");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort S1");
  bonsai_agent_free(ag);
}

/* A utility that fails is an error naming its node: the running nodes are
** aborted, deepest first, before the tick returns. */
static void utility_errors(void **state) {
  static const char *const names[] = {"A", "SEQ"};
  double ua = 0, us = 1, *u[2];
  bonsai_agent *ag;
  char path[64];
  (void)state;
  u[0] = &ua, u[1] = &us;
  leaf("A", "R");
  leaf("S1", "R");
  ag = utility_agent(names, u, 2);
  STEP(ag, 1, R, "enter S1; tick S1");
  ua = 1e9;
  STEP(ag, 1, BONSAI_ELEAF, "abort S1");
  assert_string_equal(bonsai_agent_errmsg(ag), "no utility for node 1");
  bonsai_tree_node_path(bonsai_agent_tree(ag), bonsai_agent_errnode(ag), path,
                        sizeof path);
  assert_string_equal(path, "u/A");
  assert_string_equal(states(ag), "A.AA");
  ua = NAN;
  STEP(ag, 1, BONSAI_ELEAF, "");
  assert_string_equal(bonsai_agent_errmsg(ag), "utility is NaN");
  ua = 0;
  STEP(ag, 1, R, "enter S1; tick S1");
  bonsai_agent_free(ag);
}

static void utility_definition_errors(void **state) {
  char err[256];
  bonsai_def *d;
  bonsai_tree *t;
  double v = 1;
  (void)state;
  leaf("A", "S");
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  bonsai_def_utility(d, util, &v);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_string_equal(err, "sequence/A: a utility applies only to a child of "
                           "a 'utility_selector'");
  bonsai_def_free(d);
  assert_string_equal(deferr("utility_selector"),
                      "utility_selector: 'utility_selector' needs "
                      "children");
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_utility(d, util, &v), BONSAI_EDEF);
  bonsai_def_free(d);
}

/* }====== */

/* {====== subtree */

/* In C a subtree node marks an inlined tree: it passes its child's status
** both ways, is part of paths, and needs one child. */
static void subtree_passes_through(void **state) {
  bonsai_agent *ag;
  unsigned nodes[8];
  char path[64];
  (void)state;
  leaf("A", "RFR");
  leaf("B", "S");
  ag = start("selector(subtree:patrol(sequence(A)), B)");
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_running(ag, nodes, 8), 4);
  bonsai_tree_node_path(bonsai_agent_tree(ag), nodes[3], path, sizeof path);
  assert_string_equal(path, "selector/patrol/sequence[1]/A");
  STEP(ag, 1, S, "tick A; exit A failure; enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SFFFS");
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_string_equal(states(ag), "AAAAS"); /* B keeps its last status */
  bonsai_agent_free(ag);
  assert_string_equal(deferr("subtree"), "subtree: 'subtree' needs a child");
}

/* }====== */

/* {====== if_then_else */

/* The condition once (it may run), then the branch it chose, which goes on
** without the condition; the second branch when it failed. */
static void if_then_else_branches(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "RSFS");
  leaf("T", "RS");
  leaf("E", "F");
  ag = start("if_then_else(C, T, E)");
  STEP(ag, 1, R, "enter C; tick C");
  assert_string_equal(states(ag), "RR..");
  STEP(ag, 1, R, "tick C; exit C success; enter T; tick T");
  assert_string_equal(states(ag), "RSR.");
  STEP(ag, 1, S, "tick T; exit T success");
  assert_string_equal(states(ag), "SSS.");
  STEP(ag, 1, F, "enter C; tick C; exit C failure; enter E; tick E; "
                 "exit E failure");
  assert_string_equal(states(ag), "FFSF"); /* T keeps its last status */
  STEP(ag, 1, S, "enter C; tick C; exit C success; enter T; tick T; "
                 "exit T success");
  bonsai_agent_free(ag);
}

/* Without an else, a failed condition is the node's failure. */
static void if_then_else_no_else(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FS");
  leaf("T", "S");
  ag = start("if_then_else(C, T)");
  STEP(ag, 1, F, "enter C; tick C; exit C failure");
  assert_string_equal(states(ag), "FF.");
  STEP(ag, 1, S, "enter C; tick C; exit C success; enter T; tick T; "
                 "exit T success");
  bonsai_agent_free(ag);
}

/* Ticked again from above (a reactive parent), it resumes its running
** branch, not the condition; cut off, it aborts that branch. */
static void if_then_else_resumes_and_aborts(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("P", "S");
  leaf("C", "S");
  leaf("T", "R");
  ag = start("reactive_sequence(P, if_then_else(C, T))");
  STEP(ag, 1, R, "enter P; tick P; exit P success; enter C; tick C; "
                 "exit C success; enter T; tick T");
  STEP(ag, 1, R, "enter P; tick P; exit P success; tick T");
  assert_string_equal(states(ag), "RSRSR");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort T");
  assert_string_equal(states(ag), "ASASA");
  bonsai_agent_free(ag);
}

static void if_then_else_definition_errors(void **state) {
  (void)state;
  leaf("A", "S");
  assert_string_equal(deferr("if_then_else(A)"),
                      "if_then_else: 'if_then_else' takes 2 to 3 children, "
                      "not 1");
  assert_string_equal(deferr("sequence(A, if_then_else:pick(A, A, A, A))"),
                      "sequence/pick: 'if_then_else' takes 2 to 3 children, "
                      "not 4");
}

/* }====== */

/* {====== while_do_else */

/* The condition at every tick; the branch it chooses, the other aborted
** if it runs; a branch that ends ends the node. */
static void while_do_else_switches(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SSFSS");
  leaf("D", "RRRS");
  leaf("E", "R");
  ag = start("while_do_else(C, D, E)");
  STEP(ag, 1, R, "enter C; tick C; exit C success; enter D; tick D");
  assert_string_equal(states(ag), "RSR.");
  STEP(ag, 1, R, "enter C; tick C; exit C success; tick D");
  STEP(ag, 1, R, "enter C; tick C; exit C failure; abort D; enter E; "
                 "tick E");
  assert_string_equal(states(ag), "RFAR");
  STEP(ag, 1, R, "enter C; tick C; exit C success; abort E; enter D; "
                 "tick D");
  STEP(ag, 1, S, "enter C; tick C; exit C success; tick D; "
                 "exit D success");
  assert_string_equal(states(ag), "SSSA");
  bonsai_agent_free(ag);
}

/* Without an else, a failed condition aborts the running branch and fails;
** a running condition leaves the branch as it is, and is resumed. */
static void while_do_else_no_else(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SRSF");
  leaf("D", "R");
  ag = start("while_do_else(C, D)");
  STEP(ag, 1, R, "enter C; tick C; exit C success; enter D; tick D");
  STEP(ag, 1, R, "enter C; tick C");
  assert_string_equal(states(ag), "RRR");
  STEP(ag, 1, R, "tick C; exit C success; tick D");
  STEP(ag, 1, F, "enter C; tick C; exit C failure; abort D");
  assert_string_equal(states(ag), "FFA");
  bonsai_agent_free(ag);
}

static void while_do_else_aborted(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "RS");
  leaf("D", "R");
  ag = start("while_do_else(C, D)");
  STEP(ag, 1, R, "enter C; tick C");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort C");
  STEP(ag, 1, R, "enter C; tick C; exit C success; enter D; tick D");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort D");
  assert_string_equal(states(ag), "ASA");
  assert_string_equal(deferr("while_do_else(C, D, D, D)"),
                      "while_do_else: 'while_do_else' takes 2 to 3 "
                      "children, not 4");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== save and restore */

typedef struct Bytes {
  unsigned char p[4096];
  size_t n;
} Bytes;

static void put(void *ud, const void *p, size_t n) {
  Bytes *b = (Bytes *)ud;
  assert_true(b->n + n <= sizeof b->p);
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

/* A utility selector's running child is saved by name: restored into a
** version with a child inserted before it, it goes on, and is the one
** aborted when a higher child runs. A waiting delay keeps its start. */
static void save_new_kinds(void **state) {
  static const char *const before[] = {"A", "SEQ"};
  static const char *const after[] = {"N", "A", "SEQ"};
  double un = -1, ua = 0, us = 1, *u[3];
  bonsai_agent *ag, *bg;
  Bytes b;
  (void)state;
  leaf("N", "R");
  leaf("A", "R");
  leaf("S1", "R");
  u[0] = &ua, u[1] = &us;
  ag = utility_agent(before, u, 2);
  STEP(ag, 1, R, "enter S1; tick S1");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  u[0] = &un, u[1] = &ua, u[2] = &us;
  bg = utility_agent(after, u, 3);
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  assert_string_equal(states(bg), "R..RR");
  STEP(bg, 1, R, "tick S1");
  un = 5;
  STEP(bg, 1, R, "enter N; tick N; abort S1");
  bonsai_agent_free(bg);
  ag = start("sequence(delay{seconds=2}(A))");
  STEP(ag, 1, R, "");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  bg = start("sequence(delay{seconds=2}(A))");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  STEP(bg, 1, R, "");
  STEP(bg, 1, R, "enter A; tick A"); /* 2 s after its start at time 1 */
  bonsai_agent_free(bg);
}

/* }====== */

/* {====== skip_unless_updated */

/* Sets blackboard key 'name' of ag to the number x. */
static void setnum(bonsai_agent *ag, const char *name, double x) {
  bonsai_value v;
  v.type = BONSAI_TNUMBER;
  v.u.n = x;
  assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag),
                                 bonsai_key(env, name, strlen(name)), v),
                   BONSAI_OK);
}

/* Skipped while its key is unset or unchanged since it last looked (the
** same value again is no change); a change starts its child, whose run
** goes on whatever the key does. */
static void skip_unless_updated_runs_on_change(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  leaf("B", "S");
  ag = start("sequence(skip_unless_updated{key=k}(A), B)");
  STEP(ag, 1, S, "enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SK.S");
  setnum(ag, "k", 1);
  STEP(ag, 1, R, "enter A; tick A");
  setnum(ag, "k", 2); /* while the child runs: it goes on */
  STEP(ag, 1, S, "tick A; exit A success; enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SSSS");
  setnum(ag, "k", 2);
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B success"); /* 2 was set while the child ran */
  setnum(ag, "k", 2);
  STEP(ag, 1, S, "enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SKSS");
  setnum(ag, "k", 3);
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B success");
  assert_string_equal(deferr("skip_unless_updated(A)"),
                      "skip_unless_updated: 'skip_unless_updated' needs "
                      "'key'");
  bonsai_agent_free(ag);
}

/* Saved and restored, it remembers whether it had seen its key's latest
** change (the restored blackboard has stamps of its own). */
static void skip_unless_updated_saved(void **state) {
  bonsai_agent *ag, *bg;
  Bytes b;
  (void)state;
  leaf("A", "S");
  ag = start("skip_unless_updated{key=k}(A)");
  setnum(ag, "k", 1);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &b), BONSAI_OK);
  bg = start("skip_unless_updated{key=k}(A)");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  STEP(bg, 1, BONSAI_SKIPPED, ""); /* it had seen k = 1 */
  bonsai_agent_free(bg);
  setnum(ag, "k", 2); /* a change it has not seen yet */
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  bg = start("skip_unless_updated{key=k}(A)");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  STEP(bg, 1, S, "enter A; tick A; exit A success");
  STEP(bg, 1, BONSAI_SKIPPED, "");
  bonsai_agent_free(bg);
}

/* }====== */

/* {====== wait_value_update */

/* Running, without its child, until its key changes; then its child, and
** the node ends with it; the next run waits for the next change. An abort
** while it waits aborts nothing below. */
static void wait_value_update_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  ag = start("wait_value_update{key=k}(A)");
  STEP(ag, 1, R, "");
  assert_string_equal(states(ag), "R.");
  setnum(ag, "k", 1);
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  STEP(ag, 1, R, "");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  assert_string_equal(states(ag), "AS");
  setnum(ag, "k", 1);
  STEP(ag, 1, R, ""); /* the same value again is no change */
  setnum(ag, "k", 2);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

/* Under a reactive selector, a higher child that succeeds cuts the waiting
** node off; restored from a save while waiting, it still waits. */
static void wait_value_update_cut_off_and_saved(void **state) {
  bonsai_agent *ag, *bg;
  Bytes b;
  (void)state;
  leaf("C", "FFS");
  leaf("A", "S");
  ag = start("reactive_selector(C, wait_value_update{key=k}(A))");
  setnum(ag, "k", 1);
  STEP(ag, 1, S, "enter C; tick C; exit C failure; enter A; tick A; "
                 "exit A success");
  STEP(ag, 1, R, "enter C; tick C; exit C failure");
  assert_string_equal(states(ag), "RFRS");
  STEP(ag, 1, S, "enter C; tick C; exit C success");
  assert_string_equal(states(ag), "SSAS");
  bonsai_agent_free(ag);
  ag = start("sequence(wait_value_update{key=k}(A))");
  setnum(ag, "k", 1);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, R, "");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  bg = start("sequence(wait_value_update{key=k}(A))");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  assert_string_equal(states(bg), "RR.");
  STEP(bg, 1, R, "");
  setnum(bg, "k", 5);
  STEP(bg, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(bg);
}

/* }====== */

/* {====== run_once with then_skip */

/* After its child's first run: its status, or with then_skip, skipped
** (passed over by a sequence); an aborted run does not count. */
static void run_once_then_skip(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RF");
  leaf("B", "S");
  ag = start("sequence(run_once{then_skip=true}(A), B)");
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  STEP(ag, 1, S, "enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SKFS");
  bonsai_agent_free(ag);
  ag = start("sequence(run_once{then_skip=false}(A), B)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== random_selector */

/* The order a run of agent ag tried the failing leaves A..E in: each
** "tick X" of the trace, letters only. */
static const char *tried(bonsai_agent *ag) {
  static char out[16];
  const char *t;
  size_t n = 0;
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_FAILURE);
  for (t = trace_take(&trace); (t = strstr(t, "tick ")) != NULL; t += 6)
    if (n + 1 < sizeof out)
      out[n++] = t[5];
  out[n] = 0;
  return out;
}

/* Every child once per run, in an order drawn from the seed and the tick
** count: two agents of one seed try the same orders, run after run; the
** orders differ across runs and seeds. */
static void random_selector_orders(void **state) {
  bonsai_agent *ag, *twin;
  char first[16], orders[8][16];
  int changed = 0;
  int k, seed, distinct = 0;
  (void)state;
  leaf("A", "F"), leaf("B", "F"), leaf("C", "F"), leaf("D", "F");
  leaf("E", "F");
  for (seed = 0; seed < 8; seed++) {
    ag = start("random_selector{key=seed}(A, B, C, D, E)");
    twin = start("random_selector{key=seed}(A, B, C, D, E)");
    setnum(ag, "seed", seed);
    setnum(twin, "seed", seed);
    strcpy(first, tried(ag));
    assert_int_equal(strlen(first), 5);
    for (k = 0; k < 5; k++)
      assert_non_null(strchr(first, 'A' + k));
    assert_string_equal(tried(twin), first);
    strcpy(orders[seed], first);
    for (k = 0; k < seed && strcmp(orders[k], first) != 0; k++)
      ;
    distinct += k == seed;
    for (k = 0; k < 4; k++) { /* later runs: the twin follows */
      changed += strcmp(strcpy(first, tried(ag)), orders[seed]) != 0;
      assert_string_equal(tried(twin), first);
    }
    bonsai_agent_free(ag);
    bonsai_agent_free(twin);
  }
  assert_true(distinct >= 4);
  assert_true(changed > 0); /* a new run draws a new order */
  assert_string_equal(deferr("random_selector(A)"),
                      "random_selector: 'random_selector' needs 'key'");
}

/* A running child is resumed, the order kept; success ends the run. */
static void random_selector_resumes(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS"), leaf("B", "RS"), leaf("C", "RS");
  ag = start("random_selector{key=seed}(A, B, C)");
  setnum(ag, "seed", 3);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_RUNNING);
  {
    const char *t = trace_take(&trace);
    char again[64];
    assert_int_equal(strncmp(t, "enter ", 6), 0);
    snprintf(again, sizeof again, "tick %c; exit %c success", t[6], t[6]);
    STEP(ag, 1, S, again);
  }
  bonsai_agent_free(ag);
}

/* }====== */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(delay_waits),
      T(delay_zero_and_uneven_dt),
      T(delay_aborts),
      T(delay_under_reactive),
      T(delay_definition_errors),
      T(keep_running_until_failure),
      T(keep_running_until_failure_aborts),
      T(keep_running_until_failure_leaf_error),
      T(parallel_wait_finishes_all),
      T(parallel_wait_policies),
      T(parallel_wait_aborted),
      T(parallel_wait_errors),
      T(utility_order),
      T(utility_reactive),
      T(utility_errors),
      T(utility_definition_errors),
      T(subtree_passes_through),
      T(save_new_kinds),
      T(if_then_else_branches),
      T(if_then_else_no_else),
      T(if_then_else_resumes_and_aborts),
      T(if_then_else_definition_errors),
      T(while_do_else_switches),
      T(while_do_else_no_else),
      T(while_do_else_aborted),
      T(skip_unless_updated_runs_on_change),
      T(skip_unless_updated_saved),
      T(wait_value_update_waits),
      T(wait_value_update_cut_off_and_saved),
      T(run_once_then_skip),
      T(random_selector_orders),
      T(random_selector_resumes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
