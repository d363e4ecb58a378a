/*
** compile.c: turns a definition into a Blueprint, the immutable,
** reference-counted compiled form that agents run (tree.c holds trees, the
** handles on their current Blueprint). The compiler validates every node
** (errors carry the node's path), gives each node a name unique among its
** siblings, lays out the per-agent data block, and precomputes for each
** node where a RUNNING status goes ('up') and the jump table, so the VM
** skips ancestors that have nothing to do with it.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "kinds.h"
#include "env.h"
#include "names.h"

uint32_t bs_datasize(int kind, uint32_t nchild) {
  uint32_t ds = bs_kinds[kind].data;
  if (kind == BONSAI_UTILITY_SELECTOR)
    ds += (12 * nchild + 7) & ~7u;
  if (kind == BONSAI_PARALLEL)
    ds += (16 + 4 * nchild + 7) & ~7u;
  return ds;
}

/*
** {======================================================
** Checks and names
** =======================================================
*/

static uint32_t nodesize(const DefNode *dn) {
  return bs_datasize(dn->kind, dn->nchild);
}

/* Writes "path: message" for node i (BS_NONE: no path) into err; -1. */
static int seterr(char *err, size_t size, const bonsai_def *d, uint32_t i,
                  const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bs_def_vmessage(d, i, err, size, fmt, ap);
  va_end(ap);
  return -1;
}

/* Refuses node i's leaf name, not registered, with the names meant. */
static int noleaf(char *err, size_t size, const bonsai_def *d, uint32_t i,
                  const char *leaf) {
  char names[2048], near[200], meant[240];
  bonsai_leaf_names(d->env, names, sizeof names);
  bonsai_nearest(leaf, names, near, sizeof near);
  bonsai_did_you_mean(near, meant, sizeof meant);
  return seterr(err, size, d, i, "no leaf registered as '%s'%s", leaf, meant);
}

/* Checks node i's shape and parameters; returns 0 or writes err. */
static int validate(const bonsai_def *d, uint32_t i, char *err, size_t size) {
  const DefNode *n = &d->nodes[i];
  const KindInfo *ki = &bs_kinds[n->kind];
  const char *kn = ki->name;
  unsigned missing = ki->needs & ~n->set;
  switch (n->kind) {
  case BONSAI_PARALLEL: {
    double s = (n->set & P_SUCCESS) ? n->success : -1;
    double f = (n->set & P_FAILURE) ? n->failure : 1;
    if (n->nchild > 0 && (s > n->nchild || f > n->nchild))
      return seterr(err, size, d, i,
                    "'parallel' policy count is larger than its %u children",
                    (unsigned)n->nchild);
    break;
  }
  case BONSAI_FILTER: case BONSAI_MONITOR:
    if (n->nchild == 0)
      return seterr(err, size, d, i, "'%s' needs a child", kn);
    break;
  case BONSAI_GUARD: {
    const DefNode *c = n->nchild > 0 ? &d->nodes[i + 1] : NULL;
    if (n->nchild != 2 ||
        (c->kind != BONSAI_CHECK && c->kind != BONSAI_IS_SET))
      return seterr(err, size, d, i,
                    "'guard' needs a check (bt.check or bt.is_set) and a "
                    "child");
    break;
  }
  case BONSAI_EVENT_GUARD:
    if (n->mode != GUARD_NONE && n->mode != GUARD_LOWER)
      return seterr(err, size, d, i, "an event guard's abort is \"none\" or "
                    "\"lower\" (an event holds for one tick)");
    break;
  case BONSAI_PRIORITY: {
    uint32_t c, k;
    if (n->parent != BS_NONE)
      return seterr(err, size, d, i,
                    "a priority section belongs at the top of a tree");
    if (n->nchild == 0)
      return seterr(err, size, d, i, "'priority' needs a root");
    for (c = i + 1, k = 1; k < n->nchild; k++) {
      if (d->nodes[c].kind != BONSAI_FILTER)
        return seterr(err, size, d, c, "a priority branch must be a filter");
      while (++c < d->n && d->nodes[c].parent != i)
        ; /* next sibling */
    }
    break;
  }
  case BONSAI_CHECK:
    if (missing != 0)
      return seterr(err, size, d, i, "'check' needs a key and an operator");
    if (n->op >= OP_LT && n->vkey == BS_NONE &&
        n->val.type != BONSAI_TNUMBER && n->val.type != BONSAI_TINTEGER &&
        n->val.type != BONSAI_TSTRING)
      return seterr(err, size, d, i,
                    "'check' can order only numbers and strings");
    break;
  case BONSAI_IS_SET:
    if (missing != 0)
      return seterr(err, size, d, i, "'is_set' needs a key");
    break;
  case BONSAI_ACTION: case BONSAI_CONDITION:
    if (n->leafname != BS_NONE &&
        bonsai_leaf_find(d->env, d->strs + n->leafname) < 0)
      return noleaf(err, size, d, i, d->strs + n->leafname);
    break;
  default:
    break;
  }
  if (n->when != BS_NONE && n->parent != BS_NONE &&
      d->nodes[n->parent].kind == BONSAI_GUARD && n->place == 1)
    return seterr(err, size, d, i, "a guard's check takes no conditions");
  if (n->util.fn != NULL &&
      (n->parent == BS_NONE ||
       d->nodes[n->parent].kind != BONSAI_UTILITY_SELECTOR))
    return seterr(err, size, d, i,
                  "a utility applies only to a child of a "
                  "'utility_selector'");
  if (missing != 0) { /* the first parameter it lacks */
    unsigned p = 0;
    while (!(missing & (1u << p)))
      p++;
    return seterr(err, size, d, i, "'%s' needs '%s'", kn, bs_params[p].name);
  }
  if (n->nchild < ki->minchild ||
      (ki->maxchild != BS_MANY && n->nchild > ki->maxchild)) { /* its row */
    if (ki->maxchild == 1)
      return seterr(err, size, d, i,
                    n->nchild == 0 ? "'%s' needs a child"
                                   : "'%s' takes one child", kn);
    if (ki->maxchild == BS_MANY)
      return seterr(err, size, d, i, "'%s' needs children", kn);
    return seterr(err, size, d, i, "'%s' takes %u to %u children, not %u",
                  kn, (unsigned)ki->minchild, (unsigned)ki->maxchild,
                  (unsigned)n->nchild);
  }
  return 0;
}

