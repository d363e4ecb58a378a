/*
** events.h: an agent's events (bonsai_agent_send): the queue of events
** waiting for its next tick, and the events delivered to the tick under
** way, which the event nodes read (vm.c) and which go at its end.
*/
#ifndef bonsai_events_h
#define bonsai_events_h

#include "bstypes.h"

/* An event: its name (an id of names.c's BS_EVENTS) and its payload (a
** string is the event's own copy). */
typedef struct Event {
  uint32_t name;
  bonsai_value v;
} Event;

typedef struct Events {
  Event *q;                   /* ring of waiting events, the oldest at head */
  uint32_t cap, head, count;  /* cap: allocated, grown up to max */
  uint32_t max;               /* the most it holds (bonsai_agent_queue) */
  Event *now;                 /* delivered to the tick under way */
  uint32_t nnow, capnow;
  unsigned long long dropped; /* since the agent was made */
} Events;

/* At the start of a tick: the waiting events become the tick's (traced
** when the agent is). Only called when a->events is not NULL. */
BS_INTERNAL void bs_events_deliver(bonsai_agent *a);
/* At the end of a tick: its events are gone. */
BS_INTERNAL void bs_events_clear(bonsai_agent *a);
/* The last event called name delivered to the tick under way, or NULL. */
BS_INTERNAL const Event *bs_event_find(const bonsai_agent *a, uint32_t name);
/* Queues an event (the payload is copied); BONSAI_OK or BONSAI_ENOMEM. */
BS_INTERNAL int bs_events_push(bonsai_agent *a, uint32_t name,
                               bonsai_value v);
/* Drops every waiting event (a restore replaces them), not counted. */
BS_INTERNAL void bs_events_empty(bonsai_agent *a);
BS_INTERNAL void bs_events_free(bonsai_agent *a);

#endif
