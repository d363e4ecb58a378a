/*
** latent.h: the bookkeeping of latent aborts (vm.c's abort path steps
** them): the nodes whose abort callback returned RUNNING and has not ended
** ('aborting'), and the nodes waiting for the aborts they started, each
** with what it does once they have ended ('waits').
*/
#ifndef bonsai_latent_h
#define bonsai_latent_h

#include "bstypes.h"

/* A node (an action, or a control node's own abort callback) whose abort
** takes its time. */
typedef struct Aborting {
  uint32_t node;
  uint32_t called; /* the tick (a->serial) of its last call */
  double since;    /* agent time when its abort started */
  uint8_t final;   /* restored: its next call is its last */
} Aborting;

/* A node (BS_NONE: the agent, for an abort of the root) waiting for the
** aborts of its children that it started: then it is ticked again at 'to'
** (itself, or one of its children), or with 'to' BS_NONE ends with
** 'status'. */
typedef struct Wait {
  uint32_t node;
  uint32_t to;
  uint8_t status;
} Wait;

typedef struct Latent {
  Aborting *l;
  uint32_t nl, capl;
  Wait *w;
  uint32_t nw, capw;
} Latent;

/* The entry of node, or NULL. */
BS_INTERNAL Aborting *bs_aborting(const bonsai_agent *a, uint32_t node);
/* A new entry for node (since now, called this tick); NULL when out of
** memory (the abort is then not latent). */
BS_INTERNAL Aborting *bs_aborting_add(bonsai_agent *a, uint32_t node);
BS_INTERNAL void bs_aborting_drop(bonsai_agent *a, uint32_t node);
BS_INTERNAL Wait *bs_wait(const bonsai_agent *a, uint32_t node);
/* Makes node wait (a wait it had is replaced); BONSAI_OK or
** BONSAI_ENOMEM. */
BS_INTERNAL int bs_wait_set(bonsai_agent *a, uint32_t node, uint32_t to,
                            int status);
BS_INTERNAL void bs_wait_drop(bonsai_agent *a, uint32_t node);
/* After a switch to another version: map[old node] is the new node or
** BS_NONE; st the new state. Entries of nodes gone, or no longer aborting
** (waiting), are dropped. */
BS_INTERNAL void bs_latent_remap(bonsai_agent *a, const uint32_t *map,
                                 const uint8_t *st);
BS_INTERNAL void bs_latent_free(bonsai_agent *a);

#endif
