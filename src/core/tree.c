/*
** tree.c: trees, the handles on a tree's current version. A tree compiles
** a definition into an immutable Blueprint and swaps it on reload; agents
** switch at their next tick. A shared tree (bonsai_tree_share) runs a
** version detached from any environment (malloc'd, counted atomically),
** held by an entry of the process's registry of shared trees; trees made
** from its handle in other environments (other Lua states, other threads)
** run the same blueprint, and a reload from any of them reaches all.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "env.h"
#include "profile.h"
#include "reload.h"
#include "tree.h"

/* An entry of the registry of shared trees. */
typedef struct Share {
  int refs;           /* trees on it (under the lock) */
  unsigned long long id;
  Blueprint *bp;      /* the current version (under the lock) */
  char *name;
  struct Share *next;
} Share;

static Share *shares;
static unsigned long long lastshare;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(char *err, size_t size, const char *msg) {
  if (err != NULL && size > 0)
    snprintf(err, size, "%s", msg);
}

/* A tree handle in env on bp (whose reference it takes), named name. */
static bonsai_tree *newtree(bonsai_env *env, Blueprint *bp, const char *name,
                            Share *share) {
  bonsai_tree *t = bs_malloc(env, sizeof *t);
  if (t == NULL || (t->name = bs_strdup(env, name, strlen(name))) == NULL) {
    if (t != NULL)
      bs_free(env, t, sizeof *t);
    return NULL;
  }
  t->refs = 1;
  t->env = env;
  t->bp = bp;
  t->plan = NULL;
  t->agents = NULL;
  t->prof = NULL;
  t->held = 0;
  t->share = share;
  bs_env_retain(env);
  return t;
}

int bonsai_tree_new(const bonsai_def *def, const char *name, bonsai_tree **out,
                    char *errbuf, size_t errsize) {
  char tmp[BS_ERRSIZE];
  int code;
  Blueprint *bp = bs_compile(def, errbuf ? errbuf : tmp,
                             errbuf ? errsize : sizeof tmp, &code);
  *out = NULL;
  if (bp == NULL)
    return code;
  if ((*out = newtree(def->env, bp, name != NULL ? name : "tree", NULL)) ==
      NULL) {
    bs_bp_release(bp);
    fail(errbuf, errsize, "out of memory");
    return BONSAI_ENOMEM;
  }
  return BONSAI_OK;
}

Blueprint *bs_tree_current(const bonsai_tree *ct) {
  bonsai_tree *t = (bonsai_tree *)ct; /* only its cache of the version */
  Share *s = t->share;
  if (s != NULL && bs_atomic_get(&t->bp->replaced)) {
    pthread_mutex_lock(&lock);
    if (s->bp != t->bp) { /* another environment reloaded it */
      bs_bp_retain(s->bp);
      bs_reload_forget(t);
      bs_bp_release(t->bp);
      t->bp = s->bp;
    }
    pthread_mutex_unlock(&lock);
  }
  return t->bp;
}

int bs_tree_set(bonsai_tree *t, Blueprint *bp, const void *host,
                size_t hostlen) {
  Share *s = t->share;
  if (s != NULL) { /* a version of the share's own, for everyone */
    Blueprint *d = bs_bp_detach(bp, host, hostlen), *old;
    bs_bp_release(bp);
    if (d == NULL)
      return BONSAI_ENOMEM;
    pthread_mutex_lock(&lock);
    old = s->bp;
    s->bp = d;
    bs_atomic_set(&old->replaced, 1);
    bs_bp_release(old);
    pthread_mutex_unlock(&lock);
    bs_tree_current(t);
    return BONSAI_OK;
  }
  bs_reload_forget(t);
  bs_atomic_set(&t->bp->replaced, 1);
  bs_bp_release(t->bp);
  t->bp = bp;
  return BONSAI_OK;
}

int bonsai_tree_reload(bonsai_tree *t, const bonsai_def *def, char *errbuf,
                       size_t errsize) {
  char tmp[BS_ERRSIZE];
  Blueprint *bp;
  int code;
  if (def->env != t->env) {
    fail(errbuf, errsize, "definition from another environment");
    return BONSAI_EARG;
  }
  bp = bs_compile(def, errbuf ? errbuf : tmp, errbuf ? errsize : sizeof tmp,
                  &code);
  if (bp == NULL)
    return code;
  if ((code = bs_tree_set(t, bp, def->host, def->hostlen)) != BONSAI_OK)
    fail(errbuf, errsize, "out of memory");
  return code;
}

int bonsai_tree_set_version(bonsai_tree *t, bonsai_version *v,
                            const void *host, size_t hostlen) {
  if (v == NULL)
    return BONSAI_EARG;
  if (v->env != t->env) {
    bs_bp_release(v);
    return BONSAI_EARG;
  }
  return bs_tree_set(t, v, host, hostlen);
}

int bonsai_tree_adopt(bonsai_tree *t, bonsai_tree *other) {
  Blueprint *bp = bs_tree_current(other);
  if (t->env != other->env)
    return BONSAI_EARG;
  if (bs_tree_current(t) == bp)
    return BONSAI_OK;
  bs_bp_retain(bp);
  return bs_tree_set(t, bp, bp->host, bp->hostlen);
}

