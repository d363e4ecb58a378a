/*
** test_save.c: saving and restoring agents through the C API: round trips
** with every kind of state (running paths, finished children of a running
** parallel, counters, timers, blackboard values), restoring after a
** reload, the refusals (another tree's save, a newer format, every
** truncation, random corruption: never a crash, never a half restore),
** and a leaf's own state (BONSAI_LEAF_SAVE: SAVE and RESTORE).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

typedef struct Bytes {
  unsigned char *p;
  size_t n, cap;
} Bytes;

static void put(void *ud, const void *p, size_t n) {
  Bytes *b = (Bytes *)ud;
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

static Bytes save(bonsai_agent *ag) {
  Bytes b = {NULL, 0, 0};
  assert_int_equal(bonsai_agent_save(ag, NULL, put, &b), BONSAI_OK);
  return b;
}

/* The tree of spec, named name. */
static bonsai_tree *named(const char *spec, const char *name) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = NULL;
  assert_int_equal(trace_def(d, spec), 0);
  assert_int_equal(bonsai_tree_new(d, name, &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  return t;
}

static int key(const char *name) { return bonsai_key(env, name, strlen(name)); }

static void setnum(bonsai_agent *ag, const char *k, long long v) {
  bonsai_value x;
  x.type = BONSAI_TINTEGER;
  x.u.i = v;
  assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag), key(k), x), BONSAI_OK);
}

#define SPEC                                                                 \
  "sequence:root(A, parallel:p{success='all'}(B, C), "                       \
  "limit{times=3}(D), cooldown:cd{seconds=5}(E), timeout:to{seconds=9}(F))"

/* A save taken mid-run restores the same statuses, clock and data, and
** the restored agent goes on exactly as the original would. */
static void round_trip(void **state) {
  bonsai_tree *t;
  bonsai_agent *a, *b;
  Bytes s;
  bonsai_value v;
  (void)state;
  leaf("A", "S");
  leaf("B", "S");
  leaf("C", "RRS");
  leaf("D", "S");
  leaf("E", "S");
  leaf("F", "R");
  t = build(SPEC);
  a = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_tick(a, 1), R);
  assert_string_equal(states(a), "RSRSR......");
  setnum(a, "hp", 42);
  s = save(a);
  trace_take(&trace);
  b = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_OK);
  /* the running path and the finished children of the running parallel;
  ** A's success does not matter any more */
  assert_string_equal(states(b), "R.RSR......");
  assert_true(bonsai_agent_time(b) == 1);
  v = bonsai_bb_get(bonsai_agent_bb(b), key("hp"));
  assert_int_equal(v.type, BONSAI_TINTEGER);
  assert_int_equal(v.u.i, 42);
  /* C is resumed, not entered again; then the limit, cooldown, timeout */
  assert_int_equal(bonsai_agent_tick(b, 1), R);
  assert_string_equal(trace_take(&trace), "tick C");
  assert_int_equal(bonsai_agent_tick(b, 1), R);
  assert_string_equal(trace_take(&trace),
                      "tick C; exit C success; enter D; tick D; exit D "
                      "success; enter E; tick E; exit E success; enter F; "
                      "tick F");
  free(s.p);
  /* later: counters and timers carry over too */
  s = save(b);
  bonsai_agent_free(a);
  a = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(a, s.p, s.n, NULL), BONSAI_OK);
  assert_string_equal(states(b), "R.SSSSSSSRR");
  assert_string_equal(states(a), "R........RR");
  assert_true(bonsai_agent_time(a) == 3);
  assert_int_equal(bonsai_agent_tick(a, 1), R);
  assert_string_equal(trace_take(&trace), "tick F");
  free(s.p);
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  bonsai_tree_release(t);
}

/* Data that lasts while idle is saved: a used-up limit stays used up, a
** cooldown keeps its end. */
static void lasting_data(void **state) {
  bonsai_tree *t;
  bonsai_agent *a, *b;
  Bytes s;
  (void)state;
  leaf("A", "S");
  leaf("B", "S");
  t = build("sequence:root(limit{times=1}(A), cooldown{seconds=5}(B))");
  a = bonsai_agent_new(t, NULL, NULL);
  STEP(a, 1, S, "enter A; tick A; exit A success; enter B; tick B; exit B "
                "success");
  s = save(a);
  b = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_OK);
  STEP(b, 1, F, ""); /* the limit is used up */
  free(s.p);
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  bonsai_tree_release(t);
}

