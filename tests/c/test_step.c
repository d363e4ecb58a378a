/*
** test_step.c: stepped ticks through the public C API (bonsai.h, "Stepped
** ticks"): the same trees ticked by bonsai_agent_tick in one environment
** and stepped by a host loop in another give the same statuses, node
** states and events, tick by tick; the calls handed out; no callback runs
** inside a stepping function; what is not stepped (BONSAI_ENOSTEP, nothing
** done); errors, a host's recovery after a non-local exit, control nodes
** stepping their children, and misuse.
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

/* Set while a stepping function runs: a callback called then fails. */
static int inside;

/* A stepping call, watched. */
#define STEPPING(call)                                                       \
  (inside = 1, stepping_r = (call), inside = 0, stepping_r)
static int stepping_r;

/* Makes the call handed out, as the tick would have; fails the test if it
** comes while a stepping function runs. */
static int make(bonsai_agent *ag, unsigned *level) {
  bonsai_leaf_fn fn;
  const bonsai_call *c = bonsai_agent_stepcall(ag, &fn, level);
  bonsai_call copy;
  assert_non_null(c);
  copy = *c;
  return fn(&copy);
}

/* What bonsai_agent_stepfirst or bonsai_agent_stepnext gave with result
** r: bonsai_agent_stepcall's call and function when one was handed out,
** else nothing (c left NULL). */
static void gave(bonsai_agent *ag, int r, const bonsai_call *c,
                 bonsai_leaf_fn fn) {
  bonsai_leaf_fn fn2;
  if (r == BONSAI_STEP) {
    assert_ptr_equal(c, bonsai_agent_stepcall(ag, &fn2, NULL));
    assert_ptr_equal(fn, fn2);
  } else {
    assert_null(c); /* untouched */
  }
}

/* A tick as a stepping host makes it: BONSAI_ENOSTEP falls back to
** bonsai_agent_tick. Every other tick begins with bonsai_agent_stepfirst
** and every other call goes on with bonsai_agent_stepnext. */
static int stepped(bonsai_agent *ag, double dt) {
  static int ticks;
  const bonsai_call *c = NULL;
  bonsai_leaf_fn fn = NULL;
  int r, n = 0;
  if (++ticks % 2 == 0) {
    r = STEPPING(bonsai_agent_stepfirst(ag, dt, NULL, &c, &fn));
    gave(ag, r, c, fn);
  } else {
    r = STEPPING(bonsai_agent_step_begin(ag, dt, NULL));
  }
  if (r == BONSAI_ENOSTEP)
    return bonsai_agent_tick(ag, dt);
  while (r == BONSAI_STEP) {
    unsigned level;
    int x = make(ag, &level);
    assert_int_equal(level, 0);
    if (++n % 2 == 0) {
      c = NULL;
      r = STEPPING(bonsai_agent_stepnext(ag, level, x, &c, &fn));
      gave(ag, r, c, fn);
    } else {
      r = STEPPING(bonsai_agent_step(ag, level, x));
    }
  }
  return r;
}

/* A leaf that fails the test when called inside a stepping function. */
static int watched_leaf(const bonsai_call *c) {
  if (inside)
    fail_msg("a callback ran inside a stepping function");
  return trace_leaf(c);
}

/* Two worlds: the fixture's environment, ticked plainly, and a second one
** with the same leaves (scripts of their own, a trace of their own),
** stepped. */
static bonsai_env *env2;
static Trace trace2;
static Script pool2[32];
static int npool2;
static Script pool1[32];
static int npool1;

static void both_leaf(const char *name, const char *codes, unsigned flags) {
  Script *a = &pool1[npool1++], *b = &pool2[npool2++];
  trace_script(a, name, &trace, codes);
  trace_script(b, name, &trace2, codes);
  bonsai_leaf_register(env, name, watched_leaf, a, flags);
  bonsai_leaf_register(env2, name, watched_leaf, b, flags);
}

static int setup2(void **state) {
  static AllocStats mem2;
  memset(&mem2, 0, sizeof mem2);
  npool1 = npool2 = 0;
  trace_clear(&trace2);
  env2 = bonsai_env_new(trace_alloc, &mem2);
  return setup(state) || env2 == NULL;
}

