/*
** test_trace.c: per-agent traces through the public C API: one event per
** status change, "again" for running leaves ticked again, agent events
** (error, reset, reload) with node paths read in the version they were
** recorded in, the ring buffer overwriting its oldest events, and an
** untraced agent recording nothing; the trace hook.
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

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The waiting events of ag, taken, as "TICK PATH STATUS[+]" items joined
** by "; " ('+': ticked again); agent events read "TICK reload" etc. */
static const char *take(bonsai_agent *ag) {
  static const char *const st[] = {"idle", "running", "success", "failure",
                                   "aborted"};
  static const char *const kind[] = {"status", "reload", "error",
                                     "interrupt", "reset"};
  static char out[2048];
  bonsai_event ev[4]; /* small: several rounds of reading */
  unsigned n, k;
  size_t at = 0;
  out[0] = '\0';
  while ((n = bonsai_agent_events(ag, ev, 4)) > 0)
    for (k = 0; k < n; k++) {
      char path[128];
      int w;
      bonsai_agent_event_path(ag, &ev[k], path, sizeof path);
      if (ev[k].kind == BONSAI_TRACE_STATUS)
        w = snprintf(out + at, sizeof out - at, "%s%u %s %s%s",
                     at ? "; " : "", ev[k].tick, path, st[ev[k].status],
                     ev[k].again ? "+" : "");
      else
        w = snprintf(out + at, sizeof out - at, "%s%u %s%s%s%s%s",
                     at ? "; " : "", ev[k].tick, kind[ev[k].kind],
                     path[0] ? " " : "", path, ev[k].message ? ": " : "",
                     ev[k].message ? ev[k].message : "");
      assert_true(w > 0 && (size_t)w < sizeof out - at);
      at += (size_t)w;
    }
  return out;
}

static void untraced_records_nothing(void **state) {
  bonsai_agent *ag;
  bonsai_event ev[2];
  (void)state;
  leaf("A", "S");
  ag = start("sequence:root(A)");
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_int_equal(bonsai_agent_events(ag, NULL, 0), 0);
  assert_int_equal(bonsai_agent_events(ag, ev, 2), 0);
  /* traced, then stopped: nothing more is recorded */
  assert_int_equal(bonsai_agent_trace(ag, 8), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_int_equal(bonsai_agent_events(ag, NULL, 0), 4);
  assert_int_equal(bonsai_agent_trace(ag, 0), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_int_equal(bonsai_agent_events(ag, NULL, 0), 0);
  bonsai_agent_free(ag);
}

/* Changes in the order they happen; a running node ticked again is marked
** (the ancestors of the running leaf, root first, though the tick resumes
** below them; a leaf after its call if it stays running), but not in the
** tick it was entered; a node that ends twice in one step (the leaf, then
** its jump) is reported once. */
static void status_changes_and_again(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("A", "S");
  leaf("B", "RRS");
  ag = start("sequence:root(A, B, wait{seconds=2})");
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "1 root running; 1 root/A running; "
                                "1 root/A success; 1 root/B running");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "2 root running+; 2 root/B running+");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "3 root running+; 3 root/B success; "
                                "3 root/wait[3] running");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "4 root running+; 4 root/wait[3] running+");
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_string_equal(take(ag), "5 root running+; 5 root/wait[3] running+; "
                                "5 root/wait[3] success; 5 root success");
  /* a second run (B's script now succeeds at once): the same statuses
  ** again are changes of this tick */
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "6 root running; 6 root/A running; "
                                "6 root/A success; 6 root/B running; "
                                "6 root/B success; 6 root/wait[3] running");
  bonsai_agent_free(ag);
}

/* A reactive node's abort, an error (with its node and message) and a
** reset are recorded. */
static void aborts_errors_reset(void **state) {
  bonsai_agent *ag;
  Script *c, *b;
  (void)state;
  c = leaf("C", "FSS");
  leaf("D", "R");
  b = leaf("B", "RR");
  ag = start("reactive_selector:top(sequence:s(?C, D), B)");
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "1 top running; 1 top/s running; "
                                "1 top/s/C failure; 1 top/s failure; "
                                "1 top/B running");
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(take(ag), "2 top running+; 2 top/s running; "
                                "2 top/s/C success; "
                                "2 top/s/D running; 2 top/B aborted");
  (void)c;
  (void)b;
  bonsai_agent_free(ag);
  b = leaf("E", "RR");
  ag = start("sequence:root(E)");
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  (void)take(ag);
  b->fail_event = BONSAI_EV_TICK + 1;
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(take(ag), "2 root running+; 2 root/E aborted; "
                                "2 root aborted; "
                                "2 error root/E: E failed on purpose");
  b->fail_event = 0;
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  (void)take(ag);
  assert_int_equal(bonsai_agent_reset(ag), BONSAI_OK);
  assert_string_equal(take(ag), "3 root/E aborted; 3 root aborted; 3 reset");
  bonsai_agent_free(ag);
}

/* The ring keeps the newest n events; the overwritten ones are counted. */
static void ring_overwrites_oldest(void **state) {
  bonsai_agent *ag;
  int k;
  (void)state;
  leaf("A", "S");
  ag = start("sequence:root(A)");
  assert_int_equal(bonsai_agent_trace(ag, 4), BONSAI_OK);
  for (k = 0; k < 5; k++) /* four events a tick */
    assert_int_equal(bonsai_agent_tick(ag, 0.5), S);
  assert_int_equal(bonsai_agent_dropped(ag), 16);
  assert_string_equal(take(ag), "5 root running; 5 root/A running; "
                                "5 root/A success; 5 root success");
  assert_int_equal(bonsai_agent_dropped(ag), 0);
  assert_string_equal(take(ag), "");
  bonsai_agent_free(ag);
}

