/*
** test_aborts.c: the ways a running node is cut off from outside its
** parent, through the public C API, tick by tick: the priority section,
** aborts through nested nodes, bonsai_agent_abort and bonsai_agent_reset,
** and the agent's clock.
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

/* {====== the priority section */

static void priority_preempts_root(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("Danger", "FFSSF");
  leaf("Flee", "R");
  leaf("Patrol", "R");
  ag = start("priority(filter(?Danger, Flee), Patrol)");
  STEP(ag, 1, R, "tick Danger; enter Patrol; tick Patrol");
  assert_string_equal(running_paths(ag), "Patrol");
  STEP(ag, 1, R, "tick Danger; tick Patrol");
  STEP(ag, 1, R, "tick Danger; enter Flee; tick Flee; abort Patrol");
  assert_string_equal(states(ag), "RRSRA");
  assert_string_equal(running_paths(ag), "priority[1], priority[1]/Flee");
  STEP(ag, 1, R, "tick Danger; tick Flee"); /* the root cannot interrupt */
  STEP(ag, 1, R, "tick Danger; abort Flee; enter Patrol; tick Patrol");
  assert_string_equal(states(ag), "RFFAR");
  bonsai_agent_free(ag);
}

/* A higher branch aborts a lower running branch; the status of the branch
** that ran is the tick's status. */
static void priority_branches(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("Hi", "FS");
  leaf("Mid", "S");
  leaf("H", "S");
  leaf("M", "R");
  leaf("W", "R");
  ag = start("priority(filter(?Hi, H), filter(?Mid, M), sequence(W))");
  STEP(ag, 1, R, "tick Hi; tick Mid; enter M; tick M");
  assert_string_equal(running_paths(ag), "priority[2], priority[2]/M");
  STEP(ag, 1, S, "tick Hi; enter H; tick H; exit H success; abort M");
  assert_int_equal(bonsai_agent_status(ag), S);
  assert_string_equal(states(ag), "SSSSASA..");
  bonsai_agent_free(ag);
}

static void priority_root_result(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("No", "F");
  leaf("X", "R");
  leaf("A", "SF");
  ag = start("priority(filter(?No, X), A)");
  STEP(ag, 1, S, "tick No; enter A; tick A; exit A success");
  STEP(ag, 1, F, "tick No; enter A; tick A; exit A failure");
  bonsai_agent_free(ag);
}


/* A memory sequence cut off by its reactive parent starts over. */
static void aborted_sequence_starts_over(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SFS");
  leaf("A", "S");
  leaf("B", "R");
  ag = start("reactive_sequence(?C, sequence(A, B))");
  STEP(ag, 1, R, "tick C; enter A; tick A; exit A success; enter B; tick B");
  STEP(ag, 1, F, "tick C; abort B");
  assert_string_equal(states(ag), "FFASA");
  STEP(ag, 1, R, "tick C; enter A; tick A; exit A success; enter B; tick B");
  bonsai_agent_free(ag);
}

/* A reactive node cuts off a whole parallel: its branches in order. */
static void reactive_aborts_parallel(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FS");
  leaf("Hi", "R");
  leaf("P", "R");
  leaf("Q", "R");
  ag = start("reactive_selector(reactive_sequence(?C, Hi), "
             "parallel(sequence(P), Q))");
  STEP(ag, 1, R, "tick C; enter P; tick P; enter Q; tick Q");
  STEP(ag, 1, R, "tick C; enter Hi; tick Hi; abort P; abort Q");
  assert_string_equal(states(ag), "RRSRAAAA");
  bonsai_agent_free(ag);
}

/* A parallel meeting its policy cuts off a running subtree, deepest
** first. */
static void parallel_aborts_subtree(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "RS");
  ag = start("parallel{success=one}(sequence(A, B), C)");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B; "
                 "enter C; tick C");
  STEP(ag, 1, S, "tick B; tick C; exit C success; abort B");
  assert_string_equal(states(ag), "SASAS");
  bonsai_agent_free(ag);
}

/* Nested parallels abort depth first, branches in child order. */
static void abort_nested_parallels(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "R");
  leaf("C", "R");
  leaf("D", "R");
  ag = start("parallel(parallel(A, invert(B)), C, parallel(D))");
  STEP(ag, 1, R, "enter A; tick A; enter B; tick B; enter C; tick C; "
                 "enter D; tick D");
  assert_string_equal(running_paths(ag), "parallel, parallel/parallel[1], "
                                   "parallel/parallel[1]/A, "
                                   "parallel/parallel[1]/invert[2], "
                                   "parallel/parallel[1]/invert[2]/B, "
                                   "parallel/C, parallel/parallel[3], "
                                   "parallel/parallel[3]/D");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A; abort B; abort C; abort D");
  assert_string_equal(states(ag), "AAAAAAAA");
  bonsai_agent_free(ag);
}

/* A preempted root starts over when it runs again. */
static void priority_root_starts_over(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FSF");
  leaf("X", "R");
  leaf("A", "S");
  leaf("B", "R");
  ag = start("priority(filter(?C, X), sequence(A, B))");
  STEP(ag, 1, R, "tick C; enter A; tick A; exit A success; enter B; tick B");
  STEP(ag, 1, R, "tick C; enter X; tick X; abort B");
  STEP(ag, 1, R, "tick C; abort X; enter A; tick A; exit A success; "
                 "enter B; tick B");
  bonsai_agent_free(ag);
}