static int teardown2(void **state) {
  bonsai_env_release(env2);
  return teardown(state);
}

static bonsai_agent *agent_in(bonsai_env *e, const char *spec) {
  bonsai_def *d = bonsai_def_new(e);
  bonsai_tree *t = NULL;
  bonsai_agent *ag;
  char err[256];
  assert_int_equal(trace_def(d, spec), 0);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("compile %s: %s", spec, err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  assert_non_null(ag);
  return ag;
}

/* The node statuses of ag, one letter each (as the fixture's states()). */
static const char *letters(const bonsai_agent *ag, char *buf) {
  static const char names[] = ".RSFAK";
  unsigned i, n = bonsai_agent_nodes(ag);
  for (i = 0; i < n && i < 255; i++)
    buf[i] = names[bonsai_agent_node_status(ag, i)];
  buf[i] = '\0';
  return buf;
}

/* Ticks spec in both worlds, 'ticks' times with dt 0.5 (a blackboard key x
** set to k at tick k, for the checks), and compares every tick. Returns
** how many ticks were stepped. */
static int same(const char *spec, int ticks) {
  bonsai_agent *a = agent_in(env, spec), *b = agent_in(env2, spec);
  int k, nstepped = 0;
  int key1 = bonsai_key(env, "x", 1), key2 = bonsai_key(env2, "x", 1);
  for (k = 0; k < ticks; k++) {
    char la[256], lb[256];
    const char *ta;
    bonsai_value v;
    int sa, sb;
    v.type = BONSAI_TINTEGER;
    v.u.i = k;
    bonsai_bb_set(bonsai_agent_bb(a), key1, v);
    bonsai_bb_set(bonsai_agent_bb(b), key2, v);
    nstepped += bonsai_agent_stepable(b, NULL);
    sa = bonsai_agent_tick(a, 0.5);
    sb = stepped(b, 0.5);
    ta = trace_take(&trace);
    if (sa != sb || strcmp(ta, trace_take(&trace2)) != 0 ||
        strcmp(letters(a, la), letters(b, lb)) != 0)
      fail_msg("%s, tick %d: %d [%s] %s against %d [%s] %s", spec, k + 1,
               sa, ta, la, sb, trace2.buf, lb);
    if (sa < 0)
      assert_string_equal(bonsai_agent_errmsg(a), bonsai_agent_errmsg(b));
  }
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  return nstepped;
}

/* {====== the same as bonsai_agent_tick */

static void steps_as_ticks(void **state) {
  static const char *const specs[] = {
      "sequence(A, B, C)",
      "selector(?P, A, B)",
      "reactive_sequence(?P, A)",
      "reactive_selector(sequence(?P, A), sequence(?Q, B), C)",
      "parallel(A, B, C)",
      "parallel{success=one}(A, wait{seconds=1.5}, B)",
      "parallel{success=2, failure=2, wait=true}(A, B, C)",
      "repeater{times=3}(sequence(A, B))",
      "retry{times=2}(A)",
      "repeat_until_failure(A)",
      "invert(A)",
      "force_success(A)",
      "force_failure(B)",
      "timeout{seconds=1}(A)",
      "time_limit{seconds=1}(B)",
      "limit{times=2}(A)",
      "cooldown{seconds=1}(A)",
      "run_once(A)",
      "delay{seconds=1}(A)",
      "keep_running_until_failure(B)",
      "if_then_else(?P, A, B)",
      "while_do_else(?P, A, B)",
      "guard{abort=both}(check{key=x, op='<', value=3}, A)",
      "selector(guard{abort=lower}(check{key=x, op='>=', value=2}, A), B)",
      "sequence(is_set{key=x}, check{key=x, op='<', value=4}, A)",
      "filter(?P, ?Q, A)",
      "monitor(?P, A)",
      "skip_unless_updated{key=x}(A)",
      "wait_value_update{key=x}(B)",
      "sequence(wait{seconds=1}, A, wait{seconds=0.5})",
      "selector(sequence(?P, repeater{times=2}(A)), "
      "reactive_sequence(?Q, B), parallel(C, invert(A)))",
  };
  size_t k;
  (void)state;
  for (k = 0; k < sizeof specs / sizeof *specs; k++) {
    npool1 = npool2 = 0;
    both_leaf("A", "RRSFRS", BONSAI_LEAF_ENTER);
    both_leaf("B", "SRRF", 0);
    both_leaf("C", "RSFFR", BONSAI_LEAF_ENTER);
    both_leaf("P", "SFSSF", 0);
    both_leaf("Q", "FSFS", 0);
    assert_true(same(specs[k], 12) > 0);
  }
}

/* A leaf with an exit callback: exit handed out after its tick, then the
** abort of its run is an abort callback: such a version is not stepped. */
static void exit_leaves(void **state) {
  (void)state;
  both_leaf("A", "RS", BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT);
  assert_int_equal(same("sequence(A, A:b)", 5), 0);
}

/* }====== */

/* {====== events and latent aborts */

/* A leaf that succeeds when the tick under way was delivered "ping". */
static int pinged(const bonsai_call *c) {
  if (inside)
    fail_msg("a callback ran inside a stepping function");
  if (c->event != BONSAI_EV_TICK)
    return BONSAI_OK;
  return bonsai_agent_received(c->agent, "ping", NULL) ? BONSAI_SUCCESS
                                                        : BONSAI_FAILURE;
}

/* Events queued for a stepped tick are its own, as for a tick: delivered
** at its start, gone at its end, one sent during it kept for the next; a
** version with event nodes (they may write a payload through the host) is
** not stepped. */
static void events_delivered(void **state) {
  bonsai_value nil;
  bonsai_agent *a, *b;
  int k, sa, sb;
  (void)state;
  nil.type = BONSAI_TNIL;
  bonsai_leaf_register(env, "E", pinged, NULL, 0);
  bonsai_leaf_register(env2, "E", pinged, NULL, 0);
  a = agent_in(env, "E");
  b = agent_in(env2, "E");
  for (k = 0; k < 4; k++) {
    if (k == 1 || k == 3) {
      assert_int_equal(bonsai_agent_send(a, "ping", nil), BONSAI_OK);
      assert_int_equal(bonsai_agent_send(b, "ping", nil), BONSAI_OK);
    }
    assert_true(bonsai_agent_stepable(b, NULL));
    sa = bonsai_agent_tick(a, 1);
    sb = stepped(b, 1);
    assert_int_equal(sa, sb);
    assert_int_equal(sb, k == 1 || k == 3 ? BONSAI_SUCCESS : BONSAI_FAILURE);
    assert_int_equal(bonsai_agent_queue_size(b), bonsai_agent_queue_size(a));
  }
  bonsai_agent_free(a);
  bonsai_agent_free(b);
  leaf_flags("A", "R", 0);
  a = start("reactive_selector(sequence(event{event=heard}, A), A:b)");
  assert_false(bonsai_agent_stepable(a, NULL));
  assert_int_equal(bonsai_agent_step_begin(a, 1, NULL), BONSAI_ENOSTEP);
  bonsai_agent_free(a);
  a = start("wait_event{event=heard}");
  assert_int_equal(bonsai_agent_step_begin(a, 1, NULL), BONSAI_ENOSTEP);
  bonsai_agent_free(a);
  a = start("event_guard{event=heard}(A)");
  assert_int_equal(bonsai_agent_step_begin(a, 1, NULL), BONSAI_ENOSTEP);
  bonsai_agent_free(a);
}

/* While an abort takes its time (a latent abort: the leaf's abort callback
** answers running), the agent is not stepped, even where its version could
** be (the leaf re-registered without its abort meanwhile); once it is over,
** it is stepped again. */
static void latent_not_stepped(void **state) {
  bonsai_agent *ag;
  Script *s;
  int k;
  bonsai_value v;
  int key = bonsai_key(env, "x", 1);
  (void)state;
  leaf_flags("A", "S", 0);
  s = leaf_flags("B", "R", BONSAI_LEAF_ABORT);
  s->latent = 2;
  ag = start("selector(guard{abort=lower}(check{key=x, op='>=', value=1}, "
             "A), B)");
  assert_false(bonsai_agent_stepable(ag, NULL)); /* B's abort */
  v.type = BONSAI_TINTEGER;
  v.u.i = 0;
  bonsai_bb_set(bonsai_agent_bb(ag), key, v);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_RUNNING);
  v.u.i = 1;
  bonsai_bb_set(bonsai_agent_bb(ag), key, v);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_RUNNING); /* B aborts */
  assert_int_equal(bonsai_agent_node_status(ag, 4), BONSAI_ABORTING);
  leaf_flags("B", "R", 0); /* no abort callback registered any more */
  assert_false(bonsai_agent_stepable(ag, NULL)); /* its abort takes time */
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_ENOSTEP);
  for (k = 0; k < 4 && bonsai_agent_node_status(ag, 4) == BONSAI_ABORTING;
       k++)
    (void)bonsai_agent_tick(ag, 1);
  assert_int_not_equal(bonsai_agent_node_status(ag, 4), BONSAI_ABORTING);
  assert_true(bonsai_agent_stepable(ag, NULL)); /* over: stepped again */
  assert_int_equal(stepped(ag, 1), BONSAI_SUCCESS);
  bonsai_agent_free(ag);
  (void)trace_take(&trace);
}

