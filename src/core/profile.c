/*
** profile.c: the per-node profile of a tree (bonsai_tree_profile). A
** profile counts one version, the tree's current one: calls per node (each
** time a tick reaches it) and seconds, split between the runtime (from the
** moment a tick reaches a node until it reaches the next one, the steps
** that end its parents included) and the leaf's callbacks. The tree keeps
** a list of its agents so that starting a profile reaches them all; each
** profiled agent runs the traced copy of the tick (a->watched).
*/
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#endif
#include <string.h>
#include <time.h>

#include "bonsai.h"
#include "compile.h"
#include "env.h"
#include "profile.h"
#include "trace.h"

typedef struct Prof {
  bonsai_env *env;
  Blueprint *bp;      /* the version counted (held) */
  int on;             /* agents count their ticks */
  unsigned long long ticks;
  double time;        /* seconds inside the profiled ticks */
  bonsai_agent *busy; /* the agent whose tick is counted, or NULL */
  uint32_t at;        /* the node its tick is at */
  double stamp;       /* when the last time went to a node */
  double start;       /* when the tick started */
  bonsai_profile_node *node; /* bp->n of them */
} Prof;

static double now(void) {
#if defined(CLOCK_MONOTONIC)
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#else
  return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* Counters from zero for version bp (held); BONSAI_ENOMEM leaves p as it
** was. */
static int restart(Prof *p, Blueprint *bp) {
  size_t size = bp->n * sizeof *p->node;
  bonsai_profile_node *node = bs_malloc(p->env, size);
  if (node == NULL)
    return BONSAI_ENOMEM;
  memset(node, 0, size);
  if (p->bp != NULL) {
    bs_free(p->env, p->node, p->bp->n * sizeof *p->node);
    bs_bp_release(p->bp);
  }
  bs_bp_retain(bp);
  p->bp = bp;
  p->node = node;
  p->ticks = 0;
  p->time = 0;
  p->busy = NULL;
  return BONSAI_OK;
}

/* The time since the last stamp goes to the node the tick is at. */
static void lap(Prof *p, double t) {
  p->node[p->at].runtime += t - p->stamp;
  p->stamp = t;
}

void bs_prof_begin(bonsai_agent *a) {
  Prof *p = a->prof;
  if (!p->on || p->busy != NULL)
    return; /* stopped, or a tick inside another one's leaf */
  if (a->bp != p->bp) { /* a reload: the new version counts from zero
                          ** (the agent has moved: t->bp is fresh) */
    if (a->bp != a->tree->bp || restart(p, a->bp) != BONSAI_OK)
      return;
  }
  p->busy = a;
  p->at = 0;
  p->start = p->stamp = now();
}

void bs_prof_end(bonsai_agent *a) {
  Prof *p = a->prof;
  double t;
  if (p == NULL || p->busy != a)
    return;
  t = now();
  lap(p, t);
  p->ticks++;
  p->time += t - p->start;
  p->busy = NULL;
}

void bs_prof_visit(bonsai_agent *a, uint32_t i) {
  Prof *p = a->prof;
  if (p == NULL || p->busy != a)
    return;
  lap(p, now());
  p->at = i;
  p->node[i].calls++;
}

void bs_prof_leaf(bonsai_agent *a, uint32_t i, int after) {
  Prof *p = a->prof;
  double t;
  if (p == NULL || p->busy != a)
    return;
  t = now();
  if (after)
    p->node[i].leaf += t - p->stamp;
  else
    p->node[p->at].runtime += t - p->stamp;
  p->stamp = t;
}

void bs_prof_abandon(bonsai_agent *a) {
  if (a->prof != NULL && a->prof->busy == a)
    a->prof->busy = NULL;
}

void bs_prof_join(bonsai_agent *a) {
  bonsai_tree *t = a->tree;
  a->tnext = t->agents;
  a->tprev = NULL;
  if (t->agents != NULL)
    t->agents->tprev = a;
  t->agents = a;
  a->prof = t->prof != NULL && t->prof->on ? t->prof : NULL;
  bs_rewatch(a);
}

void bs_prof_leave(bonsai_agent *a) {
  bs_prof_abandon(a);
  if (a->tprev != NULL)
    a->tprev->tnext = a->tnext;
  else
    a->tree->agents = a->tnext;
  if (a->tnext != NULL)
    a->tnext->tprev = a->tprev;
  a->prof = NULL;
}

void bs_prof_free(bonsai_tree *t) {
  Prof *p = t->prof;
  if (p == NULL)
    return;
  if (p->bp != NULL) {
    bs_free(p->env, p->node, p->bp->n * sizeof *p->node);
    bs_bp_release(p->bp);
  }
  bs_free(p->env, p, sizeof *p);
  t->prof = NULL;
}

int bonsai_tree_profile(bonsai_tree *t, int on) {
  Prof *p = t->prof;
  bonsai_agent *a;
  if (on && p == NULL) {
    if ((p = bs_malloc(t->env, sizeof *p)) == NULL)
      return BONSAI_ENOMEM;
    memset(p, 0, sizeof *p);
    p->env = t->env;
    t->prof = p;
  }
  if (p == NULL)
    return BONSAI_OK; /* never started: nothing to stop */
  if (on && restart(p, t->bp) != BONSAI_OK)
    return BONSAI_ENOMEM;
  p->on = on != 0;
  for (a = t->agents; a != NULL; a = a->tnext) {
    a->prof = p->on ? p : NULL;
    bs_rewatch(a);
  }
  return BONSAI_OK;
}

unsigned bonsai_tree_profile_read(const bonsai_tree *t,
                                  bonsai_profile *out,
                                  bonsai_profile_node *nodes, unsigned max) {
  const Prof *p = t->prof;
  unsigned n;
  memset(out, 0, sizeof *out);
  if (p == NULL || p->bp == NULL || p->bp != t->bp)
    return 0; /* never started, or not since the tree was reloaded */
  out->on = p->on;
  out->ticks = p->ticks;
  out->time = p->time;
  n = max < p->bp->n ? max : p->bp->n;
  if (nodes != NULL)
    memcpy(nodes, p->node, n * sizeof *nodes);
  return p->bp->n;
}