/* After a reload, nodes are matched by path: a running node that moved
** keeps running, one that is gone is dropped (its parent starts again). */
static void after_reload(void **state) {
  bonsai_tree *t;
  bonsai_agent *a, *b;
  bonsai_def *d;
  char err[128];
  Bytes s;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  t = build("sequence:root(A, B)");
  a = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_tick(a, 1);
  s = save(a);
  trace_take(&trace);
  d = bonsai_def_new(env);
  trace_def(d, "sequence:root(C, A, B)");
  assert_int_equal(bonsai_tree_reload(t, d, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  b = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_OK);
  assert_string_equal(states(b), "R..R");
  assert_int_equal(bonsai_agent_tick(b, 1), R);
  assert_string_equal(trace_take(&trace), "tick B");
  free(s.p);
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  bonsai_tree_release(t);
}

/* What is not a save of this tree is refused, and changes nothing. */
static void refusals(void **state) {
  bonsai_tree *t, *u;
  bonsai_agent *a, *b, *c;
  Bytes s;
  size_t k;
  unsigned char *bad;
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  t = build("sequence:root(A, B)");
  u = named("sequence:root(A, B)", "u");
  a = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_tick(a, 1);
  setnum(a, "x", 7);
  s = save(a);
  c = bonsai_agent_new(u, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(c, s.p, s.n, NULL), BONSAI_EARG);
  assert_string_equal(bonsai_agent_errmsg(c),
                      "saved from tree 't', not 'u'");
  b = bonsai_agent_new(t, NULL, NULL);
  s.p[4] = 4; /* a newer format */
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_EARG);
  assert_string_equal(bonsai_agent_errmsg(b),
                      "saved in format 4; this Bonsai reads formats 1 to 3");
  s.p[4] = 0;
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_EARG);
  s.p[4] = 3;
  for (k = 0; k < s.n; k++) { /* every truncation */
    assert_int_equal(bonsai_agent_restore(b, s.p, k, NULL), BONSAI_EARG);
    assert_string_equal(states(b), "...");
  }
  bad = malloc(s.n);
  srand(7);
  for (k = 0; k < 20000; k++) { /* random corruption: refused or sane */
    size_t j, flips = 1 + (size_t)rand() % 4;
    int r;
    memcpy(bad, s.p, s.n);
    for (j = 0; j < flips; j++)
      bad[(size_t)rand() % s.n] = (unsigned char)rand();
    r = bonsai_agent_restore(b, bad, s.n, NULL);
    assert_true(r == BONSAI_OK || r == BONSAI_EARG);
    if (r == BONSAI_OK) {
      r = bonsai_agent_tick(b, 1);
      assert_true(r >= 0 || r == BONSAI_ELEAF);
      bonsai_agent_reset(b);
    } else {
      assert_string_equal(states(b), "...");
    }
  }
  trace_take(&trace);
  free(bad);
  free(s.p);
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  bonsai_agent_free(c);
  bonsai_tree_release(t);
  bonsai_tree_release(u);
}

/* A host value without a host cannot be saved: the error names the key. */
static void host_values(void **state) {
  bonsai_agent *a;
  bonsai_value v;
  Bytes s = {NULL, 0, 0};
  (void)state;
  leaf("A", "R");
  a = start("sequence:root(A)");
  v.type = BONSAI_THANDLE;
  v.u.handle = 3;
  bonsai_bb_set(bonsai_agent_bb(a), key("thing"), v);
  assert_int_equal(bonsai_agent_save(a, NULL, put, &s), BONSAI_EARG);
  assert_string_equal(bonsai_agent_errmsg(a), "blackboard key 'thing': a "
                                              "value of the host cannot be "
                                              "saved");
  free(s.p);
  bonsai_agent_free(a);
}

