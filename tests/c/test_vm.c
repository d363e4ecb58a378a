/*
** test_vm.c: tick-by-tick semantics of the VM through the public C API,
** with scripted C leaves: statuses and the order of enter/tick/exit/abort.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"
#include "trace_leaf.h"

static Trace trace;

#define R BONSAI_RUNNING
#define S BONSAI_SUCCESS
#define F BONSAI_FAILURE

static bonsai_env *env;

static int setup(void **state) {
  (void)state;
  env = bonsai_env_new(NULL, NULL);
  trace_clear(&trace);
  return env == NULL;
}

static int teardown(void **state) {
  (void)state;
  bonsai_env_release(env);
  return 0;
}

static bonsai_tree *compile(bonsai_def *d) {
  char err[256];
  bonsai_tree *t = NULL;
  int r = bonsai_tree_new(d, "t", &t, err, sizeof err);
  if (r != BONSAI_OK)
    fail_msg("compile: %s", err);
  bonsai_def_free(d);
  return t;
}

static void sequence_resumes_running_child(void **state) {
  Script a = {"A", &trace, {S, 0}, 0, 0, 0, 0}, b = {"B", &trace, {R, R, S, 0}, 0, 0, 0, 0};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  (void)state;
  trace_register(env, &a);
  trace_register(env, &b);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "A", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "B", NULL);
  bonsai_def_end(d);
  t = compile(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(trace_take(&trace),
                      "enter A; tick A; exit A success; enter B; tick B");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(trace_take(&trace), "tick B");
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_string_equal(trace_take(&trace), "tick B; exit B success");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

static void reactive_selector_aborts_lower_branch(void **state) {
  Script c = {"C", &trace, {F, F, S, 0}, 0, 0, 0, 0};
  Script hi = {"Hi", &trace, {R, 0}, 0, 0, 0, 0}, lo = {"Lo", &trace, {R, 0}, 0, 0, 0, 0};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  (void)state;
  trace_register(env, &c);
  trace_register(env, &hi);
  trace_register(env, &lo);
  bonsai_def_begin(d, BONSAI_REACTIVE_SELECTOR, NULL);
  bonsai_def_begin(d, BONSAI_REACTIVE_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_CONDITION, NULL, "C", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Hi", NULL);
  bonsai_def_end(d);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Lo", NULL);
  bonsai_def_end(d);
  t = compile(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(trace_take(&trace), "tick C; enter Lo; tick Lo");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(trace_take(&trace), "tick C; tick Lo");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(trace_take(&trace),
                      "tick C; enter Hi; tick Hi; abort Lo");
  assert_int_equal(bonsai_agent_node_status(ag, 4), BONSAI_ABORTED);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

static void leaf_error_aborts_running_nodes(void **state) {
  Script p = {"P", &trace, {R, 0}, 0, 0, 0, 0}, q = {"Q", &trace, {R, 0}, 0, 0, 0, 0};
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  char path[64];
  (void)state;
  q.fail_event = BONSAI_EV_TICK + 1;
  trace_register(env, &p);
  trace_register(env, &q);
  bonsai_def_begin(d, BONSAI_PARALLEL, "both");
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "P", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Q", NULL);
  bonsai_def_end(d);
  t = compile(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(trace_take(&trace),
                      "enter P; tick P; enter Q; tick Q; abort P; abort Q");
  assert_string_equal(bonsai_agent_errmsg(ag), "Q failed on purpose");
  bonsai_tree_node_path(t, bonsai_agent_errnode(ag), path, sizeof path);
  assert_string_equal(path, "both/Q");
  assert_int_equal(bonsai_agent_node_status(ag, 0), BONSAI_ABORTED);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(sequence_resumes_running_child, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(reactive_selector_aborts_lower_branch,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(leaf_error_aborts_running_nodes, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
