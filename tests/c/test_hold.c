/*
** test_hold.c: holding agents on their versions, tick by tick: an agent
** held by its own hold (bonsai_agent_hold) or by its tree's
** (bonsai_tree_hold, unless it has a pass: bonsai_agent_pass) keeps
** running the version it runs across reloads (ticks, stepped ticks, dozes,
** aborts, resets and hosts that switch agents themselves all leave it
** there), and at its first tick after the release switches to the newest
** version in one step, its running nodes matched as for any reload; the
** version it held lives as long as it runs it.
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

/* Leaves A (succeeds), B and C (run); the tree root(A, B) and n agents of
** it, each ticked once: all run B. */
static bonsai_tree *running_b(bonsai_agent **list, int n) {
  bonsai_tree *t;
  int k;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  t = build("sequence:root(A, B)");
  for (k = 0; k < n; k++) {
    list[k] = bonsai_agent_new(t, NULL, NULL);
    STEP(list[k], 1, R, "enter A; tick A; exit A success; enter B; tick B");
  }
  return t;
}

/* Frees n agents, then the tree. */
static void free_all(bonsai_tree *t, bonsai_agent **list, int n) {
  int k;
  for (k = 0; k < n; k++)
    bonsai_agent_free(list[k]);
  bonsai_tree_release(t);
}

/* A held tree: a reload makes the new version, but every agent ticks the
** version it runs (none is stale), tick by tick, across two reloads; an
** agent made meanwhile starts on the version current then, and is held
** there in turn. Released, each switches at its next tick in one step,
** its running nodes matched (B, dropped by the second version and back in
** the third, is kept). */
static void tree_held_across_reloads(void **state) {
  bonsai_agent *list[3], *a1, *a2, *late;
  bonsai_tree *t = running_b(list, 2);
  unsigned long long v1;
  (void)state;
  a1 = list[0];
  a2 = list[1];
  v1 = bonsai_agent_version_id(a1);
  assert_int_equal(bonsai_tree_held(t), 0);
  bonsai_tree_hold(t, 1);
  assert_int_equal(bonsai_tree_held(t), 1);
  assert_int_equal(bonsai_agent_held(a1), 0); /* (its own hold) */
  reload(t, "sequence:root(A, C)");
  assert_true(bonsai_tree_version_id(t) != v1); /* the new version exists */
  assert_int_equal(bonsai_agent_stale(a1), 0);
  assert_int_equal(bonsai_agent_stale(a2), 0);
  STEP(a1, 1, R, "tick B");
  STEP(a2, 1, R, "tick B");
  STEP(a1, 1, R, "tick B");
  assert_true(bonsai_agent_version_id(a1) == v1);
  assert_true(bonsai_agent_version_id(a2) == v1);
  late = bonsai_agent_new(t, NULL, NULL);
  assert_true(same_version(late));
  STEP(late, 1, R, "enter A; tick A; exit A success; enter C; tick C");
  reload(t, "sequence:root(C, A, B)");
  STEP(a2, 1, R, "tick B");
  STEP(late, 1, R, "tick C");
  assert_false(same_version(late));
  assert_true(bonsai_agent_version_id(a2) == v1);
  bonsai_tree_hold(t, 0);
  assert_int_equal(bonsai_tree_held(t), 0);
  assert_int_equal(bonsai_agent_stale(a1), 1);
  STEP(a1, 1, R, "tick B"); /* v1 -> v3: B kept */
  STEP(late, 1, R, "tick C"); /* v2 -> v3: C kept */
  STEP(a2, 1, R, "tick B");
  assert_true(same_version(a1));
  assert_true(same_version(a2));
  assert_true(same_version(late));
  list[2] = late;
  free_all(t, list, 3);
}

