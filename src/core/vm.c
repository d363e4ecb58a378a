/*
** vm.c: runs one tick of an agent over a compiled Blueprint. Iterative: a
** tick descends from the root (or the resume point) to a leaf, then moves
** on by the jump table: the nodes that end with it and where control goes
** next were precomputed, so success and failure move leaf to leaf through
** plain sequences and selectors; other nodes decide through parent links.
** No recursion and no frame stack: the pre-order array is the stack.
** A RUNNING status jumps straight to the nearest ancestor that acts on it
** ('up'), and the next tick resumes at the topmost such node, so a running
** leaf under plain sequences is resumed without walking its ancestors (a
** traced tick records them as ticked again all the same).
** Abort always walks the running nodes deepest-first.
** Pre- and post-conditions (skip_if, run_while, on_success...) and the
** SKIPPED status they make are handled by copies of the tick of their own,
** run by the versions that have some: a tree without them pays nothing.
*/
#include <string.h>

#include "bonsai.h"
#include "error.h"
#include "blackboard.h"
#include "events.h"
#include "fault.h"
#include "latent.h"
#include "names.h"
#include "profile.h"
#include "trace.h"
#include "vm.h"

#define RUNNING BONSAI_RUNNING
#define SUCCESS BONSAI_SUCCESS
#define FAILURE BONSAI_FAILURE
#define SKIPPED BONSAI_SKIPPED
#define ABORTING BONSAI_ABORTING
/* A node is live while it runs or aborts. */
#define LIVE(s) ((s) == RUNNING || (s) == ABORTING)

/* A node's data: one or two 32-bit words, or a double ('st' is the
** agent's state block, which does not move during a tick). */
#define W0(i) (*(uint32_t *)(st + nd[i].data))
#define W1(i) (((uint32_t *)(st + nd[i].data))[1])
#define F64(i) (*(double *)(st + nd[i].data))
/* Every status store of a tick goes through the door of trace.h. The tick
** is compiled twice (see bs_vm_tick): 'traced' is a constant in each copy,
** so an untraced agent's copy stores the byte and nothing more. */
#define SET(i, s)                                                              \
  (traced ? bs_setstatus(a, st, i, s) : (void)(st[i] = (uint8_t)(s)))

/*
** {======================================================
** Leaves: the call record, events, failures
** =======================================================
*/

/* A node's leaf: named ones from the agent's environment (whatever
** environment compiled the tree), the others from the blueprint. */
static BS_ALWAYS_INLINE const Leaf *leafof(const bonsai_agent *a,
                                            const Node *n) {
  return (n->flags & NF_NAMED) ? &a->tree->env->leaves[n->leaf]
                               : &a->bp->leaves[n->leaf];
}

/* A callback that a stepping function would have to call (step.c): they
** only hand calls out, and a version whose ticks need any other is not
** stepped, so only a leaf that gained an abort callback during the tick
** (re-registered by name) comes here. Refused, as a failure of the leaf. */
BS_NOINLINE static int refused(bonsai_agent *a, uint32_t i) {
  bs_agent_fail(a, i, "a callback added during a stepped tick cannot run "
                      "in it");
  return BONSAI_ERROR;
}

/* A callback's result was not BONSAI_OK: make sure a message exists. */
static int leaffail(bonsai_agent *a, int r, const char *what) {
  const Leaf *l = a->event != BONSAI_EV_UTILITY
                      ? leafof(a, &a->bp->nodes[a->current])
                      : NULL;
  if (r != BONSAI_ERROR)
    bs_agent_fail(a, a->current, "%s returned %d", what, r);
  else if (l != NULL && (l->flags & LEAF_MISSING))
    bs_agent_fail(a, a->current, "no leaf registered as '%s'",
                  (const char *)l->data);
  else
    bs_agent_fail(a, a->current, "%s failed", what); /* unless it said */
  return BONSAI_ELEAF;
}

/* Delivers event ev to the leaf at node i through the call record of the
** tick (agent and owner set). The leaf is looked up at every call: a
** callback may re-register it. */
static int fire(bonsai_agent *a, const Node *n, uint32_t i, int ev,
                int status, bonsai_call *c) {
  const Leaf *l = leafof(a, n);
  if (bs_unlikely(a->stepping))
    return refused(a, i);
  c->data = l->data;
  c->args = n->args;
  c->event = ev;
  c->status = status;
  c->node = i;
  a->current = i;
  a->event = (uint8_t)ev;
  return l->fn(c);
}

int bs_vm_leafstate(bonsai_agent *a, uint32_t i, bonsai_call *c) {
  const Node *n = &a->bp->nodes[i];
  bonsai_call rec;
  int r;
  if (n->kind != BONSAI_ACTION || a->state[i] != RUNNING ||
      !(leafof(a, n)->flags & BONSAI_LEAF_SAVE))
    return BONSAI_OK;
  bs_vm_callrecord(a, &rec);
  rec.mayraise = 0;
  rec.write = c->write;
  rec.wud = c->wud;
  rec.saved = c->saved;
  rec.savedlen = c->savedlen;
  rec.utility = NULL;
  if ((r = fire(a, n, i, c->event, 0, &rec)) == BONSAI_OK)
    return BONSAI_OK;
  return leaffail(a, r, c->event == BONSAI_EV_SAVE ? "save" : "restore");
}

/* fire, with the callback's time counted when the agent is profiled (the
** traced copy of the tick only: 'traced' is a constant). */
static BS_ALWAYS_INLINE int call(bonsai_agent *a, const Node *n, uint32_t i,
                                 int ev, int status, bonsai_call *c,
                                 const int traced) {
  int s;
  if (!traced || bs_likely(a->prof == NULL))
    return fire(a, n, i, ev, status, c);
  bs_prof_leaf(a, i, 0);
  s = fire(a, n, i, ev, status, c);
  bs_prof_leaf(a, i, 1);
  return s;
}

/* The tick of the running action n (node i), and its exit when done. */
static BS_ALWAYS_INLINE int tick_action(bonsai_agent *a, const Node *n,
                                     uint32_t i, uint8_t *st, bonsai_call *c,
                                     const int traced) {
  int s = call(a, n, i, BONSAI_EV_TICK, 0, c, traced);
  if (s == RUNNING) {
    if (traced)
      bs_setagain(a, i);
    return s;
  }
  if (s != SUCCESS && s != FAILURE)
    return leaffail(a, s, "tick");
  SET(i, s);
  if (leafof(a, n)->flags & BONSAI_LEAF_EXIT) {
    int r = call(a, n, i, BONSAI_EV_EXIT, s, c, traced);
    if (r != BONSAI_OK)
      return leaffail(a, r, "exit");
  }
  return s;
}

/* One tick of the action or condition n (node i): enter, tick, and exit
** when done. */
static BS_ALWAYS_INLINE int tick_leaf(bonsai_agent *a, const Node *n,
                                   uint32_t i, uint8_t *st, bonsai_call *c,
                                   const int traced) {
  int s;
  if (n->kind == BONSAI_CONDITION) { /* its status is stored by the caller */
    s = call(a, n, i, BONSAI_EV_TICK, 0, c, traced);
    if (s == SUCCESS || s == FAILURE)
      return s;
    if (s == RUNNING) {
      bs_agent_fail(a, i, "a condition cannot return running");
      return BONSAI_ELEAF;
    }
    return leaffail(a, s, "condition");
  }
  if (st[i] != RUNNING) {
    if (leafof(a, n)->flags & BONSAI_LEAF_ENTER) {
      int r = call(a, n, i, BONSAI_EV_ENTER, 0, c, traced);
      if (r != BONSAI_OK)
        return leaffail(a, r, "enter");
    }
    SET(i, RUNNING);
  }
  return tick_action(a, n, i, st, c, traced);
}

/* }====================================================== */

/*
** {======================================================
** Checks, evaluated in C
** =======================================================
*/

/* A value's type as a message says it: "a number", "a string"... */
static const char *typename(int t) {
  static const char *const names[] = {"nil",      "a boolean", "a number",
                                      "a number", "a string",  "a Lua value"};
  return names[t];
}

/* Writes into buf, space-separated, the names of the keys set in bb and
** its parents (as many as fit), for the did-you-mean of a key not set. */
static void setkeys(const bonsai_bb *bb, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (; bb != NULL; bb = bonsai_bb_parent(bb)) {
    unsigned cur = 0;
    int key;
    bonsai_value v;
    while (bonsai_bb_next(bb, &cur, &key, &v)) {
      const char *name = bs_name(BS_KEYS, (uint32_t)key);
      size_t len = strlen(name);
      if (v.type == BONSAI_TNIL || at + len + 2 > size)
        continue;
      if (at > 0)
        buf[at++] = ' ';
      memcpy(buf + at, name, len + 1);
      at += len;
    }
  }
}

/* Records why a check of node i could not order x (the value of key xk)
** and y (of key yk, or BS_NONE for a constant): a key not set (with the
** set keys it may mean), or the types. */
static BS_NOINLINE void badorder(bonsai_agent *a, uint32_t i, uint32_t xk,
                                 bonsai_value x, uint32_t yk, bonsai_value y) {
  char keys[2048], near[200], meant[240];
  uint32_t k = x.type == BONSAI_TNIL ? xk : yk;
  if (x.type == BONSAI_TNIL || (y.type == BONSAI_TNIL && yk != BS_NONE)) {
    setkeys(a->bb, keys, sizeof keys);
    bonsai_nearest(bs_name(BS_KEYS, k), keys, near, sizeof near);
    bonsai_did_you_mean(near, meant, sizeof meant);
    bs_agent_fail(a, i, "key '%s' is not set%s", bs_name(BS_KEYS, k), meant);
  } else if (x.type != BONSAI_TNUMBER && x.type != BONSAI_TINTEGER &&
             x.type != BONSAI_TSTRING) {
    bs_agent_fail(a, i, "'%s' is %s, compared with %s", bs_name(BS_KEYS, xk),
                  typename(x.type), typename(y.type));
  } else if (yk != BS_NONE) {
    bs_agent_fail(a, i, "'%s' is %s, compared with %s", bs_name(BS_KEYS, yk),
                  typename(y.type), typename(x.type));
  } else {
    bs_agent_fail(a, i, "'%s' is %s, compared with %s", bs_name(BS_KEYS, xk),
                  typename(x.type), typename(y.type));
  }
}

/* Compares key xk's value x with y (key yk's, or a constant: BS_NONE) by
** op, for node i: SUCCESS, FAILURE, or BONSAI_ELEAF after recording the
** error. */
static BS_ALWAYS_INLINE int compare(bonsai_agent *a, uint32_t i, uint32_t xk,
                                    bonsai_value x, int op, uint32_t yk,
                                    bonsai_value y) {
  int eq, c = bs_value_compare(x, y, &eq);
  switch (op) {
  case OP_EQ: return eq ? SUCCESS : FAILURE;
  case OP_NE: return eq ? FAILURE : SUCCESS;
  default: break;
  }
  if (c == CMP_NAN)
    return FAILURE; /* NaN: every ordering is false, as in Lua */
  if (c == CMP_NONE) {
    badorder(a, i, xk, x, yk, y);
    return BONSAI_ELEAF;
  }
  switch (op) {
  case OP_LT: return c < 0 ? SUCCESS : FAILURE;
  case OP_LE: return c <= 0 ? SUCCESS : FAILURE;
  case OP_GT: return c > 0 ? SUCCESS : FAILURE;
  default: return c >= 0 ? SUCCESS : FAILURE;
  }
}

