/*
** reload.c: moving agents to a reloaded version of their tree. Nodes of the
** two versions are matched by their path of names and their kind (the map
** is computed once per pair of versions and cached in the tree). A running
** node is kept when it is matched and its parent is kept; it then goes on
** with its state (running child, counters, timers) and is not entered
** again. A kept node whose running child is gone stays running: a sequence
** or selector starts again from its first child, a decorator enters its new
** child. The running nodes that are not kept are aborted, deepest first,
** while the old version is still in place. The data of matched nodes that
** lasts while they are idle (limits, cooldowns, run_once, guards' last
** checks) carries over too; their last statuses do not. Per agent the work
** follows the running nodes and those lasting data, not the whole tree.
*/
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "env.h"
#include "reload.h"
#include "vm.h"

static uint32_t mix(uint32_t h, const char *s) {
  h ^= 0x9e3779b9u;
  while (*s)
    h = (h ^ (unsigned char)*s++) * 16777619u;
  return h;
}

/* The parent of node i in paths: the hidden priority wrapper is left out,
** so adding or removing a priority section keeps the root's nodes. */
static uint32_t pathparent(const Blueprint *bp, uint32_t i) {
  uint32_t p = bp->nodes[i].parent;
  return p != BS_NONE && (bp->nodes[p].flags & NF_HIDDEN) ? bp->nodes[p].parent
                                                         : p;
}

/* Path hashes of every node (parents come first in pre-order). */
static void pathhashes(const Blueprint *bp, uint32_t *h) {
  uint32_t i;
  for (i = 0; i < bp->n; i++) {
    uint32_t p = pathparent(bp, i);
    h[i] = mix(p == BS_NONE ? 2166136261u : h[p], bp->pool + bp->nodes[i].name);
  }
}

/* Same path of names? */
static int samepath(const Blueprint *x, uint32_t i, const Blueprint *y,
                    uint32_t j) {
  while (i != BS_NONE && j != BS_NONE) {
    if (strcmp(x->pool + x->nodes[i].name, y->pool + y->nodes[j].name) != 0)
      return 0;
    i = pathparent(x, i);
    j = pathparent(y, j);
  }
  return i == BS_NONE && j == BS_NONE;
}

/* Computes map[old node] = new node with the same path and kind, or
** BS_NONE. Returns 0, or -1 when out of memory. */
static int computemap(bonsai_env *env, const Blueprint *ob,
                      const Blueprint *nb, uint32_t *map) {
  uint32_t *ho = bs_malloc(env, ob->n * sizeof *ho);
  uint32_t *hn = bs_malloc(env, nb->n * sizeof *hn);
  uint32_t cap = 16, *tab = NULL, i, j;
  int r = -1;
  while (cap < 2 * nb->n)
    cap *= 2;
  if (ho == NULL || hn == NULL ||
      (tab = bs_malloc(env, cap * sizeof *tab)) == NULL)
    goto done;
  pathhashes(ob, ho);
  pathhashes(nb, hn);
  memset(tab, 0, cap * sizeof *tab);
  for (i = 0; i < nb->n; i++) {
    for (j = hn[i] & (cap - 1); tab[j] != 0; j = (j + 1) & (cap - 1))
      ;
    tab[j] = i + 1;
  }
  for (i = 0; i < ob->n; i++) {
    map[i] = BS_NONE;
    for (j = ho[i] & (cap - 1); tab[j] != 0; j = (j + 1) & (cap - 1)) {
      uint32_t k = tab[j] - 1;
      if (hn[k] == ho[i] && nb->nodes[k].kind == ob->nodes[i].kind &&
          samepath(ob, i, nb, k)) {
        map[i] = k;
        break;
      }
    }
  }
  r = 0;
done:
  bs_free(env, ho, ob->n * sizeof *ho);
  bs_free(env, hn, nb->n * sizeof *hn);
  bs_free(env, tab, cap * sizeof *tab);
  return r;
}

