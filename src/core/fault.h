/*
** fault.h: fault injection (bonsai_agent_force): nodes of an agent made to
** return a status without running, for some ticks or until removed. An
** agent with faults runs the traced copy of the tick (a->watched), which
** asks here at each node it reaches; the untraced copy never does, so an
** agent without faults pays nothing.
*/
#ifndef bonsai_fault_h
#define bonsai_fault_h

#include "bstypes.h"

/* The status forced on node i at this tick, or 0 (none). */
BS_INTERNAL int bs_fault_status(const bonsai_agent *a, uint32_t i);
/* Before a watched tick: drops the faults whose ticks are over. */
BS_INTERNAL void bs_fault_prune(bonsai_agent *a);
/* Drops every fault (a reload: their nodes were the old version's; the
** agent goes). */
BS_INTERNAL void bs_fault_drop(bonsai_agent *a);

#endif