static int reload(bonsai_tree *t, const char *spec) {
  bonsai_def *d = bonsai_def_new(env);
  char err[256];
  int r;
  if (trace_def(d, spec) != 0)
    fail_msg("syntax error in %s", spec);
  r = bonsai_tree_reload(t, d, err, sizeof err);
  bonsai_def_free(d);
  return r;
}

/* Events before a reload name nodes of the old version, even after
** several reloads, and the aborts of the switch belong to the coming
** tick. */
static void reload_keeps_old_paths(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag;
  bonsai_event ev[1];
  (void)state;
  leaf("A", "S");
  leaf("B", "R");
  leaf("C", "R");
  t = build("sequence:root(A, sequence:old(B))");
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_int_equal(reload(t, "sequence:root(sequence:new(C), A)"),
                   BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_int_equal(reload(t, "sequence:root(A, C)"), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  /* one event read: the versions of the others stay readable */
  assert_int_equal(bonsai_agent_events(ag, ev, 1), 1);
  assert_string_equal(take(ag),
      "1 root/A running; 1 root/A success; 1 root/old running; "
      "1 root/old/B running; "
      "2 root/old/B aborted; 2 root/old aborted; 2 reload; "
      "2 root running+; 2 root/new running; 2 root/new/C running; "
      "3 root/new/C aborted; 3 root/new aborted; 3 reload; "
      "3 root running+; 3 root/A running; 3 root/A success; "
      "3 root/C running");
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

/* Tracing allocates through the environment and gives it all back. */
static void trace_memory(void **state) {
  bonsai_agent *ag;
  size_t m0;
  Script *b;
  (void)state;
  b = leaf("B", "R");
  ag = start("sequence:root(B)");
  b->fail_event = BONSAI_EV_TICK + 1;
  /* the first error allocates the agent's message buffer */
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  m0 = bonsai_env_memory(env);
  assert_int_equal(bonsai_agent_trace(ag, 16), BONSAI_OK);
  assert_true(bonsai_env_memory(env) > m0);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_int_equal(bonsai_agent_trace(ag, 32), BONSAI_OK); /* new size */
  assert_int_equal(bonsai_agent_events(ag, NULL, 0), 0);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_int_equal(bonsai_agent_trace(ag, 0), BONSAI_OK);
  assert_int_equal(bonsai_env_memory(env), m0);
  /* an agent freed with events and messages waiting leaks nothing (the
  ** teardown checks) */
  assert_int_equal(bonsai_agent_trace(ag, 16), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  bonsai_agent_free(ag);
}

/* The trace hook: called after each event recorded, in order, with the
** event (waiting to be read as well); removed with NULL; needs a trace and
** goes with it. */
static char hooked[512];
static void hook(bonsai_agent *ag, const bonsai_event *e, void *ud) {
  size_t at = strlen(hooked);
  (void)ag;
  snprintf(hooked + at, sizeof hooked - at, "%s%u:%d%s", at ? " " : "",
           e->node, e->status, e->again ? "+" : "");
  *(int *)ud += 1;
}

static void trace_hook(void **state) {
  bonsai_agent *ag;
  int calls = 0;
  (void)state;
  leaf("A", "S");
  leaf("B", "RS");
  ag = start("sequence:root(A, B)");
  assert_int_equal(bonsai_agent_trace_hook(ag, hook, &calls), BONSAI_EARG);
  assert_int_equal(bonsai_agent_trace_hook(ag, NULL, NULL), BONSAI_OK);
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  hooked[0] = '\0';
  assert_int_equal(bonsai_agent_trace_hook(ag, hook, &calls), BONSAI_OK);
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  assert_string_equal(hooked, "0:1 1:1 1:2 2:1");
  assert_int_equal(calls, 4);
  assert_int_equal(bonsai_agent_events(ag, NULL, 0), 4); /* still there */
  assert_string_equal(take(ag), "1 root running; 1 root/A running; "
                                "1 root/A success; 1 root/B running");
  assert_int_equal(bonsai_agent_tick(ag, 1), S);
  assert_string_equal(hooked, "0:1 1:1 1:2 2:1 0:1+ 2:2 0:2");
  assert_int_equal(bonsai_agent_trace_hook(ag, NULL, NULL), BONSAI_OK);
  bonsai_agent_tick(ag, 1);
  assert_int_equal(calls, 7);
  /* a trace made again has no hook */
  assert_int_equal(bonsai_agent_trace_hook(ag, hook, &calls), BONSAI_OK);
  assert_int_equal(bonsai_agent_trace(ag, 0), BONSAI_OK);
  assert_int_equal(bonsai_agent_trace(ag, 64), BONSAI_OK);
  bonsai_agent_tick(ag, 1);
  assert_true(bonsai_agent_events(ag, NULL, 0) > 0);
  assert_int_equal(calls, 7);
  bonsai_agent_free(ag);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(untraced_records_nothing),
      T(status_changes_and_again),
      T(aborts_errors_reset),
      T(ring_overwrites_oldest),
      T(reload_keeps_old_paths),
      T(trace_memory),
      T(trace_hook),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
