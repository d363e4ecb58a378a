/*
** fault.c: fault injection, Groot2's "replace" hooks: bonsai_agent_force
** makes a node of one agent return success or failure without running
** (a running node is aborted first), for the agent's next N ticks or until
** removed. The faults are a short list per agent, by node index of the
** version the agent runs: a reload drops them. The events of forced nodes
** are marked (bonsai_event.forced).
*/
#include <string.h>

#include "bonsai.h"
#include "env.h"
#include "fault.h"
#include "trace.h"

typedef struct Fault {
  uint32_t node;
  uint32_t until;  /* the last tick (a->serial) it applies to; 0: no end */
  uint8_t status;  /* BONSAI_SUCCESS or BONSAI_FAILURE */
} Fault;

/* Whether fault f applies to the tick under way (busy), or to the next. */
static int live(const bonsai_agent *a, const Fault *f) {
  return f->until == 0 || a->serial + (a->busy ? 0 : 1) <= f->until;
}

int bs_fault_status(const bonsai_agent *a, uint32_t i) {
  uint32_t k;
  for (k = 0; k < a->nfault; k++)
    if (a->fault[k].node == i && live(a, &a->fault[k]))
      return a->fault[k].status;
  return 0;
}

/* Takes fault k out of the list (the order does not matter). */
static void drop(bonsai_agent *a, uint32_t k) {
  bonsai_env *env = a->tree->env;
  a->fault[k] = a->fault[--a->nfault];
  if (a->nfault == 0) {
    bs_free(env, a->fault, a->capfault * sizeof *a->fault);
    a->fault = NULL;
    a->capfault = 0;
    bs_rewatch(a);
  }
}

void bs_fault_prune(bonsai_agent *a) {
  uint32_t k = 0;
  while (k < a->nfault) {
    if (live(a, &a->fault[k]))
      k++;
    else
      drop(a, k);
  }
}

void bs_fault_drop(bonsai_agent *a) {
  while (a->nfault > 0)
    drop(a, a->nfault - 1);
}

int bonsai_agent_force(bonsai_agent *a, unsigned node, int status,
                       unsigned ticks) {
  bonsai_env *env = a->tree->env;
  uint32_t k;
  if (node >= a->bp->n || (status != BONSAI_SUCCESS &&
                           status != BONSAI_FAILURE && status != BONSAI_IDLE))
    return BONSAI_EARG;
  for (k = 0; k < a->nfault && a->fault[k].node != node; k++)
    ;
  if (status == BONSAI_IDLE) { /* removed */
    if (k < a->nfault)
      drop(a, k);
    return BONSAI_OK;
  }
  if (k == a->nfault) { /* a new one */
    if (a->nfault == a->capfault) {
      uint32_t cap = a->capfault ? 2 * a->capfault : 4;
      Fault *f = bs_realloc(env, a->fault, a->capfault * sizeof *f,
                            cap * sizeof *f);
      if (f == NULL)
        return BONSAI_ENOMEM;
      a->fault = f;
      a->capfault = cap;
    }
    a->nfault++;
  }
  a->fault[k].node = node;
  a->fault[k].status = (uint8_t)status;
  /* the next 'ticks' ticks, serial + 1 .. serial + ticks (from a leaf:
  ** the rest of this tick too) */
  a->fault[k].until = ticks == 0 ? 0 : a->serial + ticks;
  bs_rewatch(a);
  return BONSAI_OK;
}

int bonsai_agent_forced(const bonsai_agent *a, unsigned node,
                        unsigned *ticks) {
  uint32_t k;
  for (k = 0; k < a->nfault; k++) {
    const Fault *f = &a->fault[k];
    if (f->node == node && live(a, f)) {
      if (ticks != NULL)
        *ticks = f->until == 0 ? 0 : f->until - a->serial + (a->busy ? 1 : 0);
      return f->status;
    }
  }
  return BONSAI_IDLE;
}

int bonsai_tree_force(bonsai_tree *t, unsigned node, int status,
                      unsigned ticks) {
  bonsai_agent *a;
  int r;
  if (node >= t->bp->n)
    return BONSAI_EARG;
  for (a = t->agents; a != NULL; a = a->tnext)
    if (a->bp == t->bp &&
        (r = bonsai_agent_force(a, node, status, ticks)) != BONSAI_OK)
      return r;
  return BONSAI_OK;
}
