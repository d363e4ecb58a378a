/*
** events.c: events sent to agents (bonsai_agent_send). Each agent that
** was sent one has a queue: a ring that grows up to its limit (64 unless
** bonsai_agent_queue says otherwise), dropping its oldest event, counted,
** when full. A tick of the tree takes every waiting event at its start:
** they are that tick's, read by the event nodes through bs_event_find, and
** gone at its end. An agent never sent an event pays a NULL test at the
** start and the end of its ticks.
*/
#include <string.h>

#include "bonsai.h"
#include "env.h"
#include "events.h"
#include "names.h"
#include "trace.h"

/* The agent's events, made on first use (NULL when out of memory). */
static Events *eventsof(bonsai_agent *a) {
  Events *e = a->events;
  if (e == NULL && (e = bs_malloc(a->tree->env, sizeof *e)) != NULL) {
    memset(e, 0, sizeof *e);
    e->max = BONSAI_EVENTS;
    a->events = e;
  }
  return e;
}

/* Frees what event x holds (its copy of a string, or a host's payload). */
static void drop(bonsai_env *env, Event *x) {
  if (x->v.type == BONSAI_TSTRING)
    bs_free(env, (void *)x->v.u.str.s, x->v.u.str.len + 1);
  bs_payload_release(env, &x->v);
  x->v.type = BONSAI_TNIL;
}

static Event *at(const Events *e, uint32_t k) {
  k += e->head;
  return &e->q[k >= e->cap ? k - e->cap : k];
}

/* The oldest waiting event goes. */
static void dropoldest(bonsai_agent *a, Events *e) {
  drop(a->tree->env, at(e, 0));
  e->head = e->head + 1 == e->cap ? 0 : e->head + 1;
  e->count--;
  e->dropped++;
}

/* Room for one more waiting event (the ring grown, in order). */
static int room(bonsai_env *env, Events *e) {
  uint32_t ncap, k;
  Event *q;
  if (e->count < e->cap)
    return BONSAI_OK;
  ncap = e->cap ? e->cap * 2 : 4;
  if (ncap > e->max)
    ncap = e->max;
  if ((q = bs_malloc(env, ncap * sizeof *q)) == NULL)
    return BONSAI_ENOMEM;
  for (k = 0; k < e->count; k++)
    q[k] = *at(e, k);
  bs_free(env, e->q, e->cap * sizeof *e->q);
  e->q = q;
  e->cap = ncap;
  e->head = 0;
  return BONSAI_OK;
}

int bs_events_push(bonsai_agent *a, uint32_t name, bonsai_value v) {
  bonsai_env *env = a->tree->env;
  Events *e = eventsof(a);
  Event *x;
  if (e == NULL)
    return BONSAI_ENOMEM;
  if (e->max == 0) { /* it keeps none */
    e->dropped++;
    return BONSAI_OK;
  }
  if (e->count == e->max)
    dropoldest(a, e);
  if (room(env, e) != BONSAI_OK)
    return BONSAI_ENOMEM;
  if (v.type == BONSAI_TSTRING) {
    char *s = bs_strdup(env, v.u.str.s, v.u.str.len);
    if (s == NULL)
      return BONSAI_ENOMEM;
    v.u.str.s = s;
  }
  x = at(e, e->count++);
  x->name = name;
  x->v = v;
  bs_payload_retain(env, &v);
  return BONSAI_OK;
}

void bs_events_deliver(bonsai_agent *a) {
  Events *e = a->events;
  uint32_t k;
  if (e->count == 0)
    return;
  if (e->count > e->capnow) { /* the tick's list grows to the queue's */
    Event *now = bs_malloc(a->tree->env, e->cap * sizeof *now);
    if (now == NULL)
      return; /* they wait for a tick with memory */
    bs_free(a->tree->env, e->now, e->capnow * sizeof *e->now);
    e->now = now;
    e->capnow = e->cap;
  }
  for (k = 0; k < e->count; k++) {
    e->now[k] = *at(e, k);
    if (bs_unlikely(a->trace != NULL))
      bs_trace_event(a, e->now[k].name, e->now[k].v);
  }
  e->nnow = e->count;
  e->head = e->count = 0;
}

