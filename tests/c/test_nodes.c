/*
** test_nodes.c: every node kind through the public C API, tick by tick:
** statuses and the exact order of enter/tick/exit/abort events, including
** every way a running node can be cut off (reactive nodes, parallel
** policies, filters and monitors, guards, timers, the priority section,
** bonsai_agent_abort and bonsai_agent_reset).
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

/* Paths of the running nodes, outermost first, joined by ", ". */
static const char *running(const bonsai_agent *ag) {
  static char buf[512];
  unsigned nodes[32], k, n = bonsai_agent_running(ag, nodes, 32);
  size_t at = 0;
  buf[0] = '\0';
  for (k = 0; k < n && k < 32; k++) {
    char path[128];
    bonsai_tree_node_path(bonsai_agent_tree(ag), nodes[k], path, sizeof path);
    at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", k ? ", " : "",
                           path);
  }
  return buf;
}

/* {====== leaves */

static void action_events(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RRS");
  ag = start("A");
  assert_int_equal(bonsai_agent_status(ag), BONSAI_IDLE);
  assert_string_equal(states(ag), ".");
  STEP(ag, 1, R, "enter A; tick A");
  assert_string_equal(states(ag), "R");
  STEP(ag, 1, R, "tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  assert_string_equal(states(ag), "S");
  assert_int_equal(bonsai_agent_status(ag), S);
  STEP(ag, 1, S, "enter A; tick A; exit A success"); /* a new run */
  bonsai_agent_free(ag);
}

static void action_failure(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  ag = start("A");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  assert_string_equal(states(ag), "F");
  bonsai_agent_free(ag);
}

/* A leaf gets only the events it asked for. */
static void action_flags(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf_flags("T", "RS", 0);
  leaf_flags("N", "S", BONSAI_LEAF_ENTER);
  leaf_flags("X", "S", BONSAI_LEAF_EXIT);
  ag = start("sequence(T, N, X)");
  STEP(ag, 1, R, "tick T");
  STEP(ag, 1, S, "tick T; enter N; tick N; tick X; exit X success");
  bonsai_agent_free(ag);
}

/* A condition is ticked only: no enter or exit, even if registered. */
static void condition_ticks_only(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SF");
  ag = start("?C");
  STEP(ag, 1, S, "tick C");
  assert_string_equal(states(ag), "S");
  STEP(ag, 1, F, "tick C");
  assert_string_equal(states(ag), "F");
  bonsai_agent_free(ag);
}

static void wait_counts_agent_time(void **state) {
  bonsai_agent *ag;
  (void)state;
  ag = start("wait{seconds=2}");
  STEP(ag, 1, R, ""); /* starts at time 1 */
  STEP(ag, 1, R, "");
  assert_string_equal(states(ag), "R");
  STEP(ag, 1, S, ""); /* time 3: 2 seconds have passed */
  assert_true(bonsai_agent_time(ag) == 3);
  STEP(ag, 1, R, ""); /* a new wait */
  bonsai_agent_free(ag);
}

static void wait_fractional_dt(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  ag = start("sequence(wait{seconds=1.5}, A)");
  STEP(ag, 0.5, R, "");
  STEP(ag, 0.5, R, "");
  STEP(ag, 0.5, R, "");
  STEP(ag, 0.5, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
  ag = start("wait{seconds=0}");
  STEP(ag, 0, S, "");
  bonsai_agent_free(ag);
}

/* An aborted wait starts over. */
static void wait_aborted_restarts(void **state) {
  bonsai_agent *ag;
  (void)state;
  ag = start("wait{seconds=2}");
  STEP(ag, 1, R, "");
  STEP(ag, 1, R, "");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(states(ag), "A");
  STEP(ag, 1, R, ""); /* starts again at time 3 */
  STEP(ag, 1, R, "");
  STEP(ag, 1, S, "");
  bonsai_agent_free(ag);
}

static void set_number(bonsai_agent *ag, const char *key, double v) {
  bonsai_value val;
  val.type = BONSAI_TNUMBER;
  val.u.n = v;
  assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag),
                                 bonsai_key(env, key, strlen(key)), val),
                   BONSAI_OK);
}

