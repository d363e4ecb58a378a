/*
** latent.c: the tables of latent aborts under way (latent.h), made for an
** agent with its first latent abort and freed with its last: until then
** the agent runs the watched copy of the tick, which steps them (vm.c).
** Small lists, looked up by node: few nodes abort at once.
*/
#include <string.h>

#include "bonsai.h"
#include "env.h"
#include "latent.h"
#include "trace.h"

static Latent *latentof(bonsai_agent *a) {
  Latent *t = a->latent;
  if (t == NULL && (t = bs_malloc(a->tree->env, sizeof *t)) != NULL) {
    memset(t, 0, sizeof *t);
    a->latent = t;
    bs_rewatch(a);
  }
  return t;
}

/* Frees the tables once they are empty: ticks go back to their copy. */
static void tidy(bonsai_agent *a) {
  Latent *t = a->latent;
  if (t == NULL || t->nl > 0 || t->nw > 0)
    return;
  bs_latent_free(a);
}

/* Room for one more of n items of size sz in *p (capacity *cap). */
static int grow(bonsai_env *env, void **p, uint32_t n, uint32_t *cap,
                size_t sz) {
  uint32_t ncap;
  void *q;
  if (n < *cap)
    return BONSAI_OK;
  ncap = *cap ? *cap * 2 : 4;
  if ((q = bs_realloc(env, *p, *cap * sz, ncap * sz)) == NULL)
    return BONSAI_ENOMEM;
  *p = q;
  *cap = ncap;
  return BONSAI_OK;
}

Aborting *bs_aborting(const bonsai_agent *a, uint32_t node) {
  const Latent *t = a->latent;
  uint32_t k;
  if (t != NULL)
    for (k = 0; k < t->nl; k++)
      if (t->l[k].node == node)
        return &t->l[k];
  return NULL;
}

Aborting *bs_aborting_add(bonsai_agent *a, uint32_t node) {
  Latent *t;
  Aborting *x = bs_aborting(a, node);
  if (x == NULL) {
    if ((t = latentof(a)) == NULL ||
        grow(a->tree->env, (void **)&t->l, t->nl, &t->capl, sizeof *t->l) !=
            BONSAI_OK) {
      tidy(a);
      return NULL;
    }
    x = &t->l[t->nl++];
  }
  x->node = node;
  x->called = a->serial;
  x->since = a->time;
  x->final = 0;
  return x;
}

void bs_aborting_drop(bonsai_agent *a, uint32_t node) {
  Latent *t = a->latent;
  Aborting *x = bs_aborting(a, node);
  if (x == NULL)
    return;
  *x = t->l[--t->nl];
  tidy(a);
}

Wait *bs_wait(const bonsai_agent *a, uint32_t node) {
  const Latent *t = a->latent;
  uint32_t k;
  if (t != NULL)
    for (k = 0; k < t->nw; k++)
      if (t->w[k].node == node)
        return &t->w[k];
  return NULL;
}

int bs_wait_set(bonsai_agent *a, uint32_t node, uint32_t to, int status) {
  Latent *t;
  Wait *x = bs_wait(a, node);
  if (x == NULL) {
    if ((t = latentof(a)) == NULL ||
        grow(a->tree->env, (void **)&t->w, t->nw, &t->capw, sizeof *t->w) !=
            BONSAI_OK) {
      tidy(a);
      return BONSAI_ENOMEM;
    }
    x = &t->w[t->nw++];
  }
  x->node = node;
  x->to = to;
  x->status = (uint8_t)status;
  return BONSAI_OK;
}

void bs_wait_drop(bonsai_agent *a, uint32_t node) {
  Latent *t = a->latent;
  Wait *x = bs_wait(a, node);
  if (x == NULL)
    return;
  *x = t->w[--t->nw];
  tidy(a);
}

void bs_latent_remap(bonsai_agent *a, const uint32_t *map, const uint8_t *st) {
  Latent *t = a->latent;
  uint32_t k;
  if (t == NULL)
    return;
  for (k = 0; k < t->nl;) {
    uint32_t m = map[t->l[k].node];
    if (m != BS_NONE && st[m] == BONSAI_ABORTING) {
      t->l[k++].node = m;
      continue;
    }
    t->l[k] = t->l[--t->nl];
  }
  for (k = 0; k < t->nw;) {
    Wait *w = &t->w[k];
    uint32_t m = w->node == BS_NONE ? BS_NONE : map[w->node];
    if (w->node == BS_NONE ? st[0] == BONSAI_ABORTING
                           : m != BS_NONE && st[m] == BONSAI_RUNNING) {
      uint32_t to = w->to == BS_NONE ? BS_NONE : map[w->to];
      if (w->to != BS_NONE && to == BS_NONE) /* its next node is gone */
        to = m != BS_NONE ? m : 0;
      w->node = m;
      w->to = to;
      k++;
      continue;
    }
    *w = t->w[--t->nw];
  }
  tidy(a);
}

void bs_latent_free(bonsai_agent *a) {
  bonsai_env *env = a->tree->env;
  Latent *t = a->latent;
  if (t == NULL)
    return;
  bs_free(env, t->l, t->capl * sizeof *t->l);
  bs_free(env, t->w, t->capw * sizeof *t->w);
  bs_free(env, t, sizeof *t);
  a->latent = NULL;
  bs_rewatch(a);
}
