/*
** test_latent.c: latent aborts through the public C API, tick by tick: an
** abort callback that returns BONSAI_RUNNING when a decision of the tree
** cut its node off keeps it aborting (status BONSAI_ABORTING, its callback
** called again at each tick) until it returns BONSAI_OK or its
** abort_timeout passes, while the node that cut it off waits, running, and
** goes on in the tick the last abort ends. Every node that cuts off a
** branch by its own decision, nested aborts, the immediate aborts (from
** outside the tree's decisions), control nodes, traces, saves and reloads.
*/
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

#define O BONSAI_ABORTING

/* A traced leaf whose abort callback answers RUNNING to its first n calls
** that may be latent (-1: to all); its final calls are traced "final". */
static Script *slow(const char *name, const char *codes, int n) {
  Script *s = leaf(name, codes);
  s->latent = n;
  s->marks = 1;
  return s;
}

static void setflag(bonsai_agent *ag, const char *key, int on) {
  bonsai_value v;
  v.type = BONSAI_TBOOLEAN;
  v.u.b = on;
  assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag),
                                 bonsai_key(env, key, strlen(key)), v),
                   BONSAI_OK);
}

/* The running nodes' paths, joined by ", ", aborting ones marked. */
static const char *running(const bonsai_agent *ag) {
  static char buf[512];
  unsigned nodes[32], n = bonsai_agent_running(ag, nodes, 32), k;
  size_t at = 0;
  buf[0] = '\0';
  for (k = 0; k < n && k < 32; k++) {
    char path[128];
    bonsai_agent_node_path(ag, nodes[k], path, sizeof path);
    at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s%s",
                           k > 0 ? ", " : "", path,
                           bonsai_agent_node_status(ag, nodes[k]) == O
                               ? " (aborting)"
                               : "");
  }
  return buf;
}

/* {====== reactive composites */

/* The cut is decided by the higher child, which ends the node: it waits,
** running, and ends with that status in the tick the abort ends. */
static void reactive_ends_as_decided(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FS");
  slow("A", "R", 2);
  ag = start("reactive_selector(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  assert_string_equal(states(ag), "RFR");
  STEP(ag, 1, R, "tick C; abort A"); /* the abort starts: A aborting */
  assert_string_equal(states(ag), "RSO");
  assert_string_equal(running(ag), "reactive_selector, "
                                   "reactive_selector/A (aborting)");
  STEP(ag, 1, R, "abort A"); /* the selector waits: C not ticked */
  assert_string_equal(states(ag), "RSO");
  STEP(ag, 1, S, "abort A"); /* the abort ends: it succeeds, as decided */
  assert_string_equal(states(ag), "SSA");
  assert_string_equal(running(ag), "");
  STEP(ag, 1, S, "tick C"); /* a new run */
  bonsai_agent_free(ag);
}

/* The higher child runs: it was ticked (that is how the node decided),
** then waits, not ticked, until the abort ends; in that tick the node is
** ticked again from its first child. */
static void reactive_running_child_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("B", "FR");
  slow("A", "R", 1);
  ag = start("reactive_selector(B, A)");
  STEP(ag, 1, R, "enter B; tick B; exit B failure; enter A; tick A");
  STEP(ag, 1, R, "enter B; tick B; abort A");
  assert_string_equal(states(ag), "RRO");
  STEP(ag, 1, R, "abort A; tick B"); /* ended: B goes on in this tick */
  assert_string_equal(states(ag), "RRA");
  STEP(ag, 1, R, "tick B");
  bonsai_agent_free(ag);
}

/* A reactive sequence cuts off its running child when an earlier child
** fails; in a sequence ending the tree's root. */
static void reactive_sequence_and_jump_chain(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "SF");
  slow("A", "R", 1);
  leaf("Z", "S");
  ag = start("sequence(reactive_sequence(?C, A), Z)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; abort A");
  assert_string_equal(states(ag), "RRFO.");
  STEP(ag, 1, F, "abort A"); /* the sequence fails with it */
  assert_string_equal(states(ag), "FFFA.");
  bonsai_agent_free(ag);
}

