/*
** test_composites.c: the composites through the public C API, tick by
** tick: statuses and the exact order of enter/tick/exit/abort events,
** including every way a running child is cut off: sequence and selector,
** the reactive nodes, parallel (and with wait; keep_running_until_failure),
** filter and monitor, the utility selector (and its save), if_then_else,
** while_do_else.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"
#include "fixture.h"

/* {====== sequence and selector */

static void sequence_all_succeed(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "S");
  ag = start("sequence(A, B)");
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B success");
  assert_string_equal(states(ag), "SSS");
  bonsai_agent_free(ag);
}

static void sequence_stops_at_failure(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "S");
  ag = start("sequence(A, B)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  assert_string_equal(states(ag), "FF.");
  bonsai_agent_free(ag);
}

/* With memory: the running child is resumed, earlier ones not re-ticked;
** a finished sequence starts over from its first child. */
static void sequence_memory(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "RF");
  ag = start("sequence(A, B)");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  assert_string_equal(states(ag), "RSR");
  STEP(ag, 1, F, "tick B; exit B failure");
  assert_string_equal(states(ag), "FSF");
  STEP(ag, 1, F, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B failure");
  bonsai_agent_free(ag);
}

static void selector_first_success(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "FS");
  leaf("B", "S");
  ag = start("selector(A, B)");
  STEP(ag, 1, S, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B success");
  assert_string_equal(states(ag), "SFS");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

static void selector_all_fail(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "F");
  ag = start("selector(A, B)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B failure");
  bonsai_agent_free(ag);
}

static void selector_memory(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "RRS");
  ag = start("selector(A, B)");
  STEP(ag, 1, R, "enter A; tick A; exit A failure; enter B; tick B");
  STEP(ag, 1, R, "tick B");
  STEP(ag, 1, S, "tick B; exit B success");
  assert_string_equal(states(ag), "SFS");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== reactive nodes */

static void reactive_sequence_condition_fails(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SSF");
  leaf("A", "R");
  ag = start("reactive_sequence(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; tick A");
  STEP(ag, 1, F, "tick C; abort A");
  assert_string_equal(states(ag), "FFA");
  STEP(ag, 1, F, "tick C");
  bonsai_agent_free(ag);
}

/* An earlier child that now runs: the later running child is aborted
** after the earlier one was ticked. */
static void reactive_sequence_earlier_child_runs(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "SR");
  leaf("B", "R");
  ag = start("reactive_sequence(A, B)");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  STEP(ag, 1, R, "enter A; tick A; abort B");
  assert_string_equal(states(ag), "RRA");
  assert_string_equal(running_paths(ag), "reactive_sequence, reactive_sequence/A");
  bonsai_agent_free(ag);
}

static void reactive_sequence_succeeds(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "S");
  leaf("A", "RS");
  ag = start("reactive_sequence(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, S, "tick C; tick A; exit A success");
  assert_string_equal(states(ag), "SSS");
  bonsai_agent_free(ag);
}

/* A memory sequence under a reactive node keeps its place. */
static void reactive_keeps_inner_memory(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "S");
  leaf("A", "S");
  leaf("B", "RRS");
  ag = start("reactive_sequence(?C, sequence(A, B))");
  STEP(ag, 1, R, "tick C; enter A; tick A; exit A success; enter B; tick B");
  STEP(ag, 1, R, "tick C; tick B");
  STEP(ag, 1, S, "tick C; tick B; exit B success");
  bonsai_agent_free(ag);
}

static void reactive_selector_higher_runs(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("Hi", "FR");
  leaf("Lo", "R");
  ag = start("reactive_selector(Hi, Lo)");
  STEP(ag, 1, R, "enter Hi; tick Hi; exit Hi failure; enter Lo; tick Lo");
  STEP(ag, 1, R, "enter Hi; tick Hi; abort Lo");
  assert_string_equal(states(ag), "RRA");
  STEP(ag, 1, R, "tick Hi");
  bonsai_agent_free(ag);
}