/* An agent given a pass switches at its next tick, running nodes kept
** where the new version has them (B), while the others stay; a pass given
** after the reload works the same, one taken back before the tick lets
** nothing through. Ending the hold takes every pass back: the next hold
** keeps everyone. */
static void tree_pass(void **state) {
  bonsai_agent *list[3];
  bonsai_tree *t = running_b(list, 3);
  bonsai_agent *a1 = list[0], *a2 = list[1], *a3 = list[2];
  (void)state;
  bonsai_tree_hold(t, 1);
  bonsai_agent_pass(a1, 1);
  assert_int_equal(bonsai_agent_passes(a1), 1);
  assert_int_equal(bonsai_agent_passes(a2), 0);
  reload(t, "sequence:root(C, B)");
  assert_int_equal(bonsai_agent_stale(a1), 1);
  assert_int_equal(bonsai_agent_stale(a2), 0);
  STEP(a1, 1, R, "tick B"); /* switched: B kept, C not entered */
  assert_true(same_version(a1));
  STEP(a2, 1, R, "tick B");
  assert_false(same_version(a2));
  bonsai_agent_pass(a2, 1);
  bonsai_agent_pass(a2, 0); /* taken back */
  STEP(a2, 1, R, "tick B");
  assert_false(same_version(a2));
  bonsai_agent_pass(a3, 1); /* after the reload */
  STEP(a3, 1, R, "tick B");
  assert_true(same_version(a3));
  bonsai_tree_hold(t, 0);
  assert_int_equal(bonsai_agent_passes(a1), 0);
  assert_int_equal(bonsai_agent_passes(a3), 0);
  STEP(a2, 1, R, "tick B");
  assert_true(same_version(a2));
  bonsai_tree_hold(t, 1);
  reload(t, "sequence:root(C)");
  STEP(a1, 1, R, "tick B"); /* its pass was of the last hold */
  assert_false(same_version(a1));
  bonsai_tree_hold(t, 0);
  STEP(a1, 1, R, "abort B; enter C; tick C");
  free_all(t, list, 3);
}

/* The two holds compose: an agent kept by its own hold stays whatever its
** tree does (a pass does not undo it); one let go by its own hold while
** its tree holds it stays until the tree lets it through (a pass or the
** tree's release). */
static void holds_compose(void **state) {
  bonsai_agent *list[2];
  bonsai_tree *t = running_b(list, 2);
  bonsai_agent *ag = list[0], *other = list[1];
  (void)state;
  bonsai_agent_hold(ag, 1);
  bonsai_tree_hold(t, 1);
  bonsai_agent_pass(ag, 1);
  reload(t, "sequence:root(A, C)");
  assert_int_equal(bonsai_agent_stale(ag), 0); /* its own hold wins */
  STEP(ag, 1, R, "tick B");
  bonsai_tree_hold(t, 0);
  assert_int_equal(bonsai_agent_stale(ag), 0);
  STEP(ag, 1, R, "tick B");
  bonsai_tree_hold(t, 1);
  bonsai_agent_hold(ag, 0);
  assert_int_equal(bonsai_agent_stale(ag), 0); /* now its tree's */
  STEP(ag, 1, R, "tick B");
  assert_false(same_version(ag));
  bonsai_agent_pass(ag, 1);
  STEP(ag, 1, R, "abort B; enter A; tick A; exit A success; enter C; "
                 "tick C");
  assert_true(same_version(ag));
  /* the other, with no hold of its own, was let go and held again before
  ** its next tick: still on the first version */
  STEP(other, 1, R, "tick B");
  reload(t, "sequence:root(B)");
  bonsai_agent_hold(other, 1);
  bonsai_tree_hold(t, 0);
  STEP(other, 1, R, "tick B");
  STEP(ag, 1, R, "abort C; enter B; tick B");
  bonsai_agent_hold(other, 0);
  STEP(other, 1, R, "tick B"); /* first -> third: B kept */
  assert_true(same_version(other));
  free_all(t, list, 2);
}

/* The host lets a held tree go: its agents keep it (and the version each
** runs) alive and stay held; reached through an agent, the tree is
** released and they switch. Agents freed while held (one with a pass, one
** the last reference to its tree) leave nothing behind (the fixture's
** teardown counts every byte; the sanitizer build checks the reads). */
static void tree_freed_while_held(void **state) {
  bonsai_tree *t, *t2;
  bonsai_agent *a1, *a2, *a3;
  (void)state;
  leaf("A", "R");
  leaf("B", "R");
  t = build("sequence:root(A)");
  a1 = bonsai_agent_new(t, NULL, NULL);
  a2 = bonsai_agent_new(t, NULL, NULL);
  STEP(a1, 1, R, "enter A; tick A");
  STEP(a2, 1, R, "enter A; tick A");
  bonsai_tree_hold(t, 1);
  bonsai_agent_pass(a2, 1);
  reload(t, "sequence:root(B)");
  reload(t, "sequence:root(B)"); /* the second version goes */
  bonsai_tree_release(t);
  STEP(a1, 1, R, "tick A");
  bonsai_agent_free(a2); /* stale, a pass, never switched */
  t = bonsai_agent_tree(a1);
  assert_int_equal(bonsai_tree_held(t), 1);
  STEP(a1, 1, R, "tick A");
  bonsai_tree_hold(t, 0);
  STEP(a1, 1, R, "abort A; enter B; tick B");
  bonsai_agent_free(a1);
  t2 = build("sequence:root(A)");
  a3 = bonsai_agent_new(t2, NULL, NULL);
  STEP(a3, 1, R, "enter A; tick A");
  bonsai_tree_hold(t2, 1);
  reload(t2, "sequence:root(B)");
  bonsai_tree_release(t2);
  STEP(a3, 1, R, "tick A");
  bonsai_agent_free(a3); /* the tree goes with it, held */
}

