/*
** def.c: building tree definitions node by node (bonsai_def_*). Nodes arrive
** in pre-order, so the compiler finds them already laid out; this file only
** records them and their parameters, remembering the first error (with the
** node's path) for bonsai_tree_new to report.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bonsai.h"
#include "def.h"
#include "env.h"

/*
** {======================================================
** Definitions
** =======================================================
*/

bonsai_def *bonsai_def_new(bonsai_env *env) {
  bonsai_def *d = bs_malloc(env, sizeof *d);
  if (d == NULL)
    return NULL;
  memset(d, 0, sizeof *d);
  d->env = env;
  d->open = BS_NONE;
  d->max = BS_DEFMAXNODES;
  bs_env_retain(env);
  return d;
}

void bonsai_def_free(bonsai_def *d) {
  bonsai_env *env;
  if (d == NULL)
    return;
  env = d->env;
  bs_free(env, d->nodes, d->cap * sizeof *d->nodes);
  bs_free(env, d->strs, d->capstrs);
  bs_free(env, d->conds, d->capconds * sizeof *d->conds);
  bs_free(env, d->texts, d->captexts * sizeof *d->texts);
  bs_free(env, d, sizeof *d);
  bonsai_env_release(env);
}

int bonsai_def_max_nodes(bonsai_def *d, unsigned max) {
  if (max < 1 || max > BS_MAXNODES)
    return BONSAI_EARG;
  d->max = max;
  return BONSAI_OK;
}

void bonsai_def_host(bonsai_def *d, const void *bytes, size_t len) {
  d->host = bytes;
  d->hostlen = len;
}

const char *bonsai_def_errmsg(const bonsai_def *d) {
  return d->err[0] ? d->err : NULL;
}

/* }====================================================== */

/*
** {======================================================
** Paths of definition nodes
** =======================================================
*/

/* Name of definition node i as a path component, in buf. */
static const char *defname(const bonsai_def *d, uint32_t i, char *buf,
                           size_t size) {
  const DefNode *n = &d->nodes[i];
  if (n->name != BS_NONE)
    return d->strs + n->name;
  if (n->leafname != BS_NONE)
    return d->strs + n->leafname;
  if (n->parent == BS_NONE)
    return bs_kinds[n->kind].name;
  if (d->nodes[n->parent].kind == BONSAI_PRIORITY) {
    if (n->place == d->nodes[n->parent].nchild)
      return bs_kinds[n->kind].name; /* the tree's own root */
    snprintf(buf, size, "priority[%u]", (unsigned)n->place);
    return buf;
  }
  snprintf(buf, size, "%s[%u]", bs_kinds[n->kind].name, (unsigned)n->place);
  return buf;
}

/* Writes node i's path into buf, dropping its first 'skip' characters and
** writing the rest from buf[at] (at most size - 1 - at of them); returns
** the full length. Walks up twice: to measure, then to write from the
** end, the priority wrapper left out. */
static size_t writepath(const bonsai_def *d, uint32_t i, char *buf,
                        size_t size, size_t skip, size_t at) {
  char tmp[48];
  size_t len = 0, end;
  uint32_t j;
  for (j = i; j != BS_NONE; j = d->nodes[j].parent)
    if (d->nodes[j].kind != BONSAI_PRIORITY)
      len += strlen(defname(d, j, tmp, sizeof tmp)) + (len > 0);
  if (buf == NULL || size == 0)
    return len;
  end = len;
  for (j = i; j != BS_NONE; j = d->nodes[j].parent) {
    const char *s;
    size_t k;
    if (d->nodes[j].kind == BONSAI_PRIORITY)
      continue;
    s = defname(d, j, tmp, sizeof tmp);
    if (end < len) { /* a separator before what was written */
      end--;
      if (end >= skip && at + end - skip < size - 1)
        buf[at + end - skip] = '/';
    }
    k = strlen(s);
    end -= k;
    for (; k > 0; k--)
      if (end + k - 1 >= skip && at + end + k - 1 - skip < size - 1)
        buf[at + end + k - 1 - skip] = s[k - 1];
  }
  len -= skip;
  buf[at + len < size - 1 ? at + len : size - 1] = '\0';
  return len + skip;
}

size_t bs_def_path(const bonsai_def *d, uint32_t i, char *buf, size_t size) {
  return writepath(d, i, buf, size, 0, 0);
}

