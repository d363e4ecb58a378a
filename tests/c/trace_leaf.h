/*
** trace_leaf.h: a scripted C leaf for the core tests. Each leaf returns the
** statuses of its script in turn (the last one repeats) and appends its
** events ("enter A", "tick A", "exit A success", "abort A") to a shared
** trace, which the tests compare tick by tick.
*/
#ifndef bonsai_trace_leaf_h
#define bonsai_trace_leaf_h

#include "bonsai.h"

typedef struct Trace {
  char buf[8192];
  size_t n;
} Trace;

typedef struct Script {
  const char *name;
  Trace *trace;
  int statuses[16]; /* ends at the first 0 (BONSAI_IDLE) */
  int at;           /* ticks so far */
  int fail_event;   /* event (+1) on which the leaf reports an error; 0 none */
} Script;

/* Empties the trace. */
void trace_clear(Trace *t);
/* Returns the trace and empties it (valid until the next call). */
const char *trace_take(Trace *t);

/* The leaf function; call->data is a Script. */
int trace_leaf(const bonsai_call *call);

/* Registers s under s->name with every lifecycle event. */
void trace_register(bonsai_env *env, Script *s);

#endif