static void check_and_is_set(void **state) {
  bonsai_agent *ag;
  (void)state;
  ag = start("check{key=hp, op='<', value=10}");
  set_number(ag, "hp", 5);
  STEP(ag, 1, S, "");
  set_number(ag, "hp", 20);
  STEP(ag, 1, F, "");
  assert_string_equal(states(ag), "F");
  bonsai_agent_free(ag);
  ag = start("is_set{key=target}");
  STEP(ag, 1, F, "");
  set_number(ag, "target", 0);
  STEP(ag, 1, S, "");
  bonsai_agent_free(ag);
}

/* }====== */

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
  assert_string_equal(running(ag), "reactive_sequence, reactive_sequence/A");
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

/* {====== simple decorators */

static void invert_node(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  leaf("B", "F");
  ag = start("invert(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, F, "tick A; exit A success");
  assert_string_equal(states(ag), "FS");
  bonsai_agent_free(ag);
  ag = start("invert(B)");
  STEP(ag, 1, S, "enter B; tick B; exit B failure");
  bonsai_agent_free(ag);
}

static void force_nodes(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RF");
  leaf("B", "RS");
  ag = start("force_success(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A failure");
  assert_string_equal(states(ag), "SF");
  bonsai_agent_free(ag);
  ag = start("force_failure(B)");
  STEP(ag, 1, R, "enter B; tick B");
  STEP(ag, 1, F, "tick B; exit B success");
  assert_string_equal(states(ag), "FS");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== repeater, retry, repeat_until_failure */

/* A child that finishes at once is ticked again within the same tick. */
static void repeater_times(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  ag = start("repeater{times=3}(A)");
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter A; tick A; "
                 "exit A success; enter A; tick A; exit A success");
  assert_string_equal(states(ag), "SS");
  /* a new run counts from zero */
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter A; tick A; "
                 "exit A success; enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

static void repeater_running_child(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RSRS");
  ag = start("repeater{times=2}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, R, "tick A; exit A success; enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  bonsai_agent_free(ag);
}

static void repeater_child_fails(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "SF");
  ag = start("repeater{times=3}(A)");
  STEP(ag, 1, F, "enter A; tick A; exit A success; enter A; tick A; "
                 "exit A failure");
  assert_string_equal(states(ag), "FF");
  bonsai_agent_free(ag);
}

/* Forever: at most one immediate run per tick. */
static void repeater_forever(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "RSS");
  leaf("C", "SF");
  ag = start("repeater(A)");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  assert_string_equal(states(ag), "RS");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
  ag = start("repeater{times=0}(B)");
  STEP(ag, 1, R, "enter B; tick B");
  /* the run that ends here started earlier: one more run starts at once */
  STEP(ag, 1, R, "tick B; exit B success; enter B; tick B; exit B success");
  STEP(ag, 1, R, "enter B; tick B; exit B success");
  bonsai_agent_free(ag);
  ag = start("repeater(C)");
  STEP(ag, 1, R, "enter C; tick C; exit C success");
  STEP(ag, 1, F, "enter C; tick C; exit C failure");
  bonsai_agent_free(ag);
}

static void retry_times(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "F");
  leaf("B", "FS");
  leaf("C", "RFRF");
  ag = start("retry{times=3}(A)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure; enter A; tick A; "
                 "exit A failure; enter A; tick A; exit A failure");
  bonsai_agent_free(ag);
  ag = start("retry{times=3}(B)");
  STEP(ag, 1, S, "enter B; tick B; exit B failure; enter B; tick B; "
                 "exit B success");
  bonsai_agent_free(ag);
  ag = start("retry{times=2}(C)");
  STEP(ag, 1, R, "enter C; tick C");
  STEP(ag, 1, R, "tick C; exit C failure; enter C; tick C");
  STEP(ag, 1, F, "tick C; exit C failure");
  bonsai_agent_free(ag);
}

static void retry_forever(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "FFS");
  ag = start("retry(A)");
  STEP(ag, 1, R, "enter A; tick A; exit A failure");
  STEP(ag, 1, R, "enter A; tick A; exit A failure");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

