/*
** inspect.c: what a compiled node is, for hosts (debuggers, trace files,
** exporters): bonsai_*_node_info reads a node of a tree's current version
** or of the version an agent runs, without the host knowing the Node
** record. Read only: nothing here changes a version or an agent.
*/
#include <string.h>

#include "bonsai.h"
#include "compile.h"
#include "names.h"
#include "tree.h"

/* Fills *info from node i of bp; BONSAI_EARG when i is out of range. */
static int nodeinfo(const Blueprint *bp, unsigned i, bonsai_nodeinfo *info) {
  static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};
  static const char *const modes[] = {"none", "self", "lower", "both"};
  const Node *n;
  if (i >= bp->n)
    return BONSAI_EARG;
  n = &bp->nodes[i];
  memset(info, 0, sizeof *info);
  info->value.type = BONSAI_TNIL;
  info->kind = n->kind;
  info->parent = n->parent;
  info->hidden = (n->flags & NF_HIDDEN) != 0;
  info->name = bp->pool + n->name;
  switch (n->kind) {
  case BONSAI_ACTION: case BONSAI_CONDITION:
    if (n->flags & NF_NAMED)
      info->leaf = bs_name(BS_LEAVES, n->leaf);
    break;
  case BONSAI_REPEATER: case BONSAI_RETRY: case BONSAI_LIMIT:
    info->times = n->a;
    break;
  case BONSAI_WAIT: case BONSAI_TIMEOUT: case BONSAI_TIME_LIMIT:
  case BONSAI_COOLDOWN: case BONSAI_DELAY:
    info->seconds = n->secs;
    break;
  case BONSAI_PARALLEL:
    info->success = n->a;
    info->failure = n->b;
    info->wait = n->mode != 0;
    break;
  case BONSAI_CHECK: case BONSAI_IS_SET:
    info->key = bs_name(BS_KEYS, n->a);
    if (n->kind == BONSAI_IS_SET)
      break;
    info->op = ops[n->op];
    if (n->flags & NF_KEYREF) /* "$key" */
      info->valuekey = bs_name(BS_KEYS, n->b);
    else
      info->value = n->val;
    break;
  case BONSAI_GUARD:
    info->abort = modes[n->mode];
    break;
  default:
    break;
  }
  return BONSAI_OK;
}

int bonsai_tree_node_info(const bonsai_tree *t, unsigned i,
                          bonsai_nodeinfo *info) {
  return nodeinfo(bs_tree_current(t), i, info);
}

int bonsai_agent_node_info(const bonsai_agent *a, unsigned i,
                           bonsai_nodeinfo *info) {
  return nodeinfo(a->bp, i, info);
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
