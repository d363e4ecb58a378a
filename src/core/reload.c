/*
** reload.c: moving agents to a reloaded version of their tree. Nodes of the
** two versions are matched by their path of names and their kind (the map
** is computed once per pair of versions and cached in the tree). A running
** node is kept when it is matched and its parent is kept; it then goes on
** with its state (running child, counters, timers) and is not entered
** again; so does an aborting one (a latent abort goes on: latent.c's
** entries follow it). A kept node whose running child is gone stays running: a sequence
** or selector starts again from its first child, a decorator enters its new
** child. The running nodes that are not kept are aborted, deepest first,
** while the old version is still in place. The data of matched nodes that
** lasts while they are idle (limits, cooldowns, run_once, guards' last
** checks) carries over too; their last statuses do not. Per agent the work
** follows the running nodes and those lasting data, not the whole tree;
** per pair of versions the plan is linear in their sizes, whatever the
** depth. Between versions of the same shape (a reload that changed leaves
** or parameters) an agent's state moves in place: no allocation, no copy,
** one pass over its status bytes.
*/
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "env.h"
#include "names.h"
#include "reload.h"
#include "vm.h"

/* The parent of node i in paths: the hidden priority wrapper is left out,
** so adding or removing a priority section keeps the root's nodes. */
static uint32_t pathparent(const Blueprint *bp, uint32_t i) {
  uint32_t p = bp->nodes[i].parent;
  return p != BS_NONE && (bp->nodes[p].flags & NF_HIDDEN) ? bp->nodes[p].parent
                                                         : p;
}

static uint32_t pairhash(uint32_t parent, const char *s) {
  return bs_hash(BS_HASHSEED ^ (parent * 0x9e3779b9u), s, strlen(s));
}

/*
** Computes map[old node] = the new node with the same path of names and the
** same kind, or BS_NONE. Linear in the sizes, whatever the depth: a node's
** path twin is the child of its parent's path twin that has its name (names
** are unique among siblings), found in a table keyed by (parent, name).
** 'twin' is scratch for the path twins (kinds ignored). Returns 0, or -1
** when out of memory.
*/
static int computemap(bonsai_env *env, const Blueprint *ob,
                      const Blueprint *nb, uint32_t *map) {
  uint32_t *twin = bs_malloc(env, ob->n * sizeof *twin);
  uint32_t cap = 16, *tab = NULL, i, j;
  int r = -1;
  while (cap < 2 * nb->n)
    cap *= 2;
  if (twin == NULL || (tab = bs_malloc(env, cap * sizeof *tab)) == NULL)
    goto done;
  memset(tab, 0, cap * sizeof *tab);
  for (i = 0; i < nb->n; i++) {
    uint32_t h = pairhash(pathparent(nb, i), nb->pool + nb->nodes[i].name);
    for (j = h & (cap - 1); tab[j] != 0; j = (j + 1) & (cap - 1))
      ;
    tab[j] = i + 1;
  }
  for (i = 0; i < ob->n; i++) { /* parents come first in pre-order */
    uint32_t p = pathparent(ob, i), np = p == BS_NONE ? BS_NONE : twin[p];
    const char *name = ob->pool + ob->nodes[i].name;
    twin[i] = map[i] = BS_NONE;
    if (p != BS_NONE && np == BS_NONE)
      continue; /* the parent's path is gone */
    for (j = pairhash(np, name) & (cap - 1); tab[j] != 0;
         j = (j + 1) & (cap - 1)) {
      uint32_t k = tab[j] - 1;
      if (pathparent(nb, k) == np && strcmp(nb->pool + nb->nodes[k].name,
                                            name) == 0) {
        twin[i] = k;
        if (nb->nodes[k].kind == ob->nodes[i].kind)
          map[i] = k;
        break;
      }
    }
  }
  r = 0;
done:
  bs_free(env, twin, ob->n * sizeof *twin);
  bs_free(env, tab, cap * sizeof *tab);
  return r;
}