/* Ending the hold takes every pass back: a pass lets an agent through one
** hold, not through the next. */
void bonsai_tree_hold(bonsai_tree *t, int on) {
  bonsai_agent *a;
  t->held = on != 0;
  if (!t->held)
    for (a = t->agents; a != NULL; a = a->tnext)
      a->pass = 0;
}

int bonsai_tree_held(const bonsai_tree *t) { return t->held; }

/* Drops a tree's hold on its share; the last tree frees the entry. */
static void unshare(Share *s) {
  Share **p;
  pthread_mutex_lock(&lock);
  if (--s->refs > 0) {
    pthread_mutex_unlock(&lock);
    return;
  }
  for (p = &shares; *p != s; p = &(*p)->next)
    ;
  *p = s->next;
  pthread_mutex_unlock(&lock);
  bs_bp_release(s->bp);
  free(s->name);
  free(s);
}

void bonsai_tree_release(bonsai_tree *t) {
  bonsai_env *env;
  if (t == NULL || --t->refs > 0)
    return;
  env = t->env;
  bs_reload_forget(t);
  bs_prof_free(t);
  bs_bp_release(t->bp);
  if (t->share != NULL)
    unshare(t->share);
  bs_strfree(env, t->name);
  bs_free(env, t, sizeof *t);
  bonsai_env_release(env);
}

int bonsai_tree_share(bonsai_tree *t, const void *host, size_t hostlen,
                      char *handle, size_t size) {
  Share *s = t->share;
  if (s == NULL) {
    Blueprint *d = bs_bp_detach(t->bp, host, hostlen);
    size_t len = strlen(t->name);
    if (d == NULL || (s = malloc(sizeof *s)) == NULL ||
        (s->name = malloc(len + 1)) == NULL) {
      bs_bp_release(d);
      free(s);
      return BONSAI_ENOMEM;
    }
    memcpy(s->name, t->name, len + 1);
    s->refs = 1;
    s->bp = d;
    pthread_mutex_lock(&lock);
    s->id = ++lastshare;
    s->next = shares;
    shares = s;
    pthread_mutex_unlock(&lock);
    /* this tree runs the shared copy from now on (agents switch to it
    ** keeping everything: the two versions are the same) */
    bs_bp_retain(d);
    bs_reload_forget(t);
    bs_atomic_set(&t->bp->replaced, 1);
    bs_bp_release(t->bp);
    t->bp = d;
    t->share = s;
  }
  if (handle != NULL && size > 0)
    snprintf(handle, size, "bonsai-tree:%llu", s->id);
  return BONSAI_OK;
}

int bonsai_tree_shared(bonsai_env *env, const char *handle, bonsai_tree **out,
                       char *errbuf, size_t errsize) {
  unsigned long long id;
  char rest;
  Share *s;
  Blueprint *bp = NULL;
  *out = NULL;
  if (sscanf(handle, "bonsai-tree:%llu%c", &id, &rest) != 1) {
    fail(errbuf, errsize, "not a handle of a shared tree");
    return BONSAI_EARG;
  }
  pthread_mutex_lock(&lock);
  for (s = shares; s != NULL && s->id != id; s = s->next)
    ;
  if (s != NULL) {
    s->refs++;
    bp = s->bp;
    bs_bp_retain(bp);
  }
  pthread_mutex_unlock(&lock);
  if (s == NULL) {
    fail(errbuf, errsize, "no shared tree has this handle (all its trees "
                          "were released)");
    return BONSAI_EARG;
  }
  if (bs_env_cover(env, bp->nnamed) != BONSAI_OK ||
      (*out = newtree(env, bp, s->name, s)) == NULL) {
    bs_bp_release(bp);
    unshare(s);
    fail(errbuf, errsize, "out of memory");
    return BONSAI_ENOMEM;
  }
  return BONSAI_OK;
}

const void *bonsai_tree_host(const bonsai_tree *t, size_t *len,
                             unsigned long long *version) {
  Blueprint *bp = bs_tree_current(t);
  *len = bp->hostlen;
  *version = bp->id;
  return bp->host;
}

unsigned long long bonsai_tree_version_id(const bonsai_tree *t) {
  return bs_tree_current(t)->id;
}

bonsai_env *bonsai_tree_env(const bonsai_tree *t) { return t->env; }

int bonsai_tree_is_shared(const bonsai_tree *t) { return t->share != NULL; }

const char *bonsai_tree_name(const bonsai_tree *t) { return t->name; }

unsigned bonsai_tree_size(const bonsai_tree *t) { return bs_tree_current(t)->n; }

const char *bonsai_tree_node_name(const bonsai_tree *t, unsigned i) {
  const Blueprint *bp = bs_tree_current(t);
  if (i >= bp->n)
    return NULL;
  return (bp->nodes[i].flags & NF_HIDDEN) ? "" : bp->pool + bp->nodes[i].name;
}

size_t bonsai_tree_node_path(const bonsai_tree *t, unsigned i, char *buf,
                             size_t size) {
  const Blueprint *bp = bs_tree_current(t);
  if (i >= bp->n) {
    if (size > 0)
      buf[0] = '\0';
    return 0;
  }
  return bs_bp_path(bp, i, buf, size);
}