static void reactive_selector_higher_succeeds(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FFS");
  leaf("Hi", "S");
  leaf("Lo", "R");
  ag = start("reactive_selector(reactive_sequence(?C, Hi), Lo)");
  STEP(ag, 1, R, "tick C; enter Lo; tick Lo");
  STEP(ag, 1, R, "tick C; tick Lo"); /* the higher branch still fails */
  STEP(ag, 1, S, "tick C; enter Hi; tick Hi; exit Hi success; abort Lo");
  assert_string_equal(states(ag), "SSSSA");
  bonsai_agent_free(ag);
}

static void reactive_selector_all_fail(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "F");
  leaf("D", "F");
  ag = start("reactive_selector(?C, ?D)");
  STEP(ag, 1, F, "tick C; tick D");
  assert_string_equal(states(ag), "FFF");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== parallel */

static void parallel_defaults_success_all(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  leaf("B", "S");
  ag = start("parallel(A, B)");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B; exit B success");
  assert_string_equal(states(ag), "RRS");
  STEP(ag, 1, S, "tick A; exit A success"); /* B finished: not ticked */
  assert_string_equal(states(ag), "SSS");
  /* a new run ticks every child again */
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B success");
  bonsai_agent_free(ag);
}

/* Default failure policy "one": the first failure stops the parallel and
** aborts the running children in child order; later ones are not ticked. */
static void parallel_defaults_failure_one(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "RF");
  leaf("C", "R");
  ag = start("parallel(A, B, C)");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B; enter C; tick C");
  STEP(ag, 1, F, "tick A; tick B; exit B failure; abort A; abort C");
  assert_string_equal(states(ag), "FAFA");
  bonsai_agent_free(ag);
}

static void parallel_success_one(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "RS");
  ag = start("parallel{success=one}(A, B)");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B");
  STEP(ag, 1, S, "tick A; tick B; exit B success; abort A");
  assert_string_equal(states(ag), "SAS");
  bonsai_agent_free(ag);
}

/* Stops as soon as a policy is met: later children are not even entered. */
static void parallel_stops_early(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  ag = start("parallel{success=one}(A, B)");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  assert_string_equal(states(ag), "SS.");
  bonsai_agent_free(ag);
}

static void parallel_success_count(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  leaf("B", "R");
  leaf("C", "S");
  ag = start("parallel{success=2}(A, B, C)");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B; enter C; tick C; "
                 "exit C success");
  STEP(ag, 1, S, "tick A; exit A success; abort B");
  assert_string_equal(states(ag), "SSAS");
  bonsai_agent_free(ag);
}

static void parallel_failure_count(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "R");
  leaf("C", "F");
  ag = start("parallel{failure=2}(A, B, C)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure; enter B; tick B; "
                 "enter C; tick C; exit C failure; abort B");
  assert_string_equal(states(ag), "FFAF");
  bonsai_agent_free(ag);
}

/* Every child finished and neither policy was met: failure. */
static void parallel_no_policy_met(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "S");
  ag = start("parallel{success=all, failure=all}(A, B)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B success");
  bonsai_agent_free(ag);
}

static void parallel_success_one_failure_all(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "RRS");
  ag = start("parallel{success=one, failure=all}(A, B)");
  STEP(ag, 1, R, "enter A; tick A; exit A failure; enter B; tick B");
  STEP(ag, 1, R, "tick B");
  STEP(ag, 1, S, "tick B; exit B success");
  bonsai_agent_free(ag);
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

/* {====== filter and monitor */

