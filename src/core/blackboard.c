/*
** blackboard.c: tagged values by interned key id, in a small open-addressing
** table per blackboard (no table at all until the first write). A read that
** misses falls through to the parent chain; writes stay local. Keys are never
** removed from a table: a cleared key keeps its slot with a nil value, so
** probing never needs tombstones.
*/
#include <string.h>

#include "bonsai.h"
#include "blackboard.h"
#include "env.h"
#include "names.h"

bonsai_bb *bonsai_bb_new(bonsai_env *env, bonsai_bb *parent) {
  bonsai_bb *bb = bs_malloc(env, sizeof *bb);
  if (bb == NULL)
    return NULL;
  memset(bb, 0, sizeof *bb);
  bb->refs = 1;
  bb->env = env;
  bb->parent = parent;
  if (parent != NULL)
    parent->refs++;
  bs_env_retain(env);
  return bb;
}

void bs_bb_retain(bonsai_bb *bb) { bb->refs++; }

static void clearvalue(bonsai_env *env, bonsai_value *v) {
  if (v->type == BONSAI_TSTRING)
    bs_free(env, (char *)v->u.str.s, v->u.str.len + 1);
  v->type = BONSAI_TNIL;
}

void bonsai_bb_release(bonsai_bb *bb) {
  /* iterative: releasing a child may release its parent */
  while (bb != NULL && --bb->refs == 0) {
    bonsai_env *env = bb->env;
    bonsai_bb *parent = bb->parent;
    uint32_t i;
    for (i = 0; i < bb->cap; i++)
      if (bb->slots[i].key != BS_NONE)
        clearvalue(env, &bb->slots[i].v);
    bs_free(env, bb->slots, bb->cap * sizeof *bb->slots);
    bs_free(env, bb, sizeof *bb);
    bonsai_env_release(env);
    bb = parent;
  }
}

bonsai_bb *bonsai_bb_parent(const bonsai_bb *bb) { return bb->parent; }

static uint32_t slothash(uint32_t key) { return key * 2654435761u; }

static Slot *find(const bonsai_bb *bb, uint32_t key) {
  uint32_t j;
  if (bb->cap == 0)
    return NULL;
  for (j = slothash(key) & (bb->cap - 1); bb->slots[j].key != BS_NONE;
       j = (j + 1) & (bb->cap - 1))
    if (bb->slots[j].key == key)
      return &bb->slots[j];
  return NULL;
}

bonsai_value bonsai_bb_get_own(const bonsai_bb *bb, int key) {
  const Slot *s = key >= 0 ? find(bb, (uint32_t)key) : NULL;
  bonsai_value nil;
  if (s != NULL)
    return s->v; /* a cleared key keeps its slot, with nil */
  nil.type = BONSAI_TNIL;
  nil.u.i = 0;
  return nil;
}

bonsai_value bonsai_bb_get(const bonsai_bb *bb, int key) {
  bonsai_value nil;
  for (; bb != NULL; bb = bb->parent) {
    const Slot *s = find(bb, (uint32_t)key);
    if (s != NULL && s->v.type != BONSAI_TNIL)
      return s->v;
  }
  nil.type = BONSAI_TNIL;
  nil.u.i = 0;
  return nil;
}

/* Doubles the table (or creates it). */
static int grow(bonsai_bb *bb) {
  uint32_t ncap = bb->cap ? bb->cap * 2 : 4, i, j;
  Slot *ns = bs_malloc(bb->env, ncap * sizeof *ns);
  if (ns == NULL)
    return BONSAI_ENOMEM;
  for (i = 0; i < ncap; i++)
    ns[i].key = BS_NONE;
  for (i = 0; i < bb->cap; i++) {
    if (bb->slots[i].key == BS_NONE)
      continue;
    for (j = slothash(bb->slots[i].key) & (ncap - 1); ns[j].key != BS_NONE;
         j = (j + 1) & (ncap - 1))
      ;
    ns[j] = bb->slots[i];
  }
  bs_free(bb->env, bb->slots, bb->cap * sizeof *bb->slots);
  bb->slots = ns;
  bb->cap = ncap;
  return BONSAI_OK;
}

/* Exact comparison of an integer with a float, as Lua does: -1, 0, 1, or
** 2 when f is NaN (unordered). */
static int intflt(long long i, double f) {
  long long t;
  if (f != f)
    return 2;
  if (f >= 9223372036854775808.0)
    return -1;
  if (f < -9223372036854775808.0)
    return 1;
  t = (long long)f; /* f truncated; floor(f) is t or t - 1 */
  if ((double)t > f)
    t--;
  if (i != t)
    return i < t ? -1 : 1;
  return (double)t == f ? 0 : -1; /* i == floor(f) < f when f has a fraction */
}

