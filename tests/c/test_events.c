/*
** test_events.c: events through the public C API, tick by tick: an event
** sent to an agent waits in its queue, is delivered to its next tick (every
** node reached sees it; several of one name: the last payload) and is gone
** at that tick's end; the event, wait_event and event_guard kinds; the
** bounded queue and its counted drops; waking a sleeper; events sent from
** a leaf of the same agent; traces, saves (format 2, and format 1 still
** read) and bad input.
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

static bonsai_value num(double n) {
  bonsai_value v;
  v.type = BONSAI_TNUMBER;
  v.u.n = n;
  return v;
}

static bonsai_value str(const char *s) {
  bonsai_value v;
  v.type = BONSAI_TSTRING;
  v.u.str.s = s;
  v.u.str.len = strlen(s);
  return v;
}

static bonsai_value nil(void) {
  bonsai_value v;
  memset(&v, 0, sizeof v);
  v.type = BONSAI_TNIL;
  return v;
}

static bonsai_value get(bonsai_agent *ag, const char *key) {
  return bonsai_bb_get(bonsai_agent_bb(ag), bonsai_key(env, key, strlen(key)));
}

static void send(bonsai_agent *ag, const char *name, bonsai_value v) {
  assert_int_equal(bonsai_agent_send(ag, name, v), BONSAI_OK);
}

/* {====== delivery */

/* Delivered to the next tick only: the event node succeeds in that tick
** and fails in the next. */
static void delivered_to_the_next_tick(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("Hear", "S");
  leaf("Idle", "R");
  ag = start("reactive_selector(sequence(event{event=heard}, Hear), Idle)");
  STEP(ag, 1, R, "enter Idle; tick Idle");
  send(ag, "heard", nil());
  assert_int_equal(bonsai_agent_queued(ag, 0, 0, NULL, NULL), 1);
  STEP(ag, 1, S, "enter Hear; tick Hear; exit Hear success; abort Idle");
  assert_int_equal(bonsai_agent_queued(ag, 0, 0, NULL, NULL), 0);
  STEP(ag, 1, R, "enter Idle; tick Idle"); /* gone */
  send(ag, "other", nil()); /* another name: nothing */
  STEP(ag, 1, R, "tick Idle");
  bonsai_agent_free(ag);
}

/* The payload is written to the key before the node succeeds; several of
** one name in a tick: the payload of the last, and the event counts
** once; an event nobody looks at is gone all the same. */
static void payloads(void **state) {
  bonsai_agent *ag;
  bonsai_value v;
  (void)state;
  ag = start("sequence(event{event=heard,key=noise}, "
             "event{event=heard,key=again})");
  send(ag, "heard", str("north"));
  STEP(ag, 1, S, "");
  v = get(ag, "noise");
  assert_int_equal(v.type, BONSAI_TSTRING);
  assert_string_equal(v.u.str.s, "north");
  assert_string_equal(get(ag, "again").u.str.s, "north"); /* both see it */
  send(ag, "heard", num(1));
  send(ag, "heard", num(2));
  STEP(ag, 1, S, "");
  assert_true(get(ag, "noise").u.n == 2);
  send(ag, "heard", nil()); /* nil clears the key */
  STEP(ag, 1, S, "");
  assert_int_equal(get(ag, "noise").type, BONSAI_TNIL);
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
}