/* bt.check and bt.is_set, evaluated in C. */
static int check(bonsai_agent *a, uint32_t i) {
  const Node *n = &a->bp->nodes[i];
  bonsai_value x = bonsai_bb_get(a->bb, (int)n->a);
  a->current = i;
  if (n->kind == BONSAI_IS_SET)
    return x.type != BONSAI_TNIL ? SUCCESS : FAILURE;
  if (n->flags & NF_KEYREF)
    return compare(a, i, n->a, x, n->op, n->b, bonsai_bb_get(a->bb, (int)n->b));
  return compare(a, i, n->a, x, n->op, BS_NONE, n->val);
}

/* Node i writes an event's payload v into the blackboard at key: through
** the operation's host when it has a writer, else in C. BONSAI_OK or
** BONSAI_ELEAF. */
static int payload(bonsai_agent *a, uint32_t i, uint32_t key,
                   bonsai_value v) {
  int r;
  bonsai_write_fn w;
  a->current = i;
  a->event = BONSAI_EV_TICK;
  w = a->tree->env->write;
  r = w != NULL ? w(a, a->hostud, (int)key, v)
                : bonsai_bb_set(a->bb, (int)key, v);
  if (r == BONSAI_OK)
    return r;
  if (r == BONSAI_ENOMEM)
    bs_agent_fail(a, i, "out of memory");
  else if (!a->failed)
    bs_agent_fail(a, i, "writing the event's payload failed");
  return BONSAI_ELEAF;
}

/* A condition of node i evaluated in C (bonsai_def_when_check). */
static int checkcond(bonsai_agent *a, uint32_t i, const Check *k) {
  a->current = i;
  return compare(a, i, k->key, bonsai_bb_get(a->bb, (int)k->key), k->op,
                 k->vkey, k->vkey != BS_NONE ? bonsai_bb_get(a->bb,
                                                             (int)k->vkey)
                                             : k->val);
}

/* }====================================================== */

/*
** {======================================================
** Pre- and post-conditions
** =======================================================
*/

/* Runs condition k of node i (its leaf follows those of the conditions
** before k, in bp->leaves from n->cond on): SUCCESS (true), FAILURE, or
** BONSAI_ELEAF after recording the error. */
BS_NOINLINE static int runcond(bonsai_agent *a, uint32_t i, int k) {
  const Node *n = &a->bp->nodes[i];
  uint32_t at = n->cond;
  const Leaf *l;
  bonsai_call c;
  int b, r;
  for (b = 0; b < k; b++)
    at += (n->when >> b) & 1u;
  l = &a->bp->leaves[at];
  if (l->fn == NULL) /* a check */
    return checkcond(a, i, &a->bp->checks[(uintptr_t)l->data]);
  if (bs_unlikely(a->stepping))
    return refused(a, i), BONSAI_ELEAF;
  bs_vm_callrecord(a, &c);
  c.data = l->data;
  c.args = NULL;
  c.event = BONSAI_EV_TICK;
  c.status = 0;
  c.node = i;
  c.utility = NULL;
  a->current = i;
  a->event = BONSAI_EV_TICK;
  r = l->fn(&c);
  if (r == SUCCESS || r == FAILURE)
    return r;
  if (r == BONSAI_ERROR) /* unless it said */
    bs_agent_fail(a, i, "'%s' failed", bonsai_cond_name(k));
  else
    bs_agent_fail(a, i, "'%s' returned %d", bonsai_cond_name(k), r);
  return BONSAI_ELEAF;
}

static int cut(bonsai_agent *a, uint32_t w, uint32_t x, uint32_t to,
               int s);

/* Node i's pre-conditions as a tick reaches it, BehaviorTree.CPP's way:
** when it starts, failure_if, success_if, skip_if and run_while in order,
** the first that holds decides; while it runs, run_while alone, and a
** false one cuts it off (a latent abort: its parent waits, then is ticked
** again). Returns 0 when it is ticked, else the status it takes instead,
** ABORTING (it is aborting: its parent waits), or BONSAI_ELEAF. */
BS_NOINLINE static int precheck(bonsai_agent *a, uint32_t i) {
  const Node *n = &a->bp->nodes[i];
  uint32_t p = n->parent;
  int k, r;
  if (a->state[i] == RUNNING) {
    if (!(n->when & (1u << BONSAI_RUN_WHILE)) ||
        (r = runcond(a, i, BONSAI_RUN_WHILE)) == SUCCESS)
      return 0;
    if (r < 0)
      return r;
    r = cut(a, p, i, p != BS_NONE ? p : 0, 0);
    return r == RUNNING ? ABORTING : r != BONSAI_OK ? BONSAI_ELEAF : SKIPPED;
  }
  for (k = BONSAI_FAILURE_IF; k <= BONSAI_RUN_WHILE; k++) {
    if (!(n->when & (1u << k)))
      continue;
    if ((r = runcond(a, i, k)) < 0)
      return r;
    if (r == (k == BONSAI_RUN_WHILE ? FAILURE : SUCCESS))
      return k == BONSAI_FAILURE_IF   ? FAILURE
             : k == BONSAI_SUCCESS_IF ? SUCCESS
                                      : SKIPPED;
  }
  return 0;
}

/* Node i ended with status s (success or failure): its on_success or
** on_failure, then its post. BONSAI_OK or BONSAI_ELEAF. */
BS_NOINLINE static int postcheck(bonsai_agent *a, uint32_t i, int s) {
  const Node *n = &a->bp->nodes[i];
  int k = s == SUCCESS ? BONSAI_ON_SUCCESS : BONSAI_ON_FAILURE;
  if ((n->when & (1u << k)) && runcond(a, i, k) < 0)
    return BONSAI_ELEAF;
  if ((n->when & (1u << BONSAI_POST)) && runcond(a, i, BONSAI_POST) < 0)
    return BONSAI_ELEAF;
  return BONSAI_OK;
}

/* Post-conditions of node n (index i) that ended with s, if it has any. */
#define POST(n, i, s)                                                          \
  (conds && ((n)->flags & NF_COND) && postcheck(a, i, s) != BONSAI_OK)

/* Whether every child of node i was skipped (in the run that ends). */
static int allskipped(const Node *nd, const uint8_t *st, uint32_t i) {
  uint32_t c;
  for (c = i + 1; c < nd[i].next; c = nd[c].next)
    if (st[c] != SKIPPED)
      return 0;
  return 1;
}

/* }====================================================== */

/*
** {======================================================
** Aborts, latent aborts and recovery
** =======================================================
*/

uint32_t bs_vm_running_child(const Blueprint *bp, const uint8_t *st,
                             uint32_t i, uint32_t from) {
  const Node *nd = bp->nodes;
  uint32_t c;
  if (nd[i].flags & NF_MEMORY) { /* the current child, even mid-tick */
    c = W0(i);
    return c >= from && c < nd[i].next && LIVE(st[c]) ? c : BS_NONE;
  }
  for (c = from; c < nd[i].next; c = nd[c].next)
    if (LIVE(st[c]))
      return c;
  return BS_NONE;
}

/*
** A cut is latent when a decision of the tree makes it (a node that cuts
** off one of its branches: a reactive node, a parallel, a filter, a
** timeout, a guard, run_while, an interrupt, a control node): an abort
** callback may then return RUNNING, and its node is ABORTING until the
** callback returns anything else or its abort_timeout passes (latent.h
** keeps when it started). Its ancestors up to the cut branch are
** ABORTING while a node under them is. Any other cut is immediate: each
** callback once, RUNNING ignored, and nodes already aborting finish.
*/

/* The seconds a latent abort of node n may take, or -1: its own
** abort_timeout, else its registered leaf's. */
static double atimeout(const bonsai_agent *a, const Node *n) {
  if (n->secs >= 0 || n->kind != BONSAI_ACTION || !(n->flags & NF_NAMED))
    return n->secs;
  return a->tree->env->leaves[n->leaf].atimeout;
}

/* Whether a child of node i is aborting. */
static int aborting_child(const bonsai_agent *a, uint32_t i) {
  const Node *nd = a->bp->nodes;
  uint32_t c;
  for (c = i + 1; c < nd[i].next; c = nd[c].next)
    if (a->state[c] == ABORTING)
      return 1;
  return 0;
}

static int control_event(bonsai_agent *a, uint32_t i, int ev, int status);

/* Calls the abort of node i (an action: its ABORT, or EXIT with ABORTED;
** a control node: its ABORT), with status RUNNING when it may take its
** time, else ABORTED. OK, RUNNING (it takes its time), or ELEAF. */
static int callabort(bonsai_agent *a, uint32_t i, int status) {
  const Node *n = &a->bp->nodes[i];
  unsigned f;
  bonsai_call c;
  int r = BONSAI_OK;
  if (n->kind == BONSAI_CONTROL) {
    r = control_event(a, i, BONSAI_EV_ABORT, status);
    return r == RUNNING && status != RUNNING ? BONSAI_OK : r;
  }
  f = leafof(a, n)->flags;
  bs_vm_callrecord(a, &c);
  if (f & BONSAI_LEAF_ABORT) {
    r = fire(a, n, i, BONSAI_EV_ABORT, status, &c);
    if (r == RUNNING)
      return status == RUNNING ? RUNNING : BONSAI_OK; /* else ignored */
  } else if (f & BONSAI_LEAF_EXIT) { /* never latent */
    r = fire(a, n, i, BONSAI_EV_EXIT, BONSAI_ABORTED, &c);
  }
  return r != BONSAI_OK ? leaffail(a, r, "abort") : BONSAI_OK;
}

/* Node i has finished aborting (or was aborted at once): its status, then
** its on_halted. */
static int aborted(bonsai_agent *a, uint32_t i) {
  const Node *n = &a->bp->nodes[i];
  bs_setstatus(a, a->state, i, BONSAI_ABORTED);
  if ((n->flags & NF_COND) && (n->when & (1u << BONSAI_ON_HALTED)) &&
      runcond(a, i, BONSAI_ON_HALTED) < 0)
    return BONSAI_ELEAF;
  return BONSAI_OK;
}

/* Node i's own abort callback started taking its time: it is latent from
** now on, unless its timeout is 0 (or no memory is left to keep it): then
** it is cut off at once. Returns 1 when it is latent. */
static int latent(bonsai_agent *a, uint32_t i) {
  if (atimeout(a, &a->bp->nodes[i]) != 0 && bs_aborting_add(a, i) != NULL)
    return 1;
  if (a->trace != NULL)
    a->cutting = i; /* its "aborted" event says so */
  return 0;
}

/* A step of node i's latent abort callback (an entry of latent.h), in a
** latent pass ('later': it may go on) or an immediate one (its last
** call). Returns OK when it has ended, RUNNING, or ELEAF (ended too). */
static int steplatent(bonsai_agent *a, uint32_t i, int later) {
  Aborting *x = bs_aborting(a, i);
  double t;
  int r;
  if (x == NULL)
    return BONSAI_OK; /* none of its own */
  if (later && x->called == a->serial)
    return RUNNING; /* called in this tick already */
  t = atimeout(a, &a->bp->nodes[i]);
  if (later && !x->final && t >= 0 && a->time - x->since >= t) {
    bs_aborting_drop(a, i); /* cut off */
    a->cutting = i;
    return BONSAI_OK;
  }
  later = later && !x->final;
  x->called = a->serial;
  r = callabort(a, i, later ? RUNNING : BONSAI_ABORTED);
  if (r == RUNNING && (x = bs_aborting(a, i)) != NULL) {
    if (t >= 0 && a->time - x->since >= t) { /* a timeout of 0 */
      bs_aborting_drop(a, i);
      a->cutting = i;
      return BONSAI_OK;
    }
    bs_setagain(a, i);
    return RUNNING;
  }
  bs_aborting_drop(a, i);
  return r == RUNNING ? BONSAI_OK : r;
}