/* A branch whose conditions passed runs instead of the root, whatever its
** child returns: a failing child fails the tick, the root is not tried. */
static void priority_branch_fails(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SSF");
  leaf("X", "RF");
  leaf("Root", "R");
  ag = start("priority(filter(?C, X), Root)");
  STEP(ag, 1, R, "tick C; enter X; tick X");
  STEP(ag, 1, F, "tick C; tick X; exit X failure");
  assert_string_equal(states(ag), "FFSF.");
  assert_string_equal(running_paths(ag), "");
  /* conditions that fail give way to the root */
  STEP(ag, 1, R, "tick C; enter Root; tick Root");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== bonsai_agent_abort and bonsai_agent_reset */

/* Deepest first; sibling branches of a parallel in child order. */
static void abort_deepest_first(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  leaf("D", "R");
  ag = start("parallel(sequence(A, B), invert(C), D)");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B; "
                 "enter C; tick C; enter D; tick D");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort B; abort C; abort D");
  assert_string_equal(states(ag), "AASAAAA");
  assert_int_equal(bonsai_agent_status(ag), A);
  assert_string_equal(running_paths(ag), "");
  /* nothing runs: a second abort does nothing */
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  /* the next tick starts from the root */
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B; "
                 "enter C; tick C; enter D; tick D");
  bonsai_agent_free(ag);
}

/* A leaf without BONSAI_LEAF_ABORT gets EXIT with status aborted; a leaf
** with neither gets nothing. */
static void abort_without_abort_callback(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf_flags("X", "R", BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT);
  leaf_flags("Y", "R", 0);
  leaf_flags("Z", "R", BONSAI_LEAF_ABORT);
  ag = start("parallel(X, Y, Z)");
  STEP(ag, 1, R, "enter X; tick X; tick Y; tick Z");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "exit X aborted; abort Z");
  assert_string_equal(states(ag), "AAAA");
  bonsai_agent_free(ag);
}

/* Every way a running leaf can be cut off, with an EXIT-only leaf. */
static void exit_aborted_everywhere(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SF");
  leaf_flags("X", "R", BONSAI_LEAF_EXIT);
  ag = start("reactive_sequence(?C, X)");
  STEP(ag, 1, R, "tick C; tick X");
  STEP(ag, 1, F, "tick C; exit X aborted");
  bonsai_agent_free(ag);
  ag = start("timeout{seconds=1}(X)");
  STEP(ag, 1, R, "tick X");
  STEP(ag, 1, F, "exit X aborted");
  bonsai_agent_free(ag);
}

static void reset_clears_state(void **state) {
  bonsai_agent *ag;
  bonsai_value v;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  ag = start("parallel(limit{times=1}(A), B)");
  set_number(ag, "kept", 7);
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort B");
  assert_string_equal(states(ag), "....");
  assert_int_equal(bonsai_agent_status(ag), BONSAI_IDLE);
  assert_true(bonsai_agent_time(ag) == 1); /* the clock is kept */
  v = bonsai_bb_get(bonsai_agent_bb(ag), bonsai_key(env, "kept", 4));
  assert_int_equal(v.type, BONSAI_TNUMBER); /* and the blackboard */
  assert_true(v.u.n == 7);
  /* the limit counts from zero again */
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  bonsai_agent_free(ag);
}

static void reset_clears_counters(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "F");
  ag = start("limit{times=1}(A)");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, F, "");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
  ag = start("cooldown{seconds=10}(A)");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, F, "");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
  ag = start("run_once(B)");
  STEP(ag, 1, F, "enter B; tick B; exit B failure");
  STEP(ag, 1, F, "");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  STEP(ag, 1, F, "enter B; tick B; exit B failure");
  bonsai_agent_free(ag);
}

static void reset_restarts_timers(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("timeout{seconds=2}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, R, "tick A");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  STEP(ag, 1, R, "enter A; tick A"); /* time 3: a new timer */
  STEP(ag, 1, R, "tick A");
  STEP(ag, 1, F, "abort A");
  bonsai_agent_free(ag);
}

static void agent_clock_sums_dt(void **state) {
  bonsai_agent *ag;
  (void)state;
  ag = start("wait{seconds=100}");
  assert_true(bonsai_agent_time(ag) == 0);
  bonsai_agent_tick(ag, 0.5);
  bonsai_agent_tick(ag, 0.25);
  bonsai_agent_tick(ag, 0);
  assert_true(bonsai_agent_time(ag) == 0.75);
  bonsai_agent_free(ag);
}

/* }====== */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(priority_preempts_root),
      T(priority_branches),
      T(priority_root_result),
      T(aborted_sequence_starts_over),
      T(reactive_aborts_parallel),
      T(parallel_aborts_subtree),
      T(abort_nested_parallels),
      T(priority_root_starts_over),
      T(priority_branch_fails),
      T(abort_deepest_first),
      T(abort_without_abort_callback),
      T(exit_aborted_everywhere),
      T(reset_clears_state),
      T(reset_clears_counters),
      T(reset_restarts_timers),
      T(agent_clock_sums_dt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
