/*
** step.c: stepped ticks (bonsai.h, "Stepped ticks"). A stepped tick is the
** tick bonsai_agent_run makes, run by the stepped copies of the VM
** (vm.c): where the VM would call a leaf's tick, enter or exit or a control
** node's enter or tick, it hands the call out to the host and returns; the
** host makes it and passes the result back, and the tick goes on. A
** control node's callback may run its children's runs stepped too: each is
** a run of its own, a level above the one that handed the callback out.
** The functions here never call a callback, so a host may call them where
** no callback could run (from a JIT-compiled loop, through an FFI).
*/
#include <string.h>

#include "bonsai.h"
#include "agent.h"
#include "env.h"
#include "events.h"
#include "trace.h"
#include "tree.h"
#include "vm.h"

/*
** Whether the agent's ticks can be stepped: its version needs no callback
** a stepped tick cannot hand out (abort callbacks, functions as conditions
** or utilities: Blueprint.nostep; named leaves as registered now:
** env->nabortish; event nodes, which may write a payload through the
** host), it is not profiled, its trace has no hook, nothing is asked
** before the tick (interrupts), and no abort is taking its time (latent
** aborts call abort callbacks at every tick).
*/
static int stepok(const bonsai_agent *a, const bonsai_host *h) {
  return a->bp->nostep == 0 &&
         (a->bp->nnamed == 0 || a->tree->env->nabortish == 0) &&
         (!a->watched || (a->prof == NULL && !bs_trace_hooked(a))) &&
         a->nintr == 0 && (h == NULL || h->interrupt == NULL) &&
         a->latent == NULL;
}

/* The run at 'level', allocated the first time a tick nests that deep (a
** record of a stepped tick taken from the environment's, or allocated, for
** level 0); NULL when out of memory. */
BS_NOINLINE static StepRun *grow(bonsai_agent *a, unsigned k) {
  bonsai_env *env = a->tree->env;
  StepRun *r;
  if (a->step == NULL) {
    if ((a->step = env->freesteps) != NULL) {
      env->freesteps = a->step->nextfree;
    } else {
      if ((a->step = bs_malloc(env, sizeof *a->step)) == NULL)
        return NULL;
      memset(a->step, 0, sizeof *a->step);
    }
  }
  for (r = &a->step->run; k > 0; k--, r = r->next)
    if (r->next == NULL) {
      if ((r->next = bs_malloc(env, sizeof *r)) == NULL)
        return NULL;
      memset(r->next, 0, sizeof *r);
      r->next->prev = r;
    }
  return r;
}

static inline StepRun *level(bonsai_agent *a, unsigned k) {
  bonsai_env *env;
  if (bs_likely(k == 0)) {
    if (a->step != NULL)
      return &a->step->run;
    env = a->tree->env; /* a record from the environment's: every tick's */
    if (bs_likely(env->freesteps != NULL)) {
      a->step = env->freesteps;
      env->freesteps = a->step->nextfree;
      return &a->step->run;
    }
  } else if (k == 1 && a->step != NULL && a->step->run.next != NULL) {
    return a->step->run.next; /* a control node's child's run */
  }
  return grow(a, k);
}

/* Starts a run a level above the innermost: the tick (from BS_NONE), or
** child 'from' of the control node whose callback's frame is f; NULL when
** out of memory. */
static StepRun *push(bonsai_agent *a, uint32_t from, Frame *f) {
  StepRun *r = level(a, a->nstep);
  if (r == NULL)
    return NULL; /* (checked before by the caller: allocated) */
  r->from = from;
  r->ctl = f;
  r->at = BS_AT_NONE;
  r->copy = a->copy;
  r->watched = a->watched;
  a->step->top = r;
  a->nstep++;
  return r;
}

/* The innermost run ended with s: the tick's end, or the end of a child's
** run back in its control node's callback (as bonsai_control_tick's). */
static int ended(bonsai_agent *a, int s) {
  StepRun *r = a->step->top;
  Frame *f;
  if (--a->nstep > 0)
    a->step->top = r->prev;
  if (r->from == BS_NONE)
    return bs_agent_finish(a, s);
  f = r->ctl; /* the callback's frame (stepped or not) */
  bs_vm_run_end(a, f);
  if (s < 0) /* the error names the child's node that failed */
    f->failed = 1;
  return s;
}

/* Runs the innermost run on (see bs_vm_step) until it hands a call out or
** ends. */
static inline int go(bonsai_agent *a, int result) {
  int s;
  a->stepping = 1;
  s = bs_vm_step(a, result);
  a->stepping = 0;
  return s == BS_HANDED ? BONSAI_STEP : ended(a, s);
}