/* As bs_def_path, but a path too long for buf keeps its end, after
** "...". */
static size_t pathtail(const bonsai_def *d, uint32_t i, char *buf,
                       size_t size) {
  size_t len = writepath(d, i, NULL, 0, 0, 0);
  if (len < size || size < 8)
    return writepath(d, i, buf, size, 0, 0);
  memcpy(buf, "...", 3); /* keep the end: the failing node */
  writepath(d, i, buf, size, len - (size - 4), 3);
  return size - 1;
}

unsigned bonsai_def_open(const bonsai_def *d) { return d->open; }

void bs_def_vmessage(const bonsai_def *d, uint32_t i, char *buf, size_t size,
                     const char *fmt, va_list ap) {
  size_t len = 0;
  if (size == 0)
    return;
  buf[0] = '\0';
  if (i != BS_NONE) {
    pathtail(d, i, buf, size / 2);
    len = strlen(buf);
    if (len > 0 && len + 2 < size) {
      memcpy(buf + len, ": ", 3);
      len += 2;
    }
  }
  vsnprintf(buf + len, size - len, fmt, ap);
}

size_t bonsai_def_node_path(const bonsai_def *d, unsigned i, char *buf,
                            size_t size) {
  if (i >= d->n) {
    if (buf != NULL && size > 0)
      buf[0] = '\0';
    return 0;
  }
  return writepath(d, i, buf, size, 0, 0);
}

/* }====================================================== */

/*
** {======================================================
** Nodes
** =======================================================
*/

/* Records the first error, prefixed with node i's path. */
static int deferror(bonsai_def *d, uint32_t i, const char *fmt, ...) {
  va_list ap;
  if (d->err[0] != '\0')
    return BONSAI_EDEF;
  va_start(ap, fmt);
  bs_def_vmessage(d, i, d->err, sizeof d->err, fmt, ap);
  va_end(ap);
  return BONSAI_EDEF;
}

/* Records running out of memory at node i. */
static int nomemory(bonsai_def *d, uint32_t i) {
  d->nomem = 1;
  return deferror(d, i, "out of memory");
}

/* Copies s into the definition's string buffer; returns its offset. */
static uint32_t addstr(bonsai_def *d, const char *s) {
  size_t len = strlen(s) + 1;
  uint32_t at;
  if (d->nstrs + len > d->capstrs) {
    size_t ncap = d->capstrs ? d->capstrs : 256;
    char *ns;
    while (d->nstrs + len > ncap)
      ncap *= 2;
    ns = bs_realloc(d->env, d->strs, d->capstrs, ncap);
    if (ns == NULL)
      return BS_NONE;
    d->strs = ns;
    d->capstrs = ncap;
  }
  at = (uint32_t)d->nstrs;
  memcpy(d->strs + at, s, len);
  d->nstrs += len;
  return at;
}

static int isleaf(int kind) {
  return kind >= 0 && kind < BONSAI_NKINDS && bs_kinds[kind].cls == KC_LEAF;
}

/* Appends a node under the open one; returns its index or BS_NONE. */
static uint32_t addnode(bonsai_def *d, int kind, const char *name) {
  DefNode *n;
  if (d->err[0] != '\0')
    return BS_NONE;
  if (kind < 0 || kind >= BONSAI_NKINDS) {
    deferror(d, d->open, "unknown node kind %d", kind);
    return BS_NONE;
  }
  if (d->open == BS_NONE && d->n > 0) {
    deferror(d, BS_NONE, "a tree has one root");
    return BS_NONE;
  }
  if (d->n >= d->max) {
    deferror(d, d->open, "more than %u nodes (raise the limit: max_nodes)",
             (unsigned)d->max);
    return BS_NONE;
  }
  if (name != NULL && strlen(name) > BS_MAXNAME) {
    deferror(d, d->open, "a name is longer than %u bytes",
             (unsigned)BS_MAXNAME);
    return BS_NONE;
  }
  if (d->n == d->cap) {
    uint32_t ncap = d->cap ? d->cap * 2 : 16;
    DefNode *nn = bs_realloc(d->env, d->nodes, d->cap * sizeof *nn,
                             (size_t)ncap * sizeof *nn);
    if (nn == NULL) {
      nomemory(d, d->open);
      return BS_NONE;
    }
    d->nodes = nn;
    d->cap = ncap;
  }
  n = &d->nodes[d->n];
  memset(n, 0, sizeof *n);
  n->kind = (uint8_t)kind;
  n->parent = d->open;
  n->place = d->open == BS_NONE ? 1 : ++d->nodes[d->open].nchild;
  n->name = BS_NONE;
  n->leafname = BS_NONE;
  n->key = n->vkey = n->event = BS_NONE;
  n->when = n->texts = BS_NONE;
  n->ctl = (uint8_t)((d->open == BS_NONE ? 0 : d->nodes[d->open].ctl) +
                     (kind == BONSAI_CONTROL));
  if (n->ctl > BONSAI_MAXCONTROL) {
    deferror(d, d->open, "control nodes nested more than %d deep",
             BONSAI_MAXCONTROL);
    return BS_NONE;
  }
  d->n++;
  if (name != NULL && (n->name = addstr(d, name)) == BS_NONE) {
    nomemory(d, d->n - 1);
    return BS_NONE;
  }
  return d->n - 1;
}