void bs_plan_release(Plan *p) {
  bonsai_env *env;
  if (p == NULL || --p->refs > 0)
    return;
  env = p->env;
  bs_bp_release(p->from);
  bs_bp_release(p->to);
  bs_free(env, p, p->size);
}

void bs_reload_forget(bonsai_tree *t) {
  bs_plan_release(t->plan);
  t->plan = NULL;
}

/* Whether nb has ob's nodes (map is the identity), in the same shape,
** with the same state layout and watched keys: a reload that changed
** only leaves or parameters (not where a tick resumes: a run_while
** added or removed makes a node active or not). */
static int sameshape(const Blueprint *ob, const Blueprint *nb,
                     const uint32_t *map) {
  uint32_t i;
  if (ob->n != nb->n || ob->statsize != nb->statsize ||
      ob->datasize != nb->datasize || ob->nwatch != nb->nwatch ||
      ob->watchdata != nb->watchdata)
    return 0;
  for (i = 0; i < ob->nwatch; i++)
    if (ob->watchkey[i] != nb->watchkey[i])
      return 0;
  for (i = 0; i < ob->n; i++) {
    const Node *o = &ob->nodes[i], *n = &nb->nodes[i];
    if (map[i] != i || o->parent != n->parent || o->next != n->next ||
        o->data != n->data ||
        (o->flags & (NF_HIDDEN | NF_ACTIVE)) !=
            (n->flags & (NF_HIDDEN | NF_ACTIVE)))
      return 0;
  }
  return 1;
}

/*
** The migration plan from ob to the tree's current version, cached in the
** tree and returned with a reference for the caller: a callback run during
** the migration may reload the tree or migrate another agent, which
** replaces the cache but not this plan. The plan holds map[old node] = new
** node or BS_NONE, then for each matched node with lasting data the old
** node and the new one (their data are carried over by every migrating
** agent, running or not).
*/
static Plan *planfor(bonsai_tree *t, Blueprint *ob) {
  Blueprint *nb = t->bp;
  Plan *p;
  uint32_t i;
  size_t size = sizeof *p + 3 * (size_t)ob->n * sizeof(uint32_t);
  if (t->plan != NULL && t->plan->from == ob && t->plan->to == nb) {
    t->plan->refs++;
    return t->plan;
  }
  if ((p = bs_malloc(t->env, size)) == NULL)
    return NULL;
  p->map = (uint32_t *)(p + 1);
  p->carry = p->map + ob->n;
  if (computemap(t->env, ob, nb, p->map) != 0) {
    bs_free(t->env, p, size);
    return NULL;
  }
  p->refs = 2; /* the tree's cache and the caller */
  p->size = size;
  p->from = ob;
  p->to = nb;
  bs_bp_retain(ob);
  bs_bp_retain(nb);
  p->env = t->env;
  p->ncarry = 0;
  for (i = 0; i < ob->n; i++)
    if (p->map[i] != BS_NONE && (bs_kinds[ob->nodes[i].kind].flags & K_LASTING)) {
      p->carry[2 * p->ncarry] = i;
      p->carry[2 * p->ncarry + 1] = p->map[i];
      p->ncarry++;
    }
  p->same = sameshape(ob, nb, p->map);
  bs_reload_forget(t);
  t->plan = p;
  return p;
}

static int isparallel(const Node *n) { return n->kind == BONSAI_PARALLEL; }

/* Copies the data of old node o (state os) to new node j (state ns); the
** child indices that composites keep move to the new numbering. */
static void carrydata(const Blueprint *ob, const Blueprint *nb,
                      const uint32_t *map, const uint8_t *os, uint8_t *ns,
                      uint32_t o, uint32_t j) {
  uint8_t *d = ns + nb->nodes[j].data;
  uint32_t c;
  const KindInfo *ki = &bs_kinds[nb->nodes[j].kind];
  memcpy(d, os + ob->nodes[o].data, ki->data);
  if (ki->flags & K_CHILDWORD) { /* a child gone: its first, or none */
    c = *(uint32_t *)d;
    *(uint32_t *)d = c < ob->n && map[c] != BS_NONE ? map[c]
                     : (ki->flags & K_MEMORY)        ? j + 1
                                                     : BS_NONE;
  }
}

