/*
** test_control.c: control nodes through the public C API
** (bonsai_def_control, bonsai_control_*): composites written as C
** callbacks, tick by tick, with the order of their children's events, their
** memory, the aborts when a run ends or is cut off, and every error: a bad
** status, a child out of range, too many child ticks, a call outside the
** callback, nesting too deep, a host's raise under a child caught by the
** callback (bonsai_control_recover).
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

/* An agent on control node "C" (fn, flags) over the children written in
** trace_def form, each a separate spec. */
static bonsai_agent *control_of(bonsai_leaf_fn fn, unsigned flags,
                                const char *const *kids) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = NULL;
  bonsai_agent *ag;
  char err[256];
  assert_int_equal(bonsai_def_control(d, "C", fn, NULL, flags, NULL),
                   BONSAI_OK);
  for (; *kids != NULL; kids++)
    assert_int_equal(trace_def(d, *kids), 0);
  bonsai_def_end(d);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("compile: %s", err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  assert_non_null(ag);
  return ag;
}

/* {====== a round robin in C: its memory keeps the next child */

/* Nav2's RoundRobin: from the child after the last that succeeded, ticks
** children until one succeeds or runs; fails when all failed in a row. */
static int round_robin(const bonsai_call *c) {
  unsigned *next = (unsigned *)bonsai_control_memory(c->agent, c->node);
  unsigned n = bonsai_control_children(c->agent, c->node), tried;
  if (c->event == BONSAI_EV_ABORT) {
    trace_append(&trace, "abort C");
    return BONSAI_OK;
  }
  for (tried = 0; tried < n; tried++) {
    int s = bonsai_control_tick(c->agent, c->node, *next, NULL);
    if (s < 0)
      return s;
    if (s == BONSAI_RUNNING)
      return s;
    *next = (*next + 1) % n;
    if (s == BONSAI_SUCCESS)
      return s;
  }
  return BONSAI_FAILURE;
}

static void round_robin_ticks(void **state) {
  static const char *const kids[] = {"A", "B", "D", NULL};
  bonsai_agent *ag;
  (void)state;
  leaf("A", "SF");
  leaf("B", "RSRS");
  leaf("D", "F");
  ag = control_of(round_robin, BONSAI_LEAF_ABORT, kids);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  STEP(ag, 1, R, "enter B; tick B");
  assert_string_equal(states(ag), "RSR.");
  STEP(ag, 1, S, "tick B; exit B success");
  /* D fails, A fails, B runs: in a row from D */
  STEP(ag, 1, R, "enter D; tick D; exit D failure; enter A; tick A; "
                 "exit A failure; enter B; tick B");
  bonsai_agent_abort(ag);
  assert_string_equal(trace_take(&trace), "abort C; abort B");
  /* the memory lasts: the next run starts at B again */
  STEP(ag, 1, S, "enter B; tick B; exit B success");
  /* a reset zeroes it: A first again */
  bonsai_agent_reset(ag);
  STEP(ag, 1, S, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B success");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== two children at once; the run's end aborts the running one */

static int both(const bonsai_call *c) {
  int a, b;
  if (c->event == BONSAI_EV_ENTER) {
    trace_append(&trace, "enter C");
    return BONSAI_OK;
  }
  a = bonsai_control_tick(c->agent, c->node, 0, NULL);
  b = bonsai_control_tick(c->agent, c->node, 1, NULL);
  if (a < 0 || b < 0)
    return BONSAI_ELEAF;
  return b == BONSAI_RUNNING ? BONSAI_RUNNING : b;
}

static void children_at_once(void **state) {
  static const char *const kids[] = {"A", "B", NULL};
  bonsai_agent *ag;
  unsigned running[4];
  (void)state;
  leaf("A", "R");
  leaf("B", "RS");
  ag = control_of(both, BONSAI_LEAF_ENTER, kids);
  STEP(ag, 1, R, "enter C; enter A; tick A; enter B; tick B");
  assert_int_equal(bonsai_agent_running(ag, running, 4), 3);
  /* B succeeds: the run ends and A, still running, is aborted */
  STEP(ag, 1, S, "tick A; tick B; exit B success; abort A");
  assert_string_equal(states(ag), "SAS");
  STEP(ag, 1, S, "enter C; enter A; tick A; enter B; tick B; "
                 "exit B success; abort A");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== errors */

static int status_seven(const bonsai_call *c) {
  (void)c;
  return 7;
}

static int third_child(const bonsai_call *c) {
  return bonsai_control_tick(c->agent, c->node, 2, NULL);
}

static int forever(const bonsai_call *c) {
  for (;;) {
    int s = bonsai_control_tick(c->agent, c->node, 0, NULL);
    if (s < 0)
      return s;
  }
}

static int tick_in_enter(const bonsai_call *c) {
  if (c->event == BONSAI_EV_ENTER) {
    assert_int_equal(bonsai_control_tick(c->agent, c->node, 0, NULL),
                     BONSAI_EARG);
    assert_int_equal(bonsai_control_tick(c->agent, c->node + 1, 0, NULL),
                     BONSAI_EARG);
    return BONSAI_OK;
  }
  return BONSAI_SUCCESS;
}

/* Ignores its child's failure: the node fails all the same. */
static int ignores_errors(const bonsai_call *c) {
  (void)bonsai_control_tick(c->agent, c->node, 0, NULL);
  return BONSAI_SUCCESS;
}

static void errors_name_the_node(void **state) {
  static const char *const one[] = {"A", NULL};
  static const char *const two[] = {"A", "B", NULL};
  bonsai_agent *ag;
  char path[64];
  (void)state;
  leaf("A", "R");
  leaf("B", "S");
  ag = control_of(status_seven, 0, one);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag), "tick returned 7");
  bonsai_agent_errpath(ag, path, sizeof path);
  assert_string_equal(path, "C");
  bonsai_agent_free(ag);
  trace_take(&trace);

  ag = control_of(third_child, 0, two);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag), "no child 3 (it has 2)");
  bonsai_agent_free(ag);

  ag = control_of(forever, 0, one);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "ticked its children more than 1002 times in one tick");
  assert_string_equal(states(ag), "AA"); /* recovered: all aborted */
  bonsai_agent_free(ag);
  trace_take(&trace);

  ag = control_of(tick_in_enter, BONSAI_LEAF_ENTER, one);
  STEP(ag, 1, S, "");
  /* between ticks, no callback is under way */
  assert_int_equal(bonsai_control_tick(ag, 0, 0, NULL), BONSAI_EARG);
  assert_int_equal(bonsai_control_abort(ag, 0, 0, NULL), BONSAI_EARG);
  assert_int_equal(bonsai_control_children(ag, 0), 1);
  assert_int_equal(bonsai_control_children(ag, 1), 0);
  assert_int_equal(bonsai_control_child(ag, 0, 0), 1);
  assert_int_equal(bonsai_control_child(ag, 0, 1), BONSAI_NONE);
  assert_null(bonsai_control_memory(ag, 1));
  bonsai_agent_free(ag);
}