static void repeat_until_failure_node(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "SSF");
  leaf("B", "RSF");
  leaf("C", "RSS");
  ag = start("repeat_until_failure(A)");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  STEP(ag, 1, R, "enter A; tick A; exit A success");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  assert_string_equal(states(ag), "FF");
  bonsai_agent_free(ag);
  ag = start("repeat_until_failure(B)");
  STEP(ag, 1, R, "enter B; tick B");
  STEP(ag, 1, F, "tick B; exit B success; enter B; tick B; exit B failure");
  bonsai_agent_free(ag);
  ag = start("repeat_until_failure(C)");
  STEP(ag, 1, R, "enter C; tick C");
  STEP(ag, 1, R, "tick C; exit C success; enter C; tick C; exit C success");
  STEP(ag, 1, R, "enter C; tick C; exit C success");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== timers */

static void timeout_aborts(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("timeout{seconds=2}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, R, "tick A");
  STEP(ag, 1, F, "abort A");
  assert_string_equal(states(ag), "FA");
  STEP(ag, 1, R, "enter A; tick A"); /* a new run, a new timer */
  STEP(ag, 1, R, "tick A");
  STEP(ag, 1, F, "abort A");
  bonsai_agent_free(ag);
}

static void timeout_child_in_time(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RSF");
  ag = start("timeout{seconds=2}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  bonsai_agent_free(ag);
}

/* The timer counts from the tick that started the node, whatever the dt. */
static void timeout_uneven_dt(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("timeout{seconds=2}(A)");
  STEP(ag, 5, R, "enter A; tick A");
  STEP(ag, 1.5, R, "tick A");
  STEP(ag, 0.25, R, "tick A");
  STEP(ag, 0.25, F, "abort A");
  bonsai_agent_free(ag);
}

/* A timeout cuts off a whole subtree, deepest first, branches in order. */
static void timeout_aborts_subtree(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  ag = start("timeout{seconds=1}(sequence(A, parallel(B, C)))");
  STEP(ag, 1, R, "enter A; tick A; exit A success; enter B; tick B; "
                 "enter C; tick C");
  STEP(ag, 1, F, "abort B; abort C");
  assert_string_equal(states(ag), "FASAAA");
  bonsai_agent_free(ag);
}

static void time_limit_succeeds(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "F");
  ag = start("time_limit{seconds=2}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, R, "tick A");
  STEP(ag, 1, S, "abort A");
  assert_string_equal(states(ag), "SA");
  bonsai_agent_free(ag);
  ag = start("time_limit{seconds=2}(B)");
  STEP(ag, 1, F, "enter B; tick B; exit B failure");
  bonsai_agent_free(ag);
}

static void limit_runs(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "RS");
  leaf("C", "R");
  ag = start("limit{times=2}(A)");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, F, "");
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
  /* one run over several ticks counts once */
  ag = start("limit{times=1}(B)");
  STEP(ag, 1, R, "enter B; tick B");
  STEP(ag, 1, S, "tick B; exit B success");
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
  /* an aborted run counts */
  ag = start("limit{times=1}(C)");
  STEP(ag, 1, R, "enter C; tick C");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort C");
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
  ag = start("limit{times=0}(A)");
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
}

static void cooldown_after_finish(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "RRS");
  leaf("C", "F");
  ag = start("cooldown{seconds=2}(A)");
  STEP(ag, 1, S, "enter A; tick A; exit A success"); /* time 1 */
  STEP(ag, 1, F, "");                                /* time 2 */
  STEP(ag, 1, S, "enter A; tick A; exit A success"); /* time 3 */
  bonsai_agent_free(ag);
  /* the cooldown counts from when the child finished */
  ag = start("cooldown{seconds=2}(B)");
  STEP(ag, 1, R, "enter B; tick B");
  STEP(ag, 1, R, "tick B");
  STEP(ag, 1, S, "tick B; exit B success"); /* time 3 */
  STEP(ag, 1, F, "");
  STEP(ag, 1, S, "enter B; tick B; exit B success"); /* time 5 */
  bonsai_agent_free(ag);
  /* a failure starts it too */
  ag = start("cooldown{seconds=2}(C)");
  STEP(ag, 1, F, "enter C; tick C; exit C failure");
  STEP(ag, 1, F, "");
  STEP(ag, 1, F, "enter C; tick C; exit C failure");
  bonsai_agent_free(ag);
}

