/*
** test_host.c: the host protocol of bonsai.h, through the public API alone,
** as the Lua binding and any other embedding runtime use it: the host's
** data and "may raise" in every call record, its interrupt hook after the
** C interrupts, a leaf that leaves a tick by longjmp and the recovery,
** step-by-step switches with their node maps, dozing agents, and agents in
** the host's own memory.
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

/* What the host leaf saw, and what it does. */
typedef struct Seen {
  char log[512];  /* "tick:host:mayraise; ..." */
  void *host;     /* call->host of the last call */
  int jump;       /* the next tick longjmps to 'out' */
  jmp_buf out;
} Seen;

static Seen seen;

static void logf_(const char *fmt, ...) {
  size_t n = strlen(seen.log);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(seen.log + n, sizeof seen.log - n, fmt, ap);
  va_end(ap);
}

/* A leaf of the host: logs each event with whether it may raise; a tick
** returns running, or longjmps when asked. */
static int host_leaf(const bonsai_call *c) {
  static const char *const ev[] = {"tick", "enter", "exit", "abort"};
  logf_("%s%s%s", seen.log[0] ? "; " : "", ev[c->event],
        c->mayraise ? "!" : "");
  seen.host = c->host;
  if (c->event == BONSAI_EV_TICK && seen.jump) {
    seen.jump = 0;
    longjmp(seen.out, 1);
  }
  return c->event == BONSAI_EV_TICK ? BONSAI_RUNNING : BONSAI_OK;
}

static const char *seen_take(void) {
  static char buf[512];
  strcpy(buf, seen.log);
  seen.log[0] = '\0';
  return buf;
}

/* The host's interrupt hook and a C interrupt, logging their turns. */
typedef struct Hook {
  int fire;   /* what the hook returns */
  int asked;
} Hook;

static int host_interrupt(bonsai_agent *ag, void *ud) {
  Hook *h = (Hook *)((void **)ud)[1];
  (void)ag;
  h->asked++;
  logf_("%shook", seen.log[0] ? "; " : "");
  return h->fire;
}

static int c_interrupt(bonsai_agent *ag, void *data) {
  (void)ag;
  (void)data;
  logf_("%sc-interrupt", seen.log[0] ? "; " : "");
  return 0;
}

static int setup_host(void **state) {
  int r = setup(state);
  memset(&seen, 0, sizeof seen);
  bonsai_leaf_register(env, "H", host_leaf, NULL,
                       BONSAI_LEAF_ENTER | BONSAI_LEAF_ABORT);
  return r;
}

/* The host's data reaches every call; a tick's calls may raise, an abort
** pass's may not; the hook is asked after the C interrupts and, when it
** fires, aborts the tick, which the trace records. */
static void host_data_and_interrupt(void **state) {
  Hook hk = {0, 0};
  void *ud[2] = {NULL, &hk};
  bonsai_host h = {NULL, BONSAI_HOST_RAISES, host_interrupt};
  bonsai_event ev[16];
  bonsai_agent *ag;
  unsigned n, k;
  int sawint = 0;
  (void)state;
  h.ud = ud;
  ag = start("sequence:root(H)");
  assert_int_equal(bonsai_agent_add_interrupt(ag, c_interrupt, NULL),
                   BONSAI_OK);
  assert_int_equal(bonsai_agent_trace(ag, 16), BONSAI_OK);
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  assert_string_equal(seen_take(), "c-interrupt; hook; enter!; tick!");
  assert_ptr_equal(seen.host, ud);
  bonsai_agent_events(ag, ev, 16);
  hk.fire = 1;
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_ABORTED);
  assert_string_equal(seen_take(), "c-interrupt; hook; abort");
  n = bonsai_agent_events(ag, ev, 16);
  for (k = 0; k < n; k++)
    sawint |= ev[k].kind == BONSAI_TRACE_INTERRUPT;
  assert_true(sawint);
  /* without a host: no data, nothing may raise */
  hk.fire = 0;
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_RUNNING);
  assert_string_equal(seen_take(), "c-interrupt; enter; tick");
  assert_null(seen.host);
  /* an abort with a host: its data, and no raising */
  assert_int_equal(bonsai_agent_abort_hosted(ag, &h), BONSAI_OK);
  assert_string_equal(seen_take(), "abort");
  assert_ptr_equal(seen.host, ud);
  assert_int_equal(hk.asked, 2);
  bonsai_agent_free(ag);
}