/* A save of an agent its tree holds is of the version it runs; restored
** into an agent on the newest version, its nodes are matched by path;
** restored into the held agent itself (reset first), it goes on on its
** version and switches, nodes kept, when the tree lets it go. Neither
** hold nor pass is saved. */
static void tree_held_save(void **state) {
  bonsai_agent *list[2], *held, *fresh;
  bonsai_tree *t = running_b(list, 1);
  Saved s = {NULL, 0};
  (void)state;
  held = list[0];
  bonsai_tree_hold(t, 1);
  reload(t, "sequence:root(C, A, B)");
  assert_int_equal(bonsai_agent_save(held, NULL, saved_put, &s), BONSAI_OK);
  fresh = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_pass(fresh, 1);
  assert_int_equal(bonsai_agent_restore(fresh, s.p, s.n, NULL), BONSAI_OK);
  assert_int_equal(bonsai_agent_passes(fresh), 1); /* (not restored over) */
  STEP(fresh, 1, R, "tick B"); /* v1's B at root/B of v2 */
  assert_true(same_version(fresh));
  assert_int_equal(bonsai_agent_reset(held), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort B");
  assert_false(same_version(held));
  assert_int_equal(bonsai_agent_restore(held, s.p, s.n, NULL), BONSAI_OK);
  STEP(held, 1, R, "tick B");
  assert_false(same_version(held));
  bonsai_tree_hold(t, 0);
  STEP(held, 1, R, "tick B"); /* v1 -> v2: B kept */
  assert_true(same_version(held));
  free(s.p);
  list[1] = fresh;
  free_all(t, list, 2);
}

/* A stepped tick of a host that calls its leaves itself. */
static int stepped(bonsai_agent *ag, double dt) {
  int r = bonsai_agent_step_begin(ag, dt, NULL);
  while (r == BONSAI_STEP) {
    bonsai_leaf_fn fn;
    unsigned level;
    bonsai_call copy = *bonsai_agent_stepcall(ag, &fn, &level);
    r = bonsai_agent_step(ag, level, fn(&copy));
  }
  return r;
}

/* Stepped ticks ask the same question as ticks: an agent held (by its own
** hold or its tree's) after a reload is stepped on its version; once let
** go it is stale, and the stepped tick refuses (BONSAI_ENOSTEP: a switch
** runs abort callbacks) until a tick switches it. */
static void held_stepped(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  (void)state;
  leaf_flags("A", "S", 0);
  leaf_flags("B", "R", 0);
  leaf_flags("C", "R", 0);
  t = build("sequence:root(A, B)");
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(stepped(ag, 1), R);
  assert_string_equal(trace_take(&trace), "tick A; tick B");
  bonsai_agent_hold(ag, 1);
  reload(t, "sequence:root(C)");
  assert_int_equal(bonsai_agent_stepable(ag, NULL), 1);
  assert_int_equal(stepped(ag, 1), R);
  assert_string_equal(trace_take(&trace), "tick B");
  bonsai_tree_hold(t, 1);
  bonsai_agent_hold(ag, 0);
  assert_int_equal(bonsai_agent_stepable(ag, NULL), 1);
  assert_int_equal(stepped(ag, 1), R);
  assert_string_equal(trace_take(&trace), "tick B");
  assert_false(same_version(ag));
  bonsai_agent_pass(ag, 1);
  assert_int_equal(bonsai_agent_stepable(ag, NULL), 0);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_ENOSTEP);
  assert_string_equal(trace_take(&trace), "");
  STEP(ag, 1, R, "tick C");
  assert_true(same_version(ag));
  assert_int_equal(bonsai_agent_stepable(ag, NULL), 1);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(held_across_reloads),
      T(held_version_lives),
      T(held_everywhere),
      T(held_save),
      T(tree_held_across_reloads),
      T(tree_pass),
      T(holds_compose),
      T(tree_freed_while_held),
      T(tree_held_save),
      T(held_stepped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
