/*
** test_leaves.c: the leaves through the public C API, tick by tick:
** actions and conditions (their events and flags), wait, check and is_set.
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