static void child_errors(void **state) {
  static const char *const bad[] = {"sequence(X)", NULL};
  bonsai_agent *ag;
  char path[64];
  (void)state;
  leaf("X", "X"); /* an invalid status */
  ag = control_of(ignores_errors, 0, bad);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  bonsai_agent_errpath(ag, path, sizeof path);
  assert_string_equal(path, "C/sequence[1]/X"); /* the child's error */
  assert_string_equal(states(ag), "AAA"); /* every running node aborted */
  bonsai_agent_free(ag);
}

/* A control node nested 33 deep is refused; 32 deep runs. */
static int pass(const bonsai_call *c) {
  return bonsai_control_tick(c->agent, c->node, 0, NULL);
}

static void nesting_is_bounded(void **state) {
  bonsai_def *d;
  bonsai_tree *t = NULL;
  bonsai_agent *ag;
  char err[256];
  int k;
  (void)state;
  leaf("A", "S");
  d = bonsai_def_new(env);
  for (k = 0; k < BONSAI_MAXCONTROL; k++)
    bonsai_def_control(d, NULL, pass, NULL, 0, NULL);
  trace_def(d, "A");
  for (k = 0; k < BONSAI_MAXCONTROL; k++)
    bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "deep", &t, err, sizeof err),
                   BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  STEP(ag, 1, S, "enter A; tick A; exit A success");
  bonsai_agent_free(ag);
  d = bonsai_def_new(env);
  for (k = 0; k <= BONSAI_MAXCONTROL; k++)
    bonsai_def_control(d, NULL, pass, NULL, 0, NULL);
  assert_non_null(strstr(bonsai_def_errmsg(d), "nested more than 32 deep"));
  bonsai_def_free(d);
  d = bonsai_def_new(env);
  assert_int_equal(bonsai_def_begin(d, BONSAI_CONTROL, NULL), BONSAI_EDEF);
  bonsai_def_free(d);
}

/* }====== */

/* {====== a host that raises: bonsai_control_recover */

/* A leaf that leaves the tick by longjmp to 'raised' (a host's raise);
** 'catching' tells which of two places catches it: the control node's
** callback (1) or the host, around the whole tick (0). */
static jmp_buf raised, outside;
static int catching;
static char message[64];

static int jumper(const bonsai_call *c) {
  if (c->event != BONSAI_EV_TICK)
    return BONSAI_OK;
  assert_true(c->mayraise);
  strcpy(message, "jumped");
  longjmp(catching ? raised : outside, 1);
}

