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
#include "error.h"
#include "blackboard.h"
#include "compile.h"
#include "env.h"
#include "events.h"
#include "reload.h"
#include "fault.h"
#include "latent.h"
#include "profile.h"
#include "trace.h"
#include "tree.h"
#include "vm.h"

#define HEADSIZE ((sizeof(bonsai_agent) + 7) & ~(size_t)7)
/* The state block inside the agent's own allocation; after a reload to a
** larger version the state may live in a block of its own. */
#define INLINE(a) ((uint8_t *)(a) + HEADSIZE)

/*
** {======================================================
** Agents and their memory
** =======================================================
*/

static uint32_t statesize(const Blueprint *bp) {
  return bp->statsize + bp->datasize;
}

size_t bonsai_agent_size(const bonsai_tree *t) {
  return HEADSIZE + statesize(bs_tree_current(t));
}

int bonsai_agent_init(bonsai_agent *a, bonsai_tree *t, bonsai_bb *bb,
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
  bs_copy(a);
  a->bb = bb;
  a->owner = owner;
  a->current = a->errnode = a->forcing = a->cutting = BS_NONE;
  a->state = INLINE(a);
  a->statecap = a->inlinecap = ss;
  bs_prof_join(a);
  bs_env_retain(env);
  env->nagents++;
  return BONSAI_OK;
}

typedef struct Interrupt {
  bonsai_interrupt_fn fn;
  void *data;
} Interrupt;

void bonsai_agent_done(bonsai_agent *a) {
  bonsai_env *env = a->tree->env;
  bonsai_agent_clearerr(a);
  bs_free(env, a->intr, a->nintr * sizeof *a->intr);
  if (a->state != INLINE(a))
    bs_free(env, a->state, a->statecap);
  if (a->err != NULL)
    bs_free(env, a->err, BS_ERRSIZE);
  bs_trace_free(a);
  bs_prof_leave(a);
  bs_fault_drop(a);
  bs_agent_stepdone(a);
  if (--env->nagents == 0) /* the records kept for stepped ticks go too */
    bs_env_freesteps(env);
  bs_events_free(a);
  bs_latent_free(a);
  bonsai_bb_release(a->bb);
  bs_bp_release(a->bp);
  bonsai_tree_release(a->tree);
  bonsai_env_release(env); /* last: the env may go with it */
}

