/*
** agent.c: agents. An agent is one allocation: its header and the state
** block (a status byte per node, then the per-node data the compiler laid
** out). It holds references to its tree, the blueprint it runs and its
** blackboard, so none of them goes away under it.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bonsai.h"
#include "agent.h"
#include "blackboard.h"
#include "compile.h"
#include "env.h"
#include "reload.h"
#include "trace.h"
#include "vm.h"

#define HEADSIZE ((sizeof(bonsai_agent) + 7) & ~(size_t)7)
/* The state block inside the agent's own allocation; after a reload to a
** larger version the state may live in a block of its own. */
#define INLINE(a) ((uint8_t *)(a) + HEADSIZE)

static uint32_t statesize(const Blueprint *bp) {
  return bp->statsize + bp->datasize;
}

size_t bs_agent_size(const bonsai_tree *t) {
  return HEADSIZE + statesize(bs_tree_current(t));
}

int bs_agent_init(bonsai_agent *a, bonsai_tree *t, bonsai_bb *bb,
                  void *owner) {
  bonsai_env *env = t->env;
  uint32_t ss = statesize(bs_tree_current(t));
  if (bb != NULL && bb->env != env)
    return BONSAI_EARG;
  memset(a, 0, HEADSIZE + ss);
  if (bb == NULL) {
    if ((bb = bonsai_bb_new(env, NULL)) == NULL)
      return BONSAI_ENOMEM;
  } else {
    bs_bb_retain(bb);
  }
  a->tree = t;
  t->refs++;
  a->bp = bs_tree_current(t);
  bs_bp_retain(a->bp);
  a->bb = bb;
  a->owner = owner;
  a->current = a->errnode = BS_NONE;
  a->state = INLINE(a);
  a->statecap = a->inlinecap = ss;
  bs_env_retain(env);
  return BONSAI_OK;
}

typedef struct Interrupt {
  bonsai_interrupt_fn fn;
  void *data;
} Interrupt;

void bs_agent_done(bonsai_agent *a) {
  bonsai_env *env = a->tree->env;
  bs_agent_clearerr(a);
  bs_free(env, a->intr, a->nintr * sizeof *a->intr);
  if (a->state != INLINE(a))
    bs_free(env, a->state, a->statecap);
  if (a->err != NULL)
    bs_free(env, a->err, BS_ERRSIZE);
  bs_trace_free(a);
  bonsai_bb_release(a->bb);
  bs_bp_release(a->bp);
  bonsai_tree_release(a->tree);
  bonsai_env_release(env); /* last: the env may go with it */
}

bonsai_agent *bonsai_agent_new(bonsai_tree *t, bonsai_bb *bb, void *owner) {
  size_t size = bs_agent_size(t);
  bonsai_agent *a = bs_malloc(t->env, size);
  if (a == NULL)
    return NULL;
  if (bs_agent_init(a, t, bb, owner) != BONSAI_OK) {
    bs_free(t->env, a, size);
    return NULL;
  }
  return a;
}

void bonsai_agent_free(bonsai_agent *a) {
  bonsai_env *env;
  size_t size;
  if (a == NULL)
    return;
  env = a->tree->env;
  size = HEADSIZE + a->inlinecap;
  bs_env_retain(env); /* alive until the agent's own block is freed */
  bs_agent_done(a);
  bs_free(env, a, size);
  bonsai_env_release(env);
}

void bs_agent_clearerr(bonsai_agent *a) {
  a->failed = 0;
  a->errnode = BS_NONE;
  if (a->err != NULL)
    a->err[0] = '\0';
  bs_bp_release(a->errbp);
  a->errbp = NULL;
}