/* }====== */

/* {====== the calls handed out */

static void hands_out_calls(void **state) {
  bonsai_agent *ag;
  const bonsai_call *c;
  bonsai_leaf_fn fn;
  unsigned level = 9;
  Script *a, *b;
  (void)state;
  a = leaf_flags("A", "RS", BONSAI_LEAF_ENTER);
  b = leaf_flags("B", "F", 0);
  ag = start("sequence(A, ?B)");
  assert_null(bonsai_agent_stepcall(ag, NULL, NULL));
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_STEP);
  c = bonsai_agent_stepcall(ag, &fn, &level);
  assert_non_null(c);
  assert_ptr_equal(fn, trace_leaf);
  assert_ptr_equal(c->data, a);
  assert_ptr_equal(c->agent, ag);
  assert_int_equal(c->event, BONSAI_EV_ENTER);
  assert_int_equal(c->node, 1);
  assert_int_equal(level, 0);
  assert_true(bonsai_agent_busy(ag));
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_EBUSY);
  assert_int_equal(bonsai_agent_step(ag, 1, BONSAI_OK), BONSAI_EARG);
  assert_int_equal(bonsai_agent_step(ag, 0, BONSAI_OK), BONSAI_STEP);
  assert_int_equal(bonsai_agent_node_status(ag, 1), R); /* entered */
  c = bonsai_agent_stepcall(ag, NULL, NULL);
  assert_int_equal(c->event, BONSAI_EV_TICK);
  assert_int_equal(bonsai_agent_step(ag, 0, R), R); /* the tick's end */
  assert_false(bonsai_agent_busy(ag));
  assert_null(bonsai_agent_stepcall(ag, NULL, NULL));
  assert_int_equal(bonsai_agent_step(ag, 0, R), BONSAI_EARG);
  assert_true(bonsai_agent_time(ag) == 1);
  /* resumed at the running action: its tick, then the condition's */
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_STEP);
  assert_int_equal(bonsai_agent_stepcall(ag, NULL, NULL)->node, 1);
  c = NULL;
  assert_int_equal(bonsai_agent_stepnext(ag, 1, S, &c, &fn), BONSAI_EARG);
  assert_null(c);
  assert_int_equal(bonsai_agent_stepnext(ag, 0, S, &c, &fn), BONSAI_STEP);
  assert_ptr_equal(c, bonsai_agent_stepcall(ag, NULL, NULL));
  assert_ptr_equal(fn, trace_leaf);
  assert_ptr_equal(c->data, b);
  assert_int_equal(c->node, 2);
  assert_int_equal(bonsai_agent_step(ag, 0, F), F);
  assert_int_equal(bonsai_agent_status(ag), F);
  assert_string_equal(trace_take(&trace), ""); /* no leaf called */
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== not stepped: nothing done */