/* First visit of node i in a cut: a node that waited for aborts waits no
** more (it is cut off itself); a control node's ABORT callback runs (or
** takes a step, when it is latent already). */
static int abort_enter(bonsai_agent *a, uint32_t i, int later) {
  int r;
  if (a->latent != NULL)
    bs_wait_drop(a, i);
  if (a->bp->nodes[i].kind != BONSAI_CONTROL)
    return BONSAI_OK;
  if (a->state[i] == ABORTING)
    return steplatent(a, i, later) == BONSAI_ELEAF ? BONSAI_ELEAF
                                                   : BONSAI_OK;
  if ((r = callabort(a, i, later ? RUNNING : BONSAI_ABORTED)) != RUNNING)
    return r;
  (void)latent(a, i); /* it ends after its children (abort_leave) */
  return BONSAI_OK;
}

/* Last visit of node i in a cut, its children done or aborting: an action
** aborts (latent, or at once), a node aborting already takes a step, and
** a node with a child still aborting is ABORTING. */
static int abort_leave(bonsai_agent *a, uint32_t i, int later) {
  const Node *n = &a->bp->nodes[i];
  uint8_t *st = a->state;
  int r = BONSAI_OK, own;
  if (n->kind == BONSAI_ACTION) {
    if (st[i] == RUNNING) {
      if (!later) { /* immediate: the order aborts always had */
        bs_setstatus(a, st, i, BONSAI_ABORTED);
        r = callabort(a, i, BONSAI_ABORTED);
        if (aborted(a, i) != BONSAI_OK)
          r = BONSAI_ELEAF;
        return r;
      }
      /* (running during its call: its status tells how it ended) */
      if ((r = callabort(a, i, RUNNING)) == RUNNING && latent(a, i)) {
        bs_setstatus(a, st, i, ABORTING);
        return BONSAI_OK;
      }
    } else if ((r = steplatent(a, i, later)) == RUNNING) {
      return BONSAI_OK;
    }
    if (aborted(a, i) != BONSAI_OK)
      r = BONSAI_ELEAF;
    a->cutting = BS_NONE;
    return r == RUNNING ? BONSAI_OK : r;
  }
  own = n->kind == BONSAI_CONTROL && bs_aborting(a, i) != NULL;
  if (a->latent != NULL && (own || aborting_child(a, i))) {
    bs_setstatus(a, st, i, ABORTING);
    return BONSAI_OK;
  }
  r = aborted(a, i);
  a->cutting = BS_NONE;
  return r;
}

/*
** Cuts off the live nodes of the subtree at x, deepest first (siblings in
** child order), or takes the aborting ones a step further: 'later' in a
** latent cut (an abort may take its time), else at once. OK (x has been
** aborted), RUNNING (x is aborting) or ELEAF (every callback still ran;
** the first error is recorded). The callbacks are called protected
** wherever it runs (a parent's cut-off in a tick too): one that raised
** would leave the pass half done, and the recovery would call again the
** abort of a control node whose own callback raised before its children
** were aborted.
*/
static int abortwalk(bonsai_agent *a, uint32_t x, int later) {
  const Node *nd = a->bp->nodes;
  uint8_t *st = a->state;
  uint32_t i = x, from = x + 1;
  uint8_t protect = a->protect;
  int r = BONSAI_OK;
  bs_assert(x < a->bp->n);
  if (x == 0)
    a->resume = 0; /* the root stops running (also when it had ended and
                   ** a post-condition of it failed: nothing to abort) */
  if (!LIVE(st[x]))
    return BONSAI_OK;
  a->protect = 1;
  for (;;) {
    /* siblings before 'from' are done: a wide parallel stays linear */
    uint32_t c;
    if (from == i + 1 && abort_enter(a, i, later) != BONSAI_OK)
      r = BONSAI_ELEAF; /* the first failure is recorded; go on */
    c = bs_vm_running_child(a->bp, st, i, from);
    if (c != BS_NONE) {
      i = c;
      from = c + 1;
      continue;
    }
    if (abort_leave(a, i, later) != BONSAI_OK)
      r = BONSAI_ELEAF;
    if (i == x)
      break;
    from = nd[i].next;
    i = nd[i].parent;
  }
  a->protect = protect;
  return r != BONSAI_OK ? r : st[x] == ABORTING ? RUNNING : BONSAI_OK;
}

int bs_vm_abort(bonsai_agent *a, uint32_t x) {
  int r = abortwalk(a, x, 0);
  if (x == 0 && a->latent != NULL)
    bs_wait_drop(a, BS_NONE); /* the agent waited for the root */
  return r;
}

/* Node w (BS_NONE: the agent) will wait for its aborting children (the
** root): then it is ticked again at 'to', or with 'to' BS_NONE ends with
** s. RUNNING; without the memory to wait, their aborts end now: OK or
** ELEAF. */
static int await(bonsai_agent *a, uint32_t w, uint32_t to, int s) {
  const Node *nd = a->bp->nodes;
  uint32_t c;
  int r = BONSAI_OK;
  if (bs_wait_set(a, w, to, s) == BONSAI_OK)
    return RUNNING;
  if (w == BS_NONE)
    return bs_vm_abort(a, 0);
  for (c = w + 1; c < nd[w].next; c = nd[c].next)
    if (a->state[c] == ABORTING && bs_vm_abort(a, c) != BONSAI_OK)
      r = BONSAI_ELEAF;
  return r;
}

/* Node w (BS_NONE: the agent) cuts off its live child x (the root) by its
** own decision. OK: x has been aborted, w goes on at once; RUNNING: x is
** aborting, and w waits (then 'to' and s, as for await); or ELEAF. */
static int cut(bonsai_agent *a, uint32_t w, uint32_t x, uint32_t to,
               int s) {
  int r = abortwalk(a, x, 1);
  return r == RUNNING ? await(a, w, to, s) : r;
}

/* The same for every live child of w: OK, RUNNING (w waits) or ELEAF. */
static int cutall(bonsai_agent *a, uint32_t w, uint32_t to, int s) {
  const Node *nd = a->bp->nodes;
  uint32_t c;
  int r = BONSAI_OK, wait = 0;
  for (c = w + 1; c < nd[w].next; c = nd[c].next) {
    int k = LIVE(a->state[c]) ? abortwalk(a, c, 1) : BONSAI_OK;
    if (k == RUNNING)
      wait = 1;
    else if (k != BONSAI_OK)
      r = k;
  }
  if (r != BONSAI_OK)
    return r;
  return wait ? await(a, w, to, s) : BONSAI_OK;
}

/* Node w (BS_NONE: the agent) waits for the aborts it started: each takes
** a step. RUNNING while one goes on; OK once all have ended (its wait is
** over: what follows in *to and *s); or ELEAF. */
static int waitstep(bonsai_agent *a, uint32_t w, uint32_t *to, int *s) {
  const Node *nd = a->bp->nodes;
  const Wait *x = bs_wait(a, w);
  uint32_t c;
  int r = BONSAI_OK, wait = 0;
  *to = x != NULL ? x->to : BS_NONE;
  *s = x != NULL ? x->status : BONSAI_ABORTED;
  if (w == BS_NONE) {
    wait = (r = abortwalk(a, 0, 1)) == RUNNING;
  } else {
    for (c = w + 1; c < nd[w].next; c = nd[c].next) {
      int k = a->state[c] == ABORTING ? abortwalk(a, c, 1) : BONSAI_OK;
      if (k == RUNNING)
        wait = 1;
      else if (k != BONSAI_OK)
        r = k;
    }
  }
  if (r == BONSAI_ELEAF)
    return r;
  if (wait)
    return RUNNING;
  bs_wait_drop(a, w);
  return BONSAI_OK;
}

int bs_vm_interrupt(bonsai_agent *a) {
  uint8_t protect = a->protect;
  int r;
  if (!LIVE(a->state[0]))
    return BONSAI_OK;
  a->protect = 1;
  if ((r = cut(a, BS_NONE, 0, BS_NONE, BONSAI_ABORTED)) == BONSAI_ELEAF)
    (void)bs_vm_abort(a, 0); /* a failed tick: whatever aborts ends now */
  a->protect = protect;
  a->wake = 0; /* nothing runs to sleep on */
  return r;
}

/*
** A non-local exit with message msg (NULL: the error is recorded) left the
** callback of node a->current: the error that unwound is the operation's,
** at that node, unless it is the error recorded already, raised again on
** its way out (c:tick raises its child's error in the control node's
** callback: it stays the child's; bonsai_control_recover recorded it when
** it left the child's run). A node left by an error in its enter never
** started.
*/
static void unwound(bonsai_agent *a, const char *msg) {
  if (msg != NULL && (!a->failed || a->err == NULL ||
                      strncmp(a->err, msg, BS_ERRSIZE - 1) != 0)) {
    bonsai_agent_clearerr(a);
    bs_agent_fail(a, a->current, "%s", msg);
  }
  if (a->current != BS_NONE && a->state[a->current] == RUNNING &&
      a->event == BONSAI_EV_ENTER)
    bs_setstatus(a, a->state, a->current, BONSAI_IDLE); /* never started */
}

void bs_vm_recover(bonsai_agent *a, const char *msg) {
  uint8_t protect = a->protect;
  uint32_t cur = a->current;
  unwound(a, msg);
  a->protect = 1;
  a->ctl = a->run = NULL; /* the callbacks it unwound are over */
  if (cur != BS_NONE && LIVE(a->state[cur]) &&
      (a->event == BONSAI_EV_ABORT || a->event == BONSAI_EV_EXIT) &&
      a->bp->nodes[cur].kind == BONSAI_ACTION) { /* (an exit, aborted) */
    if (a->latent != NULL) /* its abort raised: it is over, not called */
      bs_aborting_drop(a, cur);
    bs_setstatus(a, a->state, cur, BONSAI_ABORTED);
  }
  (void)bs_vm_abort(a, 0);
  if (a->latent != NULL)
    bs_latent_free(a); /* nothing waits any more */
  a->protect = protect;
  a->cutting = BS_NONE;
  a->wake = 0; /* nothing runs to sleep on */
  bs_prof_abandon(a);
  if (bs_unlikely(a->trace != NULL))
    bs_trace_mark(a, BONSAI_TRACE_ERROR, a->errnode, bonsai_agent_errmsg(a));
}

/* A leaf failed inside the VM (C path): recover and report; inside a
** control node's callback (a child's run), the error goes back to the
** callback, and the tick that called it recovers. */
static int fail(bonsai_agent *a) {
  if (a->ctl == NULL)
    bs_vm_recover(a, NULL);
  return BONSAI_ELEAF;
}

/* }====================================================== */

/*
** {======================================================
** Parallels and utility selectors
** =======================================================
*/

/*
** A parallel's data: W0 successes and W1 failures in this run (what saves
** keep), then its unfinished children: how many (LEFT), this tick's read
** and write places in their list (POS, KEEP), the children skipped in this
** tick (SKIPS) and the list (UNDONE), in child order. A tick walks the
** list and keeps the children that still run (or were skipped: they are
** ticked again), so finished children are not looked at again.
*/
#define LEFT(i) (((uint32_t *)(st + nd[i].data))[2])
#define POS(i) (((uint32_t *)(st + nd[i].data))[3])
#define KEEP(i) (((uint32_t *)(st + nd[i].data))[4])
#define SKIPS(i) (((uint32_t *)(st + nd[i].data))[5])
#define UNDONE(i) ((uint32_t *)(st + nd[i].data) + 6)

void bs_vm_parallel_settle(const Blueprint *bp, uint8_t *st, uint32_t i) {
  const Node *nd = bp->nodes;
  uint32_t c, m = 0;
  W0(i) = W1(i) = 0;
  for (c = i + 1; c < nd[i].next; c = nd[c].next)
    if (st[c] == SUCCESS)
      W0(i)++;
    else if (st[c] == FAILURE)
      W1(i)++;
    else
      UNDONE(i)[m++] = c;
  LEFT(i) = m;
}