/*
** Sibling names must be unique (reload matches nodes by path): a repeated
** name gets "#2", "#3"... Names are built in a scratch buffer; 'seen' is an
** open-addressing set of (parent, name).
*/
typedef struct Names {
  bonsai_env *env;
  char *buf;
  size_t n, cap;
  uint32_t *at;   /* node -> offset in buf */
  uint32_t *dups; /* node -> siblings that repeated its name so far */
  uint32_t *seen; /* node + 1, 0 empty */
  uint32_t scap;
} Names;

static uint32_t namehash(uint32_t parent, const char *s) {
  return bs_hash(BS_HASHSEED ^ parent, s, strlen(s));
}

static int pushname(Names *nm, const char *s) {
  size_t len = strlen(s) + 1;
  if (nm->n + len > nm->cap) {
    size_t ncap = nm->cap ? nm->cap : 1024;
    char *nb;
    while (nm->n + len > ncap)
      ncap *= 2;
    if ((nb = bs_realloc(nm->env, nm->buf, nm->cap, ncap)) == NULL)
      return -1;
    nm->buf = nb;
    nm->cap = ncap;
  }
  memcpy(nm->buf + nm->n, s, len);
  nm->n += len;
  return 0;
}

/* Gives node i its unique name; returns -1 when out of memory. */
static int name_node(Names *nm, const bonsai_def *d, uint32_t i) {
  char tmp[48], alt[64];
  const char *base = "";
  uint32_t parent = d->nodes[i].parent, k, owner;
  if (d->nodes[i].kind != BONSAI_PRIORITY) {
    /* the def path's last component is the base name */
    const DefNode *n = &d->nodes[i];
    if (n->name != BS_NONE)
      base = d->strs + n->name;
    else if (n->leafname != BS_NONE)
      base = d->strs + n->leafname;
    else if (parent == BS_NONE)
      base = bs_kinds[n->kind].name;
    else if (d->nodes[parent].kind == BONSAI_PRIORITY &&
             n->place == d->nodes[parent].nchild)
      base = bs_kinds[n->kind].name;
    else if (d->nodes[parent].kind == BONSAI_PRIORITY)
      snprintf(tmp, sizeof tmp, "priority[%u]", (unsigned)n->place), base = tmp;
    else
      snprintf(tmp, sizeof tmp, "%s[%u]", bs_kinds[n->kind].name,
               (unsigned)n->place), base = tmp;
  }
  /* the first try is the base name; a repeat continues numbering from
  ** the sibling that holds the base name, so n repeats cost n tries */
  for (k = 1, owner = BS_NONE;; k++) {
    const char *cand = base;
    uint32_t j, h, o = BS_NONE;
    if (k > 1) {
      snprintf(alt, sizeof alt, "%.48s#%u", base, (unsigned)k);
      cand = alt;
    }
    h = namehash(parent, cand);
    for (j = h & (nm->scap - 1); nm->seen[j] != 0; j = (j + 1) & (nm->scap - 1)) {
      o = nm->seen[j] - 1;
      if (d->nodes[o].parent == parent && strcmp(nm->buf + nm->at[o], cand) == 0)
        break;
      o = BS_NONE;
    }
    if (o != BS_NONE) { /* taken */
      if (owner == BS_NONE) {
        owner = o;
        k = ++nm->dups[o]; /* the next number to try, minus one */
      }
      continue;
    }
    nm->at[i] = (uint32_t)nm->n;
    if (pushname(nm, cand) != 0)
      return -1;
    nm->seen[j] = i + 1;
    nm->dups[i] = 0;
    if (owner != BS_NONE)
      nm->dups[owner] = k - 1;
    return 0;
  }
}