/* The priority section: a branch whose conditions pass runs its child,
** then the root waits for its abort. */
static void priority_branch_waits(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  char err[128];
  (void)state;
  leaf("Hurt", "FS");
  leaf("Flee", "R");
  slow("Work", "R", 1);
  bonsai_def_begin(d, BONSAI_PRIORITY, NULL);
  assert_int_equal(trace_def(d, "filter(?Hurt, Flee)"), 0);
  assert_int_equal(trace_def(d, "Work"), 0);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  STEP(ag, 1, R, "tick Hurt; enter Work; tick Work");
  STEP(ag, 1, R, "tick Hurt; enter Flee; tick Flee; abort Work");
  STEP(ag, 1, R, "abort Work; tick Hurt; tick Flee");
  assert_string_equal(running(ag), "priority[1], priority[1]/Flee");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== timeouts of latent aborts, immediate aborts */

/* abort_timeout (the registered leaf's, or the node's) cuts a latent
** abort off, without a call, once that much agent time has passed; a
** timeout of 0 cuts it off at once. */
static void abort_timeout_cuts_off(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FS");
  slow("A", "R", -1);
  assert_int_equal(bonsai_leaf_abort_timeout(env, "A", 2), BONSAI_OK);
  assert_int_equal(bonsai_leaf_abort_timeout(env, "Nope", 2), BONSAI_EARG);
  ag = start("reactive_selector(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; abort A"); /* time 2: it starts */
  STEP(ag, 1, R, "abort A");         /* time 3: 1 s */
  STEP(ag, 1, S, "");                /* time 4: 2 s, cut off */
  assert_string_equal(states(ag), "SSA");
  bonsai_agent_free(ag);
  leaf("C", "FS");
  ag = start("reactive_selector(?C, A{abort_timeout=0.5})"); /* the node's */
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; abort A");
  STEP(ag, 1, S, "");
  bonsai_agent_free(ag);
  leaf("C", "FS");
  ag = start("reactive_selector(?C, A{abort_timeout=0})");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, S, "tick C; abort A"); /* cut off at once: not latent */
  bonsai_agent_free(ag);
  assert_string_equal(deferr("?C{abort_timeout=1}"),
                      "C: 'condition' takes no argument "
                      "'abort_timeout'");
}