/*
** A utility selector's data: W0 its running child (as for a reactive
** node), W1 the place reached in this tick's order, then its children's
** utilities (doubles) and the order (child indices, highest utility first).
*/
#define UTILS(i) ((double *)(st + nd[i].data + 8))
#define ORDER(i) ((uint32_t *)(UTILS(i) + nd[i].nchild))

/* A tick of utility selector i: starts it if it was not running, asks for
** its children's utilities (0 without a function) and sorts them, highest
** first, ties in child order; returns the child to tick first, or BS_NONE
** after an error naming the child whose utility failed. Out of line, with
** a call record of its own: inlined, it cost the tick loop (W1). */
BS_NOINLINE static uint32_t rank(bonsai_agent *a, uint32_t i) {
  const Node *nd = a->bp->nodes;
  uint8_t *st = a->state;
  double *u = UTILS(i);
  uint32_t *ord = ORDER(i), k, j, ch;
  bonsai_call c;
  if (st[i] != RUNNING) {
    bs_setstatus(a, st, i, RUNNING);
    W0(i) = BS_NONE;
  }
  bs_vm_callrecord(a, &c);
  c.args = NULL;
  c.event = BONSAI_EV_UTILITY;
  c.status = 0;
  for (k = 0, ch = i + 1; k < nd[i].nchild; k++, ch = nd[ch].next) {
    const Leaf *l = &a->bp->leaves[nd[i].leaf + k];
    u[k] = 0;
    if (l->fn != NULL) {
      int r;
      if (bs_unlikely(a->stepping))
        return refused(a, ch), BS_NONE;
      c.data = l->data;
      c.node = ch;
      c.utility = &u[k];
      a->current = ch;
      a->event = BONSAI_EV_UTILITY;
      if ((r = l->fn(&c)) != BONSAI_OK)
        return leaffail(a, r, "utility"), BS_NONE;
      if (u[k] != u[k]) {
        bs_agent_fail(a, ch, "utility is NaN");
        return BS_NONE;
      }
    }
    ord[k] = ch;
  }
  /* insertion sort, stable: a child moves before those of lower utility */
  for (k = 1; k < nd[i].nchild; k++) {
    uint32_t x = ord[k];
    double ux = u[k];
    for (j = k; j > 0 && u[j - 1] < ux; j--) {
      ord[j] = ord[j - 1];
      u[j] = u[j - 1];
    }
    ord[j] = x;
    u[j] = ux;
  }
  W1(i) = 0; /* the place reached in the order */
  return ord[0];
}

/* A reactive node ends its tick with status s from child c: a running child
** after c is no longer reached, so it is cut off. OK, ELEAF, or RUNNING:
** its abort is latent, and the node waits (then it ends with s, or when c
** runs, is ticked again). */
static int reactive_end(bonsai_agent *a, const Node *nd, uint8_t *st,
                        uint32_t i, uint32_t c, int s) {
  uint32_t r = W0(i);
  W0(i) = s == RUNNING ? c : BS_NONE;
  if (r != BS_NONE && r != c && LIVE(st[r]))
    return cut(a, i, r, s == RUNNING ? i : BS_NONE, s);
  return BONSAI_OK;
}

/* }====================================================== */

/*
** {======================================================
** Guards: observer aborts
** =======================================================
*/

/*
** Observer aborts. A guard in mode "self" (or "both") whose running child's
** condition is now false aborts that child; one in mode "lower" (or
** "both") whose condition turned true (it was false, or not checked yet,
** e.g. a guard added by a reload), under a running selector, aborts the
** running lower-priority sibling so the selector comes back to the guard.
** A guard remembers the last result of its check (W0).
** Returns 1 if the tick must start from the root, 0 if not, or
** BONSAI_ELEAF.
*/
/* Guard g (a check guard or an event guard) takes over: under a running
** selector, reactive selector or priority section p, the running sibling
** after g is cut off, and p comes back to g (a latent abort: p waits,
** then goes to g). Returns 1 if the tick must start from the root, 0, or
** BONSAI_ELEAF. */
static int takeover(bonsai_agent *a, uint32_t g) {
  const Node *nd = a->bp->nodes;
  uint8_t *st = a->state;
  uint32_t p = nd[g].parent, r;
  int k;
  if (p == BS_NONE || st[p] != RUNNING || LIVE(st[g]) ||
      (nd[p].kind != BONSAI_SELECTOR &&
       nd[p].kind != BONSAI_REACTIVE_SELECTOR &&
       nd[p].kind != BONSAI_PRIORITY))
    return 0;
  for (r = nd[g].next; r < nd[p].next; r = nd[r].next)
    if (st[r] == RUNNING)
      break;
  if (r >= nd[p].next)
    return 0;
  k = cut(a, p, r, nd[p].kind == BONSAI_SELECTOR ? g : p, 0);
  if (k == BONSAI_ELEAF)
    return k;
  if (k == BONSAI_OK) /* (waiting, a selector's W0 stays on r) */
    W0(p) = nd[p].kind == BONSAI_SELECTOR ? g : BS_NONE;
  return 1;
}

static int wakeguard(bonsai_agent *a, uint32_t g) {
  const Node *nd = a->bp->nodes;
  uint8_t *st = a->state;
  uint32_t p = nd[g].parent, before = W0(g);
  int mode = nd[g].mode, c;
  if (mode == GUARD_NONE)
    return 0;
  if ((c = check(a, g + 1)) < 0)
    return BONSAI_ELEAF;
  W0(g) = (uint32_t)c;
  if (c == FAILURE && st[g] == RUNNING &&
      (mode == GUARD_SELF || mode == GUARD_BOTH)) {
    /* (a latent abort: its parent waits, then is ticked again) */
    if (cut(a, p, g, p != BS_NONE ? p : 0, 0) == BONSAI_ELEAF)
      return BONSAI_ELEAF;
    return 1;
  }
  if (c != SUCCESS || before == SUCCESS ||
      (mode != GUARD_LOWER && mode != GUARD_BOTH))
    return 0;
  return takeover(a, g);
}

/* Wakes the guards whose keys changed since the last tick. */
static int wakeguards(bonsai_agent *a) {
  const Blueprint *bp = a->bp;
  uint8_t *st = a->state;
  uint32_t k, j;
  int restart = 0, r;
  a->seen = a->bb->env->bbserial;
  for (k = 0; k < bp->nwatch; k++) {
    uint32_t *seen = (uint32_t *)(st + bp->watchdata) + k;
    uint32_t now = bs_bb_stamp(a->bb, (int)bp->watchkey[k]);
    if (now == *seen)
      continue;
    *seen = now;
    for (j = bp->watchfirst[k]; j < bp->watchfirst[k + 1]; j++) {
      if ((r = wakeguard(a, bp->watchguard[j])) < 0)
        return r;
      restart |= r;
    }
  }
  return restart;
}

/* The event guards in mode "lower" whose event was delivered to this tick
** take over (as a check guard's turning true does). 1 if the tick must
** start from the root, 0, or BONSAI_ELEAF. */
BS_NOINLINE static int wakeevents(bonsai_agent *a) {
  const Blueprint *bp = a->bp;
  uint32_t k;
  int restart = 0, r;
  for (k = 0; k < bp->nevguard; k++) {
    uint32_t g = bp->evguard[k];
    if (bs_event_find(a, bp->nodes[g].b) == NULL)
      continue;
    if ((r = takeover(a, g)) < 0)
      return r;
    restart |= r;
  }
  return restart;
}

int bs_vm_watched_changed(const bonsai_agent *a) {
  const Blueprint *bp = a->bp;
  uint32_t k;
  if (bp->nwatch == 0 || !bs_bb_changed(a->bb, a->seen))
    return 0;
  for (k = 0; k < bp->nwatch; k++)
    if (bs_bb_stamp(a->bb, (int)bp->watchkey[k]) !=
        ((const uint32_t *)(a->state + bp->watchdata))[k])
      return 1;
  return 0;
}

/* }====================================================== */

/*
** {======================================================
** Control nodes: the host's callbacks decide
** =======================================================
*/

/*
** A control node's callback runs with a Frame linked from the agent: what
** bonsai_control_tick and _abort check (only the callback under way may
** ask, not a callback it is nested in, nor a leaf of a child's run) and
** how many child ticks it may still ask for. A child's tick is a run of
** the VM over the child's subtree, nested in the callback: it stops where
** the child's status reaches its parent (a control node is no sequence for
** the jump table, and RUNNING stops at it: it is active). So the C stack
** grows by one VM run per control node nested on the path (at most
** BONSAI_MAXCONTROL, a definition check), and each callback asks for a
** bounded number of child ticks: a tick always ends.
*/

/* The copies of the tick that run a child of a control node (below). */
static int run_child_plain(bonsai_agent *a, uint32_t c);
static int run_child_traced(bonsai_agent *a, uint32_t c);
static int run_child_conds(bonsai_agent *a, uint32_t c);

/* Calls control node i's callback for ev (ENTER, ABORT: when it wants it;
** TICK) with its frame linked (status: an ABORT's, RUNNING when the pass
** is latent); returns its result, BONSAI_ELEAF when a child's run failed
** under it. *waits (if not NULL) is set when a child it aborted in a TICK
** is aborting. */
static int control_call(bonsai_agent *a, uint32_t i, int ev, int status,
                        int *waits) {
  const Node *n = &a->bp->nodes[i];
  bonsai_call c;
  Frame f;
  int r;
  bs_vm_callrecord(a, &c);
  f.prev = a->ctl;
  f.node = i;
  f.budget = BONSAI_CONTROL_TICKS + 2 * n->nchild;
  f.event = (uint8_t)ev;
  f.busy = f.failed = f.caught = 0;
  f.latent = ev == BONSAI_EV_ABORT && status == RUNNING;
  a->ctl = &f;
  r = fire(a, n, i, ev, status, &c);
  a->ctl = f.prev;
  if (waits != NULL)
    *waits = f.latent;
  a->current = i;
  a->event = (uint8_t)ev;
  if (f.caught) { /* the child's error is not the node's */
    bonsai_agent_clearerr(a);
    bs_agent_fail(a, i, "a child's error was caught inside the callback");
    return BONSAI_ELEAF;
  }
  return f.failed ? BONSAI_ELEAF : r;
}

/* The ENTER or ABORT event of control node i, if it wants it (status: an
** ABORT's; it may return RUNNING when that is RUNNING). */
static int control_event(bonsai_agent *a, uint32_t i, int ev, int status) {
  unsigned want = ev == BONSAI_EV_ENTER ? BONSAI_LEAF_ENTER : BONSAI_LEAF_ABORT;
  int r;
  if (!(leafof(a, &a->bp->nodes[i])->flags & want))
    return BONSAI_OK;
  r = control_call(a, i, ev, status, NULL);
  if (r == BONSAI_ELEAF || r == BONSAI_OK)
    return r;
  if (r == RUNNING && ev == BONSAI_EV_ABORT)
    return status == RUNNING ? RUNNING : BONSAI_OK;
  return leaffail(a, r, ev == BONSAI_EV_ENTER ? "enter" : "abort");
}

/* Control node i's TICK callback returned s: s checked, and its children's
** aborts when its run ends; 'waits': a child it aborted is aborting (then
** the node waits). */
static int control_end(bonsai_agent *a, uint32_t i, int s, const int conds,
                       int waits) {
  int r;
  if (s == SKIPPED && !conds) {
    bs_agent_fail(a, i, "tick returned skipped in a tree without "
                        "conditions, where no node is skipped");
    return BONSAI_ELEAF;
  }
  if (s != RUNNING && s != SUCCESS && s != FAILURE && s != SKIPPED)
    return leaffail(a, s, "tick");
  if (s != RUNNING)
    r = cutall(a, i, BS_NONE, s);
  else if (waits)
    r = await(a, i, i, 0);
  else
    r = BONSAI_OK;
  return r == BONSAI_OK ? s : r;
}

