/*
** reload.h: moving an agent's state from one version of its tree to the
** next.
*/
#ifndef bonsai_reload_h
#define bonsai_reload_h

#include "bstypes.h"

/* A migration plan from one version to another (refcounted: a callback
** run during a migration may replace the tree's cached plan). */
typedef struct Plan {
  int refs;
  bonsai_env *env;      /* whose allocator holds it */
  Blueprint *from, *to; /* each held by the plan */
  uint32_t *map;        /* map[old node] = new node, or BS_NONE */
  uint32_t *carry;      /* ncarry pairs (old, new): matched lasting data */
  uint32_t ncarry;
  int same;             /* the same nodes, paths and state layout: a state
                        ** carries over in place (bs_reload_inplace) */
  size_t size;
} Plan;

/* The plan from the agent's version to its tree's current one, with a
** reference for the caller (NULL when out of memory). */
BS_INTERNAL Plan *bs_reload_plan(bonsai_agent *a);
BS_INTERNAL void bs_plan_release(Plan *p);

/* Fills ns (sized for plan->to) from the agent's state on plan->from,
** aborting the running nodes that do not carry over (BONSAI_ELEAF if one
** of those aborts failed: the first failure is recorded). The caller swaps
** the state block and the blueprint afterwards. */
BS_INTERNAL int bs_reload_state(bonsai_agent *a, const Plan *plan,
                                uint8_t *ns);

/* For a plan between versions of the same shape (plan->same): moves the
** agent's state in place, with the result bs_reload_state would give
** (nothing is aborted: every running node is kept). */
BS_INTERNAL void bs_reload_inplace(bonsai_agent *a, const Plan *plan);

/* Drops the tree's cached plan (the tree changed version or goes away). */
BS_INTERNAL void bs_reload_forget(bonsai_tree *t);

#endif
