/*
** dump.c: a text picture of a compiled tree, one node a line, indented by
** depth, its parameters and conditions, with an agent's statuses when one
** is given. Iterative over the
** pre-order array; writes through a callback, allocating nothing. Past
** MAXINDENT levels a line is indented no further and starts with its depth
** in brackets, so the picture of a deep tree stays linear in its size.
*/
#include <stdio.h>
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "inspect.h"
#include "tree.h"

#define MAXINDENT 64

/* Appends parameter p (BONSAI_P_*) of the node info describes to buf at
** *at, as a dump shows it: " x3" (" forever" for 0), " 2s",
** " success>=2", " wait", " hp", " <", " 10" (a string quoted, "$key"),
** " abort=both", " then_skip", an event's " -> noise" (its key) and
** " "heard"",
** " timeout=5s", " abort_timeout=2s". */
static void param(const bonsai_nodeinfo *info, int p, char *buf, size_t size,
                  size_t *at) {
  const bonsai_value *v = &info->value;
  int len = 0;
  char *o = buf + *at;
  size_t room = size - *at;
  switch (p) {
  case BONSAI_P_TIMES:
    len = info->times != 0 ? snprintf(o, room, " x%u", info->times)
                           : snprintf(o, room, " forever");
    break;
  case BONSAI_P_SECONDS: len = snprintf(o, room, " %gs", info->seconds); break;
  case BONSAI_P_SUCCESS:
    len = snprintf(o, room, " success>=%u", info->success);
    break;
  case BONSAI_P_FAILURE:
    len = snprintf(o, room, " failure>=%u", info->failure);
    break;
  case BONSAI_P_KEY: /* an event node's is where its payload goes */
    if (info->event != NULL)
      len = info->key != NULL ? snprintf(o, room, " -> %.40s", info->key) : 0;
    else
      len = snprintf(o, room, " %.40s", info->key);
    break;
  case BONSAI_P_OP:
    len = info->op != NULL ? snprintf(o, room, " %s", info->op) : 0;
    break;
  case BONSAI_P_VALUE:
    if (info->valuekey != NULL)
      len = snprintf(o, room, " $%.40s", info->valuekey);
    else if (v->type == BONSAI_TSTRING)
      len = snprintf(o, room, " \"%.40s\"", v->u.str.s);
    else if (v->type == BONSAI_TNUMBER)
      len = snprintf(o, room, " %g", v->u.n);
    else if (v->type == BONSAI_TINTEGER)
      len = snprintf(o, room, " %lld", v->u.i);
    else if (v->type == BONSAI_TBOOLEAN)
      len = snprintf(o, room, " %s", v->u.b ? "true" : "false");
    else if (info->op != NULL)
      len = snprintf(o, room, " nil");
    break;
  case BONSAI_P_ABORT:
    len = snprintf(o, room, " abort=%s", info->abort);
    break;
  case BONSAI_P_WAIT:
    len = info->wait ? snprintf(o, room, " wait") : 0;
    break;
  case BONSAI_P_THEN_SKIP:
    len = info->then_skip ? snprintf(o, room, " then_skip") : 0;
    break;
  case BONSAI_P_EVENT: len = snprintf(o, room, " \"%.40s\"", info->event); break;
  case BONSAI_P_TIMEOUT:
    len = info->timeout >= 0 ? snprintf(o, room, " timeout=%gs", info->timeout)
                             : 0;
    break;
  case BONSAI_P_ABORT_TIMEOUT:
    len = info->abort_timeout >= 0
              ? snprintf(o, room, " abort_timeout=%gs", info->abort_timeout)
              : 0;
    break;
  default:
    break;
  }
  if (len > 0)
    *at += (size_t)len < room ? (size_t)len : room - 1;
}

/* The parameters of node i of bp, each its kind takes, into buf. */
static void params(const Blueprint *bp, uint32_t i, char *buf, size_t size) {
  bonsai_nodeinfo info;
  size_t at = 0;
  int p;
  buf[0] = '\0';
  bs_nodeinfo(bp, i, &info);
  for (p = 0; p < BONSAI_NPARAMS; p++)
    if (bs_kinds[info.kind].takes & (1u << p))
      param(&info, p, buf, size, &at);
}