/* A tick of control node i: enter when it starts, its TICK callback, and
** its children's aborts when its run ends. The callback may return
** SKIPPED (its children were, say) in a tree with conditions ('conds'),
** the only ones where a node is skipped. A child it aborted that is
** aborting, or a child aborting as its run ends, makes it wait (running):
** then it ends as its callback said, or is ticked again. */
BS_NOINLINE static int control(bonsai_agent *a, uint32_t i, const int traced,
                               const int conds) {
  uint8_t *st = a->state;
  int s, waits;
  if (st[i] != RUNNING) {
    if (control_event(a, i, BONSAI_EV_ENTER, 0) != BONSAI_OK)
      return BONSAI_ELEAF;
    SET(i, RUNNING);
  }
  s = control_call(a, i, BONSAI_EV_TICK, 0, &waits);
  if (s == BONSAI_ELEAF)
    return s;
  return control_end(a, i, s, conds, waits);
}

/* The frame of control node 'node' when its callback for ev may act now
** (BONSAI_EV_ABORT: any of its callbacks), else NULL. */
static Frame *frameof(bonsai_agent *a, unsigned node, int ev) {
  Frame *f = a->ctl;
  if (f == NULL || f->node != node || f->busy ||
      (ev == BONSAI_EV_TICK && f->event != BONSAI_EV_TICK))
    return NULL;
  return f;
}

unsigned bonsai_control_child(const bonsai_agent *a, unsigned node,
                              unsigned k) {
  const Node *nd = a->bp->nodes;
  uint32_t c;
  if (node >= a->bp->n || nd[node].kind != BONSAI_CONTROL ||
      k >= nd[node].nchild)
    return BONSAI_NONE;
  for (c = node + 1; k > 0; k--)
    c = nd[c].next;
  return c;
}

unsigned bonsai_control_children(const bonsai_agent *a, unsigned node) {
  return node < a->bp->n && a->bp->nodes[node].kind == BONSAI_CONTROL
             ? a->bp->nodes[node].nchild
             : 0;
}

void *bonsai_control_memory(bonsai_agent *a, unsigned node) {
  return node < a->bp->n && a->bp->nodes[node].kind == BONSAI_CONTROL
             ? a->state + a->bp->nodes[node].data
             : NULL;
}

/* A child's run of frame f begins (host: call->host under the child, NULL
** for the operation's) and ends; between the two it is the innermost run
** under way (a->run), which bonsai_control_recover finds again after a
** non-local exit. A stepped child's run (step.c) too. */
void bs_vm_run_begin(bonsai_agent *a, Frame *f, void *host) {
  f->busy = 1;
  f->host = a->hostud;
  f->prevrun = a->run;
  a->run = f;
  if (host != NULL)
    a->hostud = host;
}

void bs_vm_run_end(bonsai_agent *a, Frame *f) {
  a->hostud = f->host;
  a->run = f->prevrun;
  f->busy = 0;
  a->current = f->node; /* the callback's own errors are the node's */
  a->event = f->event;
}

uint32_t bs_vm_child(bonsai_agent *a, unsigned node, unsigned k, Frame **pf,
                     int *r) {
  Frame *f = frameof(a, node, BONSAI_EV_TICK);
  uint32_t c;
  *r = BONSAI_ELEAF;
  if ((*pf = f) == NULL) {
    *r = BONSAI_EARG;
    return BS_NONE;
  }
  if (f->caught) /* the node fails: its child's error is recorded */
    return BS_NONE;
  if (f->latent) { /* a child it aborted is aborting: it waits */
    *r = RUNNING;
    return BS_NONE;
  }
  if ((c = bonsai_control_child(a, node, k)) == BONSAI_NONE) {
    bs_agent_fail(a, node, "no child %u (it has %u)", k + 1,
                  (unsigned)a->bp->nodes[node].nchild);
    f->failed = 1;
    return BS_NONE;
  }
  if (f->budget == 0) {
    bs_agent_fail(a, node, "ticked its children more than %u times in one "
                           "tick", (unsigned)(BONSAI_CONTROL_TICKS +
                                              2 * a->bp->nodes[node].nchild));
    f->failed = 1;
    return BS_NONE;
  }
  if (a->state[c] == ABORTING) {
    *r = RUNNING; /* not ticked while it aborts */
    return BS_NONE;
  }
  return c;
}

int bonsai_control_tick(bonsai_agent *a, unsigned node, unsigned k,
                        void *host) {
  Frame *f;
  uint32_t c;
  int s;
  if ((c = bs_vm_child(a, node, k, &f, &s)) == BS_NONE)
    return s;
  f->budget--;
  bs_vm_run_begin(a, f, host);
  s = a->copy == 2   ? run_child_conds(a, c) /* the copy bs_copy picked */
      : a->copy == 1 ? run_child_traced(a, c)
                     : run_child_plain(a, c);
  bs_vm_run_end(a, f);
  if (s < 0) /* the error names the child's node that failed */
    f->failed = 1;
  return s;
}

int bonsai_control_abort(bonsai_agent *a, unsigned node, unsigned k,
                         void *host) {
  Frame *f = frameof(a, node, BONSAI_EV_ABORT);
  uint32_t c = bonsai_control_child(a, node, k);
  int r;
  if (f == NULL || c == BONSAI_NONE)
    return BONSAI_EARG;
  if (f->caught)
    return BONSAI_ELEAF;
  bs_vm_run_begin(a, f, host);
  /* a decision of its TICK callback is a latent cut (then the node
  ** waits); in its ABORT callback, the cut is as latent as the pass */
  r = abortwalk(a, c, f->event == BONSAI_EV_TICK || f->latent);
  bs_vm_run_end(a, f);
  if (r == RUNNING) {
    if (f->event == BONSAI_EV_TICK)
      f->latent = 1;
    r = BONSAI_OK;
  } else if (r < 0) {
    f->failed = 1; /* an abort callback failed: the node fails */
  }
  return r;
}

int bonsai_control_recover(bonsai_agent *a, unsigned node, const char *msg) {
  Frame *f = a->run;
  if (f == NULL || f->node != node) { /* no child's run under way: a */
    f = a->ctl;  /* failure it returned, which the host raises */
    if (f == NULL || f->node != node || f->busy || !f->failed)
      return BONSAI_EARG;
    f->caught = 1;
    return BONSAI_OK;
  }
  unwound(a, msg != NULL ? msg : "(no message)");
  a->ctl = f; /* the frames above it are gone with their C frames */
  bs_vm_run_end(a, f);
  f->failed = f->caught = 1;
  return BONSAI_OK;
}

/* }====================================================== */

/*
** {======================================================
** Each kind's steps
** =======================================================
*/

/* The traced copy reaches node i: counted when the agent is profiled. */
static BS_ALWAYS_INLINE void visit(bonsai_agent *a, uint32_t i) {
  if (bs_unlikely(a->prof != NULL))
    bs_prof_visit(a, i);
}

/*
** A node of a kind acts at two moments of a tick: when it is ticked (its
** start step: st[i] says whether it was running) and when a child c ends
** its tick with status s, or stays running (s RUNNING: c is the child on
** the path to the running node), or was skipped (s SKIPPED, in the copies
** with conditions): its child-done step. step() holds both, side by side
** in one case per kind: 'start' is a constant at each of its two call
** sites in run(), so each site compiles to a switch of that step alone.
** A step ends with TICK(j) (node j is ticked next), END(s) (node i ends
** its tick with status s), FAIL() (an error is recorded) or, for a
** control node, GO_BACK (its child's run is over: back to its callback).
** Leaves, sequences, selectors and their reactive flavours have paths of
** their own in run() (by kind, flags and the jump table), before step().
*/
enum { GO_TICK, GO_END, GO_FAIL, GO_BACK };
#define TICK(j) return (*pi = (j), GO_TICK)
#define END(x) return (*ps = (x), GO_END)
#define FAIL() return GO_FAIL
/* The node cut off a branch (cut, cutall): a latent abort makes it wait,
** running. */
#define CUT(x)                                                                 \
  do {                                                                         \
    int cut_ = (x);                                                            \
    if (cut_ != BONSAI_OK) {                                                   \
      if (cut_ != RUNNING)                                                     \
        FAIL();                                                                \
      END(RUNNING);                                                            \
    }                                                                          \
  } while (0)