/* Without a timeout it may take as long as it wants: the agent keeps
** running; an abort from outside (bonsai_agent_abort, reset) is
** immediate: its callback once more, told it is final, and its RUNNING
** ignored. */
static void outside_aborts_are_immediate(void **state) {
  bonsai_agent *ag;
  int k;
  (void)state;
  leaf("C", "FS");
  slow("A", "R", -1);
  ag = start("reactive_selector(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; abort A");
  for (k = 0; k < 50; k++)
    STEP(ag, 1, R, "abort A");
  assert_int_equal(bonsai_agent_abort(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A final");
  assert_string_equal(states(ag), "ASA");
  assert_int_equal(bonsai_agent_status(ag), A);
  STEP(ag, 1, S, "tick C"); /* from the root */
  bonsai_agent_free(ag);
  /* an immediate cut of a running node: once, final, RUNNING ignored */
  ag = start("A");
  STEP(ag, 1, R, "enter A; tick A");
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  assert_string_equal(trace_take(&trace), "abort A final");
  assert_string_equal(states(ag), ".");
  bonsai_agent_free(ag);
}

/* Exit callbacks are never latent: a leaf without abort gets exit with
** "aborted" once. */
static void exit_is_never_latent(void **state) {
  bonsai_agent *ag;
  Script *a;
  (void)state;
  leaf("C", "FS");
  a = leaf_flags("A", "R", BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT);
  a->latent = -1;
  ag = start("reactive_selector(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, S, "tick C; exit A aborted");
  bonsai_agent_free(ag);
}

/* A failing latent abort callback is a leaf error of its node: the tick
** fails, everything aborts at once (the failing callback is not called
** again), and the node that waited never goes on. */
static void failing_latent_abort(void **state) {
  bonsai_agent *ag;
  Script *a;
  (void)state;
  leaf("C", "FS");
  a = slow("A", "R", -1);
  ag = start("reactive_selector(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; abort A");
  a->fail_event = BONSAI_EV_ABORT + 1;
  STEP(ag, 1, BONSAI_ELEAF, "abort A");
  assert_string_equal(bonsai_agent_errmsg(ag), "A failed on purpose");
  assert_string_equal(states(ag), "ASA");
  assert_int_equal(bonsai_agent_status(ag), A);
  a->fail_event = 0;
  STEP(ag, 1, S, "tick C");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== every node that cuts off a branch */

/* A parallel whose policy is met waits for the aborts of its other
** children, then ends as the policy says. */
static void parallel_policy_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  slow("B", "R", 1);
  leaf("A", "RS");
  ag = start("parallel{success=1}(B, A)");
  STEP(ag, 1, R, "enter B; tick B; enter A; tick A");
  STEP(ag, 1, R, "tick B; tick A; exit A success; abort B");
  assert_string_equal(states(ag), "ROS");
  STEP(ag, 1, S, "abort B");
  assert_string_equal(states(ag), "SAS");
  bonsai_agent_free(ag);
}

/* Timeout, filter and while_do_else wait too. */
static void decorators_wait(void **state) {
  bonsai_agent *ag;
  (void)state;
  slow("A", "R", 1);
  ag = start("timeout{seconds=2}(A)");
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, R, "tick A");
  STEP(ag, 1, R, "abort A"); /* time 3: 2 s since it started */
  STEP(ag, 1, F, "abort A");
  bonsai_agent_free(ag);
  leaf("C", "SF");
  slow("B", "R", 1);
  ag = start("filter(?C, B)");
  STEP(ag, 1, R, "tick C; enter B; tick B");
  STEP(ag, 1, R, "tick C; abort B");
  STEP(ag, 1, F, "abort B"); /* its conditions are not asked again */
  bonsai_agent_free(ag);
  leaf("W", "SF");
  slow("D", "R", 1);
  leaf("E", "R");
  ag = start("while_do_else(?W, D, E)");
  STEP(ag, 1, R, "tick W; enter D; tick D");
  STEP(ag, 1, R, "tick W; abort D");
  STEP(ag, 1, R, "abort D; enter E; tick E"); /* the branch it chose */
  STEP(ag, 1, R, "tick W; tick E");
  bonsai_agent_free(ag);
}

/* A guard that turns true takes over a lower running branch: its
** selector waits, then goes to the guard. */
static void guard_lower_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("X", "R");
  slow("A", "R", 1);
  ag = start("selector(guard{abort=lower}(is_set{key=alarm}, X), A)");
  STEP(ag, 1, R, "enter A; tick A");
  setflag(ag, "alarm", 1);
  STEP(ag, 1, R, "abort A"); /* (the guard and check: tick 1's) */
  assert_string_equal(states(ag), "RFF.O");
  STEP(ag, 1, R, "abort A; enter X; tick X");
  assert_string_equal(states(ag), "RRSRA");
  bonsai_agent_free(ag);
}

/* A guard whose check turns false cuts its own child off: its parent
** waits, then is ticked again (the guard fails). */
static void guard_self_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  slow("X", "R", 1);
  leaf("B", "R");
  ag = start("selector(guard{abort=self}(is_set{key=go}, X), B)");
  setflag(ag, "go", 1);
  STEP(ag, 1, R, "enter X; tick X");
  assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag),
                                 bonsai_key(env, "go", 2),
                                 (bonsai_value){BONSAI_TNIL, {0}}),
                   BONSAI_OK);
  STEP(ag, 1, R, "abort X");
  assert_string_equal(states(ag), "ROSO.");
  STEP(ag, 1, R, "abort X; enter B; tick B");
  assert_string_equal(states(ag), "RFFAR");
  bonsai_agent_free(ag);
}