static int condfn(const bonsai_call *c) {
  (void)c;
  return S;
}

static int intr(bonsai_agent *ag, void *data) {
  (void)ag;
  (void)data;
  return 0;
}

static void hook(bonsai_agent *ag, const bonsai_event *e, void *ud) {
  (void)ag;
  (void)e;
  (void)ud;
}

/* Ticks that would need a callback not handed out. */
static void not_stepped(void **state) {
  bonsai_agent *ag;
  bonsai_def *d;
  bonsai_tree *t = NULL;
  (void)state;
  leaf_flags("A", "R", BONSAI_LEAF_ENTER);
  leaf_flags("B", "R", BONSAI_LEAF_ABORT);
  ag = start("sequence(B)"); /* a registered abort: named leaves wait */
  assert_false(bonsai_agent_stepable(ag, NULL));
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_ENOSTEP);
  assert_true(bonsai_agent_time(ag) == 0);
  assert_false(bonsai_agent_busy(ag));
  bonsai_agent_free(ag);
  leaf_flags("B", "R", 0); /* re-registered without: stepped again */
  ag = start("sequence(A)");
  assert_true(bonsai_agent_stepable(ag, NULL));
  bonsai_agent_add_interrupt(ag, intr, NULL);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_ENOSTEP);
  bonsai_agent_remove_interrupt(ag, intr, NULL);
  bonsai_agent_trace(ag, 8);
  assert_true(bonsai_agent_stepable(ag, NULL)); /* a trace is fine */
  bonsai_agent_trace_hook(ag, hook, NULL);
  assert_false(bonsai_agent_stepable(ag, NULL)); /* its hook is not */
  bonsai_agent_trace(ag, 0);
  bonsai_tree_profile(bonsai_agent_tree(ag), 1);
  assert_false(bonsai_agent_stepable(ag, NULL));
  bonsai_tree_profile(bonsai_agent_tree(ag), 0);
  assert_true(bonsai_agent_stepable(ag, NULL));
  bonsai_agent_free(ag);
  /* a condition that is a function */
  d = bonsai_def_new(env);
  bonsai_def_begin(d, BONSAI_SEQUENCE, "s");
  bonsai_def_when(d, BONSAI_SKIP_IF, condfn, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, "a", "A", NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_ENOSTEP);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_SKIPPED);
  bonsai_agent_free(ag);
  assert_string_equal(trace_take(&trace), "");
}

