/*
** save.c: an agent's state as bytes (bonsai_agent_save) and back
** (bonsai_agent_restore), in the same or another process, also after the
** tree was reloaded: nodes are matched by path and kind, as a reload does.
** The format is docs/SAVE_FORMAT.md: a header, the records of the nodes
** that matter (running ones, finished children of running parallels, and
** data that lasts while idle), then the agent's own blackboard values.
** Restoring reads untrusted bytes: every read is bounds-checked, the whole
** input is checked before anything changes, and nothing is ever entered.
** A running leaf that keeps state of its own (BONSAI_LEAF_SAVE) writes it
** into its record (SAVE) and gets it back once the state is in place
** (RESTORE).
*/
#include <string.h>

#include "bonsai.h"
#include "error.h"
#include "blackboard.h"
#include "compile.h"
#include "env.h"
#include "events.h"
#include "latent.h"
#include "names.h"
#include "trace.h"
#include "vm.h"

#define MAGIC "BNSA"
#define VERSION 3 /* 2: aborting nodes, waits, queued events; 3: leaves'
                  ** states (LEAFSTATE); reads 1 and 2 */
#define LIVE(s) ((s) == BONSAI_RUNNING || (s) == BONSAI_ABORTING)
#define NOCHILD 0xffffffffu /* a child reference to no child */
#define CHILDREF 0xffu      /* data length mark: a running child's name */
#define LEAFSTATE 0xfeu     /* data length mark: a running leaf's state */

/* Value tags (also those of a host's values, BONSAI_SAVE_HOST); nil only
** for an event's payload. */
enum { TAG_NIL, TAG_FALSE, TAG_TRUE, TAG_INT, TAG_NUM, TAG_STR };

/* {======================================================
** Writing
** ======================================================= */

typedef struct Out {
  void (*write)(void *ud, const void *p, size_t n);
  void *ud;
} Out;

static void put(const Out *o, const void *p, size_t n) { o->write(o->ud, p, n); }

static void put8(const Out *o, unsigned v) {
  unsigned char b = (unsigned char)v;
  put(o, &b, 1);
}

static void put32(const Out *o, uint32_t v) {
  unsigned char b[4];
  int k;
  for (k = 0; k < 4; k++)
    b[k] = (unsigned char)(v >> (8 * k));
  put(o, b, 4);
}

static void put64(const Out *o, uint64_t v) {
  put32(o, (uint32_t)v);
  put32(o, (uint32_t)(v >> 32));
}

static void putnum(const Out *o, double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  put64(o, v);
}

static void putstr(const Out *o, const char *s, size_t n) {
  put32(o, (uint32_t)n);
  put(o, s, n);
}

/* The name of child c, or NOCHILD, for a composite's running child. */
static void putchild(const Out *o, const Blueprint *bp, uint32_t i,
                     uint32_t c) {
  if (c <= i || c >= bp->nodes[i].next || bp->nodes[c].parent != i) {
    put32(o, NOCHILD);
    return;
  }
  putstr(o, bp->pool + bp->nodes[c].name, strlen(bp->pool + bp->nodes[c].name));
}

/* Whether node n's data is the index of a child, saved as the child's
** name (its kind's K_CHILDWORD). */
static int childref(const Node *n) {
  return (bs_kinds[n->kind].flags & K_CHILDWORD) != 0;
}

/* Whether node i is part of the saved state. */
static int saved(const bonsai_agent *a, uint32_t i) {
  const Blueprint *bp = a->bp;
  const Node *n = &bp->nodes[i];
  uint8_t s = a->state[i];
  uint32_t p = n->parent, k;
  if (LIVE(s))
    return 1;
  if ((s == BONSAI_SUCCESS || s == BONSAI_FAILURE) && p != BS_NONE &&
      bp->nodes[p].kind == BONSAI_PARALLEL &&
      a->state[p] == BONSAI_RUNNING)
    return 1;
  if (!(bs_kinds[n->kind].flags & K_LASTING))
    return 0;
  for (k = 0; k < bs_kinds[n->kind].data; k++)
    if (a->state[n->data + k] != 0)
      return 1;
  return 0;
}

/* The bytes a leaf's SAVE writes, gathered (their length comes first). */
typedef struct Buf {
  bonsai_env *env;
  unsigned char *p;
  size_t n, cap;
  int nomem;
} Buf;