void bs_reload_forget(bonsai_tree *t) {
  if (t->map != NULL) {
    bs_free(t->env, t->map, t->mapsize);
    bs_bp_release(t->mapfrom);
  }
  t->map = NULL;
  t->mapfrom = NULL;
}

/* Kinds whose data lasts while the node is idle; the others' data is
** set again when they start. */
static int lasting(int kind) {
  return kind == BONSAI_LIMIT || kind == BONSAI_COOLDOWN ||
         kind == BONSAI_RUN_ONCE || kind == BONSAI_GUARD;
}

/*
** The migration plan from ob to the tree's current version, cached in the
** tree: map[old node] = new node or BS_NONE, then the number of matched
** nodes with lasting data, then for each the old node and the new one
** (their data are carried over by every migrating agent, running or not).
*/
static const uint32_t *mapfor(bonsai_tree *t, Blueprint *ob) {
  const Blueprint *nb = t->bp;
  uint32_t *map, i, ncarry = 0, *carry;
  size_t size = ((size_t)ob->n + 1 + 2 * (size_t)ob->n) * sizeof *map;
  if (t->mapfrom == ob)
    return t->map;
  if ((map = bs_malloc(t->env, size)) == NULL)
    return NULL;
  if (computemap(t->env, ob, nb, map) != 0) {
    bs_free(t->env, map, size);
    return NULL;
  }
  carry = map + ob->n + 1;
  for (i = 0; i < ob->n; i++)
    if (map[i] != BS_NONE && lasting(ob->nodes[i].kind)) {
      carry[2 * ncarry] = i;
      carry[2 * ncarry + 1] = map[i];
      ncarry++;
    }
  map[ob->n] = ncarry;
  bs_reload_forget(t);
  t->map = map;
  t->mapsize = size;
  t->mapfrom = ob;
  ob->refs++;
  return map;
}

static int isparallel(const Node *n) { return n->kind == BONSAI_PARALLEL; }

/* Copies the data of old node o (state os) to new node j (state ns); the
** child indices that composites keep move to the new numbering. */
static void carrydata(const Blueprint *ob, const Blueprint *nb,
                      const uint32_t *map, const uint8_t *os, uint8_t *ns,
                      uint32_t o, uint32_t j) {
  uint8_t *d = ns + nb->nodes[j].data;
  uint32_t c;
  memcpy(d, os + ob->nodes[o].data, bs_kind_datasize(nb->nodes[j].kind));
  switch (nb->nodes[j].kind) {
  case BONSAI_SEQUENCE: case BONSAI_SELECTOR:
    c = *(uint32_t *)d;
    *(uint32_t *)d = c < ob->n && map[c] != BS_NONE ? map[c] : j + 1;
    break;
  case BONSAI_REACTIVE_SEQUENCE: case BONSAI_REACTIVE_SELECTOR:
  case BONSAI_PRIORITY: case BONSAI_UTILITY_SELECTOR:
    c = *(uint32_t *)d;
    *(uint32_t *)d = c < ob->n && map[c] != BS_NONE ? map[c] : BS_NONE;
    break;
  default:
    break;
  }
}

#define KEPT(i) (map[i] != BS_NONE && ns[map[i]] == BONSAI_RUNNING)

/* Walking the running nodes of state st in pre-order, parents first, idle
** subtrees skipped (and the idle children of sequences and selectors not
** even looked at): the first, the one after i's subtree, the next. */
#define firstrunning(st) ((st)[0] == BONSAI_RUNNING ? 0 : BS_NONE)

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