static void names_free(Names *nm, uint32_t n) {
  bs_free(nm->env, nm->buf, nm->cap);
  bs_free(nm->env, nm->at, n * sizeof *nm->at);
  bs_free(nm->env, nm->dups, n * sizeof *nm->dups);
  bs_free(nm->env, nm->seen, nm->scap * sizeof *nm->seen);
}

/* }====================================================== */

/*
** {======================================================
** Keys watched by guards, ids, the jump table
** =======================================================
*/

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* Adds key to the watch list (keys[0..*n)) unless there; returns its place. */
static uint32_t addkey(uint32_t *keys, uint32_t *n, uint32_t key) {
  uint32_t k;
  for (k = 0; k < *n; k++)
    if (keys[k] == key)
      return k;
  keys[*n] = key;
  return (*n)++;
}

/*
** The keys watched by guards (the check's key, and the key its value names)
** and, for each, the guards watching it: one allocation, three arrays.
** Each agent keeps a change stamp per watched key after its node data.
*/
static int watchlist(bonsai_env *env, Blueprint *bp) {
  uint32_t i, nguards = 0, nk = 0, k, at = 0, *mem;
  for (i = 0; i < bp->n; i++)
    nguards += bp->nodes[i].kind == BONSAI_GUARD;
  if (nguards == 0)
    return 0;
  /* keys (<= 2 per guard), firsts (keys + 1), guard lists (<= 2 per guard) */
  mem = bs_malloc(env, (2 * nguards + 2 * nguards + 1 + 2 * nguards) *
                           sizeof *mem);
  if (mem == NULL)
    return -1;
  bp->watchkey = mem;
  for (i = 0; i < bp->n; i++) {
    const Node *c = &bp->nodes[i + 1];
    if (bp->nodes[i].kind != BONSAI_GUARD)
      continue;
    addkey(bp->watchkey, &nk, c->a);
    if (c->flags & NF_KEYREF)
      addkey(bp->watchkey, &nk, c->b);
  }
  bp->nwatch = nk;
  bp->watchfirst = mem + 2 * nguards;
  bp->watchguard = bp->watchfirst + 2 * nguards + 1;
  for (k = 0; k < nk; k++) {
    bp->watchfirst[k] = at;
    for (i = 0; i < bp->n; i++) {
      const Node *c = &bp->nodes[i + 1];
      if (bp->nodes[i].kind == BONSAI_GUARD &&
          (c->a == bp->watchkey[k] ||
           ((c->flags & NF_KEYREF) && c->b == bp->watchkey[k])))
        bp->watchguard[at++] = i;
    }
  }
  bp->watchfirst[nk] = at;
  bp->watchdata = bp->statsize + bp->datasize;
  bp->datasize += (uint32_t)align8(4 * nk);
  return 0;
}

static size_t watchsize(const Blueprint *bp) {
  uint32_t i, nguards = 0;
  for (i = 0; i < bp->n; i++)
    nguards += bp->nodes[i].kind == BONSAI_GUARD;
  return (6 * (size_t)nguards + 1) * sizeof(uint32_t);
}

