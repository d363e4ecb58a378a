/*
** agent.h: the start and end of a tick, for step.c's stepped ticks.
*/
#ifndef bonsai_agent_h
#define bonsai_agent_h

#include "bstypes.h"

/* The start of a tick that start() in agent.c checked would start (not
** busy, dt >= 0): forgets the last error, advances the clock, marks the
** agent busy with host h. */
BS_INTERNAL void bs_agent_start(bonsai_agent *a, double dt,
                                const bonsai_host *h);
/* The end of a tick with status (< 0: failed): the agent is free again;
** returns status. */
BS_INTERNAL int bs_agent_finish(bonsai_agent *a, int status);

#endif