/* How the callback goes on after catching its child's raise: 0 returns
** success, 1 raises its own error, 2 raises the child's again. */
static int after;

static int catcher(const bonsai_call *c) {
  if (setjmp(raised) == 0) {
    bonsai_control_tick(c->agent, c->node, 0, c->host);
    fail_msg("the child did not raise");
  }
  assert_int_equal(bonsai_control_recover(c->agent, c->node, message),
                   BONSAI_OK);
  /* the run is over; told again (as of a failure raised in the callback),
  ** nothing changes: the node fails */
  assert_int_equal(bonsai_control_recover(c->agent, c->node, message),
                   BONSAI_OK);
  assert_int_equal(bonsai_control_recover(c->agent, c->node + 1, message),
                   BONSAI_EARG);
  assert_int_equal(bonsai_control_tick(c->agent, c->node, 1, c->host),
                   BONSAI_ELEAF);
  assert_int_equal(bonsai_control_abort(c->agent, c->node, 0, c->host),
                   BONSAI_ELEAF);
  if (after == 1)
    strcpy(message, "its own");
  if (after != 0)
    longjmp(outside, 1);
  return BONSAI_SUCCESS;
}

/* Ticks ag with a raising host; returns the error's path (and message). */
static const char *raising_tick(bonsai_agent *ag, const char **msg) {
  static char path[64];
  bonsai_host h = {NULL, BONSAI_HOST_RAISES, NULL};
  if (setjmp(outside) == 0)
    assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_ELEAF);
  else
    bonsai_agent_recover(ag, message, &h);
  bonsai_agent_errpath(ag, path, sizeof path);
  *msg = bonsai_agent_errmsg(ag);
  return path;
}

static void a_raise_caught_by_the_callback(void **state) {
  static const char *const kids[] = {"J", "B", NULL};
  bonsai_agent *ag;
  const char *msg;
  (void)state;
  assert_int_equal(bonsai_leaf_register(env, "J", jumper, NULL, 0),
                   BONSAI_OK);
  leaf("B", "S");
  ag = control_of(catcher, 0, kids);
  catching = 1;
  for (after = 0; after < 3; after++) {
    const char *path = raising_tick(ag, &msg);
    assert_string_equal(path, after == 2 ? "C/J" : "C");
    assert_string_equal(msg, after == 0   ? "a child's error was caught "
                                            "inside the callback"
                             : after == 1 ? "its own"
                                          : "jumped");
    assert_string_equal(states(ag), "AA."); /* B was never ticked */
    assert_string_equal(trace_take(&trace), "");
  }
  /* not caught by the callback: the child's */
  catching = 0;
  assert_string_equal(raising_tick(ag, &msg), "C/J");
  assert_string_equal(msg, "jumped");
  /* outside any child's run, nothing to recover */
  assert_int_equal(bonsai_control_recover(ag, 0, "x"), BONSAI_EARG);
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== saves carry the memory */

typedef struct Bytes {
  unsigned char b[512];
  size_t n;
} Bytes;

static void put(void *ud, const void *p, size_t n) {
  Bytes *x = (Bytes *)ud;
  assert_true(x->n + n <= sizeof x->b);
  memcpy(x->b + x->n, p, n);
  x->n += n;
}

static void memory_is_saved(void **state) {
  static const char *const kids[] = {"A", "B", "D", NULL};
  bonsai_agent *ag, *copy;
  Bytes x;
  (void)state;
  leaf("A", "F");
  leaf("B", "S");
  leaf("D", "F");
  ag = control_of(round_robin, 0, kids);
  STEP(ag, 1, S, "enter A; tick A; exit A failure; enter B; tick B; "
                 "exit B success");
  x.n = 0;
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &x), BONSAI_OK);
  copy = bonsai_agent_new(bonsai_agent_tree(ag), NULL, NULL);
  assert_int_equal(bonsai_agent_restore(copy, x.b, x.n, NULL), BONSAI_OK);
  assert_int_equal(*(unsigned *)bonsai_control_memory(copy, 0), 2);
  STEP(copy, 1, S, "enter D; tick D; exit D failure; enter A; tick A; "
                   "exit A failure; enter B; tick B; exit B success");
  bonsai_agent_free(copy);
  bonsai_agent_free(ag);
}

/* }====== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(round_robin_ticks, setup, teardown),
      cmocka_unit_test_setup_teardown(children_at_once, setup, teardown),
      cmocka_unit_test_setup_teardown(errors_name_the_node, setup, teardown),
      cmocka_unit_test_setup_teardown(child_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(nesting_is_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(memory_is_saved, setup, teardown),
      cmocka_unit_test_setup_teardown(a_raise_caught_by_the_callback, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