/* A leaf whose run keeps a count of its own, in its agent's owner (an
** int): three ticks, then success; SAVE writes the count, RESTORE reads it
** back (-1 when the save holds none). A count of 99 cannot be saved, an
** owner of 77 refuses its RESTORE; a SAVE also tries to tick its agent,
** which is busy. */
static int counter(const bonsai_call *c) {
  int *n = (int *)c->owner;
  switch (c->event) {
  case BONSAI_EV_ENTER: *n = 0; return BONSAI_OK;
  case BONSAI_EV_TICK: return ++*n >= 3 ? BONSAI_SUCCESS : BONSAI_RUNNING;
  case BONSAI_EV_SAVE:
    assert_false(c->mayraise);
    assert_int_equal(bonsai_agent_tick(c->agent, 1), BONSAI_EBUSY);
    if (*n == 99)
      return bonsai_agent_error(c->agent, "99 cannot be saved");
    c->write(c->wud, n, sizeof *n);
    return BONSAI_OK;
  case BONSAI_EV_RESTORE:
    if (*n == 77)
      return bonsai_agent_error(c->agent, "refused");
    if (c->saved == NULL)
      *n = -1;
    else if (c->savedlen != sizeof *n)
      return bonsai_agent_error(c->agent, "a count is %d bytes",
                                (int)sizeof *n);
    else
      memcpy(n, c->saved, sizeof *n);
    return BONSAI_OK;
  default: return BONSAI_OK;
  }
}

static void leaf_state(void **state) {
  bonsai_tree *t;
  bonsai_agent *a, *b;
  int na = 0, nb = 42;
  Bytes s, old;
  char path[32];
  (void)state;
  assert_int_equal(bonsai_leaf_register(env, "K", counter, NULL,
                                        BONSAI_LEAF_ENTER | BONSAI_LEAF_SAVE),
                   BONSAI_OK);
  t = named("sequence:s(K)", "t");
  a = bonsai_agent_new(t, NULL, &na);
  b = bonsai_agent_new(t, NULL, &nb);
  assert_int_equal(bonsai_agent_tick(a, 1), BONSAI_RUNNING);
  s = save(a);
  assert_int_equal(s.p[4], 3);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_OK);
  assert_int_equal(nb, 1); /* restored, not entered */
  assert_int_equal(bonsai_agent_tick(b, 1), BONSAI_RUNNING);
  assert_int_equal(bonsai_agent_tick(b, 1), BONSAI_SUCCESS);
  assert_int_equal(nb, 3);
  /* a leaf's state in a save marked format 2: corrupted */
  s.p[4] = 2;
  bonsai_agent_reset(b);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_EARG);
  assert_non_null(strstr(bonsai_agent_errmsg(b), "corrupted"));
  /* a save of format 2 holds none: RESTORE without bytes */
  na = 99;
  old.p = NULL;
  old.n = old.cap = 0;
  assert_int_equal(bonsai_agent_save(a, NULL, put, &old), BONSAI_EARG);
  assert_string_equal(bonsai_agent_errmsg(a), "99 cannot be saved");
  bonsai_agent_errpath(a, path, sizeof path);
  assert_string_equal(path, "s/K");
  free(old.p);
  assert_int_equal(bonsai_leaf_register(env, "K", counter, NULL,
                                        BONSAI_LEAF_ENTER), BONSAI_OK);
  old = save(a); /* the leaf keeps nothing now */
  old.p[4] = 2;
  assert_int_equal(bonsai_leaf_register(env, "K", counter, NULL,
                                        BONSAI_LEAF_ENTER | BONSAI_LEAF_SAVE),
                   BONSAI_OK);
  nb = 42;
  assert_int_equal(bonsai_agent_restore(b, old.p, old.n, NULL), BONSAI_OK);
  assert_int_equal(nb, -1);
  /* a RESTORE that fails: the state stays, the error names the node */
  bonsai_agent_reset(b);
  s.p[4] = 3;
  nb = 77;
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(b), "refused");
  bonsai_agent_errpath(b, path, sizeof path);
  assert_string_equal(path, "s/K");
  assert_string_equal(states(b), "RR");
  free(old.p);
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  bonsai_tree_release(t);
  free(s.p);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(round_trip),
      T(lasting_data),
      T(after_reload),
      T(refusals),
      T(host_values),
      T(leaf_state),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