int bs_value_compare(bonsai_value x, bonsai_value y, int *eq) {
  int xn = x.type == BONSAI_TNUMBER || x.type == BONSAI_TINTEGER;
  int yn = y.type == BONSAI_TNUMBER || y.type == BONSAI_TINTEGER;
  if (xn && yn) {
    int c;
    if (x.type == BONSAI_TINTEGER && y.type == BONSAI_TINTEGER)
      c = x.u.i < y.u.i ? -1 : x.u.i > y.u.i;
    else if (x.type == BONSAI_TNUMBER && y.type == BONSAI_TNUMBER)
      c = x.u.n < y.u.n ? -1 : x.u.n > y.u.n ? 1 : x.u.n == y.u.n ? 0 : 2;
    else if (x.type == BONSAI_TINTEGER)
      c = intflt(x.u.i, y.u.n);
    else if ((c = intflt(y.u.i, x.u.n)) != 2)
      c = -c; /* float against integer: the other way round */
    *eq = c == 0;
    return c == 2 ? CMP_NAN : c;
  }
  if (x.type == BONSAI_TSTRING && y.type == BONSAI_TSTRING) {
    size_t m = x.u.str.len < y.u.str.len ? x.u.str.len : y.u.str.len;
    int r = memcmp(x.u.str.s, y.u.str.s, m);
    if (r == 0)
      r = x.u.str.len < y.u.str.len ? -1 : x.u.str.len > y.u.str.len;
    *eq = r == 0;
    return r < 0 ? -1 : r > 0;
  }
  *eq = x.type == y.type &&
        (x.type == BONSAI_TNIL ||
         (x.type == BONSAI_TBOOLEAN && !x.u.b == !y.u.b) ||
         (x.type == BONSAI_THANDLE && x.u.handle == y.u.handle));
  return CMP_NONE;
}

int bonsai_bb_set(bonsai_bb *bb, int key, bonsai_value v) {
  return bs_bb_set(bb, key, v, NULL);
}

int bonsai_bb_update(bonsai_bb *bb, int key, bonsai_value v) {
  int changed, r = bs_bb_set(bb, key, v, &changed);
  return r != BONSAI_OK ? r : changed;
}

int bs_bb_set(bonsai_bb *bb, int key, bonsai_value v, int *changed) {
  Slot *s;
  int eq;
  if (changed != NULL)
    *changed = 0;
  if (key < 0 || (uint32_t)key >= bs_name_count(BS_KEYS) ||
      v.type < BONSAI_TNIL ||
      v.type > BONSAI_THANDLE)
    return BONSAI_EARG;
  s = find(bb, (uint32_t)key);
  if (s != NULL && v.type != BONSAI_THANDLE && s->v.type == v.type) {
    bs_value_compare(s->v, v, &eq);
    if (eq)
      return BONSAI_OK; /* the same value again is not a change */
  }
  if (s == NULL) {
    uint32_t j;
    if (v.type == BONSAI_TNIL)
      return BONSAI_OK;
    if ((bb->n + 1) * 4 > bb->cap * 3 && grow(bb) != BONSAI_OK)
      return BONSAI_ENOMEM;
    for (j = slothash((uint32_t)key) & (bb->cap - 1); bb->slots[j].key != BS_NONE;
         j = (j + 1) & (bb->cap - 1))
      ;
    s = &bb->slots[j];
    s->key = (uint32_t)key;
    s->v.type = BONSAI_TNIL;
    bb->n++;
  }
  if (v.type == BONSAI_TSTRING) {
    char *copy = bs_strdup(bb->env, v.u.str.s, v.u.str.len);
    if (copy == NULL)
      return BONSAI_ENOMEM;
    v.u.str.s = copy;
  }
  clearvalue(bb->env, &s->v);
  s->v = v;
  bb->serial = ++bb->env->bbserial;
  s->serial = (uint32_t)bb->serial;
  if (changed != NULL)
    *changed = 1;
  return BONSAI_OK;
}

uint32_t bs_bb_stamp(const bonsai_bb *bb, int key) {
  uint32_t sum = 0;
  for (; bb != NULL; bb = bb->parent) {
    const Slot *s = find(bb, (uint32_t)key);
    if (s != NULL)
      sum += s->serial;
  }
  return sum;
}

int bs_bb_changed(const bonsai_bb *bb, uint64_t since) {
  for (; bb != NULL; bb = bb->parent)
    if (bb->serial > since)
      return 1;
  return 0;
}

int bs_bb_next(const bonsai_bb *bb, int at, int *key) {
  uint32_t i;
  for (i = (uint32_t)at; i < bb->cap; i++)
    if (bb->slots[i].key != BS_NONE && bb->slots[i].v.type != BONSAI_TNIL) {
      *key = (int)bb->slots[i].key;
      return (int)i + 1;
    }
  return -1;
}

int bonsai_bb_next(const bonsai_bb *bb, unsigned *cursor, int *key,
                   bonsai_value *v) {
  int at = *cursor <= bb->cap ? bs_bb_next(bb, (int)*cursor, key) : -1;
  if (at < 0)
    return 0;
  *cursor = (unsigned)at;
  *v = bb->slots[at - 1].v;
  return 1;
}