bonsai_agent *bonsai_agent_new(bonsai_tree *t, bonsai_bb *bb, void *owner) {
  size_t size = bonsai_agent_size(t);
  bonsai_agent *a = bs_malloc(t->env, size);
  if (a == NULL)
    return NULL;
  if (bonsai_agent_init(a, t, bb, owner) != BONSAI_OK) {
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
  bonsai_agent_done(a);
  bs_free(env, a, size);
  bonsai_env_release(env);
}

/* }====================================================== */

/*
** {======================================================
** Operations: start, finish, switch steps
** =======================================================
*/

/* The one test of a tick's dt (NaN fails it), inlined where a tick starts. */
#define DT_OK(dt) ((dt) >= 0)

const char *bonsai_dt_check(double dt) {
  return DT_OK(dt) ? NULL : "dt must be a number >= 0";
}

/* Before a tick: refuses a busy agent (BONSAI_EBUSY) or a bad dt (an
** argument error of the call: BONSAI_EARG), both leaving the agent and its
** error untouched; forgets the last error, advances the clock and marks
** the agent busy. */
static int start(bonsai_agent *a, double dt, const bonsai_host *h) {
  if (a->busy) /* refused: the running operation's error stays */
    return BONSAI_EBUSY;
  if (!DT_OK(dt))
    return BONSAI_EARG;
  bs_agent_start(a, dt, h);
  return BONSAI_OK;
}

/* One step of a switch to the tree's current version: the running nodes
** that do not carry over are aborted (callbacks protected; they may reload
** the tree again, so the agent can still be stale afterwards). *planp gets
** the plan used, with a reference (NULL if it could not be made); the
** caller releases it. BONSAI_ENOMEM with the agent still on its version
** when the new state could not be allocated; BONSAI_ELEAF when an abort
** failed (recorded). */
static int step(bonsai_agent *a, Plan **planp) {
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
  bs_fault_drop(a); /* its nodes were the old version's */
  bs_copy(a);
  if (a->trace != NULL) {
    bs_trace_mark(a, BONSAI_TRACE_RELOAD, BS_NONE, NULL);
    bs_trace_migrating(a, 0);
  }
  if (a->latent != NULL && plan != NULL && !plan->same)
    bs_latent_remap(a, plan->map, a->state); /* (in place: the same nodes) */
  else if (a->latent != NULL && plan == NULL)
    bs_latent_free(a); /* everything was aborted */
  *planp = plan;
  return r;
nomem: /* nothing changes: the next tick tries again */
  bs_plan_release(plan);
  bs_agent_fail(a, BS_NONE, "out of memory");
  return BONSAI_ENOMEM;
}

int bonsai_agent_stale(const bonsai_agent *a) { return bs_agent_stale(a); }

/* (The held version stays alive: the agent keeps its reference to a->bp,
** as any agent that has not switched yet does.) */
void bonsai_agent_hold(bonsai_agent *a, int on) { a->held = on != 0; }

int bonsai_agent_held(const bonsai_agent *a) { return a->held; }

void bonsai_agent_pass(bonsai_agent *a, int on) { a->pass = on != 0; }

int bonsai_agent_passes(const bonsai_agent *a) { return a->pass; }

int bonsai_agent_switch(bonsai_agent *a, const bonsai_host *h, unsigned *map,
                        unsigned n) {
  uint32_t oldn = a->bp->n, k;
  Plan *plan;
  int r;
  if (a->busy)
    return BONSAI_EBUSY;
  if (!bs_agent_stale(a))
    return BONSAI_OK;
  bs_agent_sethost(a, h);
  r = step(a, &plan);
  bs_agent_sethost(a, NULL);
  if (map != NULL && n >= oldn)
    for (k = 0; k < oldn; k++) /* no plan: everything restarted */
      map[k] = plan != NULL ? plan->map[k] : BONSAI_NONE;
  bs_plan_release(plan);
  return r;
}

/* Switches a stale agent to its tree's current version, step by step (a
** callback run during a step may reload the tree again). Returns BONSAI_OK
** or the first failure (recorded). */
static int migrate(bonsai_agent *a, const bonsai_host *h) {
  int r = BONSAI_OK;
  bonsai_agent_clearerr(a);
  while (bs_agent_stale(a)) {
    uint64_t before = a->bp->id;
    int s = bonsai_agent_switch(a, h, NULL, 0);
    if (r == BONSAI_OK)
      r = s;
    if (a->bp->id == before)
      break; /* no memory for the new state: still on the old one */
  }
  return r;
}

/* }====================================================== */

/*
** {======================================================
** Interrupts
** =======================================================
*/

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

/* Aborts every running node with callbacks protected (aborting ones
** finish); marks the agent aborted if anything ran. */
static int abortall(bonsai_agent *a) {
  int r;
  uint8_t protect = a->protect;
  if (a->state[0] != BONSAI_RUNNING && a->state[0] != BONSAI_ABORTING)
    return BONSAI_OK;
  a->protect = 1;
  r = bs_vm_abort(a, 0);
  a->protect = protect;
  a->last = BONSAI_ABORTED;
  a->wake = 0; /* nothing runs to sleep on */
  return r;
}

/* Asks the C interrupts, then the host's: 1 when one fired, 0, or
** BONSAI_ERROR. As for Lua's, the list is taken before the calls (up to
** 32: more are asked as the list stands): one added meanwhile waits for
** the next tick, one removed before its turn is not asked. */
static int interrupted(bonsai_agent *a, const bonsai_host *h) {
  Interrupt list[32];
  uint32_t n = a->nintr < 32 ? a->nintr : 32, k;
  int r = 0;
  if (n > 0)
    memcpy(list, a->intr, n * sizeof *list);
  for (k = 0; r == 0 && (k < n || k < a->nintr); k++) {
    const Interrupt *x = k < n ? &list[k] : &a->intr[k];
    if (k < n && !present(a, x))
      continue;
    a->current = BS_NONE;
    r = x->fn(a, x->data);
  }
  if (r == 0 && h != NULL && h->interrupt != NULL) {
    a->current = BS_NONE;
    r = h->interrupt(a, h->ud);
  }
  if (r != 0 && r != 1) {
    if (r != BONSAI_ERROR || !a->failed)
      bs_agent_fail(a, BS_NONE, "interrupt returned %d", r);
    return BONSAI_ERROR;
  }
  return r;
}

/* Whether the agent has interrupts to ask (C ones, or the host's). */
#define hasinterrupts(a, h)                                                    \
  ((a)->nintr != 0 || ((h) != NULL && (h)->interrupt != NULL))

/* Asks the interrupts: 0 when none fired, else BONSAI_ABORTED after
** aborting the running nodes (the interrupt's decision: BONSAI_RUNNING
** while a latent abort goes on), or BONSAI_ELEAF. */
static int interrupts(bonsai_agent *a, const bonsai_host *h) {
  int s;
  if ((s = interrupted(a, h)) == 0)
    return 0;
  if (s != 1)
    return (void)abortall(a), BONSAI_ELEAF;
  if (a->trace != NULL)
    bs_trace_mark(a, BONSAI_TRACE_INTERRUPT, BS_NONE, NULL);
  s = bs_vm_interrupt(a);
  return s == BONSAI_OK ? BONSAI_ABORTED : s == BONSAI_RUNNING ? s
                                                            : BONSAI_ELEAF;
}

/* }====================================================== */

/*
** {======================================================
** Ticks, dozes, recovery, aborts, resets
** =======================================================
*/

/* Before a tick or a doze of a stale agent: it switches first, unless it
** is busy (the tick is refused) or its host switches it. */
BS_NOINLINE static int switchfirst(bonsai_agent *a, const bonsai_host *h) {
  int s;
  if (a->busy)
    return BONSAI_OK;
  if (h != NULL && (h->flags & BONSAI_HOST_SWITCHES))
    return BONSAI_ESTALE;
  if ((s = migrate(a, h)) != BONSAI_OK)
    return s == BONSAI_ENOMEM ? s : BONSAI_ELEAF;
  return BONSAI_OK;
}

/* The start of a tick or a doze. */
static BS_ALWAYS_INLINE int begin(bonsai_agent *a, double dt,
                                  const bonsai_host *h) {
  int s;
  if (bs_unlikely(bs_agent_stale(a)) &&
      (s = switchfirst(a, h)) != BONSAI_OK)
    return s;
  return start(a, dt, h);
}

int bonsai_agent_run(bonsai_agent *a, double dt, const bonsai_host *h) {
  int s;
  if ((s = begin(a, dt, h)) != BONSAI_OK)
    return s;
  if (bs_unlikely(a->events != NULL))
    bs_events_deliver(a); /* the queued events are this tick's */
  if (!hasinterrupts(a, h) || (s = interrupts(a, h)) == 0)
    s = bs_vm_tick(a);
  return bs_agent_finish(a, s);
}

int bonsai_agent_tick(bonsai_agent *a, double dt) {
  return bonsai_agent_run(a, dt, NULL);
}

int bonsai_agent_doze(bonsai_agent *a, double dt, const bonsai_host *h) {
  int s;
  if ((s = begin(a, dt, h)) != BONSAI_OK)
    return s;
  if (!hasinterrupts(a, h) || (s = interrupts(a, h)) == 0) {
    /* it sleeps on: no tick of its tree */
    a->serial--;
    bs_agent_finish(a, a->last);
    return 0;
  }
  bs_agent_finish(a, s);
  return s == BONSAI_ABORTED ? 1 : s;
}

void bonsai_agent_recover(bonsai_agent *a, const char *msg,
                          const bonsai_host *h) {
  if (!a->busy)
    return;
  bs_agent_stepdone(a); /* a stepped tick's runs are over: callbacks run
                        ** again */
  a->stepping = 0;
  bs_agent_sethost(a, h);
  bs_vm_recover(a, msg != NULL ? msg : "(no message)");
  bs_agent_finish(a, BONSAI_ELEAF);
}

int bonsai_agent_busy(const bonsai_agent *a) { return a->busy; }

int bonsai_agent_abort_hosted(bonsai_agent *a, const bonsai_host *h) {
  int r;
  if (a->busy)
    return BONSAI_EBUSY;
  if (bs_agent_stale(a) && (r = migrate(a, h)) != BONSAI_OK)
    return r == BONSAI_ENOMEM ? r : BONSAI_ELEAF;
  bonsai_agent_clearerr(a);
  a->busy = 1;
  bs_agent_sethost(a, h);
  r = abortall(a);
  bs_agent_sethost(a, NULL);
  a->busy = 0;
  return r;
}

int bonsai_agent_abort(bonsai_agent *a) {
  return bonsai_agent_abort_hosted(a, NULL);
}

int bonsai_agent_reset_hosted(bonsai_agent *a, const bonsai_host *h) {
  int r = bonsai_agent_abort_hosted(a, h);
  if (r == BONSAI_EBUSY)
    return r;
  memset(a->state, 0, statesize(a->bp));
  bs_latent_free(a); /* (none left: the abort ended them) */
  if (a->trace != NULL)
    bs_trace_mark(a, BONSAI_TRACE_RESET, BS_NONE, NULL);
  a->last = BONSAI_IDLE;
  a->resume = 0;
  a->wake = 0;
  return r;
}

int bonsai_agent_reset(bonsai_agent *a) {
  return bonsai_agent_reset_hosted(a, NULL);
}

/* }====================================================== */

/*
** {======================================================
** Sleeping
** =======================================================
*/

void bonsai_agent_sleep(bonsai_agent *a, double seconds) {
  /* (not while an abort takes its time: bs_agent_finish says so after a
  ** tick) */
  a->wake = seconds > 0 && a->latent == NULL ? a->time + seconds : 0;
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

/* }====================================================== */

/*
** {======================================================
** What an agent tells
** =======================================================
*/

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
    if (a->state[i] != BONSAI_RUNNING && a->state[i] != BONSAI_ABORTING) {
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

/* }====================================================== */