/* The queue holds 64 events unless told otherwise; when full the oldest
** is dropped, counted; 0 keeps none. */
static void bounded_queue(void **state) {
  bonsai_agent *ag;
  const char *name;
  bonsai_value v;
  int k;
  (void)state;
  ag = start("event{event=e,key=x}");
  assert_int_equal(bonsai_agent_queue_size(ag), BONSAI_EVENTS);
  for (k = 0; k < 70; k++)
    send(ag, "e", num(k));
  assert_int_equal(bonsai_agent_dropped_events(ag), 6);
  assert_int_equal(bonsai_agent_queued(ag, 0, 0, &name, &v), 1);
  assert_string_equal(name, "e");
  assert_true(v.u.n == 6); /* the oldest kept */
  assert_int_equal(bonsai_agent_queue(ag, 2), BONSAI_OK);
  assert_int_equal(bonsai_agent_dropped_events(ag), 68);
  assert_true(bonsai_agent_queued(ag, 0, 0, NULL, &v) && v.u.n == 68);
  assert_int_equal(bonsai_agent_queued(ag, 0, 2, NULL, NULL), 0);
  STEP(ag, 1, S, "");
  assert_true(get(ag, "x").u.n == 69);
  assert_int_equal(bonsai_agent_queue(ag, 0), BONSAI_OK);
  send(ag, "e", num(1));
  assert_int_equal(bonsai_agent_dropped_events(ag), 69);
  STEP(ag, 1, F, "");
  assert_int_equal(bonsai_agent_queue(ag, 0x2000000u), BONSAI_EARG);
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== the kinds */

/* wait_event: running until its event comes (then success, the payload
** written), or failure after its timeout. */
static void wait_event_kind(void **state) {
  bonsai_agent *ag;
  (void)state;
  ag = start("wait_event{event=go,key=where,timeout=2}");
  STEP(ag, 1, R, ""); /* time 1: it starts */
  send(ag, "go", str("home"));
  STEP(ag, 1, S, "");
  assert_string_equal(get(ag, "where").u.str.s, "home");
  STEP(ag, 1, R, ""); /* a new run, at time 3 */
  STEP(ag, 1, R, "");
  STEP(ag, 1, F, ""); /* time 5: 2 s */
  bonsai_agent_free(ag);
  ag = start("wait_event{event=go}"); /* no timeout: forever */
  STEP(ag, 1000, R, "");
  STEP(ag, 1000, R, "");
  bonsai_agent_free(ag);
  assert_string_equal(deferr("wait_event{timeout=1}"),
                      "wait_event: 'wait_event' needs 'event'");
  assert_string_equal(deferr("event{event=''}"),
                      "event: argument 'event' must be an event name (a "
                      "non-empty string)");
}

/* event_guard "none": its child starts only in a tick its event is
** delivered to, and goes on after; "lower": it takes over a running
** lower-priority sibling in that tick. */
static void event_guards(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("X", "R");
  leaf("Idle", "R");
  ag = start("reactive_selector(event_guard{event=alarm}(X), Idle)");
  STEP(ag, 1, R, "enter Idle; tick Idle");
  assert_string_equal(states(ag), "RF.R");
  send(ag, "alarm", nil());
  STEP(ag, 1, R, "enter X; tick X; abort Idle");
  STEP(ag, 1, R, "tick X"); /* it goes on without the event */
  bonsai_agent_free(ag);
  ag = start("selector(event_guard{event=alarm,abort=lower}(X), Idle)");
  STEP(ag, 1, R, "enter Idle; tick Idle");
  STEP(ag, 1, R, "tick Idle"); /* a selector with memory: Idle goes on */
  send(ag, "alarm", nil());
  STEP(ag, 1, R, "abort Idle; enter X; tick X");
  assert_string_equal(states(ag), "RRRA");
  bonsai_agent_free(ag);
  assert_string_equal(deferr("selector(event_guard{event=a,abort=self}(X))"),
                      "selector/event_guard[1]: an event guard's abort is "
                      "\"none\" or \"lower\" (an event holds for one tick)");
}

/* }====== */

/* {====== waking, sending from a leaf, reading from C */

static void wakes_a_sleeper(void **state) {
  bonsai_agent *ag;
  (void)state;
  leaf("Idle", "R");
  ag = start("Idle");
  STEP(ag, 1, R, "enter Idle; tick Idle");
  bonsai_agent_sleep(ag, 100);
  assert_int_equal(bonsai_agent_asleep(ag, 1), 1);
  send(ag, "noise", nil());
  assert_true(bonsai_agent_sleeping(ag) < 0);
  assert_int_equal(bonsai_agent_asleep(ag, 1), 0);
  bonsai_agent_free(ag);
}

/* A leaf that sends an event to its own agent, and one that reads the
** tick's events from C. */
static int self_sender(const bonsai_call *c) {
  bonsai_value v;
  if (bonsai_agent_received(c->agent, "ping", &v)) {
    trace_append(&trace, "got ping");
    return BONSAI_SUCCESS;
  }
  v.type = BONSAI_TNUMBER;
  v.u.n = 7;
  if (bonsai_agent_send(c->agent, "ping", v) != BONSAI_OK)
    return BONSAI_ERROR;
  trace_append(&trace, "sent ping");
  return BONSAI_FAILURE;
}

static void sent_from_its_own_leaf(void **state) {
  bonsai_agent *ag;
  bonsai_value v;
  (void)state;
  bonsai_leaf_register(env, "Sender", self_sender, NULL, 0);
  ag = start("sequence(Sender, event{event=ping})");
  STEP(ag, 1, F, "sent ping"); /* queued for the next tick */
  assert_true(bonsai_agent_queued(ag, 0, 0, NULL, &v) && v.u.n == 7);
  STEP(ag, 1, S, "got ping");
  assert_int_equal(bonsai_agent_received(ag, "ping", NULL), 0); /* gone */
  bonsai_agent_free(ag);
}

/* A payload writer of the environment: the event nodes write through it,
** with the operation's host data. */
static int writes;

static int writer(bonsai_agent *ag, void *host, int key, bonsai_value v) {
  writes++;
  assert_null(host);
  if (v.type == BONSAI_THANDLE && v.u.handle == 99)
    return bonsai_agent_error(ag, "handle 99 refused");
  return bonsai_bb_set(bonsai_agent_bb(ag), key, v);
}

static void payload_writer(void **state) {
  bonsai_agent *ag;
  bonsai_value h;
  (void)state;
  bonsai_env_payload_writer(env, writer);
  ag = start("event{event=e,key=k}");
  send(ag, "e", num(3));
  writes = 0;
  STEP(ag, 1, S, "");
  assert_int_equal(writes, 1);
  h.type = BONSAI_THANDLE;
  h.u.handle = 99;
  send(ag, "e", h);
  STEP(ag, 1, BONSAI_ELEAF, "");
  assert_string_equal(bonsai_agent_errmsg(ag), "handle 99 refused");
  bonsai_env_payload_writer(env, NULL);
  bonsai_agent_free(ag);
}

/* }====== */

/* {====== traces, saves, bad input */

static void traced(void **state) {
  bonsai_agent *ag;
  bonsai_event ev[16];
  unsigned n;
  (void)state;
  ag = start("event{event=heard,key=noise}");
  assert_int_equal(bonsai_agent_trace(ag, 16), BONSAI_OK);
  send(ag, "heard", str("north"));
  send(ag, "other", num(2));
  bonsai_agent_tick(ag, 1);
  n = bonsai_agent_events(ag, ev, 16);
  assert_int_equal(n, 3);
  assert_int_equal(ev[0].kind, BONSAI_TRACE_EVENT);
  assert_int_equal(ev[0].tick, 1);
  assert_int_equal(ev[0].node, BONSAI_NONE);
  assert_string_equal(ev[0].message, "heard");
  assert_int_equal(ev[0].payload.type, BONSAI_TSTRING);
  assert_string_equal(ev[0].payload.u.str.s, "north");
  assert_string_equal(ev[1].message, "other");
  assert_true(ev[1].payload.type == BONSAI_TNUMBER && ev[1].payload.u.n == 2);
  assert_int_equal(ev[2].kind, BONSAI_TRACE_STATUS);
  assert_int_equal(ev[2].status, S);
  bonsai_agent_free(ag);
}

/* Queued events and the count of those dropped are saved; a restore
** replaces the queue. A format 1 save (no events) still restores. */
static void saved(void **state) {
  bonsai_tree *t;
  bonsai_agent *ag, *b;
  Saved s = {NULL, 0};
  bonsai_value v, h;
  const char *name;
  (void)state;
  t = build("event{event=heard,key=noise}");
  ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_agent_queue(ag, 2);
  send(ag, "heard", str("a"));
  send(ag, "heard", str("b"));
  send(ag, "heard", num(3));
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &s), BONSAI_OK);
  b = bonsai_agent_new(t, NULL, NULL);
  send(b, "old", nil());
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_OK);
  assert_int_equal(bonsai_agent_dropped_events(b), 1);
  assert_true(bonsai_agent_queued(b, 0, 0, &name, &v));
  assert_string_equal(name, "heard");
  assert_string_equal(v.u.str.s, "b");
  assert_true(bonsai_agent_queued(b, 0, 1, NULL, &v) && v.u.n == 3);
  STEP(b, 1, S, "");
  assert_true(get(b, "noise").u.n == 3);
  bonsai_agent_free(b);
  free(s.p);
  /* format 1: without the last sections (no waits, no latent nodes, no
  ** events, nothing dropped: 4 + 4 + 4 + 8 bytes) */
  s.p = NULL;
  s.n = 0;
  bonsai_agent_free(ag);
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &s), BONSAI_OK);
  s.p[4] = 1;
  b = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n - 20, NULL), BONSAI_OK);
  assert_int_equal(bonsai_agent_restore(b, s.p, s.n, NULL), BONSAI_EARG);
  bonsai_agent_free(b);
  free(s.p);
  /* a host's payload needs a host that saves it */
  s.p = NULL;
  s.n = 0;
  h.type = BONSAI_THANDLE;
  h.u.handle = 5;
  send(ag, "heard", h);
  assert_int_equal(bonsai_agent_save(ag, NULL, saved_put, &s), BONSAI_EARG);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "event 'heard': a payload of the host cannot be saved");
  free(s.p);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
}

