/*
** trace.c: the per-agent event ring buffer behind bonsai_agent_trace and
** a:trace/a:events. Events are compact (tick, time, node, status, again)
** and written only when the agent has a trace; the VM reaches here through
** bs_setstatus, its one door for status stores. The blueprints that
** recorded events refer to are kept alive until those events are read, so
** a node index is always read in the version it was recorded in.
*/
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "env.h"
#include "names.h"
#include "trace.h"

typedef struct Ev {
  double time;
  uint32_t tick, node, ver; /* BONSAI_TRACE_EVENT: node is the event's name
                            ** (names.c), its payload in its message */
  uint8_t kind, status, again; /* again: 1, FORCED or CUTOFF */
} Ev;

#define FORCED 2 /* Ev.again: the status a fault forced (fault.c) */
#define CUTOFF 3 /* Ev.again: a latent abort cut off by its abort_timeout */

/* An error message, owned by its event, then by the 'gone' list. */
typedef struct Msg {
  struct Msg *next;
  size_t size; /* of the whole allocation */
  int payload; /* 1: an event's payload (PAYLOAD), else text */
  char text[1];
} Msg;

typedef struct Trace {
  bonsai_env *env;
  Ev *ev;             /* ring: the oldest at head */
  Msg **msg;          /* parallel to ev: error messages, or NULL */
  uint32_t cap, head, count;
  uint32_t dropped;   /* overwritten since the last read */
  uint32_t ahead;     /* 1 while migrating: events belong to the next tick */
  Blueprint **bps;    /* bps[k] is version verbase + k; the last is current */
  uint32_t nbp, capbp, verbase;
  Msg *gone;          /* messages of events already read */
  bonsai_trace_hook hook; /* bonsai_agent_trace_hook, or NULL */
  void *hookud;
} Trace;

/* Slot k places after the oldest (k < 2 cap), without a division. */
static uint32_t slot(const Trace *t, uint32_t k) {
  k += t->head;
  return k >= t->cap ? k - t->cap : k;
}

/* The payload of a BONSAI_TRACE_EVENT, kept in its message: the value
** (a string's bytes follow it). */
typedef struct Payload {
  bonsai_value v;
  char s[1];
} Payload;

#define PAYLOAD(m) ((const Payload *)(void *)((m)->text + 7 - \
                    ((uintptr_t)((m)->text + 7) & 7)))

static void freemsgs(bonsai_env *env, Msg *m) {
  while (m != NULL) {
    Msg *next = m->next;
    if (m->payload) /* a host's payload is let go with it */
      bs_payload_release(env, &PAYLOAD(m)->v);
    bs_free(env, m, m->size);
    m = next;
  }
}

/* Appends an event, overwriting the oldest when the ring is full. A
** BONSAI_TRACE_EVENT's payload is pv (node: the name); another's message
** msg. */
static void push(bonsai_agent *a, int kind, uint32_t node, int status,
                 int again, const char *msg, const bonsai_value *pv) {
  Trace *t = a->trace;
  uint32_t k;
  Ev *e;
  if (t->count == t->cap) { /* the oldest goes */
    if (t->msg[t->head] != NULL) {
      freemsgs(t->env, t->msg[t->head]);
      t->msg[t->head] = NULL;
    }
    t->head = slot(t, 1);
    t->count--;
    t->dropped++;
  }
  k = slot(t, t->count++);
  e = &t->ev[k];
  e->time = a->time;
  e->tick = a->serial + t->ahead;
  e->node = node;
  e->ver = t->verbase + t->nbp - 1;
  e->kind = (uint8_t)kind;
  e->status = (uint8_t)status;
  e->again = (uint8_t)again;
  if (msg != NULL) {
    size_t len = strlen(msg), size = sizeof(Msg) + len;
    Msg *m = bs_malloc(t->env, size);
    if (m != NULL) {
      m->next = NULL;
      m->size = size;
      m->payload = 0;
      memcpy(m->text, msg, len + 1);
    }
    t->msg[k] = m;
  } else if (pv != NULL) { /* a payload: the value, then a string's bytes */
    size_t len = pv->type == BONSAI_TSTRING ? pv->u.str.len : 0;
    size_t size = sizeof(Msg) + 8 + sizeof(Payload) + len;
    Msg *m = bs_malloc(t->env, size);
    if (m != NULL) {
      Payload *p = (Payload *)PAYLOAD(m);
      m->next = NULL;
      m->size = size;
      m->payload = 1;
      p->v = *pv;
      bs_payload_retain(t->env, pv); /* until the event is let go */
      if (len > 0)
        memcpy(p->s, pv->u.str.s, len);
      p->s[len] = '\0';
      if (pv->type == BONSAI_TSTRING)
        p->v.u.str.s = p->s;
    }
    t->msg[k] = m;
  }
  if (t->hook != NULL) {
    bonsai_event ev;
    ev.time = e->time;
    ev.tick = e->tick;
    ev.node = e->node;
    ev.version = e->ver;
    ev.kind = kind;
    ev.status = status;
    ev.again = again == 1;
    ev.forced = again == FORCED;
    ev.cutoff = again == CUTOFF;
    ev.message = msg;
    ev.payload.type = BONSAI_TNIL;
    if (kind == BONSAI_TRACE_EVENT) {
      ev.node = BS_NONE;
      ev.message = bs_name(BS_EVENTS, node);
      ev.payload = *pv;
    }
    t->hook(a, &ev, t->hookud);
  }
}