/* Records the error of the current operation at node (of the version the
** agent runs), unless one is recorded already: the first error counts. */
static void verror(bonsai_agent *a, uint32_t node, const char *fmt,
                   va_list ap) {
  if (a->failed)
    return;
  a->failed = 1;
  a->errnode = node;
  if (node != BS_NONE) {
    a->errbp = a->bp;
    bs_bp_retain(a->bp);
  }
  if (a->err == NULL &&
      (a->err = bs_malloc(a->tree->env, BS_ERRSIZE)) == NULL)
    return;
  vsnprintf(a->err, BS_ERRSIZE, fmt, ap);
}

void bs_agent_fail(bonsai_agent *a, uint32_t node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(a, node, fmt, ap);
  va_end(ap);
}

int bonsai_agent_error(bonsai_agent *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(a, a->current, fmt, ap);
  va_end(ap);
  return BONSAI_ERROR;
}

const char *bonsai_agent_errmsg(const bonsai_agent *a) {
  return a->err != NULL ? a->err : "";
}

unsigned bonsai_agent_errnode(const bonsai_agent *a) { return a->errnode; }

size_t bonsai_agent_errpath(const bonsai_agent *a, char *buf, size_t size) {
  if (a->errbp == NULL || a->errnode >= a->errbp->n) {
    if (size > 0)
      buf[0] = '\0';
    return 0;
  }
  return bs_bp_path(a->errbp, a->errnode, buf, size);
}

int bs_agent_start(bonsai_agent *a, double dt) {
  if (a->busy) /* refused: the running operation's error stays */
    return BONSAI_EBUSY;
  if (a->failed)
    bs_agent_clearerr(a);
  if (!(dt >= 0)) {
    bs_agent_fail(a, BS_NONE, "dt must be a number >= 0");
    return BONSAI_EARG;
  }
  a->time += dt;
  a->serial++;
  a->busy = 1;
  return BONSAI_OK;
}

void bs_agent_finish(bonsai_agent *a, int status) {
  a->busy = 0;
  a->last = (uint8_t)(status < 0 ? BONSAI_ABORTED : status);
}

int bs_agent_migrate(bonsai_agent *a, Plan **planp) {
  bonsai_env *env = a->tree->env;
  Blueprint *nbp = bs_tree_current(a->tree);
  uint32_t need = statesize(nbp);
  uint64_t buf[128]; /* a state that goes back inline is built here */
  int back = need <= a->inlinecap, r;
  uint8_t *ns = NULL;
  Plan *plan = NULL;
  *planp = NULL;
  if (bs_env_cover(env, nbp->nnamed) != BONSAI_OK)
    goto nomem;
  plan = bs_reload_plan(a);
  if ((plan == NULL || !plan->same) && /* else moved in place */
      (ns = back && need <= sizeof buf ? (uint8_t *)buf
                                       : bs_malloc(env, need)) == NULL)
    goto nomem;
  bs_bp_retain(nbp); /* the agent's from now: callbacks may reload again */
  if (a->trace != NULL) /* its aborts belong to the coming tick */
    bs_trace_migrating(a, 1);
  a->busy = a->protect = 1;
  if (plan != NULL && plan->same) { /* in place: nothing is aborted */
    bs_reload_inplace(a, plan);
    r = BONSAI_OK;
  } else if (plan != NULL) {
    r = bs_reload_state(a, plan, ns); /* reads the old state, fills ns */
  } else { /* out of memory: restart from the root in the new version */
    (void)bs_vm_abort(a, 0);
    memset(ns, 0, need);
    a->resume = 0;
    if (a->last == BONSAI_RUNNING)
      a->last = BONSAI_ABORTED;
    bs_agent_fail(a, BS_NONE, "out of memory");
    r = BONSAI_ENOMEM;
  }
  a->busy = a->protect = 0;
  if (ns != NULL && a->state != INLINE(a)) /* not moved in place */
    bs_free(env, a->state, a->statecap);
  if (ns != NULL && back) { /* into the agent's own block */
    a->state = INLINE(a);
    memcpy(a->state, ns, need);
    if (ns != (uint8_t *)buf)
      bs_free(env, ns, need);
    a->statecap = a->inlinecap;
  } else if (ns != NULL) {
    a->state = ns;
    a->statecap = need;
  }
  bs_bp_release(a->bp);
  a->bp = nbp;
  if (a->trace != NULL) {
    bs_trace_mark(a, BONSAI_TRACE_RELOAD, BS_NONE, NULL);
    bs_trace_migrating(a, 0);
  }
  *planp = plan;
  return r;
nomem: /* nothing changes: the next tick tries again */
  bs_plan_release(plan);
  bs_agent_fail(a, BS_NONE, "out of memory");
  return BONSAI_ENOMEM;
}