/* run_while turning false: the node's parent waits for its abort, then is
** ticked again (the node is skipped). */
static void run_while_waits(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  bonsai_value yes;
  char err[128];
  (void)state;
  slow("A", "R", 1);
  leaf("Z", "S");
  yes.type = BONSAI_TBOOLEAN;
  yes.u.b = 1;
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_begin(d, BONSAI_INVERT, "w");
  bonsai_def_when_check(d, BONSAI_RUN_WHILE, "go", "==", yes);
  trace_def(d, "A");
  bonsai_def_end(d);
  trace_def(d, "Z");
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  setflag(ag, "go", 1);
  STEP(ag, 1, R, "enter A; tick A");
  setflag(ag, "go", 0);
  STEP(ag, 1, R, "abort A");
  assert_string_equal(states(ag), "ROO.");
  STEP(ag, 1, S, "abort A; enter Z; tick Z; exit Z success");
  assert_string_equal(states(ag), "SKAS");
  bonsai_agent_free(ag);
}

/* An interrupt's abort may be latent: the ticks return running without
** the tree, until the abort ends; that tick returns aborted. */
static int interrupt_on(bonsai_agent *ag, void *data) {
  (void)ag;
  return *(int *)data;
}

static void interrupt_waits(void **state) {
  bonsai_agent *ag;
  int on = 0;
  (void)state;
  slow("A", "R", 2);
  ag = start("sequence(A)");
  assert_int_equal(bonsai_agent_add_interrupt(ag, interrupt_on, &on),
                   BONSAI_OK);
  STEP(ag, 1, R, "enter A; tick A");
  on = 1;
  STEP(ag, 1, R, "abort A");
  assert_string_equal(states(ag), "OO");
  on = 0; /* it stays interrupted: the tree does not run */
  STEP(ag, 1, R, "abort A");
  STEP(ag, 1, A, "abort A");
  assert_string_equal(states(ag), "AA");
  STEP(ag, 1, R, "enter A; tick A");
  bonsai_agent_free(ag);
}

/* An agent does not sleep while an abort takes its time: a sleep asked for
** is ignored until the abort has ended. */
static void no_sleep_while_aborting(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FS");
  slow("A", "R", 1);
  ag = start("reactive_selector(?C, A)");
  STEP(ag, 1, R, "tick C; enter A; tick A");
  STEP(ag, 1, R, "tick C; abort A");
  bonsai_agent_sleep(ag, 100);
  assert_true(bonsai_agent_sleeping(ag) < 0);
  assert_int_equal(bonsai_agent_asleep(ag, 1), 0); /* tick it */
  STEP(ag, 1, S, "abort A");
  bonsai_agent_sleep(ag, 100);
  assert_true(bonsai_agent_sleeping(ag) == 100);
  assert_int_equal(bonsai_agent_asleep(ag, 1), 1);
  bonsai_agent_free(ag);
}