static void bad_input(void **state) {
  bonsai_agent *ag;
  bonsai_value v = nil();
  char longname[1100];
  (void)state;
  ag = start("event{event=e}");
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  assert_int_equal(bonsai_agent_send(ag, NULL, v), BONSAI_EARG);
  assert_int_equal(bonsai_agent_send(ag, "", v), BONSAI_EARG);
  assert_int_equal(bonsai_agent_send(ag, longname, v), BONSAI_EARG);
  longname[1024] = '\0';
  assert_int_equal(bonsai_agent_send(ag, longname, v), BONSAI_OK);
  v.type = 42;
  assert_int_equal(bonsai_agent_send(ag, "e", v), BONSAI_EARG);
  assert_int_equal(bonsai_agent_queued(ag, 0, 0, NULL, NULL), 1);
  assert_int_equal(bonsai_agent_received(ag, NULL, NULL), 0);
  STEP(ag, 1, F, "");
  bonsai_agent_free(ag);
}

/* }====== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(delivered_to_the_next_tick, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(payloads, setup, teardown),
      cmocka_unit_test_setup_teardown(bounded_queue, setup, teardown),
      cmocka_unit_test_setup_teardown(wait_event_kind, setup, teardown),
      cmocka_unit_test_setup_teardown(event_guards, setup, teardown),
      cmocka_unit_test_setup_teardown(wakes_a_sleeper, setup, teardown),
      cmocka_unit_test_setup_teardown(sent_from_its_own_leaf, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(payload_writer, setup, teardown),
      cmocka_unit_test_setup_teardown(traced, setup, teardown),
      cmocka_unit_test_setup_teardown(saved, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_input, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
