/*
** agent.h: what the core's other files need of agents: error recording,
** the stale test and the protected abort of every running node.
*/
#ifndef bonsai_agent_h
#define bonsai_agent_h

#include "bstypes.h"
#include "tree.h"

/* Records the current operation's error at node (of the version the agent
** runs; BS_NONE for none), unless one is recorded already. */
BS_INTERNAL void bs_agent_fail(bonsai_agent *a, uint32_t node,
                               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* True when the tree was reloaded and the agent has not switched yet (a
** tick reads only its own blueprint until then). */
#define bs_agent_stale(a)                                                      \
  (bs_atomic_get(&(a)->bp->replaced) && (a)->bp != bs_tree_current((a)->tree))

/* Aborts every running node with callbacks protected; marks the agent
** aborted if anything ran. */
BS_INTERNAL int bs_agent_abort(bonsai_agent *a);

#endif