static void addbuf(void *ud, const void *p, size_t n) {
  Buf *b = (Buf *)ud;
  if (b->nomem || n == 0)
    return;
  if (n > (size_t)0xffffffffu - b->n) {
    b->nomem = 1;
    return;
  }
  if (b->n + n > b->cap) {
    size_t cap = b->cap * 2 > b->n + n ? b->cap * 2 : b->n + n + 64;
    unsigned char *q = bs_realloc(b->env, b->p, b->cap, cap);
    if (q == NULL) {
      b->nomem = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

/* The state of the running leaf at node i (SAVE), if it keeps one, into
** b (emptied first). BONSAI_OK, BONSAI_EARG (its SAVE failed: recorded)
** or BONSAI_ENOMEM. */
static int leafstate(bonsai_agent *a, uint32_t i, Buf *b) {
  bonsai_call c;
  b->n = 0;
  c.event = BONSAI_EV_SAVE;
  c.write = addbuf;
  c.wud = b;
  c.saved = NULL;
  c.savedlen = 0;
  if (bs_vm_leafstate(a, i, &c) != BONSAI_OK)
    return BONSAI_EARG;
  return b->nomem ? BONSAI_ENOMEM : BONSAI_OK;
}

/* Node i's path, as a string. */
static int putpath(const Out *o, const bonsai_agent *a, uint32_t i) {
  const Blueprint *bp = a->bp;
  char buf[256];
  size_t len = bs_bp_path(bp, i, buf, sizeof buf);
  if (len >= sizeof buf) { /* a long path: measured, then written whole */
    char *big = bs_malloc(a->tree->env, len + 1);
    if (big == NULL)
      return BONSAI_ENOMEM;
    bs_bp_path(bp, i, big, len + 1);
    putstr(o, big, len);
    bs_free(a->tree->env, big, len + 1);
  } else {
    putstr(o, buf, len);
  }
  return BONSAI_OK;
}

/* A node record: path, kind, status, then its data (composites name their
** running child instead of giving its index; a running leaf that keeps a
** state, the state, in b). */
static int putnode(const Out *o, bonsai_agent *a, uint32_t i, Buf *b) {
  const Blueprint *bp = a->bp;
  const Node *n = &bp->nodes[i];
  const uint8_t *d = a->state + n->data;
  if (putpath(o, a, i) != BONSAI_OK)
    return BONSAI_ENOMEM;
  put8(o, n->kind);
  put8(o, a->state[i]);
  if (n->kind == BONSAI_ACTION && b->n > 0) {
    put8(o, LEAFSTATE);
    put32(o, (uint32_t)b->n);
    put(o, b->p, b->n);
  } else if (childref(n)) {
    uint32_t c;
    memcpy(&c, d, 4);
    put8(o, CHILDREF);
    putchild(o, bp, i, c);
  } else if (bs_kinds[n->kind].flags & K_STAMPWORD) {
    uint32_t w; /* 1: it saw the key's latest change (settle re-stamps) */
    memcpy(&w, d, 4);
    w = w != 0 && w == bs_bb_stamp(a->bb, (int)n->a);
    put8(o, 4);
    put(o, &w, 4);
  } else {
    put8(o, bs_kinds[n->kind].data);
    put(o, d, bs_kinds[n->kind].data);
  }
  return BONSAI_OK;
}

static int putvalue(const Out *o, bonsai_value v) {
  switch (v.type) {
  case BONSAI_TNIL: put8(o, TAG_NIL); break;
  case BONSAI_TBOOLEAN: put8(o, v.u.b ? TAG_TRUE : TAG_FALSE); break;
  case BONSAI_TINTEGER: put8(o, TAG_INT); put64(o, (uint64_t)v.u.i); break;
  case BONSAI_TNUMBER: put8(o, TAG_NUM); putnum(o, v.u.n); break;
  case BONSAI_TSTRING: put8(o, TAG_STR); putstr(o, v.u.str.s, v.u.str.len);
                       break;
  default: return -1;
  }
  return 0;
}

/* The node records, each running leaf's state asked first (the leaves'
** callbacks run with the agent busy, protected, with the host's data). */
static int putnodes(const Out *o, bonsai_agent *a, void *leafhost) {
  const Blueprint *bp = a->bp;
  Buf b;
  uint32_t i, count = 0;
  int r = BONSAI_OK;
  uint8_t protect = a->protect;
  void *hostud = a->hostud;
  for (i = 0; i < bp->n; i++)
    count += (uint32_t)saved(a, i);
  put32(o, count);
  b.env = a->tree->env;
  b.p = NULL;
  b.cap = 0;
  b.nomem = 0;
  a->busy = a->protect = 1;
  a->hostud = leafhost;
  for (i = 0; i < bp->n && r == BONSAI_OK; i++)
    if (saved(a, i) && (r = leafstate(a, i, &b)) == BONSAI_OK)
      r = putnode(o, a, i, &b);
  a->busy = 0;
  a->protect = protect;
  a->hostud = hostud;
  if (b.p != NULL)
    bs_free(b.env, b.p, b.cap);
  return r;
}

/* The latent aborts under way (format 2): the nodes that wait (u8 1 and
** the node's path, or u8 0 for the agent), each with what follows (u8
** 1 and the name of the node ticked next, "" for itself, or u8 0 and the
** status it ends with), then the paths of the nodes whose own abort
** callback is latent. */
static int putlatent(const Out *o, const bonsai_agent *a) {
  const Latent *t = a->latent;
  const Blueprint *bp = a->bp;
  uint32_t k;
  put32(o, t != NULL ? t->nw : 0);
  for (k = 0; t != NULL && k < t->nw; k++) {
    const Wait *w = &t->w[k];
    put8(o, w->node != BS_NONE);
    if (w->node != BS_NONE && putpath(o, a, w->node) != BONSAI_OK)
      return BONSAI_ENOMEM;
    put8(o, w->to != BS_NONE);
    if (w->to == BS_NONE)
      put8(o, w->status);
    else if (w->to == w->node || (w->node == BS_NONE && w->to == 0))
      putstr(o, "", 0);
    else
      putstr(o, bp->pool + bp->nodes[w->to].name,
             strlen(bp->pool + bp->nodes[w->to].name));
  }
  put32(o, t != NULL ? t->nl : 0);
  for (k = 0; t != NULL && k < t->nl; k++)
    if (putpath(o, a, t->l[k].node) != BONSAI_OK)
      return BONSAI_ENOMEM;
  return BONSAI_OK;
}

/* The queued events (format 2): each name and payload (a host's through
** save_payload), then how many were dropped. */
static int putevents(const Out *o, bonsai_agent *a,
                     const bonsai_savehost *host) {
  const char *name;
  bonsai_value v;
  unsigned k;
  put32(o, a->events != NULL ? a->events->count : 0);
  for (k = 0; bonsai_agent_queued(a, 0, k, &name, &v); k++) {
    putstr(o, name, strlen(name));
    if (putvalue(o, v) == 0)
      continue;
    if (host == NULL || host->save_payload == NULL) {
      bs_agent_fail(a, BS_NONE, "event '%s': a payload of the host cannot "
                                "be saved", name);
      return BONSAI_EARG;
    }
    put8(o, BONSAI_SAVE_HOST);
    if (host->save_payload(host->ud, a, v.u.handle, o->write, o->ud) !=
        BONSAI_OK) {
      bs_agent_fail(a, BS_NONE, "event '%s': %s", name,
                    host->error != NULL ? host->error(host->ud)
                                        : "cannot be saved");
      return BONSAI_EARG;
    }
  }
  put64(o, bonsai_agent_dropped_events(a));
  return BONSAI_OK;
}

int bonsai_agent_save(bonsai_agent *a, const bonsai_savehost *host,
                      void (*write)(void *ud, const void *p, size_t n),
                      void *ud) {
  const char *name = bonsai_tree_name(a->tree);
  Out o;
  uint32_t count;
  int at, key, r;
  o.write = write;
  o.ud = ud;
  if (a->busy)
    return BONSAI_EBUSY;
  bonsai_agent_clearerr(a);
  put(&o, MAGIC, 4);
  put8(&o, VERSION);
  putstr(&o, name, strlen(name));
  putnum(&o, a->time);
  putnum(&o, a->wake);
  put32(&o, a->serial);
  put8(&o, a->last);
  if ((r = putnodes(&o, a, host != NULL ? host->leafhost : NULL)) !=
      BONSAI_OK)
    return r;
  for (count = 0, at = 0; (at = bs_bb_next(a->bb, at, &key)) >= 0;)
    count++;
  put32(&o, count);
  for (at = 0; (at = bs_bb_next(a->bb, at, &key)) >= 0;) {
    const char *k = bonsai_key_name(a->bb->env, key);
    bonsai_value v = bonsai_bb_get(a->bb, key);
    putstr(&o, k, strlen(k));
    if (putvalue(&o, v) == 0)
      continue;
    if (host == NULL || host->save == NULL) {
      bs_agent_fail(a, BS_NONE, "blackboard key '%s': a value of the host "
                                "cannot be saved", k);
      return BONSAI_EARG;
    }
    put8(&o, BONSAI_SAVE_HOST);
    if (host->save(host->ud, a, key, v.u.handle, write, ud) != BONSAI_OK) {
      bs_agent_fail(a, BS_NONE, "blackboard key '%s': %s", k,
                    host->error != NULL ? host->error(host->ud)
                                        : "cannot be saved");
      return BONSAI_EARG;
    }
  }
  return putlatent(&o, a) != BONSAI_OK ? BONSAI_ENOMEM : putevents(&o, a, host);
}

/* }====================================================== */

/* {======================================================
** Reading
** ======================================================= */

typedef struct In {
  const unsigned char *p;
  size_t n, at;
  int bad;      /* a read went past the end or met a bad value */
  int version;  /* the format read */
  size_t nodes; /* where the node records begin (their count) */
} In;

static const unsigned char *take(In *in, size_t n) {
  const unsigned char *p;
  if (in->bad || n > in->n - in->at) {
    in->bad = 1;
    return NULL;
  }
  p = in->p + in->at;
  in->at += n;
  return p;
}

static unsigned get8(In *in) {
  const unsigned char *p = take(in, 1);
  return p != NULL ? p[0] : 0;
}

static uint32_t get32(In *in) {
  const unsigned char *p = take(in, 4);
  uint32_t v = 0;
  int k;
  if (p != NULL)
    for (k = 3; k >= 0; k--)
      v = (v << 8) | p[k];
  return v;
}

static uint64_t get64(In *in) {
  uint64_t lo = get32(in);
  return lo | ((uint64_t)get32(in) << 32);
}

static double getnum(In *in) {
  uint64_t v = get64(in);
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* A string: its bytes (not terminated) and length; NULL when bad. */
static const char *getstr(In *in, size_t *len) {
  uint32_t n = get32(in);
  *len = n;
  return (const char *)take(in, n);
}

/* The node of bp at path s (len bytes), by names from the top (the hidden
** priority wrapper's children are top-level; its own path is ""), or
** BS_NONE. */
static uint32_t findpath(const Blueprint *bp, const char *s, size_t len) {
  const Node *nd = bp->nodes;
  uint32_t at = BS_NONE, c, first, end;
  size_t k = 0;
  if (len == 0)
    return (nd[0].flags & NF_HIDDEN) ? 0 : BS_NONE;
  for (;;) {
    size_t e = k;
    while (e < len && s[e] != '/')
      e++;
    if (at == BS_NONE) { /* the top: the root, or the wrapper's children */
      first = (nd[0].flags & NF_HIDDEN) ? 1 : 0;
      end = (nd[0].flags & NF_HIDDEN) ? nd[0].next : 1;
    } else {
      first = at + 1;
      end = nd[at].next;
    }
    for (c = first; c < end; c = nd[c].next) {
      const char *name = bp->pool + nd[c].name;
      if (strlen(name) == e - k && memcmp(name, s + k, e - k) == 0)
        break;
    }
    if (c >= end)
      return BS_NONE;
    at = c;
    if (e >= len)
      return at;
    k = e + 1;
  }
}

/* The child of i named s (len bytes), or BS_NONE. */
static uint32_t findchild(const Blueprint *bp, uint32_t i, const char *s,
                          size_t len) {
  uint32_t c;
  for (c = i + 1; c < bp->nodes[i].next; c = bp->nodes[c].next) {
    const char *name = bp->pool + bp->nodes[c].name;
    if (strlen(name) == len && memcmp(name, s, len) == 0)
      return c;
  }
  return BS_NONE;
}

/* A node record as read. */
typedef struct Rec {
  const char *path, *child; /* child: a composite's running child, or NULL */
  size_t len, clen;
  unsigned kind, status, dlen;
  const unsigned char *data; /* dlen bytes; a leaf's state: its n bytes */
  size_t n;
} Rec;

/* Reads one node record into r (in->bad when it is not one). */
static void getrecord(In *in, Rec *r) {
  r->path = getstr(in, &r->len);
  r->child = NULL;
  r->clen = r->n = 0;
  r->data = NULL;
  r->kind = get8(in);
  r->status = get8(in);
  r->dlen = get8(in);
  if (r->dlen == CHILDREF && !in->bad) { /* a composite's running child */
    uint32_t n = get32(in);
    if (n != NOCHILD) {
      in->at -= 4;
      r->child = getstr(in, &r->clen);
    }
  } else if (r->dlen == LEAFSTATE && in->version >= 3) { /* a leaf's state */
    r->n = get32(in);
    r->data = take(in, r->n);
    if (r->kind != BONSAI_ACTION || r->status != BONSAI_RUNNING)
      in->bad = 1;
  } else {
    r->data = take(in, r->dlen);
  }
  if (r->kind >= BONSAI_NKINDS ||
      r->status > (in->version >= 2 ? BONSAI_ABORTING : BONSAI_SKIPPED) ||
      (r->dlen > BONSAI_CONTROL_MEMORY && r->dlen != CHILDREF &&
       (r->dlen != LEAFSTATE || in->version < 3)))
    in->bad = 1;
}

/* One node record, applied to state ns when 'apply' (else only read). */
static void getnode(In *in, const Blueprint *bp, uint8_t *ns, int apply) {
  Rec r;
  size_t len, clen;
  const char *path, *child;
  unsigned kind, status, dlen;
  const unsigned char *data;
  uint32_t i, p;
  getrecord(in, &r);
  if (in->bad || !apply)
    return;
  path = r.path, len = r.len, child = r.child, clen = r.clen;
  kind = r.kind, status = r.status, data = r.data;
  dlen = r.dlen == LEAFSTATE ? 0 : r.dlen; /* (given at RESTORE) */
  i = findpath(bp, path, len);
  if (i == BS_NONE || bp->nodes[i].kind != kind)
    return; /* gone, or another kind now */
  if (dlen != CHILDREF && dlen != bs_kinds[kind].data)
    return;
  if (dlen == CHILDREF && !childref(&bp->nodes[i]))
    return;
  p = bp->nodes[i].parent;
  if (LIVE(status)) { /* kept when its parent runs or aborts (a priority
                     ** wrapper is made to run afterwards) */
    if (p != BS_NONE && !(bp->nodes[p].flags & NF_HIDDEN) && !LIVE(ns[p]))
      return;
    ns[i] = (uint8_t)status;
  } else if (status == BONSAI_SUCCESS || status == BONSAI_FAILURE) {
    if (p != BS_NONE && bp->nodes[p].kind == BONSAI_PARALLEL &&
        ns[p] == BONSAI_RUNNING)
      ns[i] = (uint8_t)status;
  }
  if (!LIVE(ns[i]) && !(bs_kinds[kind].flags & K_LASTING))
    return; /* its data matters only while it runs */
  if (childref(&bp->nodes[i])) {
    uint32_t c = child != NULL ? findchild(bp, i, child, clen) : BS_NONE;
    if (c == BS_NONE && (bp->nodes[i].flags & NF_MEMORY))
      c = i + 1; /* starts again from its first child */
    memcpy(ns + bp->nodes[i].data, &c, 4);
  } else if (dlen > 0 && data != NULL) {
    memcpy(ns + bp->nodes[i].data, data, dlen);
  }
}

/* One blackboard value: checked, and written when bb is not NULL. */
static int getvalue(In *in, bonsai_agent *a, const bonsai_savehost *host,
                    bonsai_bb *bb) {
  size_t klen, slen;
  const char *k = getstr(in, &klen), *s;
  unsigned tag = get8(in);
  bonsai_value v;
  int key;
  v.type = BONSAI_TNIL;
  v.u.i = 0;
  switch (tag) {
  case TAG_FALSE: case TAG_TRUE:
    v.type = BONSAI_TBOOLEAN;
    v.u.b = tag == TAG_TRUE;
    break;
  case TAG_INT:
    v.type = BONSAI_TINTEGER;
    v.u.i = (long long)get64(in);
    break;
  case TAG_NUM:
    v.type = BONSAI_TNUMBER;
    v.u.n = getnum(in);
    break;
  case TAG_STR:
    s = getstr(in, &slen);
    v.type = BONSAI_TSTRING;
    v.u.str.s = s;
    v.u.str.len = slen;
    break;
  case BONSAI_SAVE_HOST: {
    size_t used = 0;
    if (in->bad || host == NULL || host->load == NULL)
      return -1;
    key = bb != NULL ? bonsai_key(a->bb->env, k, klen) : -1;
    if (bb != NULL && key < 0)
      return -1;
    if (host->load(host->ud, a, key, in->p + in->at, in->n - in->at,
                   &used) != BONSAI_OK || used > in->n - in->at)
      return -1;
    in->at += used;
    return 0;
  }
  default:
    in->bad = 1;
  }
  if (in->bad || memchr(k, '\0', klen) != NULL || klen == 0)
    return -1;
  if (bb == NULL)
    return 0;
  if ((key = bonsai_key(bb->env, k, klen)) < 0)
    return -1;
  return bonsai_bb_set(bb, key, v) == BONSAI_OK ? 0 : -1;
}

/* The latent aborts of a format 2 save: read (and checked), and when
** 'apply' set up against the restored state ns: each wait whose node is
** running (the agent's: whose root is aborting), each aborting node's own
** latent abort, marked final (a restore is immediate: its next call is
** its last). -1 when out of memory. */
static int getlatent(In *in, bonsai_agent *a, const uint8_t *ns, int apply) {
  const Blueprint *bp = a->bp;
  uint32_t k, count = get32(in);
  for (k = 0; k < count && !in->bad; k++) {
    size_t len = 0, clen = 0;
    unsigned where = get8(in), then, status = 0;
    const char *path = where == 1 ? getstr(in, &len) : NULL, *child = NULL;
    uint32_t w, to = BS_NONE;
    if ((then = get8(in)) == 1)
      child = getstr(in, &clen);
    else if ((status = get8(in)) < BONSAI_SUCCESS || status > BONSAI_SKIPPED)
      in->bad = 1;
    if (where > 1 || then > 1)
      in->bad = 1;
    if (in->bad || !apply)
      continue;
    w = where ? findpath(bp, path, len) : BS_NONE;
    if (where ? w == BS_NONE || ns[w] != BONSAI_RUNNING
              : ns[0] != BONSAI_ABORTING)
      continue; /* it is gone */
    if (then == 1 && clen > 0 && w != BS_NONE)
      to = findchild(bp, w, child, clen);
    if (then == 1 && to == BS_NONE) /* itself (or its child is gone) */
      to = w != BS_NONE ? w : 0;
    if (bs_wait_set(a, w, to, (int)status) != BONSAI_OK)
      return -1;
  }
  count = get32(in);
  for (k = 0; k < count && !in->bad; k++) {
    size_t len;
    const char *path = getstr(in, &len);
    uint32_t i;
    if (in->bad || !apply)
      continue;
    i = findpath(bp, path, len);
    if (i != BS_NONE && ns[i] == BONSAI_ABORTING) {
      Aborting *x = bs_aborting_add(a, i);
      if (x == NULL)
        return -1;
      x->final = 1;
    }
  }
  return 0;
}

/* After a restore: every aborting action has its latent abort (final),
** and the node above an aborting one that waits for none (its wait was
** lost with its path) waits for it and is then ticked again (the agent,
** above an aborting root, ends its tick aborted). -1 when out of memory. */
static int settle_latent(bonsai_agent *a) {
  const Node *nd = a->bp->nodes;
  const uint8_t *st = a->state;
  uint32_t i;
  for (i = 0; i < a->bp->n; i++) {
    uint32_t p = nd[i].parent;
    Aborting *x;
    if (st[i] != BONSAI_ABORTING)
      continue;
    if (nd[i].kind == BONSAI_ACTION && bs_aborting(a, i) == NULL) {
      if ((x = bs_aborting_add(a, i)) == NULL)
        return -1;
      x->final = 1;
    }
    if (p == BS_NONE ? bs_wait(a, BS_NONE) == NULL
                     : st[p] == BONSAI_RUNNING && bs_wait(a, p) == NULL) {
      if (bs_wait_set(a, p, p, BONSAI_ABORTED) != BONSAI_OK)
        return -1;
    }
  }
  return 0;
}

/* One payload of a queued event (format 2) into *v: checked, and a host's
** read when 'apply'. */
static int getpayload(In *in, bonsai_agent *a, const bonsai_savehost *host,
                      bonsai_value *v, int apply) {
  size_t slen;
  unsigned tag = get8(in);
  v->type = BONSAI_TNIL;
  v->u.i = 0;
  switch (tag) {
  case TAG_NIL: break;
  case TAG_FALSE: case TAG_TRUE:
    v->type = BONSAI_TBOOLEAN;
    v->u.b = tag == TAG_TRUE;
    break;
  case TAG_INT:
    v->type = BONSAI_TINTEGER;
    v->u.i = (long long)get64(in);
    break;
  case TAG_NUM:
    v->type = BONSAI_TNUMBER;
    v->u.n = getnum(in);
    break;
  case TAG_STR:
    v->u.str.s = getstr(in, &slen);
    v->u.str.len = slen;
    v->type = BONSAI_TSTRING;
    break;
  case BONSAI_SAVE_HOST: {
    size_t used = 0;
    long long h = 0;
    if (in->bad || host == NULL || host->load_payload == NULL ||
        host->load_payload(host->ud, a, in->p + in->at, in->n - in->at,
                           &used, apply ? &h : NULL) != BONSAI_OK ||
        used > in->n - in->at)
      return -1;
    in->at += used;
    v->type = BONSAI_THANDLE;
    v->u.handle = h;
    break;
  }
  default:
    in->bad = 1;
  }
  return in->bad ? -1 : 0;
}

/* The queued events of a format 2 save, and the count of those dropped:
** checked, or with 'apply' put in the agent's queue (replacing what it
** held; more than it holds drops the oldest, counted). -1 when bad (or
** out of memory, in->bad unset). */
static int getevents(In *in, bonsai_agent *a, const bonsai_savehost *host,
                     int apply) {
  uint32_t k, count = get32(in);
  unsigned long long d0, dropped;
  if (apply)
    bs_events_empty(a);
  d0 = bonsai_agent_dropped_events(a);
  for (k = 0; k < count && !in->bad; k++) {
    size_t len;
    const char *name = getstr(in, &len);
    bonsai_value v;
    int id;
    if (!in->bad && (len == 0 || len > BS_MAXNAME ||
                     memchr(name, '\0', len) != NULL))
      in->bad = 1;
    if (getpayload(in, a, host, &v, apply) != 0) {
      in->bad = 1;
      return -1;
    }
    if (!apply)
      continue;
    if ((id = bs_name_id(BS_EVENTS, name, len, 1)) < 0 ||
        bs_events_push(a, (uint32_t)id, v) != BONSAI_OK)
      return -1;
  }
  dropped = get64(in);
  if (in->bad)
    return -1;
  if (apply && a->events == NULL && dropped > 0 &&
      bonsai_agent_queue(a, 0x1000000u) != BONSAI_OK) /* (to have one) */
    return -1;
  if (apply && a->events != NULL) {
    if (a->events->max == 0x1000000u)
      a->events->max = BONSAI_EVENTS;
    a->events->dropped = dropped + (a->events->dropped - d0);
  }
  return 0;
}

/* Reads the whole input: checks it (apply == 0), or fills ns and the
** blackboard (apply == 1). Returns 0, or -1 with a message in a's error. */
static int readall(bonsai_agent *a, const bonsai_savehost *host, In *in,
                   uint8_t *ns, int apply) {
  size_t len;
  const char *tree;
  uint32_t k, count;
  const char *name = bonsai_tree_name(a->tree);
  unsigned version;
  in->at = 0;
  in->bad = 0;
  if (in->n < 5 || memcmp(in->p, MAGIC, 4) != 0) {
    bs_agent_fail(a, BS_NONE, "not a saved agent");
    return -1;
  }
  in->at = 4;
  if ((version = get8(in)) < 1 || version > VERSION) {
    bs_agent_fail(a, BS_NONE, "saved in format %u; this Bonsai reads "
                              "formats 1 to %d", version, VERSION);
    return -1;
  }
  in->version = (int)version;
  tree = getstr(in, &len);
  if (!in->bad && (len != strlen(name) || memcmp(tree, name, len) != 0)) {
    bs_agent_fail(a, BS_NONE, "saved from tree '%.*s', not '%s'",
                  (int)(len > 64 ? 64 : len), tree, name);
    return -1;
  }
  if (apply) {
    a->time = getnum(in);
    a->wake = getnum(in);
    a->serial = get32(in);
    a->last = (uint8_t)get8(in);
  } else {
    double t = getnum(in), w = getnum(in);
    (void)get32(in);
    if (!(t >= 0) || !(w >= 0) || get8(in) > BONSAI_SKIPPED)
      in->bad = 1;
  }
  in->nodes = in->at;
  count = get32(in);
  for (k = 0; k < count && !in->bad; k++)
    getnode(in, a->bp, ns, apply);
  count = get32(in);
  for (k = 0; k < count && !in->bad; k++)
    if (getvalue(in, a, host, apply ? a->bb : NULL) != 0) {
      if (!in->bad && apply) {
        bs_agent_fail(a, BS_NONE, "out of memory");
        return -1;
      }
      in->bad = 1;
    }
  if (version >= 2 && !in->bad &&
      (getlatent(in, a, ns, apply) != 0 || getevents(in, a, host, apply) != 0)
      && !in->bad) {
    bs_agent_fail(a, BS_NONE, "out of memory");
    return -1;
  }
  if (in->bad || in->at != in->n) {
    bs_agent_fail(a, BS_NONE, "corrupted save data (at byte %lu of %lu)",
                  (unsigned long)in->at, (unsigned long)in->n);
    return -1;
  }
  return 0;
}

/* After the records and the blackboard: a running priority wrapper above
** a running root, the counts of running parallels, the stamps of nodes
** that had seen their key's latest change (K_STAMPWORD) taken again from
** the restored blackboard. */
static void settle(const Blueprint *bp, uint8_t *ns, const bonsai_bb *bb) {
  const Node *nd = bp->nodes;
  uint32_t i, c;
  if ((nd[0].flags & NF_HIDDEN) && ns[0] != BONSAI_RUNNING) {
    for (c = 1; c < nd[0].next; c = nd[c].next)
      if (ns[c] == BONSAI_RUNNING) {
        ns[0] = BONSAI_RUNNING;
        memcpy(ns + nd[0].data, &c, 4);
        break;
      }
  }
  for (i = 0; i < bp->n; i++) {
    uint32_t *w = (uint32_t *)(ns + nd[i].data);
    if (nd[i].kind == BONSAI_PARALLEL && ns[i] == BONSAI_RUNNING)
      bs_vm_parallel_settle(bp, ns, i);
    else if ((bs_kinds[nd[i].kind].flags & K_STAMPWORD) && *w != 0)
      *w = bs_bb_stamp(bb, (int)nd[i].a);
  }
}

/* Once the state is in place: RESTORE for each running leaf that keeps a
** state, with its record's (the first for its node), or none. The
** callbacks run with the agent busy, protected, with the host's data.
** BONSAI_OK, BONSAI_ELEAF (one failed: recorded) or BONSAI_ENOMEM. */
static int restoreleaves(bonsai_agent *a, In *in, void *leafhost) {
  const Blueprint *bp = a->bp;
  uint32_t i, k, count, running = 0;
  uint8_t *done, protect = a->protect;
  void *hostud = a->hostud;
  bonsai_call c;
  int r = BONSAI_OK;
  for (i = 0; i < bp->n; i++)
    running += bp->nodes[i].kind == BONSAI_ACTION &&
               a->state[i] == BONSAI_RUNNING;
  if (running == 0)
    return BONSAI_OK;
  if ((done = bs_malloc(a->tree->env, bp->n)) == NULL)
    return BONSAI_ENOMEM;
  memset(done, 0, bp->n);
  a->busy = a->protect = 1;
  a->hostud = leafhost;
  c.event = BONSAI_EV_RESTORE;
  c.write = NULL;
  c.wud = NULL;
  in->at = in->nodes; /* the records again (checked already) */
  count = get32(in);
  for (k = 0; k < count && r == BONSAI_OK; k++) {
    Rec rec;
    getrecord(in, &rec);
    if (rec.dlen != LEAFSTATE || rec.n == 0 ||
        (i = findpath(bp, rec.path, rec.len)) == BS_NONE ||
        bp->nodes[i].kind != BONSAI_ACTION || done[i])
      continue;
    done[i] = 1;
    c.saved = rec.data;
    c.savedlen = rec.n;
    if (bs_vm_leafstate(a, i, &c) != BONSAI_OK)
      r = BONSAI_ELEAF;
  }
  c.saved = NULL;
  c.savedlen = 0;
  for (i = 0; i < bp->n && r == BONSAI_OK; i++)
    if (!done[i] && bs_vm_leafstate(a, i, &c) != BONSAI_OK)
      r = BONSAI_ELEAF;
  a->busy = 0;
  a->protect = protect;
  a->hostud = hostud;
  bs_free(a->tree->env, done, bp->n);
  return r;
}

int bonsai_agent_restore(bonsai_agent *a, const void *data, size_t len,
                         const bonsai_savehost *host) {
  In in;
  int r;
  if (a->busy)
    return BONSAI_EBUSY;
  bonsai_agent_clearerr(a);
  if (LIVE(a->state[0])) {
    bs_agent_fail(a, BS_NONE, "restore into an agent that is running");
    return BONSAI_EARG;
  }
  in.p = (const unsigned char *)data;
  in.n = len;
  if (readall(a, host, &in, NULL, 0) != 0) /* check everything first */
    return BONSAI_EARG;
  memset(a->state, 0, a->bp->statsize + a->bp->datasize);
  r = readall(a, host, &in, a->state, 1);
  settle(a->bp, a->state, a->bb);
  if (r == 0 && settle_latent(a) != 0) {
    bs_agent_fail(a, BS_NONE, "out of memory");
    r = -1;
  }
  a->resume = 0;
  a->seen = 0;
  if (a->trace != NULL) /* the whole state changed, as after a reset */
    bs_trace_mark(a, BONSAI_TRACE_RESET, BS_NONE, NULL);
  if (r != 0)
    return BONSAI_ENOMEM;
  return restoreleaves(a, &in, host != NULL ? host->leafhost : NULL);
}

/* }====================================================== */
