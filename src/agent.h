/*
** agent.h: the steps of a tick that the binding runs itself (so that it can
** check interrupts and call Lua in between), and error recording.
*/
#ifndef bonsai_agent_h
#define bonsai_agent_h

#include "bstypes.h"

/* Records a message (unless an abort pass keeps an earlier one). */
BS_INTERNAL void bs_agent_seterr(bonsai_agent *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* An agent in memory the caller provides (the Lua binding puts it inside
** a userdata): bs_agent_size bytes, 8-aligned. bs_agent_done releases what
** it holds but not its memory. */
BS_INTERNAL size_t bs_agent_size(const bonsai_tree *t);
BS_INTERNAL int bs_agent_init(bonsai_agent *a, bonsai_tree *t, bonsai_bb *bb,
                              void *owner);
BS_INTERNAL void bs_agent_done(bonsai_agent *a);

/* Before a tick: refuses a busy agent or a bad dt, advances the clock and
** marks the agent busy. */
BS_INTERNAL int bs_agent_start(bonsai_agent *a, double dt);
/* After a tick (or a failed one): the agent is free again. */
BS_INTERNAL void bs_agent_finish(bonsai_agent *a, int status);

/* True when the tree was reloaded and the agent has not switched yet (a
** tick reads only its own blueprint until then). */
#define bs_agent_stale(a) ((a)->bp->replaced && (a)->bp != (a)->tree->bp)
/* Switches the agent to its tree's current blueprint. */
BS_INTERNAL int bs_agent_migrate(bonsai_agent *a);

/* Aborts every running node with callbacks protected; marks the agent
** aborted if anything ran. */
BS_INTERNAL int bs_agent_abort(bonsai_agent *a);

#endif