int bonsai_def_begin(bonsai_def *d, int kind, const char *name) {
  uint32_t i;
  if (kind >= 0 && isleaf(kind))
    return deferror(d, d->open, "'%s' is a leaf", bs_kinds[kind].name);
  if (kind == BONSAI_CONTROL)
    return deferror(d, d->open, "a control node needs its callbacks "
                                "(bonsai_def_control)");
  if ((i = addnode(d, kind, name)) == BS_NONE)
    return BONSAI_EDEF;
  d->open = i;
  return BONSAI_OK;
}

int bonsai_def_end(bonsai_def *d) {
  if (d->err[0] != '\0')
    return BONSAI_EDEF;
  if (d->open == BS_NONE)
    return deferror(d, BS_NONE, "bonsai_def_end without an open node");
  d->open = d->nodes[d->open].parent;
  return BONSAI_OK;
}

int bonsai_def_leaf(bonsai_def *d, int kind, const char *name,
                    const char *leaf, const void *args) {
  uint32_t i;
  int byname = kind == BONSAI_ACTION || kind == BONSAI_CONDITION;
  if (kind < 0 || !isleaf(kind))
    return deferror(d, d->open, "'%s' is not a leaf",
                    kind < 0 || kind >= BONSAI_NKINDS ? "?"
                                                      : bs_kinds[kind].name);
  if (byname && (leaf == NULL || *leaf == '\0'))
    return deferror(d, d->open, "a leaf needs a registered name");
  if (leaf != NULL && strlen(leaf) > BS_MAXNAME)
    return deferror(d, d->open, "a leaf name is longer than %u bytes",
                    (unsigned)BS_MAXNAME);
  if ((i = addnode(d, kind, name)) == BS_NONE)
    return BONSAI_EDEF;
  d->nodes[i].args = args;
  if (leaf != NULL && (d->nodes[i].leafname = addstr(d, leaf)) == BS_NONE)
    return nomemory(d, i);
  return BONSAI_OK;
}

int bonsai_def_cleaf(bonsai_def *d, int kind, const char *name,
                     bonsai_leaf_fn fn, void *data, unsigned flags,
                     const void *args) {
  uint32_t i;
  if (kind != BONSAI_ACTION && kind != BONSAI_CONDITION)
    return deferror(d, d->open, "a function leaf is an action or a condition");
  if (fn == NULL)
    return deferror(d, d->open, "a leaf needs a function");
  if ((i = addnode(d, kind, name)) == BS_NONE)
    return BONSAI_EDEF;
  d->nodes[i].leaf.fn = fn;
  d->nodes[i].leaf.data = data;
  d->nodes[i].leaf.flags = flags;
  d->nodes[i].args = args;
  return BONSAI_OK;
}

int bonsai_def_control(bonsai_def *d, const char *name, bonsai_leaf_fn fn,
                       void *data, unsigned flags, const void *args) {
  uint32_t i;
  if (fn == NULL)
    return deferror(d, d->open, "a control node needs a function");
  if ((i = addnode(d, BONSAI_CONTROL, name)) == BS_NONE)
    return BONSAI_EDEF;
  d->nodes[i].leaf.fn = fn;
  d->nodes[i].leaf.data = data;
  d->nodes[i].leaf.flags = flags & (BONSAI_LEAF_ENTER | BONSAI_LEAF_ABORT);
  d->nodes[i].args = args;
  d->open = i;
  return BONSAI_OK;
}

