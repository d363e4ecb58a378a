/*
** reload.c: moving agents to a reloaded version of their tree. Nodes of the
** two versions are matched by their path of names and their kind (the map
** is computed once per pair of versions and cached in the tree). A running
** node is kept when it is matched and its parent is kept; it then goes on
** with its state (running child, counters, timers) and is not entered
** again. A kept node whose running child is gone stays running: a sequence
** or selector starts again from its first child, a decorator enters its new
** child. The running nodes that are not kept are aborted, deepest first,
** while the old version is still in place. The data of matched idle nodes (limits,
** cooldowns, run_once) carries over too; their last statuses do not. Per
** agent the work follows the running nodes and the nodes with data, not
** the whole tree.
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

/*
** The migration plan from ob to the tree's current version, cached in the
** tree: map[old node] = new node or BS_NONE, then the number of matched
** nodes with data, then for each the old node and the new one (their data
** are carried over by every migrating agent).
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
    if (map[i] != BS_NONE && bs_kind_datasize(ob->nodes[i].kind) != 0) {
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

#define KEPT(i) (map[i] != BS_NONE && ns[map[i]] == BONSAI_RUNNING)

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
  /* 1. keep the running nodes that are matched and whose parent is kept
  ** (walking only the running nodes: idle subtrees are skipped) */
  for (i = 0; i < ob->n; i = os[i] == BONSAI_RUNNING ? i + 1 : on[i].next) {
    uint32_t p = pathparent(ob, i);
    if (os[i] == BONSAI_RUNNING && map[i] != BS_NONE &&
        (p == BS_NONE || KEPT(p)))
      ns[map[i]] = BONSAI_RUNNING;
  }
  /* 3. abort what is not kept, deepest first, in the old version */
  for (i = 0; i < ob->n;) {
    if (os[i] != BONSAI_RUNNING) {
      i = on[i].next;
      continue;
    }
    if (!KEPT(i) && !(on[i].flags & NF_HIDDEN)) { /* the wrapper: look in */
      if (bs_vm_abort(a, i) != BONSAI_OK && r == BONSAI_OK)
        r = BONSAI_ELEAF;
      i = on[i].next;
      continue;
    }
    i++;
  }
  /* 4. carry the data of matched nodes over; child indices move */
  carry = map + ob->n + 1;
  for (k = 0; k < map[ob->n]; k++) {
    uint32_t o = carry[2 * k], j = carry[2 * k + 1], c;
    uint8_t *d = ns + nn[j].data;
    memcpy(d, os + on[o].data, bs_kind_datasize(nn[j].kind));
    switch (nn[j].kind) {
    case BONSAI_SEQUENCE: case BONSAI_SELECTOR:
      c = *(uint32_t *)d;
      *(uint32_t *)d = c < ob->n && map[c] != BS_NONE ? map[c] : j + 1;
      break;
    case BONSAI_REACTIVE_SEQUENCE: case BONSAI_REACTIVE_SELECTOR:
    case BONSAI_PRIORITY:
      c = *(uint32_t *)d;
      *(uint32_t *)d = c < ob->n && map[c] != BS_NONE ? map[c] : BS_NONE;
      break;
    default:
      break;
    }
  }
  /* 5. statuses of finished children of kept parallels; their counts */
  for (i = 0; i < nb->n; i = ns[i] == BONSAI_RUNNING ? i + 1 : nn[i].next) {
    uint32_t c, succ = 0, fail = 0;
    if (ns[i] != BONSAI_RUNNING || !isparallel(&nn[i]))
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