/* Switches a stale agent to its tree's current version, step by step (a
** callback run during a step may reload the tree again). Returns BONSAI_OK
** or the first failure (recorded). */
static int migrate(bonsai_agent *a) {
  int r = BONSAI_OK;
  bs_agent_clearerr(a);
  while (bs_agent_stale(a)) {
    Blueprint *before = a->bp;
    Plan *plan;
    int s = bs_agent_migrate(a, &plan);
    bs_plan_release(plan);
    if (r == BONSAI_OK)
      r = s;
    if (a->bp == before)
      break; /* no memory for the new state: still on the old one */
  }
  return r;
}

int bonsai_agent_add_interrupt(bonsai_agent *a, bonsai_interrupt_fn fn,
                               void *data) {
  bonsai_env *env = a->tree->env;
  Interrupt *n;
  if (fn == NULL)
    return BONSAI_EARG;
  n = bs_realloc(env, a->intr, a->nintr * sizeof *n,
                 (a->nintr + 1) * sizeof *n);
  if (n == NULL)
    return BONSAI_ENOMEM;
  n[a->nintr].fn = fn;
  n[a->nintr].data = data;
  a->intr = n;
  a->nintr++;
  return BONSAI_OK;
}

int bonsai_agent_remove_interrupt(bonsai_agent *a, bonsai_interrupt_fn fn,
                                  void *data) {
  bonsai_env *env = a->tree->env;
  uint32_t k;
  for (k = 0; k < a->nintr; k++)
    if (a->intr[k].fn == fn && a->intr[k].data == data)
      break;
  if (k == a->nintr)
    return BONSAI_EARG;
  for (; k + 1 < a->nintr; k++)
    a->intr[k] = a->intr[k + 1];
  a->intr = bs_realloc(env, a->intr, a->nintr * sizeof *a->intr,
                       (a->nintr - 1) * sizeof *a->intr);
  a->nintr--;
  return BONSAI_OK;
}

/* Whether interrupt x is still among the agent's. */
static int present(const bonsai_agent *a, const Interrupt *x) {
  uint32_t k;
  for (k = 0; k < a->nintr; k++)
    if (a->intr[k].fn == x->fn && a->intr[k].data == x->data)
      return 1;
  return 0;
}

/* Asks the C interrupts: 1 when one fired, 0, or BONSAI_ERROR. As for
** Lua's, the list is taken before the calls (up to 32: more are asked as
** the list stands): one added meanwhile waits for the next tick, one
** removed before its turn is not asked. */
static int interrupted(bonsai_agent *a) {
  Interrupt list[32];
  uint32_t n = a->nintr < 32 ? a->nintr : 32, k;
  memcpy(list, a->intr, n * sizeof *list);
  for (k = 0; k < n || k < a->nintr; k++) {
    const Interrupt *x = k < n ? &list[k] : &a->intr[k];
    int r;
    if (k < n && !present(a, x))
      continue;
    a->current = BS_NONE;
    if ((r = x->fn(a, x->data)) == 1)
      return 1;
    if (r != 0) {
      if (r != BONSAI_ERROR || !a->failed)
        bs_agent_fail(a, BS_NONE, "interrupt returned %d", r);
      return BONSAI_ERROR;
    }
  }
  return 0;
}