int bonsai_def_utility(bonsai_def *d, bonsai_leaf_fn fn, void *data) {
  if (d->err[0] != '\0')
    return BONSAI_EDEF;
  if (d->n == 0)
    return deferror(d, BS_NONE, "a utility before any node");
  if (fn == NULL)
    return deferror(d, d->n - 1, "a utility needs a function");
  d->nodes[d->n - 1].util.fn = fn;
  d->nodes[d->n - 1].util.data = data;
  return BONSAI_OK;
}

/* The condition 'which' of the node added last, emptied (its block made
** on first use), or NULL after recording the error. */
static DefCond *condof(bonsai_def *d, int which) {
  DefNode *n;
  uint32_t k;
  if (d->err[0] != '\0')
    return NULL;
  if (d->n == 0) {
    deferror(d, BS_NONE, "a condition before any node");
    return NULL;
  }
  if (which < 0 || which >= BONSAI_NCONDS) {
    deferror(d, d->n - 1, "unknown condition %d", which);
    return NULL;
  }
  n = &d->nodes[d->n - 1];
  if (n->when == BS_NONE) { /* its block */
    if (d->nconds == d->capconds) {
      uint32_t ncap = d->capconds ? d->capconds * 2 : 4;
      DefCond(*nc)[BONSAI_NCONDS] =
          bs_realloc(d->env, d->conds, d->capconds * sizeof *nc,
                     (size_t)ncap * sizeof *nc);
      if (nc == NULL) {
        nomemory(d, d->n - 1);
        return NULL;
      }
      d->conds = nc;
      d->capconds = ncap;
    }
    for (k = 0; k < BONSAI_NCONDS; k++) {
      memset(&d->conds[d->nconds][k], 0, sizeof(DefCond));
      d->conds[d->nconds][k].key = d->conds[d->nconds][k].vkey = BS_NONE;
    }
    n->when = d->nconds++;
  }
  memset(&d->conds[n->when][which], 0, sizeof(DefCond));
  d->conds[n->when][which].key = d->conds[n->when][which].vkey = BS_NONE;
  return &d->conds[n->when][which];
}

int bonsai_def_when(bonsai_def *d, int which, bonsai_leaf_fn fn,
                    void *data) {
  DefCond *c;
  if (fn == NULL && d->err[0] == '\0' && d->n > 0 && which >= 0 &&
      which < BONSAI_NCONDS)
    return deferror(d, d->n - 1, "'%s' needs a function",
                    bonsai_cond_name(which));
  if ((c = condof(d, which)) == NULL)
    return d->nomem ? BONSAI_ENOMEM : BONSAI_EDEF;
  c->leaf.fn = fn;
  c->leaf.data = data;
  return BONSAI_OK;
}

int bonsai_def_when_check(bonsai_def *d, int which, const char *key,
                          const char *op, bonsai_value v) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  const char *s = v.type == BONSAI_TSTRING ? v.u.str.s : NULL;
  DefCond *c;
  unsigned i;
  if (which > BONSAI_RUN_WHILE && d->err[0] == '\0' && d->n > 0)
    return deferror(d, d->n - 1, "'%s' runs a function, not a check",
                    bonsai_cond_name(which));
  if ((c = condof(d, which)) == NULL)
    return d->nomem ? BONSAI_ENOMEM : BONSAI_EDEF;
  for (i = 0; op != NULL && i < 6; i++)
    if (strcmp(op, ops[i]) == 0)
      break;
  if (key == NULL || *key == '\0' || strlen(key) > BS_MAXNAME)
    return deferror(d, d->n - 1, "'%s': a check needs a key name",
                    bonsai_cond_name(which));
  if (op == NULL || i == 6)
    return deferror(d, d->n - 1, "'%s': the operator must be one of == ~= "
                    "< <= > >=", bonsai_cond_name(which));
  if (s != NULL && (memchr(s, '\0', v.u.str.len) != NULL ||
                    v.u.str.len > BS_MAXNAME))
    return deferror(d, d->n - 1, "'%s': a bad string", bonsai_cond_name(which));
  if (s == NULL && v.type != BONSAI_TNUMBER && v.type != BONSAI_TINTEGER &&
      v.type != BONSAI_TBOOLEAN && v.type != BONSAI_TNIL)
    return deferror(d, d->n - 1, "'%s': the value must be a number, string, "
                    "boolean or nil", bonsai_cond_name(which));
  if (i >= 2 && s == NULL && v.type != BONSAI_TNUMBER &&
      v.type != BONSAI_TINTEGER)
    return deferror(d, d->n - 1, "'%s': a check can order only numbers and "
                    "strings", bonsai_cond_name(which));
  if ((c->key = addstr(d, key)) == BS_NONE)
    return nomemory(d, d->n - 1);
  if (s != NULL) {
    uint32_t at = addstr(d, s);
    if (at == BS_NONE)
      return nomemory(d, d->n - 1);
    if (s[0] == '$')
      c->vkey = at + 1;
    v.u.str.len = at; /* resolved against the pool when compiled */
  }
  c->op = (uint8_t)i;
  c->val = v;
  return BONSAI_OK;
}