/* A parent's cut-off inside a tick is an abort pass too: its callbacks may
** not raise (a raise would leave the pass half done, and the recovery
** would abort again what it had reached). */
static void cut_off_may_not_raise(void **state) {
  bonsai_host h = {NULL, BONSAI_HOST_RAISES, NULL};
  bonsai_agent *ag;
  (void)state;
  leaf("A", "RS");
  ag = start("parallel:p{success=1}(H, A)");
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  assert_string_equal(seen_take(), "enter!; tick!");
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_SUCCESS);
  assert_string_equal(seen_take(), "tick!; abort");
  bonsai_agent_free(ag);
  trace_take(&trace);
}

/* A leaf leaves the tick by longjmp: the agent is busy until the host
** recovers it; recovery names the leaf, aborts every running node (the
** other branch of the parallel too) and frees the agent. */
static void raise_and_recover(void **state) {
  bonsai_host h = {NULL, BONSAI_HOST_RAISES, NULL};
  char path[64];
  bonsai_agent *ag;
  (void)state;
  leaf("A", "R");
  ag = start("parallel:p(A, sequence:s(H))");
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  trace_take(&trace);
  seen_take();
  seen.jump = 1;
  if (setjmp(seen.out) == 0) {
    bonsai_agent_run(ag, 1, &h);
    fail_msg("the leaf did not jump");
  }
  assert_true(bonsai_agent_busy(ag));
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_EBUSY);
  bonsai_agent_recover(ag, "boom", &h);
  assert_false(bonsai_agent_busy(ag));
  assert_string_equal(bonsai_agent_errmsg(ag), "boom");
  bonsai_agent_errpath(ag, path, sizeof path);
  assert_string_equal(path, "p/s/H");
  assert_string_equal(trace_take(&trace), "tick A; abort A");
  assert_string_equal(seen_take(), "tick!; abort");
  assert_int_equal(bonsai_agent_status(ag), BONSAI_ABORTED);
  /* recovering an agent that is not inside an operation does nothing */
  bonsai_agent_recover(ag, "again", &h);
  assert_string_equal(bonsai_agent_errmsg(ag), "boom");
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  bonsai_agent_free(ag);
}

static int reload(bonsai_tree *t, const char *spec) {
  char err[128];
  bonsai_def *d = bonsai_def_new(env);
  int r;
  assert_int_equal(trace_def(d, spec), 0);
  r = bonsai_tree_reload(t, d, err, sizeof err);
  bonsai_def_free(d);
  return r;
}

