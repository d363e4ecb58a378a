/*
** inspect.c: what a compiled node is, for hosts (debuggers, trace files,
** exporters): bonsai_*_node_info reads a node of a tree's current version
** or of the version an agent runs, without the host knowing the Node
** record. Read only: nothing here changes a version or an agent.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "inspect.h"
#include "names.h"
#include "tree.h"

/* Fills the field of *info for parameter p (BONSAI_P_*) of node n: a kind
** that takes p keeps it where every other kind that takes it does. */
static void param(const Node *n, int p, bonsai_nodeinfo *info) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  static const char *const modes[] = {"none", "self", "lower", "both"};
  switch (p) {
  case BONSAI_P_TIMES: info->times = n->a; break;
  case BONSAI_P_SECONDS: info->seconds = n->secs; break;
  case BONSAI_P_SUCCESS: info->success = n->a; break;
  case BONSAI_P_FAILURE: info->failure = n->b; break;
  case BONSAI_P_KEY: /* (an event node's is optional) */
    info->key = n->a != BS_NONE ? bs_name(BS_KEYS, n->a) : NULL;
    break;
  case BONSAI_P_OP: info->op = ops[n->op]; break;
  case BONSAI_P_VALUE:
    if (n->flags & NF_KEYREF) /* "$key" */
      info->valuekey = bs_name(BS_KEYS, n->b);
    else
      info->value = n->val;
    break;
  case BONSAI_P_ABORT: info->abort = modes[n->mode]; break;
  case BONSAI_P_WAIT: info->wait = n->mode != 0; break;
  case BONSAI_P_THEN_SKIP: info->then_skip = n->mode != 0; break;
  case BONSAI_P_EVENT: info->event = bs_name(BS_EVENTS, n->b); break;
  case BONSAI_P_TIMEOUT: info->timeout = n->secs; break;
  case BONSAI_P_ABORT_TIMEOUT: info->abort_timeout = n->secs; break;
  default: break;
  }
}

int bs_nodeinfo(const Blueprint *bp, unsigned i, bonsai_nodeinfo *info) {
  const Node *n;
  int p;
  if (i >= bp->n)
    return BONSAI_EARG;
  n = &bp->nodes[i];
  memset(info, 0, sizeof *info);
  info->value.type = BONSAI_TNIL;
  info->timeout = info->abort_timeout = -1;
  info->kind = n->kind;
  info->parent = n->parent;
  info->hidden = (n->flags & NF_HIDDEN) != 0;
  info->name = bp->pool + n->name;
  if ((n->kind == BONSAI_ACTION || n->kind == BONSAI_CONDITION) &&
      (n->flags & NF_NAMED))
    info->leaf = bs_name(BS_LEAVES, n->leaf);
  for (p = 0; p < BONSAI_NPARAMS; p++)
    if (bs_kinds[n->kind].takes & (1u << p))
      param(n, p, info);
  return BONSAI_OK;
}