int bonsai_def_text(bonsai_def *d, int which, const char *text,
                    const char *keys) {
  DefNode *n;
  uint32_t k, j, t, kk = BS_NONE;
  if (d->err[0] != '\0')
    return BONSAI_EDEF;
  if (d->n == 0)
    return deferror(d, BS_NONE, "a text before any node");
  if (which < BONSAI_TEXT_NODE || which >= BONSAI_NCONDS)
    return deferror(d, d->n - 1, "unknown condition %d", which);
  if (text == NULL || strlen(text) > BONSAI_MAXTEXT ||
      (keys != NULL && strlen(keys) > BONSAI_MAXTEXT))
    return deferror(d, d->n - 1, "a text of at most %d bytes expected",
                    BONSAI_MAXTEXT);
  n = &d->nodes[d->n - 1];
  if (n->texts == BS_NONE) { /* its block */
    if (d->ntexts == d->captexts) {
      uint32_t ncap = d->captexts ? d->captexts * 2 : 4;
      DefText *nt = bs_realloc(d->env, d->texts, d->captexts * sizeof *nt,
                               (size_t)ncap * sizeof *nt);
      if (nt == NULL)
        return nomemory(d, d->n - 1);
      d->texts = nt;
      d->captexts = ncap;
    }
    for (k = 0; k <= BONSAI_NCONDS; k++)
      for (j = 0; j < 2; j++)
        d->texts[d->ntexts][k][j] = BS_NONE;
    n->texts = d->ntexts++;
  }
  if ((t = addstr(d, text)) == BS_NONE ||
      (keys != NULL && (kk = addstr(d, keys)) == BS_NONE))
    return nomemory(d, d->n - 1);
  d->texts[n->texts][which + 1][0] = t;
  d->texts[n->texts][which + 1][1] = keys != NULL ? kk : BS_NONE;
  return BONSAI_OK;
}

/* }====================================================== */

/*
** {======================================================
** Parameters
** =======================================================
*/

/* The P_* bit of a parameter name (in the order of bs_params). */
static unsigned paramof(const char *key) {
  unsigned i;
  for (i = 0; i < BS_NPARAMS; i++)
    if (strcmp(key, bs_params[i].name) == 0)
      return 1u << i;
  return 0;
}

/* The node a parameter applies to (the last added), after checks. */
static DefNode *paramnode(bonsai_def *d, const char *key, unsigned *p) {
  DefNode *n;
  if (d->err[0] != '\0')
    return NULL;
  if (d->n == 0) {
    deferror(d, BS_NONE, "parameter '%s' before any node", key);
    return NULL;
  }
  n = &d->nodes[d->n - 1];
  *p = paramof(key);
  if ((*p & bs_kinds[n->kind].takes) == 0) {
    deferror(d, d->n - 1, "'%s' takes no argument '%s'",
             bs_kinds[n->kind].name, key);
    return NULL;
  }
  n->set |= *p;
  return n;
}

int bonsai_def_number(bonsai_def *d, const char *key, double v) {
  bonsai_value val;
  val.type = BONSAI_TNUMBER;
  val.u.n = v;
  return bonsai_def_value(d, key, val);
}

