/*
** agent.h: what agent.c shares with step.c's stepped ticks: whether an
** agent must switch versions before its tick, and the start and end of a
** tick.
*/
#ifndef bonsai_agent_h
#define bonsai_agent_h

#include "bonsai.h"
#include "bstypes.h"
#include "env.h"
#include "events.h"
#include "trace.h"
#include "tree.h"

/* Whether something keeps the agent on the version it runs across
** reloads: its own hold (bonsai_agent_hold), or its tree's unless it has
** a pass (bonsai_tree_hold, bonsai_agent_pass). */
static inline int bs_agent_kept(const bonsai_agent *a) {
  return a->held || (a->tree->held && !a->pass);
}

/* True when the tree was reloaded and the agent has not switched yet (a
** tick reads only its own blueprint until then) and nothing keeps it on
** its version. Every path that switches an agent asks this (a tick, a
** stepped tick, a doze, an abort, a reset, bonsai_agent_switch), so a
** held one switches nowhere, and at its first tick after the release
** switches to the newest version. It runs at every tick: while no reload
** is pending it costs one load and a branch. */
static inline int bs_agent_stale(const bonsai_agent *a) {
  return bs_atomic_get(&a->bp->replaced) && !bs_agent_kept(a) &&
         a->bp != bs_tree_current(a->tree);
}

/* The host of the operation starting (NULL: none, when it ends). */
static inline void bs_agent_sethost(bonsai_agent *a, const bonsai_host *h) {
  a->hostud = h != NULL ? h->ud : NULL;
  a->raises = h != NULL && (h->flags & BONSAI_HOST_RAISES) != 0;
}

/* The start of a tick that start() in agent.c checked would start (not
** busy, dt >= 0): forgets the last error, advances the clock, marks the
** agent busy with host h. Inlined where a tick starts (agent.c, step.c). */
static inline void bs_agent_start(bonsai_agent *a, double dt,
                                  const bonsai_host *h) {
  if (a->failed)
    bonsai_agent_clearerr(a);
  a->time += dt;
  a->serial++;
  a->busy = 1;
  a->current = BS_NONE;
  bs_agent_sethost(a, h);
}

/* A stepped tick is over: its record goes back to the environment's. */
static inline void bs_agent_stepdone(bonsai_agent *a) {
  bonsai_env *env = a->tree->env;
  a->nstep = 0;
  if (a->step != NULL) {
    a->step->nextfree = env->freesteps;
    env->freesteps = a->step;
    a->step = NULL;
  }
}

/* After a tick (or a failed one), with status (< 0: failed): the agent is
** free again; the events delivered to the tick are gone, and one sent
** during it wakes it; it does not sleep while an abort takes its time (its
** callback is called at every tick). Returns status. */
static inline int bs_agent_finish(bonsai_agent *a, int status) {
  if (bs_unlikely(a->events != NULL)) {
    bs_events_clear(a);
    if (a->events->count > 0)
      a->wake = 0;
  }
  if (bs_unlikely(a->latent != NULL))
    a->wake = 0;
  a->busy = 0;
  if (a->step != NULL) /* stepped runs left in it are over (step.c) */
    bs_agent_stepdone(a);
  a->last = (uint8_t)(status < 0 ? BONSAI_ABORTED : status);
  bs_agent_sethost(a, NULL);
  return status;
}

#endif
