/*
** vm.h: running ticks and aborts over a Blueprint.
*/
#ifndef bonsai_vm_h
#define bonsai_vm_h

#include "bstypes.h"

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
