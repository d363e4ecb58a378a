/*
** agent.h: the steps of a tick that the binding runs itself (so that it can
** check interrupts and call Lua in between), and error recording.
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
/* Forgets the last error (an operation starts). */
BS_INTERNAL void bs_agent_clearerr(bonsai_agent *a);

/* An agent in memory the caller provides (the Lua binding puts it inside
** a userdata): bs_agent_size bytes, 8-aligned. bs_agent_done releases what
** it holds but not its memory. */
BS_INTERNAL size_t bs_agent_size(const bonsai_tree *t);
BS_INTERNAL int bs_agent_init(bonsai_agent *a, bonsai_tree *t, bonsai_bb *bb,
                              void *owner);
BS_INTERNAL void bs_agent_done(bonsai_agent *a);

/* Before a tick: refuses a busy agent (BONSAI_EBUSY, its error untouched)
** or a bad dt, forgets the last error, advances the clock and marks the
** agent busy. */
BS_INTERNAL int bs_agent_start(bonsai_agent *a, double dt);
/* After a tick (or a failed one): the agent is free again. */
BS_INTERNAL void bs_agent_finish(bonsai_agent *a, int status);

/* True when the tree was reloaded and the agent has not switched yet (a
** tick reads only its own blueprint until then). */
#define bs_agent_stale(a)                                                      \
  (bs_atomic_get(&(a)->bp->replaced) && (a)->bp != bs_tree_current((a)->tree))
/* One step of a switch to the tree's current version: the running nodes
** that do not carry over are aborted (callbacks protected; they may reload
** the tree again, so the agent can still be stale afterwards). *plan gets
** the plan used, with a reference (NULL if it could not be made); the
** caller releases it. BONSAI_ENOMEM with the agent still on its version
** when the new state could not be allocated; BONSAI_ELEAF when an abort
** failed (recorded). */
struct Plan;
BS_INTERNAL int bs_agent_migrate(bonsai_agent *a, struct Plan **plan);

/* Aborts every running node with callbacks protected; marks the agent
** aborted if anything ran. */
BS_INTERNAL int bs_agent_abort(bonsai_agent *a);

#endif