/* A stale agent: a host that switches gets BONSAI_ESTALE, another
** BONSAI_ENOSTEP (the switch would run abort callbacks). */
static void stale(void **state) {
  bonsai_host h = {NULL, BONSAI_HOST_SWITCHES, NULL};
  const bonsai_call *c = NULL, *c2 = NULL;
  bonsai_leaf_fn fn = NULL, fn2 = NULL;
  bonsai_agent *ag;
  bonsai_def *d;
  (void)state;
  leaf_flags("A", "R", 0);
  ag = start("sequence(A)");
  d = bonsai_def_new(env);
  trace_def(d, "selector(A)");
  assert_int_equal(bonsai_tree_reload(bonsai_agent_tree(ag), d, NULL, 0),
                   BONSAI_OK);
  bonsai_def_free(d);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, &h), BONSAI_ESTALE);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_ENOSTEP);
  /* bonsai_agent_stepfirst refuses as bonsai_agent_step_begin does, and
  ** then hands nothing out */
  assert_int_equal(bonsai_agent_stepfirst(ag, 1, &h, &c, &fn), BONSAI_ESTALE);
  assert_int_equal(bonsai_agent_stepfirst(ag, 1, NULL, &c, &fn),
                   BONSAI_ENOSTEP);
  assert_null(c);
  assert_null(fn);
  assert_int_equal(bonsai_agent_tick(ag, 1), R); /* it switches */
  assert_int_equal(bonsai_agent_stepfirst(ag, -1, &h, &c, &fn), BONSAI_EARG);
  assert_null(c);
  assert_int_equal(bonsai_agent_stepfirst(ag, 1, &h, &c, &fn), BONSAI_STEP);
  assert_ptr_equal(c, bonsai_agent_stepcall(ag, &fn2, NULL));
  assert_ptr_equal(fn, fn2);
  assert_int_equal(c->event, BONSAI_EV_TICK);
  /* under way: a second beginning is refused, the call kept */
  assert_int_equal(bonsai_agent_stepfirst(ag, 1, &h, &c2, &fn2),
                   BONSAI_EBUSY);
  assert_null(c2);
  assert_ptr_equal(c, bonsai_agent_stepcall(ag, NULL, NULL));
  assert_int_equal(bonsai_agent_step(ag, 0, S), S);
  bonsai_agent_free(ag);
  trace_take(&trace);
}