int bonsai_agent_tick(bonsai_agent *a, double dt) {
  int s;
  if (bs_agent_stale(a) && !a->busy && (s = migrate(a)) != BONSAI_OK)
    return s == BONSAI_ENOMEM ? s : BONSAI_ELEAF;
  if ((s = bs_agent_start(a, dt)) != BONSAI_OK)
    return s;
  if (a->nintr > 0 && (s = interrupted(a)) != 0) {
    if (a->trace != NULL && s == 1)
      bs_trace_mark(a, BONSAI_TRACE_INTERRUPT, BS_NONE, NULL);
    if (bs_agent_abort(a) != BONSAI_OK || s != 1)
      s = BONSAI_ELEAF;
    else
      s = BONSAI_ABORTED;
  } else {
    s = bs_vm_tick(a);
  }
  bs_agent_finish(a, s);
  return s;
}

int bs_agent_abort(bonsai_agent *a) {
  int r;
  uint8_t protect = a->protect;
  if (a->state[0] != BONSAI_RUNNING)
    return BONSAI_OK;
  a->protect = 1;
  r = bs_vm_abort(a, 0);
  a->protect = protect;
  a->last = BONSAI_ABORTED;
  a->wake = 0; /* nothing runs to sleep on */
  return r;
}

int bonsai_agent_abort(bonsai_agent *a) {
  int r;
  if (a->busy)
    return BONSAI_EBUSY;
  if (bs_agent_stale(a) && (r = migrate(a)) != BONSAI_OK)
    return r == BONSAI_ENOMEM ? r : BONSAI_ELEAF;
  bs_agent_clearerr(a);
  a->busy = 1;
  r = bs_agent_abort(a);
  a->busy = 0;
  return r;
}

void bonsai_agent_sleep(bonsai_agent *a, double seconds) {
  a->wake = seconds > 0 ? a->time + seconds : 0;
}

void bonsai_agent_wake(bonsai_agent *a) { a->wake = 0; }

double bonsai_agent_sleeping(const bonsai_agent *a) {
  return a->wake > 0 ? a->wake - a->time : -1;
}

int bonsai_agent_asleep(bonsai_agent *a, double dt) {
  if (a->wake <= 0 || a->busy || !(dt >= 0))
    return 0;
  if (a->time + dt < a->wake &&
      (a->bp->nwatch == 0 || !bs_vm_watched_changed(a))) {
    a->time += dt;
    return 1;
  }
  a->wake = 0;
  return 0;
}

int bonsai_agent_reset(bonsai_agent *a) {
  int r = bonsai_agent_abort(a);
  if (r == BONSAI_EBUSY)
    return r;
  memset(a->state, 0, statesize(a->bp));
  if (a->trace != NULL)
    bs_trace_mark(a, BONSAI_TRACE_RESET, BS_NONE, NULL);
  a->last = BONSAI_IDLE;
  a->resume = 0;
  a->wake = 0;
  return r;
}

int bonsai_agent_status(const bonsai_agent *a) { return a->last; }

int bonsai_agent_node_status(const bonsai_agent *a, unsigned i) {
  return i < a->bp->n ? a->state[i] : BONSAI_IDLE;
}

double bonsai_agent_time(const bonsai_agent *a) { return a->time; }
void *bonsai_agent_owner(const bonsai_agent *a) { return a->owner; }
bonsai_tree *bonsai_agent_tree(const bonsai_agent *a) { return a->tree; }
bonsai_bb *bonsai_agent_bb(const bonsai_agent *a) { return a->bb; }

unsigned bonsai_agent_running(const bonsai_agent *a, unsigned *nodes,
                              unsigned max) {
  const Node *nd = a->bp->nodes;
  uint32_t i = 0;
  unsigned k = 0;
  while (i < a->bp->n) {
    if (a->state[i] != BONSAI_RUNNING) {
      i = nd[i].next; /* skip the subtree */
      continue;
    }
    if (!(nd[i].flags & NF_HIDDEN)) {
      if (k < max)
        nodes[k] = i;
      k++;
    }
    i++;
  }
  return k;
}