/* An aborted run does not start the cooldown. */
static void cooldown_not_on_abort(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("cooldown{seconds=5}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_string_equal(states(ag), "AA");
  STEP(ag, 1, R, "enter A; tick A");
  bonsai_agent_free(ag);
}

static void run_once_node(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "FS");
  leaf("B", "RS");
  leaf("C", "R");
  ag = start("run_once(A)");
  STEP(ag, 1, F, "enter A; tick A; exit A failure");
  STEP(ag, 1, F, "");
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
  ag = start("run_once(B)");
  STEP(ag, 1, R, "enter B; tick B");
  STEP(ag, 1, S, "tick B; exit B success");
  STEP(ag, 1, S, "");
  bonsai_agent_free(ag);
  /* an aborted run is not its final status */
  ag = start("run_once(C)");
  STEP(ag, 1, R, "enter C; tick C");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort C");
  STEP(ag, 1, R, "enter C; tick C");
  bonsai_agent_free(ag);
}

/* }====== */


/* {====== guards */

static void set_value(bonsai_bb *bb, const char *key, double v) {
  bonsai_value val;
  val.type = BONSAI_TNUMBER;
  val.u.n = v;
  assert_int_equal(bonsai_bb_set(bb, bonsai_key(env, key, strlen(key)), val),
                   BONSAI_OK);
}

/* "none" (the default) decides only whether the child starts. */
static void guard_none(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("guard(check{key=x, op='==', value=1}, A)");
  STEP(ag, 1, F, "");
  assert_string_equal(states(ag), "FF.");
  set_number(ag, "x", 1);
  STEP(ag, 1, R, "enter A; tick A");
  assert_string_equal(states(ag), "RSR");
  assert_string_equal(running(ag), "guard, guard/A");
  set_number(ag, "x", 0);
  STEP(ag, 1, R, "tick A"); /* not interrupted */
  bonsai_agent_free(ag);
  leaf("B", "R");
  ag = start("selector(guard{abort=none}(check{key=x, op='==', value=1}, A), "
             "B)");
  STEP(ag, 1, R, "enter B; tick B");
  set_number(ag, "x", 1);
  STEP(ag, 1, R, "tick B"); /* does not preempt either */
  bonsai_agent_free(ag);
}

/* "self": the running child is aborted when the condition turns false. */
static void guard_self(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("guard{abort=self}(check{key=x, op='==', value=1}, A)");
  set_number(ag, "x", 1);
  STEP(ag, 1, R, "enter A; tick A");
  set_number(ag, "other", 1); /* another key: nothing happens */
  STEP(ag, 1, R, "tick A");
  set_number(ag, "x", 2);
  set_number(ag, "x", 1); /* changed, but true again by the tick */
  STEP(ag, 1, R, "tick A");
  set_number(ag, "x", 2);
  STEP(ag, 1, F, "abort A");
  assert_string_equal(states(ag), "FFA");
  STEP(ag, 1, F, "");
  set_number(ag, "x", 1);
  STEP(ag, 1, R, "enter A; tick A");
  bonsai_agent_free(ag);
}

/* A guard cut off under a parallel fails it like any failing child. */
static void guard_self_in_parallel(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("C", "R");
  ag = start("parallel(guard{abort=self}(is_set{key=target}, A), C)");
  set_number(ag, "target", 0);
  STEP(ag, 1, R, "enter A; tick A; enter C; tick C");
  {
    bonsai_value nil;
    memset(&nil, 0, sizeof nil);
    nil.type = BONSAI_TNIL;
    assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag),
                                   bonsai_key(env, "target", 6), nil),
                     BONSAI_OK);
  }
  STEP(ag, 1, F, "abort A; abort C");
  assert_string_equal(states(ag), "FFFAA");
  bonsai_agent_free(ag);
}