#define LIVE(s) ((s) == BONSAI_RUNNING || (s) == BONSAI_ABORTING)
#define KEPT(i) (map[i] != BS_NONE && LIVE(ns[map[i]]))
#define WORD(st, bp, i) (*(uint32_t *)((st) + (bp)->nodes[i].data))

/* Walking the running nodes of state st in pre-order, parents first, idle
** subtrees skipped (and the idle children of sequences and selectors not
** even looked at): the first, the one after i's subtree, the next. */
#define firstrunning(st) (LIVE((st)[0]) ? 0 : BS_NONE)

static uint32_t skiprunning(const Blueprint *bp, const uint8_t *st,
                            uint32_t i) {
  for (;;) {
    uint32_t p = bp->nodes[i].parent, c;
    if (p == BS_NONE)
      return BS_NONE;
    if ((c = bs_vm_running_child(bp, st, p, bp->nodes[i].next)) != BS_NONE)
      return c;
    i = p;
  }
}

static uint32_t nextrunning(const Blueprint *bp, const uint8_t *st,
                            uint32_t i) {
  uint32_t c = bs_vm_running_child(bp, st, i, i + 1);
  return c != BS_NONE ? c : skiprunning(bp, st, i);
}

/* A kept parallel (old node o, new node j) keeps the results of its
** finished children that are matched; its counts and its list of
** unfinished children are those of the new version's children. */
static void carryresults(const Blueprint *ob, const Blueprint *nb,
                         const uint32_t *map, const uint8_t *os, uint8_t *ns,
                         uint32_t o, uint32_t j) {
  const Node *on = ob->nodes;
  uint32_t c;
  for (c = o + 1; c < on[o].next; c = on[c].next)
    if (map[c] != BS_NONE &&
        (os[c] == BONSAI_SUCCESS || os[c] == BONSAI_FAILURE))
      ns[map[c]] = os[c];
  bs_vm_parallel_settle(nb, ns, j);
}

int bs_reload_state(bonsai_agent *a, const Plan *plan, uint8_t *ns) {
  const Blueprint *ob = plan->from, *nb = plan->to;
  const Node *on = ob->nodes, *nn = nb->nodes;
  const uint32_t *map = plan->map;
  uint8_t *os = a->state;
  uint32_t i, k;
  int r = BONSAI_OK;
  bs_assert(a->bp == ob);
  memset(ns, 0, nb->statsize + nb->datasize);
  /* 1. keep the running (and aborting) nodes that are matched and whose
  ** parent is kept; a priority wrapper the new version added runs above a
  ** kept root (or aborts above an aborting one) */
  for (i = firstrunning(os); i != BS_NONE; i = nextrunning(ob, os, i)) {
    uint32_t p = pathparent(ob, i);
    if (map[i] != BS_NONE && (p == BS_NONE || KEPT(p)))
      ns[map[i]] = os[i];
  }
  if ((nn[0].flags & NF_HIDDEN) && !LIVE(ns[0])) {
    uint32_t root = nn[0].next - 1; /* the wrapper's last child ... */
    while (nn[root].parent != 0)
      root = nn[root].parent; /* ... is the tree's own root */
    if (LIVE(ns[root])) {
      ns[0] = ns[root];
      WORD(ns, nb, 0) = root;
    }
  }
  /* 2. abort what is not kept, deepest first, in the old version (its
  ** callbacks may do anything but tick this agent: the plan and ns are
  ** ours, and os is read again only through running nodes) */
  for (i = firstrunning(os); i != BS_NONE;) {
    if (!KEPT(i) && !(on[i].flags & NF_HIDDEN)) { /* the wrapper: look in */
      if (bs_vm_abort(a, i) != BONSAI_OK)
        r = BONSAI_ELEAF; /* the first failure is recorded */
      i = skiprunning(ob, os, i);
    } else {
      i = nextrunning(ob, os, i);
    }
  }
  /* 3. carry data over: the lasting data of matched nodes (the plan
  ** lists them), then the data of the kept running nodes and the results
  ** of kept parallels' finished children */
  for (k = 0; k < plan->ncarry; k++)
    carrydata(ob, nb, map, os, ns, plan->carry[2 * k],
              plan->carry[2 * k + 1]);
  for (i = firstrunning(os); i != BS_NONE; i = nextrunning(ob, os, i)) {
    if (!KEPT(i))
      continue;
    if (!(bs_kinds[on[i].kind].flags & K_LASTING) && bs_kinds[on[i].kind].data != 0)
      carrydata(ob, nb, map, os, ns, i, map[i]);
    if (isparallel(&on[i]))
      carryresults(ob, nb, map, os, ns, i, map[i]);
  }
  /* 4. guards' change stamps of keys both versions watch */
  for (k = 0; k < nb->nwatch; k++)
    for (i = 0; i < ob->nwatch; i++)
      if (ob->watchkey[i] == nb->watchkey[k])
        ((uint32_t *)(ns + nb->watchdata))[k] =
            ((const uint32_t *)(os + ob->watchdata))[i];
  /* 5. the next tick starts from the root, which passes down to its
  ** running children (new active ancestors are then ticked too) */
  a->resume = 0;
  if (!LIVE(ns[0]) && a->last == BONSAI_RUNNING)
    a->last = BONSAI_ABORTED; /* nothing carried over */
  return r;
}