void bs_trace_status(bonsai_agent *a, uint32_t i, int old, int s) {
  Trace *t = a->trace;
  if (t == NULL)
    return; /* stopped by a leaf during the tick */
  if (old == s) {
    const Ev *e;
    if (s == BONSAI_RUNNING || s == BONSAI_IDLE || s == BONSAI_ABORTING)
      return; /* a composite marked running again: no change */
    e = t->count > 0 ? &t->ev[slot(t, t->count - 1)] : NULL;
    if (e != NULL && e->kind == BONSAI_TRACE_STATUS && e->node == i &&
        e->status == s && e->tick == a->serial + t->ahead)
      return; /* stored twice in one step (a leaf, then its jump) */
  }
  if (i == a->forcing) { /* a forced node's status (fault.c) */
    a->forcing = BS_NONE;
    push(a, BONSAI_TRACE_STATUS, i, s, FORCED, NULL, NULL);
    return;
  }
  push(a, BONSAI_TRACE_STATUS, i, s, i == a->cutting ? CUTOFF : 0, NULL,
       NULL);
}

void bs_trace_again(bonsai_agent *a, uint32_t i) {
  Trace *t = a->trace;
  if (t == NULL)
    return;
  if (t->count > 0) { /* entered in this very tick: not "again" */
    const Ev *e = &t->ev[slot(t, t->count - 1)];
    if (e->kind == BONSAI_TRACE_STATUS && e->node == i &&
        e->status == a->state[i] && e->tick == a->serial + t->ahead)
      return;
  }
  push(a, BONSAI_TRACE_STATUS, i, a->state[i], 1, NULL, NULL);
}

void bs_trace_event(bonsai_agent *a, uint32_t name, bonsai_value v) {
  push(a, BONSAI_TRACE_EVENT, name, BONSAI_IDLE, 0, NULL, &v);
}

void bs_trace_mark(bonsai_agent *a, int kind, uint32_t node,
                   const char *msg) {
  Trace *t = a->trace;
  if (kind == BONSAI_TRACE_RELOAD && t->bps[t->nbp - 1] != a->bp) {
    if (t->nbp == t->capbp) {
      uint32_t cap = t->capbp * 2;
      Blueprint **b = bs_realloc(t->env, t->bps, t->capbp * sizeof *b,
                                 cap * sizeof *b);
      if (b == NULL)
        return; /* the event is lost, not the trace */
      t->bps = b;
      t->capbp = cap;
    }
    t->bps[t->nbp++] = a->bp;
    bs_bp_retain(a->bp);
  }
  push(a, kind, node, BONSAI_IDLE, 0, msg, NULL);
}

void bs_trace_migrating(bonsai_agent *a, int on) {
  a->trace->ahead = on ? 1 : 0;
}

void bs_trace_free(bonsai_agent *a) {
  Trace *t = a->trace;
  uint32_t k;
  if (t == NULL)
    return;
  a->trace = NULL;
  bs_rewatch(a);
  for (k = 0; k < t->cap; k++)
    freemsgs(t->env, t->msg[k]);
  freemsgs(t->env, t->gone);
  for (k = 0; k < t->nbp; k++)
    bs_bp_release(t->bps[k]);
  bs_free(t->env, t->bps, t->capbp * sizeof *t->bps);
  bs_free(t->env, t->msg, t->cap * sizeof *t->msg);
  bs_free(t->env, t->ev, t->cap * sizeof *t->ev);
  bs_free(t->env, t, sizeof *t);
}

int bs_trace_hooked(const bonsai_agent *a) {
  return a->trace != NULL && a->trace->hook != NULL;
}

int bonsai_agent_trace_hook(bonsai_agent *a, bonsai_trace_hook fn,
                            void *ud) {
  if (a->trace == NULL)
    return fn == NULL ? BONSAI_OK : BONSAI_EARG;
  a->trace->hook = fn;
  a->trace->hookud = ud;
  return BONSAI_OK;
}