static BS_ALWAYS_INLINE int step(bonsai_agent *a, const Node *nd, uint8_t *st,
                                 const int start, uint32_t *pi, uint32_t c,
                                 int *ps, const int traced, const int conds) {
  uint32_t i = *pi;
  const Node *n = &nd[i];
  int s = *ps;
  switch (n->kind) {
  /* check, is_set: a condition on the blackboard, evaluated in C */
  case BONSAI_CHECK: case BONSAI_IS_SET:
    if ((s = check(a, i)) < 0)
      FAIL();
    END(s);
  /* wait: running for n->secs of agent time */
  case BONSAI_WAIT:
    if (st[i] != RUNNING) {
      F64(i) = a->time;
      SET(i, RUNNING);
    }
    END(a->time - F64(i) >= n->secs ? SUCCESS : RUNNING);
  /* parallel: its unfinished children ticked in order until a policy is
  ** met (n->a successes or n->b failures; with "wait", n->mode, until all
  ** have finished) */
  case BONSAI_PARALLEL:
    if (start) {
      if (st[i] != RUNNING) {
        uint32_t m = 0;
        SET(i, RUNNING);
        W0(i) = W1(i) = 0; /* successes, failures */
        for (c = i + 1; c < n->next; c = nd[c].next) {
          if (st[c] != RUNNING)
            SET(c, BONSAI_IDLE);
          UNDONE(i)[m++] = c;
        }
        LEFT(i) = m;
      }
      if ((n->mode || (W0(i) < n->a && W1(i) < n->b)) && /* mode: "wait" */
          LEFT(i) > 0) {
        POS(i) = KEEP(i) = 0;
        if (conds)
          SKIPS(i) = 0;
        TICK(UNDONE(i)[0]);
      }
      /* a reload left its policy met, or no child to tick (with "wait":
      ** all have finished; the policies decide, success first) */
      s = W0(i) >= n->a ? SUCCESS : FAILURE;
      CUT(cutall(a, i, BS_NONE, s));
      END(s);
    }
    if (s == SUCCESS)
      W0(i)++;
    else if (s == FAILURE)
      W1(i)++;
    else if (conds && s == SKIPPED)
      SKIPS(i)++;
    if ((W0(i) >= n->a || W1(i) >= n->b) && !n->mode) { /* no "wait" */
      s = W0(i) >= n->a ? SUCCESS : FAILURE;
      CUT(cutall(a, i, BS_NONE, s));
      END(s);
    }
    bs_assert(UNDONE(i)[POS(i)] == c);
    if (s == RUNNING || (conds && s == SKIPPED)) /* it stays listed */
      UNDONE(i)[KEEP(i)++] = c;
    if (++POS(i) < LEFT(i))
      TICK(UNDONE(i)[POS(i)]);
    LEFT(i) = KEEP(i);
    /* every child ticked: running ones remain, or all have finished
    ** (then, with "wait", the policies decide, success first; without,
    ** no policy was met) */
    s = W0(i) + W1(i) < n->nchild ? RUNNING
        : W0(i) >= n->a           ? SUCCESS
                                  : FAILURE;
    if (conds && SKIPS(i) > 0) {
      /* all skipped: skipped; none running, with "wait" or success
      ** "all" (counting the skipped as successes): the policies decide;
      ** else it runs on, and the skipped ones are ticked again */
      if (SKIPS(i) == n->nchild)
        s = SKIPPED;
      else if (W0(i) + W1(i) + SKIPS(i) == n->nchild && (n->mode || n->op))
        s = W0(i) + (n->op ? SKIPS(i) : 0) >= n->a ? SUCCESS : FAILURE;
    }
    END(s);
  /* filter, monitor: its conditions in order, then its child (n->b) if
  ** all passed; a monitor checks them again at every tick */
  case BONSAI_FILTER: case BONSAI_MONITOR:
    if (start) {
      SET(i, RUNNING);
      if (n->b == i + 1)
        W0(i) = a->serial; /* no conditions: the child runs this tick */
      TICK(i + 1);
    }
    if (c != n->b) { /* a condition */
      if (s == RUNNING) {
        bs_agent_fail(a, c, "a condition cannot return running");
        FAIL();
      }
      if (s == SUCCESS || (conds && s == SKIPPED)) { /* passed */
        if (nd[c].next == n->b)
          W0(i) = a->serial; /* the child runs this tick */
        TICK(nd[c].next);
      }
      CUT(cut(a, i, n->b, BS_NONE, s));
    }
    END(s);
  /* utility_selector: its children ranked by utility at every tick, then
  ** a reactive selector over that order */
  case BONSAI_UTILITY_SELECTOR:
    if (start) {
      if ((i = rank(a, i)) == BS_NONE)
        FAIL();
      TICK(i);
    }
    if ((s == FAILURE || (conds && s == SKIPPED)) && ++W1(i) < n->nchild)
      TICK(ORDER(i)[W1(i)]);
    if (conds && s == SKIPPED) /* the last in the order */
      s = allskipped(nd, st, i) ? SKIPPED : FAILURE;
    CUT(reactive_end(a, nd, st, i, c, s));
    END(s);
  /* control: its callback ticks its children, each a run of the VM nested
  ** in the callback that ends when the child's status reaches the node */
  case BONSAI_CONTROL:
    if (start) {
      if ((s = control(a, i, traced, conds)) < 0)
        FAIL();
      END(s);
    }
    return GO_BACK; /* a child's run is over: back to the callback */
  /* guard: its check (the first child, evaluated here) decides whether its
  ** child (n->b) starts; wakeguard makes its observer aborts */
  case BONSAI_GUARD:
    if (start) {
      if (st[i] != RUNNING) {
        if (traced)
          visit(a, i + 1); /* its condition, checked here */
        if ((s = check(a, i + 1)) < 0)
          FAIL();
        SET(i + 1, s);
        W0(i) = (uint32_t)s;
        if (s == FAILURE)
          END(s);
        SET(i, RUNNING);
      }
      TICK(n->b);
    }
    END(s); /* the status passes */
  /* The decorators: a skipped child's status passes, except where said. */
  /* invert: its child's success and failure swapped */
  case BONSAI_INVERT:
    if (start) {
      SET(i, RUNNING);
      TICK(i + 1);
    }
    if (s != RUNNING && !(conds && s == SKIPPED))
      s = s == SUCCESS ? FAILURE : SUCCESS;
    END(s);
  /* force_success, force_failure: its child's end made one status */
  case BONSAI_FORCE_SUCCESS: case BONSAI_FORCE_FAILURE:
    if (start) {
      SET(i, RUNNING);
      TICK(i + 1);
    }
    if (s != RUNNING && !(conds && s == SKIPPED))
      s = n->kind == BONSAI_FORCE_SUCCESS ? SUCCESS : FAILURE;
    END(s);
  /* repeater, retry: its child's run again after a success (repeater) or
  ** a failure (retry), n->a times (0: forever, one run started per tick) */
  case BONSAI_REPEATER: case BONSAI_RETRY:
    if (start) {
      if (st[i] != RUNNING) {
        SET(i, RUNNING);
        W0(i) = 0;
      }
      if (st[i + 1] != RUNNING)
        W1(i) = a->serial; /* tick in which the child's run started */
      TICK(i + 1);
    }
    if (s == (n->kind == BONSAI_REPEATER ? SUCCESS : FAILURE)) {
      if (n->a != 0 && ++W0(i) >= n->a)
        END(s);
      if (n->a == 0 && W1(i) == a->serial)
        END(RUNNING); /* forever: one run started and ended this tick */
      W1(i) = a->serial;
      TICK(i + 1);
    }
    END(s);
  /* repeat_until_failure: its child's run again after each success, one
  ** run started per tick */
  case BONSAI_REPEAT_UNTIL_FAILURE:
    if (start) {
      SET(i, RUNNING);
      if (st[i + 1] != RUNNING)
        W0(i) = a->serial;
      TICK(i + 1);
    }
    if (s == SUCCESS) {
      if (W0(i) == a->serial)
        END(RUNNING);
      W0(i) = a->serial;
      TICK(i + 1);
    }
    END(s);
  /* timeout, time_limit: its child aborted after n->secs, which then
  ** fails (timeout) or succeeds (time_limit); checked at every tick */
  case BONSAI_TIMEOUT: case BONSAI_TIME_LIMIT:
    if (start) {
      if (st[i] != RUNNING) {
        SET(i, RUNNING);
        F64(i) = a->time;
      }
      if (a->time - F64(i) >= n->secs) {
        s = n->kind == BONSAI_TIMEOUT ? FAILURE : SUCCESS;
        CUT(cut(a, i, i + 1, BS_NONE, s));
        END(s);
      }
      TICK(i + 1);
    }
    END(s); /* the status passes */
  /* limit: fails once its child has started n->a runs */
  case BONSAI_LIMIT:
    if (start) {
      if (st[i] != RUNNING) {
        if (W0(i) >= n->a)
          END(FAILURE);
        W0(i)++;
        SET(i, RUNNING);
      }
      TICK(i + 1);
    }
    END(s); /* the status passes */
  /* cooldown: fails until n->secs after its child's last run ended */
  case BONSAI_COOLDOWN:
    if (start) {
      if (st[i] != RUNNING) {
        if (a->time < F64(i))
          END(FAILURE);
        SET(i, RUNNING);
      }
      TICK(i + 1);
    }
    if (s != RUNNING && !(conds && s == SKIPPED)) /* skipped: did not run */
      F64(i) = a->time + n->secs;
    END(s);
  /* run_once: its child's final status, kept once it has one, and then
  ** returned, or with "then_skip" (n->mode) skipped */
  case BONSAI_RUN_ONCE:
    if (start) {
      if (st[i] != RUNNING) {
        if (W0(i) != 0 && n->mode) {
          bs_assert(conds); /* K_SKIPS: the copy that knows SKIPPED */
          END(SKIPPED);
        }
        if (W0(i) != 0)
          END((int)W0(i));
        SET(i, RUNNING);
      }
      TICK(i + 1);
    }
    if (s != RUNNING && !(conds && s == SKIPPED)) /* skipped: not kept */
      W0(i) = (uint32_t)s;
    END(s);
  /* delay: running, without its child, for n->secs; then its child */
  case BONSAI_DELAY:
    if (start) {
      if (st[i] != RUNNING) {
        SET(i, RUNNING);
        F64(i) = a->time;
      }
      if (st[i + 1] != RUNNING && a->time - F64(i) < n->secs)
        END(RUNNING);
      TICK(i + 1);
    }
    END(s); /* the status passes */
  /* subtree: another tree's root, inlined */
  case BONSAI_SUBTREE:
    if (start) {
      SET(i, RUNNING);
      TICK(i + 1);
    }
    END(s); /* the status passes */
  /* keep_running_until_failure: running after each success (its child's
  ** next run at the next tick) */
  case BONSAI_KEEP_RUNNING_UNTIL_FAILURE:
    if (start) {
      SET(i, RUNNING);
      TICK(i + 1);
    }
    if (s == SUCCESS || (conds && s == SKIPPED))
      s = RUNNING;
    END(s);
  /* if_then_else: its first child, the condition, then its second child
  ** if the condition succeeded, else its third (without one: failure); a
  ** running branch goes on without the condition ticked again */
  case BONSAI_IF_THEN_ELSE:
    if (start) {
      if (st[i] == RUNNING &&
          (c = bs_vm_running_child(a->bp, st, i, i + 1)) != BS_NONE)
        TICK(c); /* ticked from above: its running child */
      SET(i, RUNNING);
      TICK(i + 1);
    }
    if (c == i + 1 && (s == SUCCESS || s == FAILURE)) { /* it decided */
      if (s == SUCCESS)
        TICK(nd[c].next);
      if (n->nchild == 3)
        TICK(nd[nd[c].next].next);
    }
    END(s); /* a branch's status, or the condition's (running, skipped, or
            ** failure without an else) */
  /* while_do_else: its first child, the condition, at every tick, then
  ** its second child while the condition succeeds, else its third
  ** (without one: failure); the branch not chosen is aborted if it runs */
  case BONSAI_WHILE_DO_ELSE:
    if (start) {
      if (st[i] != RUNNING)
        SET(i, RUNNING);
      TICK(i + 1);
    }
    if (c == i + 1 && s != RUNNING) { /* the condition decided */
      uint32_t d = nd[c].next, e = nd[d].next; /* do, else (or n->next) */
      uint32_t go = s == SUCCESS ? d : s == FAILURE ? e : n->next;
      int wait = 0;
      for (c = d; c < n->next; c = nd[c].next) {
        int k = c != go && LIVE(st[c])
                    ? cut(a, i, c, go < n->next ? go : BS_NONE, s)
                    : BONSAI_OK;
        if (k == BONSAI_ELEAF)
          FAIL();
        wait |= k == RUNNING;
      }
      if (wait)
        END(RUNNING);
      if (go < n->next)
        TICK(go);
    }
    END(s); /* a branch's status, or the condition's (running, skipped:
            ** no branch runs, or failure without an else) */
  /* skip_unless_updated, wait_value_update: out of its child's run,
  ** skipped (skip_unless_updated) or running without its child
  ** (wait_value_update) unless its key (n->a) is set and changed since it
  ** last looked; then its child */
  case BONSAI_SKIP_UNLESS_UPDATED: case BONSAI_WAIT_VALUE_UPDATE:
    if (start) {
      if (st[i + 1] != RUNNING) {
        uint32_t now = bs_bb_stamp(a->bb, (int)n->a);
        if (now == W0(i) ||
            bonsai_bb_get(a->bb, (int)n->a).type == BONSAI_TNIL) {
          if (n->kind == BONSAI_WAIT_VALUE_UPDATE) {
            if (st[i] != RUNNING)
              SET(i, RUNNING);
            END(RUNNING);
          }
          bs_assert(conds); /* K_SKIPS: the copy that knows SKIPPED */
          END(SKIPPED);
        }
        W0(i) = now;
      }
      if (st[i] != RUNNING)
        SET(i, RUNNING);
      TICK(i + 1);
    }
    END(s); /* the status passes */
  /* event: success when its event (n->b) was delivered to this tick, its
  ** payload written to its key (n->a) first, if it has one */
  case BONSAI_EVENT: {
    const Event *e = bs_event_find(a, n->b);
    if (e == NULL)
      END(FAILURE);
    if (n->a != BS_NONE && payload(a, i, n->a, e->v) != BONSAI_OK)
      FAIL();
    END(SUCCESS);
  }
  /* wait_event: running until its event (n->b) is delivered, then success
  ** (its payload written to its key, n->a, if it has one); failure after
  ** n->secs of agent time (n->secs < 0: never) */
  case BONSAI_WAIT_EVENT: {
    const Event *e = bs_event_find(a, n->b);
    if (st[i] != RUNNING) {
      F64(i) = a->time;
      SET(i, RUNNING);
    }
    if (e != NULL) {
      if (n->a != BS_NONE && payload(a, i, n->a, e->v) != BONSAI_OK)
        FAIL();
      END(SUCCESS);
    }
    END(n->secs >= 0 && a->time - F64(i) >= n->secs ? FAILURE : RUNNING);
  }
  /* event_guard: its child starts in a tick its event (n->b) is delivered
  ** to; a running child goes on; wakeevents makes its "lower" takeover */
  case BONSAI_EVENT_GUARD:
    if (start) {
      if (st[i] != RUNNING) {
        if (bs_event_find(a, n->b) == NULL)
          END(FAILURE);
        SET(i, RUNNING);
      }
      TICK(i + 1);
    }
    END(s); /* the status passes */
  /* random_selector: a selector over its children in an order drawn when
  ** its run starts (W1), from the agent's seed (the number at its key,
  ** n->a; anything else: 0), the node and the agent's tick count, so the
  ** same ticks draw the same orders; the order is place p -> child
  ** (m*p + o) mod nchild, m coprime with nchild; W0 the place reached */
  case BONSAI_RANDOM_SELECTOR: {
    uint32_t m, o, k, x, y;
    if (start && st[i] != RUNNING) {
      bonsai_value v = bonsai_bb_get(a->bb, (int)n->a);
      uint64_t z = v.type == BONSAI_TINTEGER ? (uint64_t)v.u.i
                   : v.type == BONSAI_TNUMBER && v.u.n > -9e18 && v.u.n < 9e18
                       ? (uint64_t)(long long)v.u.n
                       : 0;
      z = z * 0x9e3779b97f4a7c15u ^ ((uint64_t)a->serial << 32 | i);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u; /* splitmix64's finish */
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
      SET(i, RUNNING);
      W0(i) = 0;
      W1(i) = (uint32_t)(z ^ (z >> 31));
    } else if (!start) {
      if (!(s == FAILURE || (conds && s == SKIPPED)))
        END(s);
      if (++W0(i) >= n->nchild) /* the last in the order */
        END(conds && s == SKIPPED && allskipped(nd, st, i) ? SKIPPED
                                                           : FAILURE);
    }
    m = 1 + W1(i) % n->nchild; /* the stride: the next coprime one */
    for (;; m = m % n->nchild + 1) {
      for (x = m, y = n->nchild; y != 0; k = x % y, x = y, y = k)
        ;
      if (x == 1)
        break;
    }
    o = (uint32_t)(((uint64_t)m * (W0(i) % n->nchild) + (W1(i) >> 16)) %
                   n->nchild);
    for (c = i + 1; o > 0; o--)
      c = nd[c].next;
    TICK(c);
  }
  default: /* never: every kind has its steps above */
    bs_assert(!"a kind without its steps in vm.c");
    bs_agent_fail(a, i, "no steps for kind %d", (int)n->kind);
    FAIL();
  }
}