static void filter_like(const char *kind) {
  char spec[128];
  bonsai_agent *ag;
  leaf("C", "SSF");
  leaf("D", "F");
  leaf("E", "S");
  leaf("A", "R");
  leaf("B", "RF");
  leaf("C1", "S");
  leaf("C2", "SF");
  leaf("G", "R");
  /* the condition fails while the child runs: child aborted, failure */
  snprintf(spec, sizeof spec, "%s(?C, A)", kind);
  ag = start(spec);
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; tick A");
  STEP(ag, 1, F, "tick C; abort A");
  assert_string_equal(states(ag), "FFA");
  bonsai_agent_free(ag);
  /* the condition fails first: the child never starts */
  snprintf(spec, sizeof spec, "%s(?D, A)", kind);
  ag = start(spec);
  STEP(ag, 1, F, "tick D");
  assert_string_equal(states(ag), "FF.");
  bonsai_agent_free(ag);
  /* the child's own result passes through */
  snprintf(spec, sizeof spec, "%s(?E, B)", kind);
  ag = start(spec);
  STEP(ag, 1, R, "tick E; enter B; tick B");
  STEP(ag, 1, F, "tick E; tick B; exit B failure");
  bonsai_agent_free(ag);
  /* several conditions, in order, every tick */
  snprintf(spec, sizeof spec, "%s(?C1, ?C2, G)", kind);
  ag = start(spec);
  STEP(ag, 1, R, "tick C1; tick C2; enter G; tick G");
  STEP(ag, 1, F, "tick C1; tick C2; abort G");
  assert_string_equal(states(ag), "FSFA");
  bonsai_agent_free(ag);
}

static void filter_conditions(void **state) {
  (void)state;
  filter_like("filter");
}

static void monitor_conditions(void **state) {
  (void)state;
  filter_like("monitor");
}

/* A blackboard check as the condition: the child runs until the key
** changes. */
static void filter_on_blackboard(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("filter(check{key=alarm, op='~=', value=1}, A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, R, "tick A");
  set_number(ag, "alarm", 1);
  STEP(ag, 1, F, "abort A");
  bonsai_agent_free(ag);
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

/* {====== save and restore */

/* A utility selector's running child is saved by name: restored into a
** version with a child inserted before it, it goes on, and is the one
** aborted when a higher child runs. A waiting delay keeps its start. */
static void save_new_kinds(void **state) {
  static const char *const before[] = {"A", "SEQ"};
  static const char *const after[] = {"N", "A", "SEQ"};
  double un = -1, ua = 0, us = 1, *u[3];
  bonsai_agent *ag, *bg;
  Saved b = {NULL, 0};
  (void)state;
  leaf("N", "R");
  leaf("A", "R");
  leaf("S1", "R");
  u[0] = &ua, u[1] = &us;
  ag = utility_agent(before, u, 2);
  STEP(ag, 1, R, "enter S1; tick S1");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &b), BONSAI_OK);
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
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  bg = start("sequence(delay{seconds=2}(A))");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  STEP(bg, 1, R, "");
  STEP(bg, 1, R, "enter A; tick A"); /* 2 s after its start at time 1 */
  bonsai_agent_free(bg);
  free(b.p);
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
    set_number(ag, "seed", seed);
    set_number(twin, "seed", seed);
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
  set_number(ag, "seed", 3);
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
      T(sequence_all_succeed),
      T(sequence_stops_at_failure),
      T(sequence_memory),
      T(selector_first_success),
      T(selector_all_fail),
      T(selector_memory),
      T(reactive_sequence_condition_fails),
      T(reactive_sequence_earlier_child_runs),
      T(reactive_sequence_succeeds),
      T(reactive_keeps_inner_memory),
      T(reactive_selector_higher_runs),
      T(reactive_selector_higher_succeeds),
      T(reactive_selector_all_fail),
      T(parallel_defaults_success_all),
      T(parallel_defaults_failure_one),
      T(parallel_success_one),
      T(parallel_stops_early),
      T(parallel_success_count),
      T(parallel_failure_count),
      T(parallel_no_policy_met),
      T(parallel_success_one_failure_all),
      T(keep_running_until_failure),
      T(keep_running_until_failure_aborts),
      T(keep_running_until_failure_leaf_error),
      T(parallel_wait_finishes_all),
      T(parallel_wait_policies),
      T(parallel_wait_aborted),
      T(parallel_wait_errors),
      T(filter_conditions),
      T(monitor_conditions),
      T(filter_on_blackboard),
      T(utility_order),
      T(utility_reactive),
      T(utility_errors),
      T(utility_definition_errors),
      T(save_new_kinds),
      T(if_then_else_branches),
      T(if_then_else_no_else),
      T(if_then_else_resumes_and_aborts),
      T(if_then_else_definition_errors),
      T(while_do_else_switches),
      T(while_do_else_no_else),
      T(while_do_else_aborted),
      T(random_selector_orders),
      T(random_selector_resumes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