/* Nested: a timeout cuts off a reactive node that waits for an abort. The
** inner node's decision is dropped, the outer one waits for the same
** abort (its callback called once per tick), then ends as it decided. */
static void nested_aborts(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("C", "FS");
  slow("A", "R", 2);
  ag = start("timeout{seconds=2}(reactive_selector(?C, A))");
  STEP(ag, 1, R, "tick C; enter A; tick A"); /* time 1: the timeout starts */
  STEP(ag, 1, R, "tick C; abort A");
  assert_string_equal(states(ag), "RRSO");
  STEP(ag, 1, R, "abort A"); /* time 3: the timeout cuts the selector */
  assert_string_equal(states(ag), "ROSO");
  assert_string_equal(running(ag), "timeout, timeout/reactive_selector[1] "
                                   "(aborting), "
                                   "timeout/reactive_selector[1]/A (aborting)");
  STEP(ag, 1, F, "abort A"); /* not success: the selector's decision is gone */
  assert_string_equal(states(ag), "FASA");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== control nodes */

/* What the control node below does: 0 tick child 1; 1 cut child 1 off,
** then tick child 2 (the node waits: that tick does nothing), and from
** then on tick child 2 (3); 2 as 0, but its own abort answers running. */
static int ctl_cut;

static int switcher(const bonsai_call *c) {
  if (c->event == BONSAI_EV_ABORT) {
    trace_append(&trace, c->status == BONSAI_RUNNING ? "abort S latent"
                                                     : "abort S");
    return ctl_cut == 2 ? BONSAI_RUNNING : BONSAI_OK;
  }
  if (ctl_cut == 0 || ctl_cut == 2)
    return bonsai_control_tick(c->agent, c->node, 0, NULL);
  if (ctl_cut == 1) {
    ctl_cut = 3;
    if (bonsai_control_abort(c->agent, c->node, 0, NULL) != BONSAI_OK)
      return BONSAI_ERROR;
    /* aborting: not ticked; and the node waits: nothing is ticked */
    assert_int_equal(bonsai_control_tick(c->agent, c->node, 0, NULL),
                     BONSAI_RUNNING);
    assert_int_equal(bonsai_control_tick(c->agent, c->node, 1, NULL),
                     BONSAI_RUNNING);
    return BONSAI_RUNNING; /* it goes on: called again when A has ended */
  }
  return bonsai_control_tick(c->agent, c->node, 1, NULL);
}

static bonsai_agent *control_agent(const char *kid1, const char *kid2) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = NULL;
  bonsai_agent *ag;
  char err[256];
  assert_int_equal(bonsai_def_control(d, "S", switcher, NULL,
                                      BONSAI_LEAF_ABORT, NULL),
                   BONSAI_OK);
  trace_def(d, kid1);
  trace_def(d, kid2);
  bonsai_def_end(d);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("compile: %s", err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  return ag;
}

/* c:abort from the tick callback is a decision: latent; the node waits
** (c:tick of any child is running, not ticked) and its callback is called
** again in the tick the abort ends. */
static void control_abort_waits(void **state) {
  bonsai_agent *ag;
  (void)state;
  slow("A", "R", 1);
  leaf("B", "S");
  ctl_cut = 0;
  ag = control_agent("A", "B");
  STEP(ag, 1, R, "enter A; tick A");
  ctl_cut = 1;
  STEP(ag, 1, R, "abort A");
  assert_string_equal(states(ag), "RO.");
  STEP(ag, 1, S, "abort A; enter B; tick B; exit B success");
  assert_string_equal(states(ag), "SAS");
  bonsai_agent_free(ag);
}

/* A control node's own abort may be latent (cut off by a decision above
** it): its callback again at each tick, after which its children, all
** aborting, end. */
static void control_own_latent_abort(void **state) {
  bonsai_agent *ag;
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  char err[128];
  (void)state;
  leaf("C", "FS");
  leaf("A", "R");
  ctl_cut = 0;
  bonsai_def_begin(d, BONSAI_REACTIVE_SELECTOR, NULL);
  trace_def(d, "?C");
  bonsai_def_control(d, "S", switcher, NULL, BONSAI_LEAF_ABORT, NULL);
  trace_def(d, "A");
  trace_def(d, "A");
  bonsai_def_end(d);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  STEP(ag, 1, R, "tick C; enter A; tick A");
  ctl_cut = 2; /* its abort answers running */
  STEP(ag, 1, R, "tick C; abort S latent; abort A");
  assert_string_equal(states(ag), "RSOA.");
  STEP(ag, 1, R, "abort S latent");
  ctl_cut = 0;
  STEP(ag, 1, S, "abort S latent");
  assert_string_equal(states(ag), "SSAA.");
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== traces, saves, reloads */

/* The trace records the abort's start ("aborting"), each further call
** (again), and its end ("aborted"; cut off: marked). */
static void traced(void **state) {
  bonsai_agent *ag;
  bonsai_event ev[32];
  unsigned n, k;
  char line[512];
  size_t at = 0;
  (void)state;
  leaf("C", "FS");
  slow("A", "R", -1);
  assert_int_equal(bonsai_leaf_abort_timeout(env, "A", 2), BONSAI_OK);
  ag = start("reactive_selector(?C, A)");
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  bonsai_agent_tick(ag, 1);
  bonsai_agent_events(ag, ev, 32); /* the first tick's */
  bonsai_agent_tick(ag, 1);
  bonsai_agent_tick(ag, 1);
  bonsai_agent_tick(ag, 1);
  trace_take(&trace);
  n = bonsai_agent_events(ag, ev, 32);
  for (k = 0; k < n; k++)
    at += (size_t)snprintf(line + at, sizeof line - at, "%s%u:%u:%s%s%s",
                           k > 0 ? " " : "", ev[k].tick, ev[k].node,
                           bonsai_status_name(ev[k].status),
                           ev[k].again ? "+" : "", ev[k].cutoff ? "!" : "");
  assert_string_equal(line, "2:0:running+ 2:1:success 2:2:aborting "
                            "3:0:running+ 3:2:aborting+ "
                            "4:0:running+ 4:2:aborted! 4:0:success");
  bonsai_agent_free(ag);
}

/* A saved aborting agent, restored: the abort is immediate (one last
** call, at its first tick) and the waiting node goes on in that tick. */
static void save_and_restore_aborting(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag, *b;
  Saved s = {NULL, 0};
  (void)state;
  leaf("B", "FR");
  slow("A", "R", -1);
  t = build("reactive_selector(B, A)");
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter B; tick B; exit B failure; enter A; tick A");
  STEP(ag, 1, R, "enter B; tick B; abort A");
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &s), BONSAI_OK);
  b = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_OK);
  assert_string_equal(states(b), "RRO");
  assert_string_equal(running(b), "reactive_selector, reactive_selector/B, "
                                  "reactive_selector/A (aborting)");
  STEP(b, 1, R, "abort A final; tick B");
  assert_string_equal(states(b), "RRA");
  free(s.p);
  s.p = NULL;
  s.n = 0;
  /* a restore into a running or aborting agent is refused */
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &s), BONSAI_OK);
  assert_int_equal(bonsai_agent_restore(ag, s.p, s.n, NULL), BONSAI_EARG);
  /* an interrupt's latent abort: the agent waits */
  free(s.p);
  bonsai_agent_free(ag);
  bonsai_agent_free(b);
  bonsai_tree_release(t);
}

