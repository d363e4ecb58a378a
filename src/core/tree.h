/*
** tree.h: a tree's current version, for the agents that run it and the
** reload that replaces it (trees shared by several environments included).
*/
#ifndef bonsai_tree_h
#define bonsai_tree_h

#include "bstypes.h"

/* The tree's current version (a shared tree's may have been replaced from
** another environment: the handle catches up). */
BS_INTERNAL Blueprint *bs_tree_current(const bonsai_tree *t);

/* Makes bp (whose reference it takes) the tree's version; the agents
** switch at their next tick. A shared tree runs a detached copy carrying
** the host's bytes. BONSAI_OK or BONSAI_ENOMEM. */
BS_INTERNAL int bs_tree_set(bonsai_tree *t, Blueprint *bp, const void *host,
                            size_t hostlen);

#endif
