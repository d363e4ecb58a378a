/*
** test_decorators.c: the decorators through the public C API, tick by
** tick: statuses and the exact order of enter/tick/exit/abort events:
** invert and force, repeater, retry, repeat_until_failure, the timers
** (timeout, time_limit, limit, cooldown, run_once, delay), guards,
** subtree, skip_unless_updated, wait_value_update.
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
  assert_string_equal(running_paths(ag), "guard, guard/A");
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

/* {====== skip_unless_updated */

/* Sets blackboard key 'name' of ag to the number x. */
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
  set_number(ag, "k", 1);
  STEP(ag, 1, R, "enter A; tick A");
  set_number(ag, "k", 2); /* while the child runs: it goes on */
  STEP(ag, 1, S, "tick A; exit A success; enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SSSS");
  set_number(ag, "k", 2);
  STEP(ag, 1, S, "enter A; tick A; exit A success; enter B; tick B; "
                 "exit B success"); /* 2 was set while the child ran */
  set_number(ag, "k", 2);
  STEP(ag, 1, S, "enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SKSS");
  set_number(ag, "k", 3);
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
  Saved b = {NULL, 0};
  (void)state;
  leaf("A", "S");
  ag = start("skip_unless_updated{key=k}(A)");
  set_number(ag, "k", 1);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &b), BONSAI_OK);
  bg = start("skip_unless_updated{key=k}(A)");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  STEP(bg, 1, BONSAI_SKIPPED, ""); /* it had seen k = 1 */
  bonsai_agent_free(bg);
  set_number(ag, "k", 2); /* a change it has not seen yet */
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  bg = start("skip_unless_updated{key=k}(A)");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  STEP(bg, 1, S, "enter A; tick A; exit A success");
  STEP(bg, 1, BONSAI_SKIPPED, "");
  bonsai_agent_free(bg);
  free(b.p);
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
  set_number(ag, "k", 1);
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  STEP(ag, 1, R, "");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  assert_string_equal(states(ag), "AS");
  set_number(ag, "k", 1);
  STEP(ag, 1, R, ""); /* the same value again is no change */
  set_number(ag, "k", 2);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
}

/* Under a reactive selector, a higher child that succeeds cuts the waiting
** node off; restored from a save while waiting, it still waits. */
static void wait_value_update_cut_off_and_saved(void **state) {
  bonsai_agent *ag, *bg;
  Saved b = {NULL, 0};
  (void)state;
  leaf("C", "FFS");
  leaf("A", "S");
  ag = start("reactive_selector(C, wait_value_update{key=k}(A))");
  set_number(ag, "k", 1);
  STEP(ag, 1, S, "enter C; tick C; exit C failure; enter A; tick A; "
                 "exit A success");
  STEP(ag, 1, R, "enter C; tick C; exit C failure");
  assert_string_equal(states(ag), "RFRS");
  STEP(ag, 1, S, "enter C; tick C; exit C success");
  assert_string_equal(states(ag), "SSAS");
  bonsai_agent_free(ag);
  ag = start("sequence(wait_value_update{key=k}(A))");
  set_number(ag, "k", 1);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, R, "");
  b.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &b), BONSAI_OK);
  bonsai_agent_free(ag);
  bg = start("sequence(wait_value_update{key=k}(A))");
  assert_int_equal(bonsai_agent_restore(bg, b.p, b.n, NULL), BONSAI_OK);
  assert_string_equal(states(bg), "RR.");
  STEP(bg, 1, R, "");
  set_number(bg, "k", 5);
  STEP(bg, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(bg);
  free(b.p);
}

/* }====== */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
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
      T(run_once_then_skip),
      T(delay_waits),
      T(delay_zero_and_uneven_dt),
      T(delay_aborts),
      T(delay_under_reactive),
      T(delay_definition_errors),
      T(guard_none),
      T(guard_self),
      T(guard_self_in_parallel),
      T(guard_lower_and_both),
      T(guard_lower_reactive),
      T(guard_parent_blackboard),
      T(subtree_passes_through),
      T(skip_unless_updated_runs_on_change),
      T(skip_unless_updated_saved),
      T(wait_value_update_waits),
      T(wait_value_update_cut_off_and_saved),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