int bonsai_agent_stepable(const bonsai_agent *a, const bonsai_host *h) {
  return !a->busy && !bs_agent_stale(a) && stepok(a, h);
}

/* bonsai_agent_step_begin, inlined in bonsai_agent_stepfirst. */
static inline int begin(bonsai_agent *a, double dt, const bonsai_host *h) {
  int s;
  if (bs_agent_stale(a) && !a->busy) /* a switch runs abort callbacks */
    return h != NULL && (h->flags & BONSAI_HOST_SWITCHES) ? BONSAI_ESTALE
                                                          : BONSAI_ENOSTEP;
  if (a->busy)
    return BONSAI_EBUSY;
  if (!(dt >= 0))
    return BONSAI_EARG;
  if (!stepok(a, h) || level(a, 0) == NULL)
    return BONSAI_ENOSTEP;
  bs_agent_start(a, dt, h);
  if (bs_unlikely(a->events != NULL))
    bs_events_deliver(a); /* the queued events are this tick's */
  a->stepping = 1; /* (no callback runs: the version has no abort's) */
  s = bs_vm_before(a);
  a->stepping = 0;
  if (s != 0)
    return bs_agent_finish(a, s);
  push(a, BS_NONE, NULL); /* level 0 is allocated */
  bs_vm_stepcall(a);
  return go(a, 0);
}

int bonsai_agent_step_begin(bonsai_agent *a, double dt,
                            const bonsai_host *h) {
  return begin(a, dt, h);
}

int bonsai_agent_stepfirst(bonsai_agent *a, double dt, const bonsai_host *h,
                           const bonsai_call **call, bonsai_leaf_fn *fn) {
  int s = begin(a, dt, h);
  if (s == BONSAI_STEP) {
    *call = &a->step->call;
    *fn = a->step->fn;
  }
  return s;
}

/* bonsai_agent_step at a level below the innermost, or not waiting. */
BS_NOINLINE static int stepbelow(bonsai_agent *a, unsigned k, int result) {
  StepRun *r;
  if (!a->busy || k >= a->nstep || a->stepping)
    return BONSAI_EARG;
  r = level(a, k); /* allocated */
  if (r->at == BS_AT_NONE)
    return BONSAI_EARG;
  /* the runs above were left by a non-local exit that the callback caught:
  ** their frame is still busy, which the callback's end tells */
  a->nstep = (uint8_t)(k + 1);
  a->step->top = r;
  return go(a, result);
}

static inline int stepat(bonsai_agent *a, unsigned k, int result) {
  if (a->nstep == 0 || k + 1u != a->nstep || a->stepping ||
      a->step->top->at == BS_AT_NONE)
    return stepbelow(a, k, result);
  return go(a, result);
}

int bonsai_agent_step(bonsai_agent *a, unsigned k, int result) {
  return stepat(a, k, result);
}

int bonsai_agent_stepnext(bonsai_agent *a, unsigned k, int result,
                          const bonsai_call **call, bonsai_leaf_fn *fn) {
  int s = stepat(a, k, result);
  if (s == BONSAI_STEP) { /* (the run at level k handed it out) */
    *call = &a->step->call;
    *fn = a->step->fn;
  }
  return s;
}

const bonsai_call *bonsai_agent_stepcall(const bonsai_agent *a,
                                         bonsai_leaf_fn *fn, unsigned *k) {
  if (a->nstep == 0 || a->step == NULL || a->step->top->at == BS_AT_NONE)
    return NULL;
  if (fn != NULL)
    *fn = a->step->fn;
  if (k != NULL)
    *k = a->nstep - 1u;
  return &a->step->call;
}

int bonsai_control_step(bonsai_agent *a, unsigned node, unsigned k,
                        void *host) {
  Frame *f;
  uint32_t c;
  int s;
  if (a->stepping)
    return BONSAI_EARG;
  if ((c = bs_vm_child(a, node, k, &f, &s)) == BS_NONE)
    return s;
  if (!stepok(a, NULL) || a->nstep > BONSAI_MAXCONTROL ||
      level(a, a->nstep) == NULL)
    return BONSAI_ENOSTEP; /* bonsai_control_tick runs it */
  f->budget--;
  push(a, c, f);
  bs_vm_run_begin(a, f, host);
  bs_vm_stepcall(a);
  return go(a, 0);
}
