/*
** reload.c: moving agents to a reloaded version of their tree. Nodes of the
** two versions are matched by their path of names and their kind (the map
** is computed once per pair of versions and cached in the tree). A running
** node is kept when it is matched, its parent is kept and, for a node with
** one running child, that child is kept too; it then goes on with its state
** (running child, counters, timers) and is not entered again. The running
** nodes that are not kept are aborted, deepest first, while the old
** version is still in place. State of matched idle nodes (limits,
** cooldowns, run_once) carries over too.
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

/* Path hashes of every node (parents come first in pre-order). */
static void pathhashes(const Blueprint *bp, uint32_t *h) {
  uint32_t i;
  for (i = 0; i < bp->n; i++) {
    uint32_t p = bp->nodes[i].parent;
    h[i] = mix(p == BS_NONE ? 2166136261u : h[p], bp->pool + bp->nodes[i].name);
  }
}

/* Same path of names? */
static int samepath(const Blueprint *x, uint32_t i, const Blueprint *y,
                    uint32_t j) {
  while (i != BS_NONE && j != BS_NONE) {
    if (strcmp(x->pool + x->nodes[i].name, y->pool + y->nodes[j].name) != 0)
      return 0;
    i = x->nodes[i].parent;
    j = y->nodes[j].parent;
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
    bs_free(t->env, t->map, t->mapfrom->n * sizeof *t->map);
    bs_bp_release(t->mapfrom);
  }
  t->map = NULL;
  t->mapfrom = NULL;
}

/* The map from ob to the tree's current version (cached). */
static const uint32_t *mapfor(bonsai_tree *t, Blueprint *ob) {
  uint32_t *map;
  if (t->mapfrom == ob)
    return t->map;
  if ((map = bs_malloc(t->env, ob->n * sizeof *map)) == NULL)
    return NULL;
  if (computemap(t->env, ob, t->bp, map) != 0) {
    bs_free(t->env, map, ob->n * sizeof *map);
    return NULL;
  }
  bs_reload_forget(t);
  t->map = map;
  t->mapfrom = ob;
  ob->refs++;
  return map;
}

static int isparallel(const Node *n) { return n->kind == BONSAI_PARALLEL; }

int bs_reload_state(bonsai_agent *a, const Blueprint *nb, uint8_t *ns) {
  Blueprint *ob = a->bp;
  const Node *on = ob->nodes;
  const uint32_t *map = mapfor(a->tree, ob);
  uint8_t *os = a->state;
  uint32_t i;
  int r = BONSAI_OK;
  memset(ns, 0, nb->statsize + nb->datasize);
  if (map == NULL) { /* out of memory: restart from the root */
    r = bs_vm_abort(a, 0);
    a->resume = 0;
    return r == BONSAI_OK ? BONSAI_ENOMEM : r;
  }
  /* 1. which running nodes are kept: top-down, then bottom-up for nodes
  ** whose single running child is lost (in reverse pre-order children
  ** come first). 'keep' is marked in the new status block for now. */
  for (i = 0; i < ob->n; i++) {
    uint32_t p = on[i].parent;
    if (os[i] != BONSAI_RUNNING)
      continue;
    if (map[i] != BS_NONE &&
        (p == BS_NONE || ns[map[p]] == BONSAI_RUNNING))
      ns[map[i]] = BONSAI_RUNNING;
  }
  for (i = ob->n; i-- > 0;) {
    uint32_t c, lost = 0, kept = 0;
    if (os[i] != BONSAI_RUNNING || map[i] == BS_NONE ||
        ns[map[i]] != BONSAI_RUNNING || on[i].nchild == 0)
      continue;
    for (c = i + 1; c < on[i].next; c = on[c].next)
      if (os[c] == BONSAI_RUNNING) {
        if (map[c] != BS_NONE && ns[map[c]] == BONSAI_RUNNING)
          kept++;
        else
          lost++;
      }
    if (lost > 0 && (kept == 0 || !isparallel(&on[i])))
      ns[map[i]] = BONSAI_IDLE; /* restarts: its running child is gone */
  }
  /* 2. abort what is not kept, deepest first, in the old version */
  for (i = ob->n; i-- > 0;) {
    uint32_t p = on[i].parent;
    if (os[i] != BONSAI_RUNNING ||
        (map[i] != BS_NONE && ns[map[i]] == BONSAI_RUNNING))
      continue;
    /* abort whole subtrees: only where the parent is kept (or the root) */
    if (p == BS_NONE || (map[p] != BS_NONE && ns[map[p]] == BONSAI_RUNNING &&
                         os[p] == BONSAI_RUNNING))
      if (bs_vm_abort(a, i) != BONSAI_OK && r == BONSAI_OK)
        r = BONSAI_ELEAF;
  }
  /* 3. carry statuses and data of matched nodes over */
  for (i = 0; i < ob->n; i++) {
    uint32_t j = map[i], len;
    const Node *nn;
    if (j == BS_NONE)
      continue;
    nn = &nb->nodes[j];
    if (os[i] != BONSAI_RUNNING)
      ns[j] = os[i];
    else if (ns[j] != BONSAI_RUNNING)
      ns[j] = BONSAI_ABORTED;
    if ((len = bs_kind_datasize(nn->kind)) == 0)
      continue;
    memcpy(ns + nn->data, os + on[i].data, len);
    switch (nn->kind) { /* child indices move with the children */
    case BONSAI_SEQUENCE: case BONSAI_SELECTOR: {
      uint32_t c = *(uint32_t *)(os + on[i].data);
      *(uint32_t *)(ns + nn->data) =
          c < ob->n && map[c] != BS_NONE ? map[c] : j + 1;
      break;
    }
    case BONSAI_REACTIVE_SEQUENCE: case BONSAI_REACTIVE_SELECTOR:
    case BONSAI_PRIORITY: {
      uint32_t c = *(uint32_t *)(os + on[i].data);
      *(uint32_t *)(ns + nn->data) =
          c < ob->n && map[c] != BS_NONE ? map[c] : BS_NONE;
      break;
    }
    default:
      break;
    }
  }
  /* 4. parallels recount their finished children */
  for (i = 0; i < nb->n; i++) {
    uint32_t c, succ = 0, fail = 0;
    if (!isparallel(&nb->nodes[i]) || ns[i] != BONSAI_RUNNING)
      continue;
    for (c = i + 1; c < nb->nodes[i].next; c = nb->nodes[c].next) {
      succ += ns[c] == BONSAI_SUCCESS;
      fail += ns[c] == BONSAI_FAILURE;
    }
    ((uint32_t *)(ns + nb->nodes[i].data))[0] = succ;
    ((uint32_t *)(ns + nb->nodes[i].data))[1] = fail;
  }
  /* 5. where the next tick resumes */
  if (ns[0] == BONSAI_RUNNING && a->resume < ob->n && map[a->resume] != BS_NONE &&
      ns[map[a->resume]] == BONSAI_RUNNING)
    a->resume = map[a->resume];
  else {
    if (ns[0] == BONSAI_RUNNING)
      ns[0] = BONSAI_ABORTED;
    a->resume = 0;
  }
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
  bs_bp_release(t->bp);
  t->bp = other->bp;
  return BONSAI_OK;
}