int bonsai_agent_trace(bonsai_agent *a, unsigned n) {
  bonsai_env *env = a->tree->env;
  Trace *t;
  if (a->trace != NULL && a->trace->cap == n)
    return BONSAI_OK; /* already so */
  bs_trace_free(a);
  if (n == 0)
    return BONSAI_OK;
  if (n > 0x10000000u)
    return BONSAI_EARG;
  if ((t = bs_malloc(env, sizeof *t)) == NULL)
    return BONSAI_ENOMEM;
  memset(t, 0, sizeof *t);
  t->env = env;
  t->cap = n;
  t->capbp = 4;
  t->ev = bs_malloc(env, n * sizeof *t->ev);
  t->msg = bs_malloc(env, n * sizeof *t->msg);
  t->bps = bs_malloc(env, t->capbp * sizeof *t->bps);
  if (t->ev == NULL || t->msg == NULL || t->bps == NULL) {
    if (t->ev != NULL)
      bs_free(env, t->ev, n * sizeof *t->ev);
    if (t->msg != NULL)
      bs_free(env, t->msg, n * sizeof *t->msg);
    if (t->bps != NULL)
      bs_free(env, t->bps, t->capbp * sizeof *t->bps);
    bs_free(env, t, sizeof *t);
    return BONSAI_ENOMEM;
  }
  memset(t->msg, 0, n * sizeof *t->msg);
  t->bps[0] = a->bp;
  t->nbp = 1;
  bs_bp_retain(a->bp);
  a->trace = t;
  bs_rewatch(a);
  return BONSAI_OK;
}

unsigned bonsai_agent_dropped(const bonsai_agent *a) {
  return a->trace != NULL ? a->trace->dropped : 0;
}

unsigned bonsai_agent_events(bonsai_agent *a, bonsai_event *out,
                             unsigned max) {
  Trace *t = a->trace;
  uint32_t need, k, n;
  if (t == NULL)
    return 0;
  if (out == NULL)
    return t->count;
  freemsgs(t->env, t->gone); /* the last read's messages */
  t->gone = NULL;
  /* versions older than the oldest waiting event are no longer needed */
  need = t->count > 0 ? t->ev[t->head].ver : t->verbase + t->nbp - 1;
  for (k = 0; t->verbase + k < need && k + 1 < t->nbp; k++)
    bs_bp_release(t->bps[k]);
  if (k > 0) {
    memmove(t->bps, t->bps + k, (t->nbp - k) * sizeof *t->bps);
    t->nbp -= k;
    t->verbase += k;
  }
  n = max < t->count ? max : t->count;
  for (k = 0; k < n; k++) {
    uint32_t j = slot(t, k);
    const Ev *e = &t->ev[j];
    out[k].time = e->time;
    out[k].tick = e->tick;
    out[k].node = e->node;
    out[k].version = e->ver;
    out[k].kind = e->kind;
    out[k].status = e->status;
    out[k].again = e->again == 1;
    out[k].forced = e->again == FORCED;
    out[k].cutoff = e->again == CUTOFF;
    out[k].message = NULL;
    out[k].payload.type = BONSAI_TNIL;
    if (e->kind == BONSAI_TRACE_EVENT) {
      out[k].node = BS_NONE;
      out[k].message = bs_name(BS_EVENTS, e->node);
      if (t->msg[j] != NULL)
        out[k].payload = PAYLOAD(t->msg[j])->v;
    }
    if (t->msg[j] != NULL) { /* kept until the next read */
      if (e->kind != BONSAI_TRACE_EVENT)
        out[k].message = t->msg[j]->text;
      t->msg[j]->next = t->gone;
      t->gone = t->msg[j];
      t->msg[j] = NULL;
    } else if (e->kind == BONSAI_TRACE_ERROR) {
      out[k].message = ""; /* its copy could not be made */
    }
  }
  t->head = slot(t, n);
  t->count -= n;
  t->dropped = 0;
  return n;
}

size_t bonsai_agent_event_path(const bonsai_agent *a, const bonsai_event *ev,
                               char *buf, size_t size) {
  const Trace *t = a->trace;
  const Blueprint *bp;
  if (size > 0)
    buf[0] = '\0';
  if (t == NULL || ev->node == BS_NONE || ev->version < t->verbase ||
      ev->version - t->verbase >= t->nbp)
    return 0;
  bp = t->bps[ev->version - t->verbase];
  if (ev->node >= bp->n)
    return 0;
  return bs_bp_path(bp, ev->node, buf, size);
}