/* Blueprint ids, unique in the process (a shared tree's versions are
** told apart by id in every state). */
static uint64_t newid(void) {
  static uint64_t last;
  return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

/* The VM counts on it (see Node). */
typedef char node_is_128_bytes[sizeof(Node) == 128 ? 1 : -1];

/* Fills the jump table (Node.to, fin, how) in pre-order, parents first:
** a node that ends a sequence-like parent (the last child, or a status on
** which the parent stops) ends with it and jumps where the parent does. The
** priority section is left to the VM: its filter rule needs a look. */
static void jumps(Blueprint *bp) {
  uint32_t i, k;
  for (i = 0; i < bp->n; i++) {
    Node *n = &bp->nodes[i];
    for (k = 0; k < 2; k++) {
      int s = k == 0 ? BONSAI_SUCCESS : BONSAI_FAILURE;
      const Node *p;
      n->fin[k] = 0;
      n->to[k] = n->parent;
      n->how[k] = n->parent == BS_NONE ? JUMP_ROOT : JUMP_PARENT;
      if (n->parent == BS_NONE)
        continue;
      p = &bp->nodes[n->parent];
      if (p->cont == 0 || p->kind == BONSAI_PRIORITY)
        continue; /* the parent decides */
      if (s == p->cont && n->next < p->next) {
        n->to[k] = n->next;
        n->how[k] = (p->flags & NF_MEMORY) ? JUMP_NEXTMEM : JUMP_NEXT;
      } else {
        n->fin[k] = p->fin[k] + 1;
        n->to[k] = p->to[k];
        n->how[k] = p->how[k];
      }
    }
  }
}

/* }====================================================== */

/*
** {======================================================
** The compiler, phase by phase
** =======================================================
*/

/* Phase 1: the definition as a whole. Returns the number of leaves the
** blueprint holds (anonymous leaves and utilities), or -1 with err and
** *code set. */
static long checkdef(const bonsai_def *d, char *err, size_t errsize,
                     int *code) {
  uint32_t i;
  long nleaves = 0;
  *code = BONSAI_EDEF;
  if (d->err[0] != '\0') {
    snprintf(err, errsize, "%s", d->err);
    if (d->nomem)
      *code = BONSAI_ENOMEM;
    return -1;
  }
  if (d->n == 0) {
    snprintf(err, errsize, "empty tree definition");
    return -1;
  }
  if (d->open != BS_NONE)
    return seterr(err, errsize, d, d->open,
                  "node not closed (bonsai_def_end)");
  for (i = 0; i < d->n; i++) {
    const DefNode *dn = &d->nodes[i];
    if (validate(d, i, err, errsize) != 0)
      return -1;
    if ((dn->kind == BONSAI_ACTION || dn->kind == BONSAI_CONDITION ||
         dn->kind == BONSAI_CONTROL) &&
        dn->leafname == BS_NONE)
      nleaves++;
    if (dn->kind == BONSAI_UTILITY_SELECTOR)
      nleaves += dn->nchild; /* its children's utilities */
    if (dn->when != BS_NONE) { /* its conditions */
      int k;
      for (k = 0; k < BONSAI_NCONDS; k++)
        nleaves += d->conds[dn->when][k].leaf.fn != NULL ||
                   d->conds[dn->when][k].key != BS_NONE;
    }
  }
  return nleaves;
}

/* Phase 2: every node's name, unique among its siblings (nm->buf, at). */
static int names_make(Names *nm, const bonsai_def *d) {
  uint32_t i;
  memset(nm, 0, sizeof *nm);
  nm->env = d->env;
  for (nm->scap = 16; nm->scap < 2 * d->n; nm->scap *= 2)
    ;
  nm->at = bs_malloc(d->env, d->n * sizeof *nm->at);
  nm->dups = bs_malloc(d->env, d->n * sizeof *nm->dups);
  nm->seen = bs_malloc(d->env, nm->scap * sizeof *nm->seen);
  if (nm->at == NULL || nm->dups == NULL || nm->seen == NULL)
    return -1;
  memset(nm->seen, 0, nm->scap * sizeof *nm->seen);
  for (i = 0; i < d->n; i++)
    if (name_node(nm, d, i) != 0)
      return -1;
  return 0;
}

/* Phase 3: one allocation: header, nodes (on a cache line: a node's first
** half is one line), leaves, checks, event guards, pool (names, then check
** strings). */
static Blueprint *allocate(const bonsai_def *d, const Names *nm,
                           size_t nleaves) {
  size_t poolsize = nm->n, size, nchecks = 0, nevguard = 0;
  Blueprint *bp;
  char *mem;
  uint32_t i, k;
  for (i = 0; i < d->n; i++)
    if (d->nodes[i].val.type == BONSAI_TSTRING)
      poolsize += strlen(d->strs + d->nodes[i].val.u.str.len) + 1;
  for (i = 0; i < d->nconds; i++) /* checks of conditions */
    for (k = 0; k < BONSAI_NCONDS; k++)
      if (d->conds[i][k].key != BS_NONE) {
        nchecks++;
        if (d->conds[i][k].val.type == BONSAI_TSTRING)
          poolsize += strlen(d->strs + d->conds[i][k].val.u.str.len) + 1;
      }
  for (i = 0; i < d->ntexts; i++) /* texts: two strings per slot */
    for (k = 0; k <= BONSAI_NCONDS; k++) {
      uint32_t j;
      for (j = 0; j < 2; j++)
        poolsize += (d->texts[i][k][j] != BS_NONE
                         ? strlen(d->strs + d->texts[i][k][j])
                         : 0) + 1;
    }
  for (i = 0; i < d->n; i++)
    nevguard += d->nodes[i].kind == BONSAI_EVENT_GUARD &&
                d->nodes[i].mode == GUARD_LOWER;
  size = sizeof *bp + 63 + (size_t)d->n * sizeof(Node) +
         align8(nleaves * sizeof(Leaf)) + nchecks * sizeof(Check) +
         align8(nevguard * sizeof(uint32_t)) + poolsize;
  if ((mem = bs_malloc(d->env, size)) == NULL)
    return NULL;
  memset(mem, 0, size);
  bp = (Blueprint *)mem;
  bp->refs = 1;
  bp->env = d->env;
  bp->id = newid();
  bp->n = d->n;
  bp->size = size;
  bp->nodes = (Node *)(((uintptr_t)(mem + sizeof *bp) + 63) & ~(uintptr_t)63);
  bp->leaves = (Leaf *)((char *)bp->nodes + (size_t)d->n * sizeof(Node));
  bp->checks = (Check *)((char *)bp->leaves + align8(nleaves * sizeof(Leaf)));
  bp->evguard = (uint32_t *)(bp->checks + nchecks);
  bp->pool = (char *)bp->evguard + align8(nevguard * sizeof(uint32_t));
  memcpy(bp->pool, nm->buf, nm->n);
  bp->statsize = (uint32_t)align8(d->n);
  return bp;
}

/* Where phase 4 is: the next free data offsets (8-byte blocks from the
** end of the 8-byte region down, 4-byte ones after it) and pool byte. */
typedef struct Layout {
  uint32_t off8, off4;
  size_t at;
} Layout;

/* A string constant of the definition into the pool: v, a copy of the
** definition's value, holds the string's offset in d->strs in u.str.len;
** it then points at the pool's copy. */
static void poolstr(Blueprint *bp, const bonsai_def *d, bonsai_value *v,
                    Layout *lay) {
  const char *s = d->strs + v->u.str.len;
  size_t len = strlen(s);
  memcpy(bp->pool + lay->at, s, len + 1);
  v->u.str.s = bp->pool + lay->at;
  v->u.str.len = len;
  lay->at += len + 1;
}

/* The check of a condition c into bp->checks (strings into the pool);
** returns its index, or BS_NONE when out of memory. */
static uint32_t addcheck(Blueprint *bp, const bonsai_def *d, const DefCond *c,
                         Layout *lay) {
  Check *k = &bp->checks[bp->nchecks];
  int id = bonsai_key(d->env, d->strs + c->key, strlen(d->strs + c->key));
  if (id < 0)
    return BS_NONE;
  k->key = (uint32_t)id;
  k->vkey = BS_NONE;
  k->op = c->op;
  k->val = c->val;
  if (c->vkey != BS_NONE) {
    const char *vk = d->strs + c->vkey;
    if ((id = bonsai_key(d->env, vk, strlen(vk))) < 0)
      return BS_NONE;
    k->vkey = (uint32_t)id;
  }
  if (c->val.type == BONSAI_TSTRING)
    poolstr(bp, d, &k->val, lay);
  return bp->nchecks++;
}

/* The texts of definition node dn into the pool: node n's record. */
static void texts(Node *n, const bonsai_def *d, const DefNode *dn,
                  Blueprint *bp, Layout *lay) {
  uint32_t k, j;
  n->text = BS_NONE;
  if (dn->texts == BS_NONE)
    return;
  n->text = (uint32_t)lay->at;
  for (k = 0; k <= BONSAI_NCONDS; k++)
    for (j = 0; j < 2; j++) {
      uint32_t at = d->texts[dn->texts][k][j];
      const char *s = at != BS_NONE ? d->strs + at : "";
      size_t len = strlen(s);
      memcpy(bp->pool + lay->at, s, len + 1);
      lay->at += len + 1;
    }
}

/* Phase 4: node i from its definition: flags, data, links to its active
** ancestor, parameters. -1 when out of memory (interning a key). */
static int fillnode(Blueprint *bp, const bonsai_def *d, const Names *nm,
                    uint32_t i, Layout *lay) {
  const DefNode *dn = &d->nodes[i];
  const KindInfo *ki = &bs_kinds[dn->kind];
  Node *n = &bp->nodes[i];
  uint32_t ds = nodesize(dn);
  n->kind = dn->kind;
  n->parent = dn->parent;
  n->nchild = dn->nchild;
  n->name = nm->at[i];
  n->args = dn->args;
  n->leaf = BS_NONE;
  texts(n, d, dn, bp, lay);
  if (ki->flags & K_ACTIVE)
    n->flags |= NF_ACTIVE;
  if (ki->flags & K_MEMORY) /* the VM's fast paths */
    n->flags |= NF_MEMORY;
  if (ki->flags & K_REACTIVE)
    n->flags |= NF_REACTIVE;
  if (dn->when != BS_NONE) { /* its conditions, in order */
    const DefCond *w = d->conds[dn->when];
    int k;
    n->flags |= NF_COND;
    n->cond = bp->nleaves;
    for (k = 0; k < BONSAI_NCONDS; k++) {
      Leaf *l = &bp->leaves[bp->nleaves];
      if (w[k].leaf.fn != NULL) {
        *l = w[k].leaf;
      } else if (w[k].key != BS_NONE) {
        uint32_t at = addcheck(bp, d, &w[k], lay);
        if (at == BS_NONE)
          return -1;
        l->fn = NULL;
        l->data = (void *)(uintptr_t)at;
        l->flags = 0;
      } else {
        continue;
      }
      n->when |= (uint8_t)(1u << k);
      bp->nleaves++;
    }
    if (n->when & (1u << BONSAI_RUN_WHILE)) /* checked at every tick */
      n->flags |= NF_ACTIVE;
    bp->nconds++;
  } else if (ki->flags & K_SKIPS) {
    bp->nconds++;
  }
  n->cont = ki->cont;
  if (dn->kind == BONSAI_PRIORITY)
    n->flags |= NF_HIDDEN;
  if (ds == 4) {
    n->data = bp->statsize + lay->off4;
    lay->off4 += 4;
  } else if (ds != 0) { /* multiples of 8 */
    n->data = bp->statsize + lay->off8 - ds;
    lay->off8 -= ds;
  }
  if (dn->parent == BS_NONE) {
    n->depth = 0;
    n->up = n->upchild = BS_NONE;
  } else {
    const Node *p = &bp->nodes[dn->parent];
    n->depth = p->depth + 1;
    if (p->flags & NF_ACTIVE) {
      n->up = dn->parent;
      n->upchild = i;
    } else {
      n->up = p->up;
      n->upchild = p->upchild;
    }
  }
  switch (dn->kind) {
  case BONSAI_ACTION: case BONSAI_CONDITION:
    if (dn->leafname != BS_NONE) {
      n->leaf = (uint32_t)bonsai_leaf_find(d->env, d->strs + dn->leafname);
      n->flags |= NF_NAMED;
      if (n->leaf >= bp->nnamed)
        bp->nnamed = n->leaf + 1;
    } else {
      n->leaf = bp->nleaves;
      bp->leaves[bp->nleaves++] = dn->leaf;
    }
    break;
  case BONSAI_PARALLEL: {
    double s = (dn->set & P_SUCCESS) ? dn->success : -1;
    double f = (dn->set & P_FAILURE) ? dn->failure : 1;
    n->a = s < 0 ? dn->nchild : (uint32_t)s;
    n->b = f < 0 ? dn->nchild : (uint32_t)f;
    n->op = s < 0; /* "all" */
    break;
  }
  case BONSAI_CHECK: {
    n->op = dn->op;
    n->val = dn->val;
    if (dn->vkey != BS_NONE) {
      const char *vk = d->strs + dn->vkey;
      int k = bonsai_key(d->env, vk, strlen(vk));
      if (k < 0)
        return -1;
      n->b = (uint32_t)k;
      n->flags |= NF_KEYREF;
    }
    if (dn->val.type == BONSAI_TSTRING)
      poolstr(bp, d, &n->val, lay);
    break;
  }
  case BONSAI_CONTROL: /* its callbacks */
    n->leaf = bp->nleaves;
    bp->leaves[bp->nleaves++] = dn->leaf;
    break;
  case BONSAI_UTILITY_SELECTOR: /* its children's utilities, in order */
    n->leaf = bp->nleaves;
    bp->nleaves += dn->nchild;
    break;
  default:
    break;
  }
  if (dn->parent != BS_NONE &&
      d->nodes[dn->parent].kind == BONSAI_UTILITY_SELECTOR)
    bp->leaves[bp->nodes[dn->parent].leaf + dn->place - 1] = dn->util;
  n->secs = dn->secs;
  n->mode = dn->mode; /* "abort", "wait", or another choice it takes */
  if (ki->takes & P_TIMES)
    n->a = (uint32_t)dn->times;
  if ((ki->takes & P_KEY) && dn->key == BS_NONE) /* optional: events' */
    n->a = BS_NONE;
  else if (ki->takes & P_KEY) { /* the key it reads (or writes) */
    int k = bonsai_key(d->env, d->strs + dn->key, strlen(d->strs + dn->key));
    if (k < 0)
      return -1;
    n->a = (uint32_t)k;
  }
  if (ki->takes & P_EVENT) { /* the event it listens to */
    const char *e = d->strs + dn->event;
    int k = bs_name_id(BS_EVENTS, e, strlen(e), 1);
    if (k < 0)
      return -1;
    n->b = (uint32_t)k;
    if (dn->kind == BONSAI_EVENT_GUARD && dn->mode == GUARD_LOWER)
      bp->evguard[bp->nevguard++] = i;
  }
  if ((ki->takes & (P_TIMEOUT | P_ABORT_TIMEOUT)) &&
      !(dn->set & (P_TIMEOUT | P_ABORT_TIMEOUT)))
    n->secs = -1; /* none */
  return 0;
}

/* Phase 5: the links between nodes: 'next' skips the subtree (filled
** backwards, children before parents), the jump table, and the index of
** the last child of filters, monitors and guards. */
static void links(Blueprint *bp) {
  uint32_t i;
  for (i = bp->n; i-- > 0;)
    bp->nodes[i].next = i + 1;
  for (i = bp->n; i-- > 1;) {
    uint32_t p = bp->nodes[i].parent;
    if (bp->nodes[i].next > bp->nodes[p].next)
      bp->nodes[p].next = bp->nodes[i].next;
  }
  jumps(bp);
  for (i = 0; i < bp->n; i++) {
    Node *n = &bp->nodes[i];
    if (n->kind == BONSAI_FILTER || n->kind == BONSAI_MONITOR ||
        n->kind == BONSAI_GUARD) {
      uint32_t c = i + 1;
      while (bp->nodes[c].next < n->next)
        c = bp->nodes[c].next;
      n->b = c;
    }
  }
}

Blueprint *bs_compile(const bonsai_def *d, char *err, size_t errsize,
                      int *code) {
  long nleaves = checkdef(d, err, errsize, code);
  Blueprint *bp = NULL;
  Layout lay = {0, 0, 0};
  Names nm;
  uint32_t i;
  if (nleaves < 0)
    return NULL;
  if (names_make(&nm, d) != 0 ||
      (bp = allocate(d, &nm, (size_t)nleaves)) == NULL)
    goto nomem;
  for (i = 0; i < d->n; i++) /* 8-byte blocks first, then 4-byte ones */
    if (nodesize(&d->nodes[i]) % 8 == 0)
      lay.off8 += nodesize(&d->nodes[i]);
  lay.off4 = lay.off8;
  lay.at = nm.n;
  for (i = 0; i < d->n; i++)
    if (fillnode(bp, d, &nm, i, &lay) != 0)
      goto nomem;
  bp->datasize = (uint32_t)align8(lay.off4);
  links(bp);
  if (watchlist(d->env, bp) != 0)
    goto nomem;
  names_free(&nm, d->n);
  bs_env_retain(d->env);
  return bp;
nomem:
  names_free(&nm, d->n);
  if (bp != NULL)
    bs_free(d->env, bp, bp->size);
  snprintf(err, errsize, "out of memory");
  *code = BONSAI_ENOMEM;
  return NULL;
}

int bonsai_def_compile(const bonsai_def *def, bonsai_version **out,
                       char *errbuf, size_t errsize) {
  char tmp[BS_ERRSIZE];
  int code;
  *out = bs_compile(def, errbuf ? errbuf : tmp, errbuf ? errsize : sizeof tmp,
                    &code);
  return *out != NULL ? BONSAI_OK : code;
}

void bonsai_version_release(bonsai_version *v) { bs_bp_release(v); }

/* }====================================================== */

/*
** {======================================================
** Blueprints: references, detached copies, paths
** =======================================================
*/

void bs_bp_retain(Blueprint *bp) { bs_atomic_inc(&bp->refs); }

void bs_bp_release(Blueprint *bp) {
  bonsai_env *env;
  if (bp == NULL || bs_atomic_dec(&bp->refs) > 0)
    return;
  if ((env = bp->env) == NULL) { /* a shared one */
    free(bp->watchkey);
    free(bp->host);
    free(bp);
    return;
  }
  if (bp->watchkey != NULL)
    bs_free(env, bp->watchkey, watchsize(bp));
  bs_free(env, bp, bp->size);
  bonsai_env_release(env);
}

/* Moves a pointer into the block at 'from' to the same place in 'to'. */
#define MOVED(p, from, to) ((void *)((char *)(to) + ((char *)(p) - (char *)(from))))

Blueprint *bs_bp_detach(const Blueprint *bp, const void *host,
                        size_t hostlen) {
  Blueprint *c = malloc(bp->size);
  size_t ws = bp->watchkey != NULL ? watchsize(bp) : 0;
  uint32_t *w = ws > 0 ? malloc(ws) : NULL;
  void *h = hostlen > 0 ? malloc(hostlen) : NULL;
  uint32_t i;
  if (c == NULL || (ws > 0 && w == NULL) || (hostlen > 0 && h == NULL)) {
    free(c);
    free(w);
    free(h);
    return NULL;
  }
  memcpy(c, bp, bp->size);
  c->refs = 1;
  c->env = NULL;
  c->id = newid();
  c->replaced = 0;
  c->nodes = MOVED(bp->nodes, bp, c);
  c->leaves = MOVED(bp->leaves, bp, c);
  c->pool = MOVED(bp->pool, bp, c);
  c->checks = MOVED(bp->checks, bp, c);
  c->evguard = MOVED(bp->evguard, bp, c);
  for (i = 0; i < c->nchecks; i++)
    if (c->checks[i].val.type == BONSAI_TSTRING)
      c->checks[i].val.u.str.s = MOVED(bp->checks[i].val.u.str.s, bp, c);
  for (i = 0; i < c->n; i++)
    if (c->nodes[i].val.type == BONSAI_TSTRING &&
        (c->nodes[i].kind == BONSAI_CHECK))
      c->nodes[i].val.u.str.s = MOVED(bp->nodes[i].val.u.str.s, bp, c);
  if (ws > 0) {
    memcpy(w, bp->watchkey, ws);
    c->watchkey = w;
    c->watchfirst = w + (bp->watchfirst - bp->watchkey);
    c->watchguard = w + (bp->watchguard - bp->watchkey);
  }
  if (hostlen > 0)
    memcpy(h, host, hostlen);
  c->host = h;
  c->hostlen = hostlen;
  return c;
}

size_t bs_bp_path(const Blueprint *bp, uint32_t i, char *buf, size_t size) {
  size_t len = 0, at;
  uint32_t j;
  for (j = i; j != BS_NONE; j = bp->nodes[j].parent)
    if (!(bp->nodes[j].flags & NF_HIDDEN))
      len += strlen(bp->pool + bp->nodes[j].name) + (len > 0);
  if (size == 0)
    return len;
  if (buf == NULL)
    return len;
  at = len;
  for (j = i; j != BS_NONE; j = bp->nodes[j].parent) {
    const char *s = bp->pool + bp->nodes[j].name;
    size_t k = strlen(s);
    if (bp->nodes[j].flags & NF_HIDDEN)
      continue;
    if (at < len) {
      at--;
      if (at < size - 1)
        buf[at] = '/';
    }
    at -= k;
    for (; k > 0; k--)
      if (at + k - 1 < size - 1)
        buf[at + k - 1] = s[k - 1];
  }
  buf[len < size ? len : size - 1] = '\0';
  return len;
}

/* }====================================================== */