void bs_events_clear(bonsai_agent *a) {
  Events *e = a->events;
  uint32_t k;
  for (k = 0; k < e->nnow; k++)
    drop(a->tree->env, &e->now[k]);
  e->nnow = 0;
}

const Event *bs_event_find(const bonsai_agent *a, uint32_t name) {
  const Events *e = a->events;
  uint32_t k;
  if (e == NULL)
    return NULL;
  for (k = e->nnow; k-- > 0;) /* several: the last one's payload */
    if (e->now[k].name == name)
      return &e->now[k];
  return NULL;
}

void bs_events_empty(bonsai_agent *a) {
  Events *e = a->events;
  if (e == NULL)
    return;
  while (e->count > 0) {
    dropoldest(a, e);
    e->dropped--;
  }
}

void bs_events_free(bonsai_agent *a) {
  bonsai_env *env = a->tree->env;
  Events *e = a->events;
  if (e == NULL)
    return;
  bs_events_clear(a);
  bs_events_empty(a);
  bs_free(env, e->q, e->cap * sizeof *e->q);
  bs_free(env, e->now, e->capnow * sizeof *e->now);
  bs_free(env, e, sizeof *e);
  a->events = NULL;
}

/*
** {======================================================
** The API
** =======================================================
*/

int bonsai_agent_send(bonsai_agent *a, const char *name,
                      bonsai_value payload) {
  size_t len;
  int id, r;
  if (name == NULL || (len = strlen(name)) == 0 || len > BS_MAXNAME ||
      payload.type < BONSAI_TNIL || payload.type > BONSAI_THANDLE)
    return BONSAI_EARG;
  if ((id = bs_name_id(BS_EVENTS, name, len, 1)) < 0)
    return BONSAI_ENOMEM;
  if ((r = bs_events_push(a, (uint32_t)id, payload)) == BONSAI_OK)
    a->wake = 0; /* a sleeping agent wakes for it */
  return r;
}

void bonsai_env_payload_writer(bonsai_env *env, bonsai_write_fn fn) {
  env->write = fn;
}

int bonsai_agent_queue(bonsai_agent *a, unsigned n) {
  Events *e;
  if (n > 0x1000000u)
    return BONSAI_EARG;
  if (a->events == NULL && n == BONSAI_EVENTS)
    return BONSAI_OK; /* the default: nothing to make */
  if ((e = eventsof(a)) == NULL)
    return BONSAI_ENOMEM;
  e->max = n;
  while (e->count > n)
    dropoldest(a, e);
  return BONSAI_OK;
}

unsigned bonsai_agent_queue_size(const bonsai_agent *a) {
  return a->events != NULL ? a->events->max : BONSAI_EVENTS;
}

unsigned long long bonsai_agent_dropped_events(const bonsai_agent *a) {
  return a->events != NULL ? a->events->dropped : 0;
}

int bonsai_agent_queued(const bonsai_agent *a, int delivered, unsigned k,
                        const char **name, bonsai_value *payload) {
  const Events *e = a->events;
  const Event *x;
  if (e == NULL || k >= (delivered ? e->nnow : e->count))
    return 0;
  x = delivered ? &e->now[k] : at(e, k);
  if (name != NULL)
    *name = bs_name(BS_EVENTS, x->name);
  if (payload != NULL)
    *payload = x->v;
  return 1;
}

int bonsai_agent_received(const bonsai_agent *a, const char *name,
                          bonsai_value *payload) {
  const Event *x;
  int id;
  if (a->events == NULL || a->events->nnow == 0 || name == NULL ||
      (id = bs_name_id(BS_EVENTS, name, strlen(name), 0)) < 0 ||
      (x = bs_event_find(a, (uint32_t)id)) == NULL)
    return 0;
  if (payload != NULL)
    *payload = x->v;
  return 1;
}

/* }====================================================== */
