/*
** test_hold.c: holding an agent on its version (bonsai_agent_hold), tick
** by tick: a held agent keeps running the version it runs across reloads
** (ticks, dozes, aborts, resets and hosts that switch agents themselves
** all leave it there), and at its first tick after the release switches
** to the newest version in one step, its running nodes matched as for any
** reload; the version it held lives as long as it runs it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"
#include "fixture.h"

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static void reload(bonsai_tree *t, const char *spec) {
  bonsai_def *d = bonsai_def_new(env);
  char err[256];
  if (trace_def(d, spec) != 0)
    fail_msg("syntax error in %s", spec);
  assert_int_equal(bonsai_tree_reload(t, d, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
}

static int same_version(const bonsai_agent *a) {
  return bonsai_agent_version_id(a) ==
         bonsai_tree_version_id(bonsai_agent_tree(a));
}

/* One agent held, one not: the reload switches only the free one; the
** held one ticks its version across two reloads, then, released, goes
** from the first version to the third in one step (B, dropped by the
** second, is back in the third: kept, not aborted). */
static void held_across_reloads(void **state) {
  bonsai_tree *t;
  bonsai_agent *held, *free_;
  unsigned long long v1;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  t = build("sequence:root(A, B)");
  held = bonsai_agent_new(t, NULL, NULL);
  free_ = bonsai_agent_new(t, NULL, NULL);
  STEP(held, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  STEP(free_, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  v1 = bonsai_agent_version_id(held);
  assert_int_equal(bonsai_agent_held(held), 0);
  bonsai_agent_hold(held, 1);
  assert_int_equal(bonsai_agent_held(held), 1);
  reload(t, "sequence:root(A, C)");
  assert_int_equal(bonsai_agent_stale(held), 0);
  assert_int_equal(bonsai_agent_stale(free_), 1);
  STEP(free_, 1, R, "abort B; enter A; tick A; exit A success; enter C; "
                    "tick C");
  STEP(held, 1, R, "tick B");
  STEP(free_, 1, R, "tick C");
  STEP(held, 1, R, "tick B");
  assert_true(bonsai_agent_version_id(held) == v1);
  assert_true(same_version(free_));
  reload(t, "sequence:root(C, A, B)");
  STEP(held, 1, R, "tick B");
  STEP(free_, 1, R, "tick C"); /* C kept at root/C */
  assert_true(bonsai_agent_version_id(held) == v1);
  bonsai_agent_hold(held, 0);
  assert_int_equal(bonsai_agent_stale(held), 1);
  STEP(held, 1, R, "tick B"); /* v1 -> v3: B kept */
  assert_true(same_version(held));
  assert_int_equal(bonsai_agent_stale(held), 0);
  STEP(held, 1, R, "tick B");
  bonsai_agent_free(held);
  bonsai_agent_free(free_);
  bonsai_tree_release(t);
}

/* The version a held agent runs stays alive after the tree and every
** other agent moved on, and goes with the agent (the sanitizer build
** checks nothing is read after its free; the fixture's teardown that
** every byte came back). */
static void held_version_lives(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  leaf("B", "R");
  t = build("sequence:root(A)");
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_hold(ag, 1);
  STEP(ag, 1, R, "enter A; tick A");
  reload(t, "sequence:root(B)");
  reload(t, "sequence:root(B)"); /* the second version goes */
  bonsai_tree_release(t); /* the agent holds the tree too */
  STEP(ag, 1, R, "tick A");
  bonsai_agent_hold(ag, 0);
  STEP(ag, 1, R, "abort A; enter B; tick B");
  bonsai_agent_free(ag);
}

/* Aborts, resets and dozes of a held agent act on the version it runs;
** a host that switches agents itself sees no stale agent while it is
** held, and switches it (with its map) once released. */
static void held_everywhere(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  bonsai_host h;
  unsigned map[4];
  (void)state;
  leaf("A", "R");
  leaf("B", "R");
  t = build("sequence:root(A)");
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter A; tick A");
  reload(t, "sequence:root(B)");
  bonsai_agent_hold(ag, 1); /* stale already: held before it switched */
  assert_int_equal(bonsai_agent_stale(ag), 0);
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "");
  assert_false(same_version(ag));
  assert_int_equal(bonsai_agent_doze(ag, 1, NULL), 0);
  assert_false(same_version(ag));
  memset(&h, 0, sizeof h);
  h.flags = BONSAI_HOST_SWITCHES;
  assert_int_equal(bonsai_agent_run(ag, 1, &h), R);
  assert_string_equal(trace_take(&trace), "enter A; tick A");
  /* nothing to switch while held */
  assert_int_equal(bonsai_agent_switch(ag, NULL, map, 4), BONSAI_OK);
  assert_false(same_version(ag));
  bonsai_agent_hold(ag, 0);
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_ESTALE);
  assert_string_equal(trace_take(&trace), "");
  assert_int_equal(bonsai_agent_switch(ag, NULL, map, 4), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A");
  assert_true(same_version(ag));
  STEP(ag, 1, R, "enter B; tick B");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* A save of a held agent is of the version it runs; restored into an
** agent on the newest version, its nodes are matched by path (the hold
** is not saved). */
static void held_save(void **state) {
  bonsai_tree *t;
  bonsai_agent *held, *fresh;
  Saved s = {NULL, 0};
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  t = build("sequence:root(A, B)");
  held = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_hold(held, 1);
  STEP(held, 1, R, "enter A; tick A; exit A success; enter B; tick B");
  reload(t, "sequence:root(C, A, B)");
  assert_int_equal(bonsai_agent_save(held, NULL, saved_put, &s), BONSAI_OK);
  fresh = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(fresh, s.p, s.n, NULL), BONSAI_OK);
  assert_int_equal(bonsai_agent_held(fresh), 0);
  STEP(fresh, 1, R, "tick B");
  STEP(held, 1, R, "tick B");
  assert_false(same_version(held));
  free(s.p);
  bonsai_agent_free(held);
  bonsai_agent_free(fresh);
  bonsai_tree_release(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(held_across_reloads),
      T(held_version_lives),
      T(held_everywhere),
      T(held_save),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