/* }====== */

/* {====== failures and recovery */

static void failures(void **state) {
  (void)state;
  both_leaf("A", "RX", 0);    /* its second tick returns 42 */
  both_leaf("P", "SR", 0);    /* a condition that runs */
  both_leaf("B", "S", BONSAI_LEAF_ENTER);
  pool1[2].fail_event = pool2[2].fail_event = BONSAI_EV_ENTER + 1;
  assert_true(same("sequence(A, B)", 3) > 0);
  assert_true(same("reactive_sequence(?P, B)", 3) > 0);
  assert_true(same("selector(B, A)", 3) > 0);
}

/* A host leaves a stepped tick (a leaf raised, say) and recovers the
** agent: its running nodes are aborted, it is free again. */
static void host_recovers(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf_flags("A", "R", BONSAI_LEAF_ENTER);
  leaf_flags("B", "R", 0);
  ag = start("parallel(A, B)");
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_STEP);
  assert_int_equal(bonsai_agent_step(ag, 0, BONSAI_OK), BONSAI_STEP);
  assert_int_equal(bonsai_agent_step(ag, 0, R), BONSAI_STEP); /* B's tick */
  bonsai_agent_recover(ag, "B raised", NULL);
  assert_false(bonsai_agent_busy(ag));
  assert_int_equal(bonsai_agent_status(ag), A);
  assert_string_equal(bonsai_agent_errmsg(ag), "B raised");
  assert_int_equal(bonsai_agent_errnode(ag), 2);
  assert_string_equal(states(ag), "AAA"); /* B was set running before its tick */
  assert_null(bonsai_agent_stepcall(ag, NULL, NULL));
  assert_int_equal(bonsai_agent_step(ag, 0, S), BONSAI_EARG);
  assert_int_equal(stepped(ag, 1), BONSAI_RUNNING); /* ticks again */
  trace_take(&trace);
  bonsai_agent_free(ag);
}

/* A leaf re-registered with an abort callback during a stepped tick: its
** abort, which a stepping function cannot call, is refused as a failure. */
static void gained_abort(void **state) {
  bonsai_agent *ag;
  Script *a;
  (void)state;
  a = leaf_flags("A", "R", 0);
  leaf_flags("P", "F", 0);
  ag = start("reactive_selector(?P, A)");
  assert_int_equal(stepped(ag, 1), R);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_STEP);
  trace_register_flags(env, a, BONSAI_LEAF_ABORT); /* during the tick */
  /* P succeeds: A, running, is aborted by the reactive selector */
  assert_int_equal(bonsai_agent_step(ag, 0, S), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "a callback added during a stepped tick cannot run in "
                      "it");
  assert_false(bonsai_agent_busy(ag));
  trace_take(&trace);
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== control nodes */

/* A sequence with memory as a control node whose children are stepped
** (bonsai_control_step), by a host loop of its own. */
static int child(bonsai_agent *ag, unsigned node, unsigned k) {
  int r = STEPPING(bonsai_control_step(ag, node, k, NULL));
  unsigned level;
  if (r == BONSAI_ENOSTEP)
    return bonsai_control_tick(ag, node, k, NULL);
  while (r == BONSAI_STEP) {
    int x = make(ag, &level);
    r = STEPPING(bonsai_agent_step(ag, level, x));
  }
  return r;
}

static int seq(const bonsai_call *c) {
  unsigned *i = (unsigned *)bonsai_control_memory(c->agent, c->node);
  unsigned n = bonsai_control_children(c->agent, c->node);
  if (inside)
    fail_msg("a control callback ran inside a stepping function");
  if (c->event == BONSAI_EV_ENTER) {
    trace_append(((Script *)c->data)->trace, "enter C");
    *i = 0;
    return BONSAI_OK;
  }
  trace_append(((Script *)c->data)->trace, "tick C");
  for (;;) {
    int s = child(c->agent, c->node, *i);
    if (s != S || *i + 1 == n)
      return s;
    ++*i;
  }
}

