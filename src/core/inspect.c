/*
** inspect.c: what a compiled node is, for hosts (debuggers, trace files,
** exporters): bonsai_*_node_info reads a node of a tree's current version
** or of the version an agent runs, without the host knowing the Node
** record. Read only: nothing here changes a version or an agent.
*/
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

int bonsai_agent_node_leaf(const bonsai_agent *a, unsigned i,
                           bonsai_leaf_fn *fn, void **data, unsigned *flags) {
  const Node *n = i < a->bp->n ? &a->bp->nodes[i] : NULL;
  const Leaf *l;
  if (n == NULL || (n->kind != BONSAI_ACTION && n->kind != BONSAI_CONDITION &&
                    n->kind != BONSAI_CONTROL))
    return BONSAI_EARG;
  l = (n->flags & NF_NAMED) ? &a->tree->env->leaves[n->leaf]
                            : &a->bp->leaves[n->leaf];
  if (fn != NULL)
    *fn = l->fn;
  if (data != NULL)
    *data = l->data;
  if (flags != NULL)
    *flags = l->flags & (BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT |
                         BONSAI_LEAF_ABORT);
  return BONSAI_OK;
}