/* For a child i of a utility selector that has a utility function:
** " utility", and with an agent whose selector has ranked its children,
** " utility=U", the utility of its last tick (the data layout is vm.c's:
** see UTILS and ORDER there). */
static void utility(const Blueprint *bp, const bonsai_agent *a, uint32_t i,
                    char *buf, size_t size) {
  const Node *nd = bp->nodes;
  uint32_t p = nd[i].parent, c, k;
  buf[0] = '\0';
  if (p == BS_NONE || nd[p].kind != BONSAI_UTILITY_SELECTOR)
    return;
  for (c = p + 1, k = 0; c != i; c = nd[c].next)
    k++;
  if (bp->leaves[nd[p].leaf + k].fn == NULL)
    return;
  snprintf(buf, size, " utility");
  if (a != NULL && a->state[p] != BONSAI_IDLE) {
    const double *u = (const double *)(a->state + nd[p].data + 8);
    const uint32_t *ord = (const uint32_t *)(u + nd[p].nchild);
    for (k = 0; k < nd[p].nchild; k++)
      if (ord[k] == i)
        snprintf(buf, size, " utility=%g", u[k]);
  }
}

#define SHOWN 60 /* bytes of a text a line shows */

/* Appends to buf at *at ' "TEXT"': text 'which' of node i (its script's
** source, or a condition's), on one line, cut after SHOWN bytes; nothing
** when it has none. */
static void text(const Blueprint *bp, uint32_t i, int which, char *buf,
                 size_t size, size_t *at) {
  char t[SHOWN + 4];
  size_t len = bs_nodetext(bp, i, which, 0, t, sizeof t), k;
  int w;
  if (len == 0)
    return;
  if (len > SHOWN)
    memcpy(t + SHOWN, "...", 4);
  for (k = 0; t[k] != '\0'; k++)
    if (t[k] == '\n' || t[k] == '\r' || t[k] == '\t')
      t[k] = ' ';
  w = snprintf(buf + *at, size - *at, " \"%s\"", t);
  if (w > 0)
    *at += (size_t)w < size - *at ? (size_t)w : size - *at - 1;
}

/* The script of node i (a check's shows as its parameters) and its pre-
** and post-conditions, e.g. ' "count += 1" skip_if "hp < 10" on_success'
** (a condition given as a function has no text). */
static void conditions(const Blueprint *bp, uint32_t i, char *buf,
                       size_t size) {
  const Node *n = &bp->nodes[i];
  size_t at = 0;
  int k;
  buf[0] = '\0';
  if (n->kind != BONSAI_CHECK)
    text(bp, i, BONSAI_TEXT_NODE, buf, size, &at);
  for (k = 0; k < BONSAI_NCONDS && (n->flags & NF_COND); k++)
    if ((n->when & (1u << k)) && at < size - 1) {
      int w = snprintf(buf + at, size - at, " %s", bonsai_cond_name(k));
      if (w > 0)
        at += (size_t)w < size - at ? (size_t)w : size - at - 1;
      text(bp, i, k, buf, size, &at);
    }
}

void bonsai_tree_dump(const bonsai_tree *t, const bonsai_agent *a,
                      void (*write)(void *ud, const char *s, size_t n),
                      void *ud) {
  const Blueprint *bp = a != NULL ? a->bp : bs_tree_current(t);
  uint32_t i;
  for (i = 0; i < bp->n; i++) {
    const Node *n = &bp->nodes[i];
    const char *kind = bs_kinds[n->kind].name;
    const char *name = bp->pool + n->name;
    char line[240], extra[128], conds[8 * (SHOWN + 24)];
    size_t k = strlen(kind);
    uint32_t d;
    int len;
    for (d = 0; d < n->depth && d < MAXINDENT; d++)
      write(ud, "  ", 2);
    if (n->depth > MAXINDENT) {
      len = snprintf(line, sizeof line, "<%u> ", (unsigned)n->depth);
      write(ud, line, (size_t)len);
    }
    params(bp, i, extra, sizeof extra);
    if (n->flags & NF_HIDDEN)
      len = snprintf(line, sizeof line, "%s", kind);
    else if (strncmp(name, kind, k) == 0 && (name[k] == '\0' || name[k] == '['))
      len = snprintf(line, sizeof line, "%.100s%s", name, extra);
    else
      len = snprintf(line, sizeof line, "%.100s (%s%s)", name, kind, extra);
    if (len < 0)
      len = 0;
    if ((size_t)len >= sizeof line)
      len = sizeof line - 1;
    write(ud, line, (size_t)len);
    utility(bp, a, i, extra, sizeof extra);
    write(ud, extra, strlen(extra));
    conditions(bp, i, conds, sizeof conds);
    write(ud, conds, strlen(conds));
    if (a != NULL) {
      const char *s = bonsai_status_name(a->state[i]);
      write(ud, " [", 2);
      write(ud, s, strlen(s));
      write(ud, "]", 1);
    }
    write(ud, "\n", 1);
  }
}