/* "lower": when the condition turns true, a running lower sibling is
** aborted and the guarded branch runs; "both" also aborts its own child. */
static void guard_lower_and_both(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "R");
  ag = start("selector(guard{abort=lower}(check{key=x, op='==', value=1}, "
             "A), B)");
  STEP(ag, 1, R, "enter B; tick B");
  assert_string_equal(states(ag), "RFF.R");
  set_number(ag, "x", 1);
  STEP(ag, 1, R, "abort B; enter A; tick A");
  assert_string_equal(states(ag), "RRSRA");
  set_number(ag, "x", 0);
  STEP(ag, 1, R, "tick A"); /* "lower" does not cut off its own child */
  bonsai_agent_free(ag);
  ag = start("selector(guard{abort=both}(check{key=x, op='==', value=1}, "
             "A), B)");
  STEP(ag, 1, R, "enter B; tick B");
  set_number(ag, "x", 1);
  STEP(ag, 1, R, "abort B; enter A; tick A");
  set_number(ag, "x", 0);
  STEP(ag, 1, R, "abort A; enter B; tick B");
  assert_string_equal(states(ag), "RFFAR");
  bonsai_agent_free(ag);
}

static void guard_lower_reactive(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "R");
  ag = start("reactive_selector(guard{abort=lower}(check{key=x, op='>', "
             "value='$y'}, A), B)");
  set_number(ag, "x", 1);
  set_number(ag, "y", 2);
  STEP(ag, 1, R, "enter B; tick B");
  set_number(ag, "y", 0); /* the referenced key changes */
  STEP(ag, 1, R, "abort B; enter A; tick A");
  bonsai_agent_free(ag);
}

/* A change in a parent blackboard wakes the guard too. */
static void guard_parent_blackboard(void **state) {
  bonsai_bb *parent = bonsai_bb_new(env, NULL);
  bonsai_bb *child = bonsai_bb_new(env, parent);
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  assert_int_equal(
      trace_def(d, "guard{abort=self}(check{key=x, op='==', value=1}, A)"), 0);
  assert_int_equal(bonsai_tree_new(d, "t", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, child, NULL);
  bonsai_tree_release(t);
  set_value(parent, "x", 1);
  STEP(ag, 1, R, "enter A; tick A");
  set_value(parent, "x", 0);
  STEP(ag, 1, F, "abort A");
  bonsai_agent_free(ag);
  bonsai_bb_release(child);
  bonsai_bb_release(parent);
}

/* }====== */

/* {====== the priority section */

static void priority_preempts_root(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("Danger", "FFSSF");
  leaf("Flee", "R");
  leaf("Patrol", "R");
  ag = start("priority(filter(?Danger, Flee), Patrol)");
  STEP(ag, 1, R, "tick Danger; enter Patrol; tick Patrol");
  assert_string_equal(running(ag), "Patrol");
  STEP(ag, 1, R, "tick Danger; tick Patrol");
  STEP(ag, 1, R, "tick Danger; enter Flee; tick Flee; abort Patrol");
  assert_string_equal(states(ag), "RRSRA");
  assert_string_equal(running(ag), "priority[1], priority[1]/Flee");
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
  assert_string_equal(running(ag), "priority[2], priority[2]/M");
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
  assert_string_equal(running(ag), "parallel, parallel/parallel[1], "
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
  assert_string_equal(running(ag), "");
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
  assert_string_equal(running(ag), "");
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
      T(action_events),
      T(action_failure),
      T(action_flags),
      T(condition_ticks_only),
      T(wait_counts_agent_time),
      T(wait_fractional_dt),
      T(wait_aborted_restarts),
      T(check_and_is_set),
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
      T(filter_conditions),
      T(monitor_conditions),
      T(filter_on_blackboard),
      T(invert_node),
      T(force_nodes),
      T(repeater_times),
      T(repeater_running_child),
      T(repeater_child_fails),
      T(repeater_forever),
      T(retry_times),
      T(retry_forever),
      T(repeat_until_failure_node),
      T(timeout_aborts),
      T(timeout_child_in_time),
      T(timeout_uneven_dt),
      T(timeout_aborts_subtree),
      T(time_limit_succeeds),
      T(limit_runs),
      T(cooldown_after_finish),
      T(cooldown_not_on_abort),
      T(run_once_node),
      T(guard_none),
      T(guard_self),
      T(guard_self_in_parallel),
      T(guard_lower_and_both),
      T(guard_lower_reactive),
      T(guard_parent_blackboard),
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