static bonsai_agent *control_in(bonsai_env *e, Script *s, const char *kids) {
  bonsai_def *d = bonsai_def_new(e);
  bonsai_tree *t = NULL;
  bonsai_agent *ag;
  char err[256];
  bonsai_def_begin(d, BONSAI_SEQUENCE, "root");
  bonsai_def_control(d, "C", seq, s, BONSAI_LEAF_ENTER, NULL);
  assert_int_equal(trace_def(d, kids), 0);
  bonsai_def_end(d);
  bonsai_def_end(d);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("compile: %s", err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  return ag;
}

static void control_children(void **state) {
  Script s1, s2;
  bonsai_agent *a, *b;
  int k;
  (void)state;
  trace_script(&s1, "C", &trace, "S");
  trace_script(&s2, "C", &trace2, "S");
  both_leaf("A", "RS", BONSAI_LEAF_ENTER);
  both_leaf("B", "SF", 0);
  a = control_in(env, &s1, "sequence(A, B)");
  b = control_in(env2, &s2, "sequence(A, B)");
  for (k = 0; k < 6; k++) {
    char la[64], lb[64];
    int sa = bonsai_agent_tick(a, 1), sb = stepped(b, 1);
    const char *ta = trace_take(&trace);
    if (sa != sb || strcmp(ta, trace_take(&trace2)) != 0 ||
        strcmp(letters(a, la), letters(b, lb)) != 0)
      fail_msg("tick %d: %d [%s] %s against %d [%s] %s", k + 1, sa, ta, la,
               sb, trace2.buf, lb);
  }
  bonsai_agent_free(a);
  bonsai_agent_free(b);
}

/* A control node's callback leaves its child's stepped run (the child's
** leaf raised, and the callback caught it) and returns: the node fails,
** as with bonsai_control_tick. */
static int leaves_child(const bonsai_call *c) {
  if (c->event != BONSAI_EV_TICK)
    return BONSAI_OK;
  assert_int_equal(bonsai_control_step(c->agent, c->node, 0, NULL),
                   BONSAI_STEP); /* the child's leaf, never answered */
  assert_int_equal(bonsai_control_step(c->agent, c->node, 0, NULL),
                   BONSAI_EARG); /* its child's run is under way */
  return S;
}

static void control_child_left(void **state) {
  bonsai_agent *ag;
  Script s;
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = NULL;
  unsigned level;
  (void)state;
  trace_script(&s, "C", &trace, "S");
  leaf_flags("A", "R", 0);
  bonsai_def_control(d, "C", leaves_child, &s, 0, NULL);
  trace_def(d, "A");
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, NULL, 0), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  assert_int_equal(bonsai_agent_step_begin(ag, 1, NULL), BONSAI_STEP);
  assert_int_equal(make(ag, &level), S); /* the callback */
  assert_int_equal(level, 0);
  assert_int_equal(bonsai_agent_step(ag, 0, S), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "a child's error was caught inside the callback");
  assert_false(bonsai_agent_busy(ag));
  assert_int_equal(bonsai_agent_status(ag), A);
  bonsai_agent_free(ag);
}

/* }====== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(steps_as_ticks, setup2, teardown2),
      cmocka_unit_test_setup_teardown(exit_leaves, setup2, teardown2),
      cmocka_unit_test_setup_teardown(events_delivered, setup2, teardown2),
      cmocka_unit_test_setup_teardown(latent_not_stepped, setup, teardown),
      cmocka_unit_test_setup_teardown(hands_out_calls, setup, teardown),
      cmocka_unit_test_setup_teardown(not_stepped, setup, teardown),
      cmocka_unit_test_setup_teardown(stale, setup, teardown),
      cmocka_unit_test_setup_teardown(failures, setup2, teardown2),
      cmocka_unit_test_setup_teardown(host_recovers, setup, teardown),
      cmocka_unit_test_setup_teardown(gained_abort, setup, teardown),
      cmocka_unit_test_setup_teardown(control_children, setup2, teardown2),
      cmocka_unit_test_setup_teardown(control_child_left, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