int bonsai_def_string(bonsai_def *d, const char *key, const char *v) {
  bonsai_value val;
  val.type = BONSAI_TSTRING;
  val.u.str.s = v;
  val.u.str.len = strlen(v);
  return bonsai_def_value(d, key, val);
}

/* Refuses the value of parameter p (a P_* bit) with the values it takes. */
static int badvalue(bonsai_def *d, const char *key, unsigned p) {
  unsigned i = 0;
  while (!(p & (1u << i)))
    i++;
  return deferror(d, d->n - 1, "argument '%s' must be %s", key,
                  bs_params[i].range);
}

int bonsai_def_value(bonsai_def *d, const char *key, bonsai_value v) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  static const char *const modes[] = {"none", "self", "lower", "both"};
  unsigned p, i;
  int isnum = v.type == BONSAI_TNUMBER || v.type == BONSAI_TINTEGER;
  double num = v.type == BONSAI_TINTEGER ? (double)v.u.i : v.u.n;
  const char *s = v.type == BONSAI_TSTRING ? v.u.str.s : NULL;
  DefNode *n = paramnode(d, key, &p);
  if (n == NULL)
    return BONSAI_EDEF;
  if (s != NULL && memchr(s, '\0', v.u.str.len) != NULL)
    return deferror(d, d->n - 1, "argument '%s' must be a string without NUL "
                    "bytes", key);
  if (s != NULL && v.u.str.len > BS_MAXNAME)
    return deferror(d, d->n - 1, "argument '%s' must be a string of at most "
                    "1024 bytes", key);
  switch (p) {
  case P_TIMES:
    if (!isnum || !(num >= 0 && num <= 4294967295.0) ||
        num != (double)(uint32_t)num)
      return badvalue(d, key, p);
    n->times = num;
    break;
  case P_SECONDS: case P_TIMEOUT: case P_ABORT_TIMEOUT: /* no kind takes
                                                         ** two of them */
    if (!isnum || !(num >= 0))
      return badvalue(d, key, p);
    n->secs = num;
    break;
  case P_EVENT:
    if (s == NULL || *s == '\0')
      return badvalue(d, key, p);
    if ((n->event = addstr(d, s)) == BS_NONE)
      return nomemory(d, d->n - 1);
    break;
  case P_SUCCESS: case P_FAILURE: {
    double c;
    if (s != NULL && strcmp(s, "all") == 0)
      c = -1;
    else if (s != NULL && strcmp(s, "one") == 0)
      c = 1;
    else if (isnum && num >= 1 && num <= 4294967295.0 &&
             num == (double)(uint32_t)num)
      c = num;
    else
      return badvalue(d, key, p);
    if (p == P_SUCCESS)
      n->success = c;
    else
      n->failure = c;
    break;
  }
  case P_KEY:
    if (s == NULL || *s == '\0')
      return badvalue(d, key, p);
    if ((n->key = addstr(d, s)) == BS_NONE)
      return nomemory(d, d->n - 1);
    break;
  case P_OP:
    for (i = 0; s != NULL && i < 6; i++)
      if (strcmp(s, ops[i]) == 0)
        break;
    if (s == NULL || i == 6)
      return badvalue(d, key, p);
    n->op = (uint8_t)i;
    break;
  case P_VALUE:
    if (s != NULL) {
      uint32_t at = addstr(d, s);
      if (at == BS_NONE)
        return nomemory(d, d->n - 1);
      if (s[0] == '$')
        n->vkey = at + 1;
      v.u.str.len = at; /* resolved against the pool when compiled */
    } else if (v.type != BONSAI_TNUMBER && v.type != BONSAI_TINTEGER &&
               v.type != BONSAI_TBOOLEAN && v.type != BONSAI_TNIL) {
      return badvalue(d, key, p);
    }
    n->val = v;
    break;
  case P_ABORT:
    for (i = 0; s != NULL && i < 4; i++)
      if (strcmp(s, modes[i]) == 0)
        break;
    if (s == NULL || i == 4)
      return badvalue(d, key, p);
    n->mode = (uint8_t)i;
    break;
  case P_WAIT: case P_THEN_SKIP:
    if (v.type != BONSAI_TBOOLEAN)
      return badvalue(d, key, p);
    n->mode = v.u.b != 0;
    break;
  }
  return BONSAI_OK;
}

/* }====================================================== */
