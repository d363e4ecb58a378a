/*
** profile.h: the per-node profile of a tree (bonsai_tree_profile): calls
** and seconds per node, summed over every agent of the tree, the leaves'
** own time (their callbacks) apart from the runtime's. A profiled agent
** runs the traced copy of the tick (a->watched), which calls here; the
** untraced copy never does, so a tree without a profile pays nothing.
*/
#ifndef bonsai_profile_h
#define bonsai_profile_h

#include "bstypes.h"

/* The tick of agent a starts and ends (the traced copy, a->prof set). */
BS_INTERNAL void bs_prof_begin(bonsai_agent *a);
BS_INTERNAL void bs_prof_end(bonsai_agent *a);
/* The tick reaches node i: one call, and the runtime's time so far goes to
** the node it was at. */
BS_INTERNAL void bs_prof_visit(bonsai_agent *a, uint32_t i);
/* Around a leaf's callback at node i. */
BS_INTERNAL void bs_prof_leaf(bonsai_agent *a, uint32_t i, int after);
/* A tick left by a Lua error (bs_vm_recover): it counts no more. */
BS_INTERNAL void bs_prof_abandon(bonsai_agent *a);
/* An agent of t is made or goes: it takes the tree's profile, or leaves
** the tree's list of agents. */
BS_INTERNAL void bs_prof_join(bonsai_agent *a);
BS_INTERNAL void bs_prof_leave(bonsai_agent *a);
/* Frees the tree's profile (the tree goes). */
BS_INTERNAL void bs_prof_free(bonsai_tree *t);

#endif