/*
** In place, for versions of the same shape. What bs_reload_state keeps
** is marked (MARK) in the status bytes: the running nodes, walked from
** the root, and the finished children of running parallels; one pass
** over the status bytes then clears the rest. The data is what
** bs_reload_state leaves: the running nodes' kind bytes (extras cleared,
** parallels' lists rebuilt), the finished children's cleared, lasting
** data and the watched keys' stamps as they were. The data of idle nodes
** that does not last stays as it was: the VM sets it when they start, and
** nothing reads it before.
*/
#define MARK 0x80u

/* Clears what follows the kind's bytes in the data of node i. */
static void clearextra(const Blueprint *bp, uint8_t *st, uint32_t i) {
  const Node *n = &bp->nodes[i];
  uint32_t k = bs_kinds[n->kind].data;
  memset(st + n->data + k, 0, bs_datasize(n->kind, n->nchild) - k);
}

void bs_reload_inplace(bonsai_agent *a, const Plan *plan) {
  const Blueprint *bp = plan->to;
  const Node *nd = bp->nodes;
  uint8_t *st = a->state;
  uint32_t i, next, c, k, n;
  bs_assert(plan->same && a->bp == plan->from);
  for (i = firstrunning(st); i != BS_NONE; i = next) {
    next = nextrunning(bp, st, i); /* looks only at nodes not marked yet */
    st[i] |= MARK;
    if (nd[i].kind == BONSAI_UTILITY_SELECTOR)
      clearextra(bp, st, i);
    if (nd[i].kind != BONSAI_PARALLEL)
      continue;
    clearextra(bp, st, i);
    bs_vm_parallel_settle(bp, st, i); /* the statuses are not marked yet */
    for (c = i + 1; c < nd[i].next; c = nd[c].next)
      if (st[c] == BONSAI_SUCCESS || st[c] == BONSAI_FAILURE) {
        st[c] |= MARK;
        if (!(bs_kinds[nd[c].kind].flags & K_LASTING))
          memset(st + nd[c].data, 0, bs_datasize(nd[c].kind, nd[c].nchild));
      }
  }
  for (k = 0, n = bp->statsize; k < n; k++) /* marked: unmarked; else idle */
    st[k] = (uint8_t)(st[k] & 0x7f & -(st[k] >> 7));
  /* a->resume stays: from the root the next tick would come to the same
  ** node through the same running nodes, which store nothing on the way */
  if (!LIVE(st[0]) && a->last == BONSAI_RUNNING)
    a->last = BONSAI_ABORTED; /* nothing carried over */
}

Plan *bs_reload_plan(bonsai_agent *a) { return planfor(a->tree, a->bp); }
