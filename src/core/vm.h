/*
** vm.h: running ticks and aborts over a Blueprint.
*/
#ifndef bonsai_vm_h
#define bonsai_vm_h

#include "bstypes.h"
#include "blackboard.h"
#include "events.h"

/* Status byte of node i and its data block. */
#define bs_status(a, i) ((a)->state[i])

/* One tick from the root or the resume point. Returns the root's status,
** or BONSAI_ELEAF after aborting the running nodes (message in a->err).
** A host's leaves may raise through it: see bs_vm_recover. */
BS_INTERNAL int bs_vm_tick(bonsai_agent *a);

/* Whether a key that the agent's guards watch changed since its last
** tick (what wakes a sleeping agent). */
BS_INTERNAL int bs_vm_watched_changed(const bonsai_agent *a);

/* Aborts the running nodes of the subtree at x, deepest first, at once
** (an abort from outside the tree's decisions: a callback's RUNNING is
** ignored, and aborting nodes finish); every abort callback runs even if
** one fails. Returns BONSAI_OK or BONSAI_ELEAF (the first failure's
** message kept in a->err). */
BS_INTERNAL int bs_vm_abort(bonsai_agent *a, uint32_t x);

/* An interrupt fired: the agent cuts off its root (callbacks protected), a
** latent cut (then the agent waits: its next ticks take the aborts a step
** further instead of running the tree). BONSAI_OK (all aborted),
** BONSAI_RUNNING (aborting) or BONSAI_ELEAF (then all aborted). */
BS_INTERNAL int bs_vm_interrupt(bonsai_agent *a);

/* The live (running or aborting) child of live node i at or after child
** 'from' (i + 1 for the first) in state st, or BS_NONE: sequences and
** selectors know theirs, the others' children are looked at. */
BS_INTERNAL uint32_t bs_vm_running_child(const Blueprint *bp,
                                         const uint8_t *st, uint32_t i,
                                         uint32_t from);

/* After a leaf raised out of bs_vm_tick (bonsai_agent_recover) or failed
** in it (msg NULL: its message is recorded already): records msg against
** the node being called, then aborts every running node with callbacks
** protected. */
BS_INTERNAL void bs_vm_recover(bonsai_agent *a, const char *msg);

/* Stepped runs (step.c). Where a run stopped to hand a call out; and
** bs_vm_step's result when it did. */
enum { BS_AT_NONE, BS_AT_ENTER, BS_AT_TICK, BS_AT_EXIT, BS_AT_CENTER,
       BS_AT_CTICK };
#define BS_HANDED (-100)
/* Runs the innermost run of a->step (a->step->top) until it ends or hands
** a call out: from its start (its 'at' BS_AT_NONE: the tick from the root
** or the resume point, or a control node's child run) or on from where it
** stopped, 'result' being the result of the call handed out there.
** Returns the run's status, BONSAI_ELEAF, or BS_HANDED. Calls no
** callback (a->stepping is set by the caller). */
BS_INTERNAL int bs_vm_step(bonsai_agent *a, int result);

/* The parts of a call record that stay the same through an operation. */
static inline void bs_vm_callrecord(const bonsai_agent *a, bonsai_call *c) {
  c->agent = (bonsai_agent *)a;
  c->owner = a->owner;
  c->host = a->hostud;
  c->mayraise = a->raises && !a->protect;
  c->write = NULL;
  c->wud = NULL;
  c->saved = NULL;
  c->savedlen = 0;
}

/* Fills the parts of a->step->call that stay the same through a run, as
** it starts. */
static inline void bs_vm_stepcall(bonsai_agent *a) {
  bs_vm_callrecord(a, &a->step->call);
  a->step->call.utility = NULL;
}

/* What a tick does before the tree runs (bs_vm_tick's, a stepped tick's:
** step.c): an agent whose root is aborting waits for it (an interrupt's
** latent abort); guards whose keys changed and event guards whose event
** was delivered take over. 0 when the tick goes on, else the tick's status
** (BONSAI_ELEAF: it failed). Most ticks need none of it: the tests here
** are inlined where a tick starts, bs_vm_prologue does the rest. */
BS_INTERNAL int bs_vm_prologue(bonsai_agent *a);
static inline int bs_vm_before(bonsai_agent *a) {
  a->wake = 0; /* the tree runs: a leaf sleeps again if it wants */
  if (a->latent != NULL ||
      (a->bp->nwatch != 0 && bs_bb_changed(a->bb, a->seen)) ||
      (a->events != NULL && a->events->nnow != 0))
    return bs_vm_prologue(a);
  return 0;
}

/* A child's run of control node frame f begins (host: the host's data
** under it, or NULL) and ends (bonsai_control_tick's; a stepped one's). */
BS_INTERNAL void bs_vm_run_begin(bonsai_agent *a, Frame *f, void *host);
BS_INTERNAL void bs_vm_run_end(bonsai_agent *a, Frame *f);
/* The child k of control node 'node' that bonsai_control_tick would run
** (the frame of the node's tick callback, the child, the budget checked),
** or BS_NONE with *r BONSAI_EARG, or BONSAI_ELEAF (recorded, the frame
** marked failed). *pf: the frame. */
BS_INTERNAL uint32_t bs_vm_child(bonsai_agent *a, unsigned node, unsigned k,
                                 Frame **pf, int *r);
/* The SAVE or RESTORE event (c->event, with c->write and c->wud, or
** c->saved and c->savedlen, set) of the running action at node i, if its
** leaf asks for them (BONSAI_LEAF_SAVE); its callback may not raise.
** BONSAI_OK, or BONSAI_ELEAF with the error recorded at i. */
BS_INTERNAL int bs_vm_leafstate(bonsai_agent *a, uint32_t i, bonsai_call *c);

/* Recounts the results of parallel i's children in state st and lists
** those not finished (after a reload or a restore set their statuses). */
BS_INTERNAL void bs_vm_parallel_settle(const Blueprint *bp, uint8_t *st,
                                       uint32_t i);

#endif