#undef TICK
#undef END
#undef FAIL

/* }====================================================== */

/*
** {======================================================
** Stepped runs: calls handed out (step.c)
** =======================================================
*/

/*
** A stepped run (bs_vm_step) is the tick, or a control node's child run,
** compiled from run() as the other copies are, but where they call a
** leaf's tick, enter or exit or a control node's enter or tick, it stops
** and hands the call out (a->step->call), keeping where it stopped in its
** StepRun; the next bs_vm_step goes on from there with the call's result.
** Everything else runs as in the other copies: a version whose ticks may
** need another callback is not stepped (step.c), and fire() refuses one.
*/

/* Hands out event ev of node i's leaf l, as fire() would call it (the
** parts of the call record that stay the same through a run are set when
** it starts: bs_vm_stepcall, vm.h); the run stops at 'at'. */
static int handout(bonsai_agent *a, const Leaf *l, uint32_t i, int ev,
                   int status, int at) {
  Stepping *p = a->step;
  p->call.host = a->hostud;
  p->call.data = l->data;
  p->call.args = a->bp->nodes[i].args;
  p->call.event = ev;
  p->call.status = status;
  p->call.node = i;
  p->fn = l->fn;
  a->current = i;
  a->event = (uint8_t)ev;
  p->top->i = i;
  p->top->at = (uint8_t)at;
  return BS_HANDED;
}

/* Leaf i (node n: an action or condition) in a stepped run, at 'at' with
** the result r of the call handed out there (BS_AT_NONE: the leaf is
** ticked now): tick_leaf and tick_action a call at a time. Returns a
** status, BONSAI_ELEAF or BS_HANDED. */
static BS_ALWAYS_INLINE int stepleaf(bonsai_agent *a, const Node *n,
                                     uint32_t i, uint8_t *st, int at, int r,
                                     const int traced) {
  switch (at) {
  case BS_AT_NONE:
    if (n->kind != BONSAI_CONDITION && st[i] != RUNNING) {
      if (leafof(a, n)->flags & BONSAI_LEAF_ENTER)
        return handout(a, leafof(a, n), i, BONSAI_EV_ENTER, 0, BS_AT_ENTER);
      SET(i, RUNNING);
    }
    return handout(a, leafof(a, n), i, BONSAI_EV_TICK, 0, BS_AT_TICK);
  case BS_AT_ENTER:
    if (r != BONSAI_OK)
      return leaffail(a, r, "enter");
    SET(i, RUNNING);
    return handout(a, leafof(a, n), i, BONSAI_EV_TICK, 0, BS_AT_TICK);
  case BS_AT_TICK:
    if (n->kind == BONSAI_CONDITION) { /* its status is stored by the caller */
      if (r == SUCCESS || r == FAILURE)
        return r;
      if (r == RUNNING) {
        bs_agent_fail(a, i, "a condition cannot return running");
        return BONSAI_ELEAF;
      }
      return leaffail(a, r, "condition");
    }
    if (r == RUNNING) {
      if (traced)
        bs_setagain(a, i);
      return r;
    }
    if (r != SUCCESS && r != FAILURE)
      return leaffail(a, r, "tick");
    SET(i, r);
    if (leafof(a, n)->flags & BONSAI_LEAF_EXIT)
      return handout(a, leafof(a, n), i, BONSAI_EV_EXIT, r, BS_AT_EXIT);
    return r;
  default: /* BS_AT_EXIT */
    if (r != BONSAI_OK)
      return leaffail(a, r, "exit");
    return st[i];
  }
}

/* Hands out control node i's callback for ev with its frame linked, as
** control_call() calls it. */
static int ctlout(bonsai_agent *a, uint32_t i, int ev, int at) {
  const Node *n = &a->bp->nodes[i];
  StepRun *r = a->step->top;
  Frame *f = &r->f;
  f->prev = a->ctl;
  f->node = i;
  f->budget = BONSAI_CONTROL_TICKS + 2 * n->nchild;
  f->event = (uint8_t)ev;
  f->busy = f->failed = f->caught = f->latent = 0;
  r->host = a->hostud;
  a->ctl = f;
  return handout(a, leafof(a, n), i, ev, 0, at);
}

/* The callback ctlout handed out returned r: its frame unlinked, as
** control_call() does (*waits: a child it aborted is aborting). */
static int ctlback(bonsai_agent *a, uint32_t i, int r, int *waits) {
  StepRun *run = a->step->top;
  Frame *f = &run->f;
  a->ctl = f->prev;
  a->current = i;
  a->event = f->event;
  *waits = f->latent;
  if (f->busy) { /* a child's run was left by a non-local exit that the
                 ** host caught without bonsai_control_recover */
    a->hostud = run->host;
    a->run = f->prevrun;
    f->busy = 0;
    f->caught = 1;
  }
  if (f->caught) { /* the child's error is not the node's */
    bonsai_agent_clearerr(a);
    bs_agent_fail(a, i, "a child's error was caught inside the callback");
    return BONSAI_ELEAF;
  }
  return f->failed ? BONSAI_ELEAF : r;
}

/* Control node i in a stepped run, at 'at' with the result r of the call
** handed out there: control() a call at a time. */
static BS_ALWAYS_INLINE int stepcontrol(bonsai_agent *a, uint32_t i,
                                        uint8_t *st, int at, int r,
                                        const int traced, const int conds) {
  int waits;
  switch (at) {
  case BS_AT_NONE:
    if (st[i] != RUNNING) {
      if (leafof(a, &a->bp->nodes[i])->flags & BONSAI_LEAF_ENTER)
        return ctlout(a, i, BONSAI_EV_ENTER, BS_AT_CENTER);
      SET(i, RUNNING);
    }
    return ctlout(a, i, BONSAI_EV_TICK, BS_AT_CTICK);
  case BS_AT_CENTER:
    if ((r = ctlback(a, i, r, &waits)) == BONSAI_ELEAF)
      return r;
    if (r != BONSAI_OK)
      return leaffail(a, r, "enter");
    SET(i, RUNNING);
    return ctlout(a, i, BONSAI_EV_TICK, BS_AT_CTICK);
  default: /* BS_AT_CTICK */
    if ((r = ctlback(a, i, r, &waits)) == BONSAI_ELEAF)
      return r;
    return control_end(a, i, r, conds, waits);
  }
}

/* }====================================================== */

/*
** {======================================================
** The tick
** =======================================================
*/

/* A traced tick that resumes at node x (not the root) visits x's
** ancestors again without walking them: records each as ticked again,
** root first, as a walk from the root would. */
BS_NOINLINE static void ancestors_again(bonsai_agent *a, uint32_t x) {
  const Node *nd = a->bp->nodes;
  uint32_t i = 0, c;
  while (i != x) {
    visit(a, i);
    bs_setagain(a, i);
    for (c = i + 1; nd[c].next <= x; c = nd[c].next)
      ; /* the child of i whose subtree holds x */
    i = c;
  }
}