/* A host that keeps data per running node switches step by step: the map
** gives each old node's new index, BONSAI_NONE for those that did not
** carry over (whose runs were aborted, with the host's data). */
static void switch_step_map(void **state) {
  bonsai_host h = {NULL, 0, NULL};
  unsigned map[8], old;
  bonsai_nodeinfo info;
  unsigned long long v;
  bonsai_tree *t;
  bonsai_agent *ag;
  int x;
  (void)state;
  h.ud = &x;
  leaf("A", "R");
  t = build("parallel:p(A, H:h)");
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  trace_take(&trace);
  seen_take();
  v = bonsai_agent_version_id(ag);
  assert_false(bonsai_agent_stale(ag));
  assert_int_equal(reload(t, "parallel:p(wait:w{seconds=1}, H:h)"),
                   BONSAI_OK);
  assert_true(bonsai_agent_stale(ag));
  old = bonsai_agent_nodes(ag);
  assert_int_equal(old, 3);
  /* a host that switches agents itself: a tick of a stale one does
  ** nothing and says so */
  h.flags = BONSAI_HOST_SWITCHES;
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_ESTALE);
  assert_int_equal(bonsai_agent_doze(ag, 1, &h), BONSAI_ESTALE);
  assert_true(bonsai_agent_time(ag) == 1);
  assert_int_equal(bonsai_agent_version_id(ag), v);
  assert_string_equal(trace_take(&trace), "");
  h.flags = 0;
  assert_int_equal(bonsai_agent_switch(ag, &h, map, 8), BONSAI_OK);
  assert_false(bonsai_agent_stale(ag));
  assert_true(bonsai_agent_version_id(ag) != v);
  assert_int_equal(map[0], 0);           /* p */
  assert_int_equal(map[1], BONSAI_NONE); /* A: gone, aborted */
  assert_int_equal(map[2], 2);           /* h */
  assert_int_equal(bonsai_agent_node_info(ag, 1, &info), BONSAI_OK);
  assert_string_equal(info.name, "w");
  assert_string_equal(trace_take(&trace), "abort A");
  assert_string_equal(seen_take(), "");
  /* a map too small for the old version is not written; the switch is
  ** made all the same */
  v = bonsai_agent_version_id(ag);
  assert_int_equal(reload(t, "parallel:p(H:h)"), BONSAI_OK);
  map[0] = 77;
  assert_int_equal(bonsai_agent_switch(ag, &h, map, 1), BONSAI_OK);
  assert_int_equal(map[0], 77);
  assert_true(bonsai_agent_version_id(ag) != v);
  assert_int_equal(bonsai_agent_nodes(ag), 2);
  assert_string_equal(seen_take(), "");
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  assert_string_equal(seen_take(), "tick");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* A sleeping agent with interrupts dozes: its clock moves, its interrupts
** are asked, its tree is not ticked; one that fires aborts and wakes it. */
static void doze(void **state) {
  Hook hk = {0, 0};
  void *ud[2] = {NULL, &hk};
  bonsai_host h = {NULL, BONSAI_HOST_RAISES, host_interrupt};
  bonsai_agent *ag;
  (void)state;
  h.ud = ud;
  ag = start("sequence:root(H)");
  assert_int_equal(bonsai_agent_run(ag, 1, &h), BONSAI_RUNNING);
  seen_take();
  bonsai_agent_sleep(ag, 10);
  assert_int_equal(bonsai_agent_doze(ag, 2, &h), 0);
  assert_string_equal(seen_take(), "hook");
  assert_true(bonsai_agent_time(ag) == 3);
  assert_true(bonsai_agent_sleeping(ag) == 8);
  assert_int_equal(bonsai_agent_status(ag), BONSAI_RUNNING);
  hk.fire = 1;
  assert_int_equal(bonsai_agent_doze(ag, 2, &h), 1);
  assert_string_equal(seen_take(), "hook; abort");
  assert_int_equal(bonsai_agent_status(ag), BONSAI_ABORTED);
  assert_true(bonsai_agent_sleeping(ag) < 0);
  bonsai_agent_free(ag);
}

/* An agent in the host's memory: sized by the tree, released by done. */
static void agent_in_host_memory(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  size_t size;
  (void)state;
  leaf("A", "RS");
  t = build("sequence:root(A)");
  size = bonsai_agent_size(t);
  assert_true(size > 0);
  ag = (bonsai_agent *)malloc(size);
  assert_int_equal(bonsai_agent_init(ag, t, NULL, NULL), BONSAI_OK);
  bonsai_tree_release(t); /* the agent holds it */
  STEP(ag, 1, R, "enter A; tick A");
  STEP(ag, 1, S, "tick A; exit A success");
  bonsai_agent_done(ag);
  free(ag);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup_host, teardown)
  const struct CMUnitTest tests[] = {
      T(host_data_and_interrupt),
      T(raise_and_recover),
      T(cut_off_may_not_raise),
      T(switch_step_map),
      T(doze),
      T(agent_in_host_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