/* A reload that keeps the aborting node lets it finish; one that drops it
** aborts it at once; a node that waits and is kept goes on waiting. */
static void reload_during_latent_abort(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  bonsai_def *d;
  char err[128];
  (void)state;
  leaf("B", "FR");
  slow("A", "R", 2);
  leaf("Q", "S");
  t = build("reactive_selector:r(B, A)");
  ag = bonsai_agent_new(t, NULL, NULL);
  STEP(ag, 1, R, "enter B; tick B; exit B failure; enter A; tick A");
  STEP(ag, 1, R, "enter B; tick B; abort A");
  d = bonsai_def_new(env); /* the same nodes, and one more */
  trace_def(d, "reactive_selector:r(Q, B, A)");
  assert_int_equal(bonsai_tree_reload(t, d, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  STEP(ag, 1, R, "abort A");
  assert_string_equal(states(ag), "R.RO");
  d = bonsai_def_new(env); /* A dropped */
  trace_def(d, "reactive_selector:r(Q, B)");
  assert_int_equal(bonsai_tree_reload(t, d, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  STEP(ag, 1, S, "abort A final; enter Q; tick Q; exit Q success; "
                 "abort B");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* }====== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(reactive_ends_as_decided, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(reactive_running_child_waits, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(reactive_sequence_and_jump_chain, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(priority_branch_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(abort_timeout_cuts_off, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(outside_aborts_are_immediate, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(exit_is_never_latent, setup, teardown),
      cmocka_unit_test_setup_teardown(failing_latent_abort, setup, teardown),
      cmocka_unit_test_setup_teardown(parallel_policy_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(decorators_wait, setup, teardown),
      cmocka_unit_test_setup_teardown(guard_lower_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(guard_self_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(run_while_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(interrupt_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(no_sleep_while_aborting, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(nested_aborts, setup, teardown),
      cmocka_unit_test_setup_teardown(control_abort_waits, setup, teardown),
      cmocka_unit_test_setup_teardown(control_own_latent_abort, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(traced, setup, teardown),
      cmocka_unit_test_setup_teardown(save_and_restore_aborting, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(reload_during_latent_abort, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