/* The tick, from the root (or the resume point) when 'from' is BS_NONE,
** else the run of a control node's child 'from', which ends when its
** status reaches the control node. 'from', 'conds' and 'traced' (but in
** the copies with conditions) are constants in each of the six copies;
** the stepped copies (bs_vm_step) read 'from' from their run, and go on
** from where it stopped with the 'result' of the call it handed out. */
static BS_ALWAYS_INLINE int run(bonsai_agent *a, uint32_t from,
                                const int traced, const int conds,
                                const int stepped, int result) {
  const Node *nd = a->bp->nodes;
  uint8_t *st = a->state;
  uint32_t i = a->resume, c; /* 0 unless the root is running */
  int s, at = BS_AT_NONE;
  bonsai_call cl;
  if (!stepped)
    bs_vm_callrecord(a, &cl);
  if (stepped) { /* on from where it stopped, or from its start */
    StepRun *r = a->step->top;
    if ((at = r->at) != BS_AT_NONE) {
      i = r->i;
      r->at = BS_AT_NONE;
      goto resume;
    }
    from = r->from;
  }
  if (from != BS_NONE) {
    i = from;
    goto tick;
  }
  bs_assert(i == 0 || st[0] == RUNNING);
  if (traced && bs_unlikely(a->nfault != 0))
    i = 0; /* walked from the root, where a forced ancestor is met */
  if (traced && i != 0)
    ancestors_again(a, i);
  if (i != 0 && nd[i].kind == BONSAI_ACTION &&
      !(conds && (nd[i].flags & NF_COND))) {
    if (traced)
      visit(a, i);
    /* resumed at a running action: its status byte need not be read (in a
    ** large tree it lies away from what the tick touches) */
    bs_assert(st[i] == RUNNING);
    s = stepped ? stepleaf(a, &nd[i], i, st, BS_AT_NONE, 0, traced)
                : tick_action(a, &nd[i], i, st, &cl, traced);
    if (stepped && s == BS_HANDED)
      return s;
    if (s < 0)
      return fail(a);
    goto done;
  }
tick: /* node i is ticked; the common kinds first, then step() */
  for (;;) {
    const Node *n = &nd[i];
    if (traced)
      visit(a, i);
    if (traced && bs_unlikely(a->nfault != 0) &&
        (s = bs_fault_status(a, i)) != 0) { /* forced: does not run */
      if (bs_vm_abort(a, i) != BONSAI_OK)
        return fail(a);
      a->forcing = i;
      goto done;
    }
    if (conds && (n->flags & NF_COND) && (n->when & 15u) && /* pre */
        (s = precheck(a, i)) != 0) {
      if (s < 0)
        return fail(a);
      if (s == ABORTING) { /* its parent waits for its latent abort */
        s = RUNNING;
        if (n->up == BS_NONE && n->parent == BS_NONE) {
          a->resume = 0; /* the agent waits */
          return RUNNING;
        }
        if (n->up == BS_NONE)
          i = n->parent; /* the next tick resumes above it */
      }
      goto done; /* it does not run: s instead */
    }
    if (traced && st[i] == RUNNING && n->kind > BONSAI_CONDITION)
      bs_setagain(a, i); /* a running node visited again (a leaf's is
                         ** recorded after its call, if it stays running) */
    if (traced && bs_unlikely(a->latent != NULL) && st[i] == RUNNING &&
        bs_wait(a, i) != NULL) { /* it waits for the aborts it started */
      uint32_t to;
      int then, r = waitstep(a, i, &to, &then);
      if (r == BONSAI_ELEAF)
        return fail(a);
      s = r == RUNNING ? RUNNING : then;
      if (r == RUNNING || to == BS_NONE)
        goto done; /* still waiting, or it ends as it decided */
      if (to != i) { /* on to one of its children */
        if (n->flags & NF_MEMORY)
          W0(i) = to;
        i = to;
        continue;
      } /* else ticked again, below */
    }
    if (n->kind <= BONSAI_CONDITION) { /* action, condition */
      s = stepped ? stepleaf(a, n, i, st, BS_AT_NONE, 0, traced)
                  : tick_leaf(a, n, i, st, &cl, traced);
      if (stepped && s == BS_HANDED)
        return s;
      if (s < 0)
        return fail(a);
      goto done;
    }
    if (n->flags & NF_MEMORY) { /* sequence, selector */
      if (st[i] != RUNNING) {
        SET(i, RUNNING);
        W0(i) = i + 1;
      }
      i = W0(i);
      continue;
    }
    if (n->flags & NF_REACTIVE) { /* reactive_*, priority */
      if (st[i] != RUNNING) {
        SET(i, RUNNING);
        W0(i) = BS_NONE;
      }
      i++;
      continue;
    }
    if (stepped && n->kind == BONSAI_CONTROL) { /* its callbacks handed out */
      s = stepcontrol(a, i, st, BS_AT_NONE, 0, traced, conds);
      if (s == BS_HANDED)
        return s;
      if (s < 0)
        return fail(a);
      goto done;
    }
    switch (step(a, nd, st, 1, &i, c, &s, traced, conds)) {
    case GO_TICK: continue;
    case GO_END: goto done;
    default: return fail(a);
    }
  }
done: /* node i finished its tick with status s; control moves on */
  for (;;) {
    const Node *n = &nd[i];
    if (s == RUNNING) {
      if (n->up == BS_NONE) {
        a->resume = i;
        return RUNNING;
      }
      c = n->upchild;
      i = n->up;
    } else if (conds && s == SKIPPED) { /* its parent decides */
      SET(i, s);
      if (n->parent == BS_NONE) {
        a->resume = 0;
        return s;
      }
      c = i;
      i = n->parent;
    } else { /* the jump table: ancestors that end too, then where to go */
      uint32_t k = (uint32_t)(s - SUCCESS), f = n->fin[k], to = n->to[k];
      SET(i, s);
      if (POST(n, i, s))
        return fail(a);
      for (c = i; f > 0; f--) {
        uint32_t p = nd[c].parent;
        int r;
        if ((nd[p].flags & NF_REACTIVE) &&
            (r = reactive_end(a, nd, st, p, c, s)) != BONSAI_OK) {
          if (r != RUNNING)
            return fail(a);
          break; /* p waits for the branch it cut off */
        }
        SET(p, s);
        if (POST(&nd[p], p, s))
          return fail(a);
        c = p;
      }
      if (f > 0) {
        i = nd[c].parent;
        s = RUNNING;
        continue;
      }
      switch (n->how[k]) {
      case JUMP_ROOT:
        a->resume = 0;
        return s;
      case JUMP_NEXTMEM:
        W0(nd[c].parent) = to;
        /* FALLTHROUGH */
      case JUMP_NEXT:
        i = to;
        goto tick;
      default: /* the parent decides */
        i = to;
        break;
      }
    }
    n = &nd[i];
    if (n->cont != 0) { /* sequence-like: on to the next child, or done */
      /* (only the priority section comes here on a status other than
      ** running: a branch whose conditions passed ran instead of the root,
      ** whatever its child returned) */
      /* (a skipped child is passed over as one that lets it go on) */
      if ((s == n->cont || (conds && s == SKIPPED)) && nd[c].next < n->next &&
          (n->kind != BONSAI_PRIORITY || nd[c].kind != BONSAI_FILTER ||
           W0(c) != a->serial)) {
        c = nd[c].next;
        if (n->flags & NF_MEMORY)
          W0(i) = c;
        i = c;
        goto tick;
      }
      if (conds && s == SKIPPED && nd[c].next >= n->next) /* the last */
        s = n->kind == BONSAI_PRIORITY || allskipped(nd, st, i) ? SKIPPED
                                                                : n->cont;
      /* (the priority section: its root was skipped, so is the tick) */
      if (n->flags & NF_REACTIVE) {
        int r = reactive_end(a, nd, st, i, c, s);
        if (r == RUNNING)
          s = RUNNING; /* it waits for the branch it cut off */
        else if (r != BONSAI_OK)
          return fail(a);
      }
      continue;
    }
    switch (step(a, nd, st, 0, &i, c, &s, traced, conds)) {
    case GO_TICK: goto tick;
    case GO_END: continue;
    case GO_BACK: return s; /* a control node's child: back to its callback */
    default: return fail(a);
    }
  }
resume: /* stepped: the call handed out at node i returned 'result' */
  a->current = i;
  s = at <= BS_AT_EXIT ? stepleaf(a, &nd[i], i, st, at, result, traced)
                       : stepcontrol(a, i, st, at, result, traced, conds);
  if (s == BS_HANDED)
    return s;
  if (s < 0)
    return fail(a);
  goto done;
}

/* The three copies, each a function of its own. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int run_plain(bonsai_agent *a) {
  return run(a, BS_NONE, 0, 0, 0, 0);
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int run_traced(bonsai_agent *a) {
  return run(a, BS_NONE, 1, 0, 0, 0);
}

BS_NOINLINE static int run_child_plain(bonsai_agent *a, uint32_t c) {
  return run(a, c, 0, 0, 0, 0);
}

BS_NOINLINE static int run_child_traced(bonsai_agent *a, uint32_t c) {
  return run(a, c, 1, 0, 0, 0);
}

BS_NOINLINE static int run_child_conds(bonsai_agent *a, uint32_t c) {
  return run(a, c, a->watched, 1, 0, 0);
}

/* Before and after a tick of an agent traced, profiled or with faults. */
static void watch_begin(bonsai_agent *a) {
  a->forcing = BS_NONE;
  if (a->nfault != 0)
    bs_fault_prune(a);
  if (a->prof != NULL)
    bs_prof_begin(a);
}

static void watch_end(bonsai_agent *a) {
  if (a->prof != NULL)
    bs_prof_end(a);
}

/* A tick of an agent traced, profiled or with faults. */
BS_NOINLINE static int run_watched(bonsai_agent *a) {
  int s;
  watch_begin(a);
  s = run_traced(a);
  watch_end(a);
  return s;
}

/* A tick of a version with conditions, watched or not. */
BS_NOINLINE static int run_conds(bonsai_agent *a) {
  int s, watched = a->watched;
  if (watched)
    watch_begin(a);
  s = run(a, BS_NONE, watched, 1, 0, 0);
  if (watched)
    watch_end(a);
  return s;
}

/* What bs_vm_before (vm.h) does when its tests say there is something to
** do before the tree runs. */
int bs_vm_prologue(bonsai_agent *a) {
  int s;
  if (a->latent != NULL && a->state[0] == ABORTING) {
    uint32_t to;
    int then;
    if ((s = waitstep(a, BS_NONE, &to, &then)) == BONSAI_ELEAF)
      return fail(a);
    if (s == RUNNING || to == BS_NONE) {
      a->resume = 0;
      return s == RUNNING ? RUNNING : then;
    }
    a->resume = 0; /* then the tree runs from its root */
  }
  if (a->bp->nwatch != 0 && bs_bb_changed(a->bb, a->seen)) {
    if ((s = wakeguards(a)) < 0)
      return fail(a);
    if (s > 0)
      a->resume = 0; /* the root's running path changed */
  }
  if (a->events != NULL && a->events->nnow != 0 && a->bp->nevguard != 0) {
    if ((s = wakeevents(a)) < 0)
      return fail(a);
    if (s > 0)
      a->resume = 0;
  }
  return 0;
}

/* No test per tick: an agent runs the copy bs_copy picked for it, the
** plain one (the door of every status store and the conditions compiled
** out) unless it is watched (traced, profiled, with faults, with latent
** aborts under way) or its version has conditions. */
int bs_vm_tick(bonsai_agent *a) {
  static int (*const copies[])(bonsai_agent *) = {run_plain, run_watched,
                                                  run_conds};
  int s;
  if ((s = bs_vm_before(a)) != 0)
    return s;
  return copies[a->copy](a);
}

/* The stepped copies: traced (faults too), with conditions; the plain one
** is bs_vm_step's own. */
BS_NOINLINE static int step_traced(bonsai_agent *a, int r) {
  return run(a, BS_NONE, 1, 0, 1, r);
}

BS_NOINLINE static int step_conds(bonsai_agent *a, int r) {
  return run(a, BS_NONE, a->step->top->watched, 1, 1, r);
}

/* The watched and conditions copies (bs_vm_step). */
BS_NOINLINE static int step_other(bonsai_agent *a, StepRun *r, int result) {
  int s;
  if (r->at == BS_AT_NONE && r->from == BS_NONE && r->watched)
    watch_begin(a);
  s = r->copy == 2 ? step_conds(a, result) : step_traced(a, result);
  if (s != BS_HANDED && r->from == BS_NONE && r->watched)
    watch_end(a);
  return s;
}

/* The plain stepped copy. */
BS_NOINLINE static int step_plain(bonsai_agent *a, int result) {
  return run(a, BS_NONE, 0, 0, 1, result);
}

/* A run keeps the copy it began in (as the C stack keeps it for the other
** copies), a watched tick its watch. The plain copy's commonest moments of
** a running action, as run() makes them, without entering it: the tick
** resumed at the action (its tick handed out), and the action's tick
** returning running where the next tick resumes (nothing above it told). */
int bs_vm_step(bonsai_agent *a, int result) {
  StepRun *r = a->step->top;
  const Node *n;
  uint32_t i;
  if (bs_unlikely(r->copy != 0))
    return step_other(a, r, result);
  if (result == RUNNING && r->at == BS_AT_TICK) {
    n = &a->bp->nodes[i = r->i];
    if (n->kind == BONSAI_ACTION && n->up == BS_NONE) {
      r->at = BS_AT_NONE;
      a->current = a->resume = i;
      return RUNNING;
    }
  } else if (r->at == BS_AT_NONE && r->from == BS_NONE &&
             (i = a->resume) != 0) {
    n = &a->bp->nodes[i];
    if (n->kind == BONSAI_ACTION) {
      bs_assert(a->state[i] == RUNNING);
      return stepleaf(a, n, i, a->state, BS_AT_NONE, 0, 0); /* its tick */
    }
  }
  return step_plain(a, result);
}

/* }====================================================== */