/* Writes the comparison of a check (key k, op, value key vk or BS_NONE,
** constant v) as a script writes it ("hp < 10", "a != b", "name ==
** 'bob'"), or its keys (part 1), into buf as snprintf does. */
static size_t checktext(uint32_t k, int op, uint32_t vk, const bonsai_value *v,
                        int part, char *buf, size_t size) {
  static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
  const char *key = bs_name(BS_KEYS, k);
  char val[64];
  int len;
  if (part == 1)
    len = vk != BS_NONE ? snprintf(buf, size, "%s %s", key,
                                   bs_name(BS_KEYS, vk))
                        : snprintf(buf, size, "%s", key);
  else if (vk != BS_NONE)
    len = snprintf(buf, size, "%s %s %s", key, ops[op], bs_name(BS_KEYS, vk));
  else if (v->type == BONSAI_TSTRING)
    len = snprintf(buf, size, "%s %s %c%.*s%c", key, ops[op],
                   strchr(v->u.str.s, '\'') ? '"' : '\'',
                   (int)v->u.str.len, v->u.str.s,
                   strchr(v->u.str.s, '\'') ? '"' : '\'');
  else {
    int digits;
    switch (v->type) {
    case BONSAI_TBOOLEAN: snprintf(val, sizeof val, v->u.b ? "true" : "false");
      break;
    case BONSAI_TINTEGER: snprintf(val, sizeof val, "%lld", v->u.i); break;
    case BONSAI_TNUMBER: /* the shortest text that reads back the same */
      for (digits = 1; digits <= 17; digits++) {
        snprintf(val, sizeof val, "%.*g", digits, v->u.n);
        if (strtod(val, NULL) == v->u.n)
          break;
      }
      break;
    default: snprintf(val, sizeof val, "nil"); break;
    }
    len = snprintf(buf, size, "%s %s %s", key, ops[op], val);
  }
  return len > 0 ? (size_t)len : 0;
}

size_t bs_nodetext(const Blueprint *bp, unsigned i, int which, int part,
                   char *buf, size_t size) {
  const Node *n;
  const char *s = "";
  int len;
  if (buf != NULL && size > 0)
    buf[0] = '\0';
  if (i >= bp->n || which < BONSAI_TEXT_NODE || which >= BONSAI_NCONDS ||
      part < 0 || part > 1)
    return 0;
  n = &bp->nodes[i];
  if (n->text != BS_NONE) { /* slot which + 1, then the part */
    int k;
    s = bp->pool + n->text;
    for (k = 0; k < 2 * (which + 1) + part; k++)
      s += strlen(s) + 1;
  }
  if (*s == '\0' && which == BONSAI_TEXT_NODE && n->kind == BONSAI_CHECK)
    return checktext(n->a, n->op, (n->flags & NF_KEYREF) ? n->b : BS_NONE,
                     &n->val, part, buf, size);
  if (*s == '\0' && which >= 0 && (n->flags & NF_COND) &&
      (n->when & (1u << which))) { /* a check made by bonsai_def_when_check */
    uint32_t k, at = n->cond;
    for (k = 0; k < (uint32_t)which; k++)
      at += (n->when >> k) & 1u;
    if (bp->leaves[at].fn == NULL) {
      const Check *c = &bp->checks[(uintptr_t)bp->leaves[at].data];
      return checktext(c->key, c->op, c->vkey, &c->val, part, buf, size);
    }
  }
  len = snprintf(buf, size, "%s", s);
  return len > 0 ? (size_t)len : 0;
}

size_t bonsai_tree_node_text(const bonsai_tree *t, unsigned i, int which,
                             int part, char *buf, size_t size) {
  return bs_nodetext(bs_tree_current(t), i, which, part, buf, size);
}

size_t bonsai_agent_node_text(const bonsai_agent *a, unsigned i, int which,
                              int part, char *buf, size_t size) {
  return bs_nodetext(a->bp, i, which, part, buf, size);
}

int bonsai_tree_node_info(const bonsai_tree *t, unsigned i,
                          bonsai_nodeinfo *info) {
  return bs_nodeinfo(bs_tree_current(t), i, info);
}

int bonsai_agent_node_info(const bonsai_agent *a, unsigned i,
                           bonsai_nodeinfo *info) {
  return bs_nodeinfo(a->bp, i, info);
}

unsigned bonsai_agent_nodes(const bonsai_agent *a) { return a->bp->n; }

unsigned long long bonsai_agent_version_id(const bonsai_agent *a) {
  return a->bp->id;
}

size_t bonsai_agent_node_path(const bonsai_agent *a, unsigned i, char *buf,
                              size_t size) {
  if (i >= a->bp->n) {
    if (buf != NULL && size > 0)
      buf[0] = '\0';
    return 0;
  }
  return bs_bp_path(a->bp, i, buf, size);
}
