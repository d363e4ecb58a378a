/*
** agent.h: what agent.c shares with step.c's stepped ticks: whether an
** agent must switch versions before its tick, and the start and end of a
** tick.
*/
#ifndef bonsai_agent_h
#define bonsai_agent_h

#include "bstypes.h"
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

/* The start of a tick that start() in agent.c checked would start (not
** busy, dt >= 0): forgets the last error, advances the clock, marks the
** agent busy with host h. */
BS_INTERNAL void bs_agent_start(bonsai_agent *a, double dt,
                                const bonsai_host *h);
/* The end of a tick with status (< 0: failed): the agent is free again;
** returns status. */
BS_INTERNAL int bs_agent_finish(bonsai_agent *a, int status);

#endif