int bs_reload_state(bonsai_agent *a, const Blueprint *nb, uint8_t *ns) {
  Blueprint *ob = a->bp;
  const Node *on = ob->nodes, *nn = nb->nodes;
  const uint32_t *map = mapfor(a->tree, ob), *carry;
  uint8_t *os = a->state;
  uint32_t i, k;
  int r = BONSAI_OK;
  memset(ns, 0, nb->statsize + nb->datasize);
  if (map == NULL) { /* out of memory: restart from the root */
    r = bs_vm_abort(a, 0);
    a->resume = 0;
    return r == BONSAI_OK ? BONSAI_ENOMEM : r;
  }
  /* 1. keep the running nodes that are matched and whose parent is kept */
  for (i = firstrunning(os); i != BS_NONE; i = nextrunning(ob, os, i)) {
    uint32_t p = pathparent(ob, i);
    if (map[i] != BS_NONE && (p == BS_NONE || KEPT(p)))
      ns[map[i]] = BONSAI_RUNNING;
  }
  /* 3. abort what is not kept, deepest first, in the old version */
  for (i = firstrunning(os); i != BS_NONE;) {
    if (!KEPT(i) && !(on[i].flags & NF_HIDDEN)) { /* the wrapper: look in */
      if (bs_vm_abort(a, i) != BONSAI_OK && r == BONSAI_OK)
        r = BONSAI_ELEAF;
      i = skiprunning(ob, os, i);
    } else {
      i = nextrunning(ob, os, i);
    }
  }
  /* 4. carry data over: the lasting data of matched nodes (the plan
  ** lists them), then the data of the kept running nodes */
  carry = map + ob->n + 1;
  for (k = 0; k < map[ob->n]; k++)
    carrydata(ob, nb, map, os, ns, carry[2 * k], carry[2 * k + 1]);
  for (i = firstrunning(os); i != BS_NONE; i = nextrunning(ob, os, i))
    if (KEPT(i) && !lasting(on[i].kind) && bs_kind_datasize(on[i].kind) != 0)
      carrydata(ob, nb, map, os, ns, i, map[i]);
  /* 5. statuses of finished children of kept parallels; their counts */
  for (i = firstrunning(ns); i != BS_NONE; i = nextrunning(nb, ns, i)) {
    uint32_t c, succ = 0, fail = 0;
    if (!isparallel(&nn[i]))
      continue;
    for (k = 0; k < ob->n; k++) /* the old parallel */
      if (map[k] == i)
        break;
    for (c = k + 1; k < ob->n && c < on[k].next; c = on[c].next)
      if (map[c] != BS_NONE &&
          (os[c] == BONSAI_SUCCESS || os[c] == BONSAI_FAILURE))
        ns[map[c]] = os[c];
    for (c = i + 1; c < nn[i].next; c = nn[c].next) {
      succ += ns[c] == BONSAI_SUCCESS;
      fail += ns[c] == BONSAI_FAILURE;
    }
    ((uint32_t *)(ns + nn[i].data))[0] = succ;
    ((uint32_t *)(ns + nn[i].data))[1] = fail;
  }
  /* 6. guards' change stamps of keys both versions watch */
  for (k = 0; k < nb->nwatch; k++)
    for (i = 0; i < ob->nwatch; i++)
      if (ob->watchkey[i] == nb->watchkey[k])
        ((uint32_t *)(ns + nb->watchdata))[k] =
            ((const uint32_t *)(os + ob->watchdata))[i];
  /* 7. where the next tick resumes */
  /* (from the root, which passes down to its running children, when the
  ** resume node is gone: e.g. the priority wrapper was removed) */
  if (ns[0] == BONSAI_RUNNING && a->resume < ob->n && KEPT(a->resume))
    a->resume = map[a->resume];
  else
    a->resume = 0;
  if (ns[0] != BONSAI_RUNNING && a->last == BONSAI_RUNNING)
    a->last = BONSAI_ABORTED; /* nothing carried over */
  return r;
}

const uint32_t *bs_reload_map(const bonsai_agent *a, const Blueprint *ob) {
  return a->tree->mapfrom == ob ? a->tree->map : NULL;
}

int bs_tree_adopt(bonsai_tree *t, bonsai_tree *other) {
  if (t->env != other->env)
    return BONSAI_EARG;
  if (t->bp == other->bp)
    return BONSAI_OK;
  other->bp->refs++;
  bs_reload_forget(t);
  t->bp->replaced = 1;
  bs_bp_release(t->bp);
  t->bp = other->bp;
  return BONSAI_OK;
}
