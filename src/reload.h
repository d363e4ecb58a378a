/*
** reload.h: moving an agent's state from one version of its tree to the
** next.
*/
#ifndef bonsai_reload_h
#define bonsai_reload_h

#include "bstypes.h"

/* Fills ns (sized for nbp) from the agent's state on its current blueprint,
** aborting the running nodes that do not carry over. The caller swaps the
** state block and the blueprint afterwards. */
BS_INTERNAL int bs_reload_state(bonsai_agent *a, const Blueprint *nbp,
                                uint8_t *ns);

/* The node map from ob to the tree's current version, if cached (after a
** migration from ob): map[old] = new node or BS_NONE. */
BS_INTERNAL const uint32_t *bs_reload_map(const bonsai_agent *a,
                                          const Blueprint *ob);

/* Makes t run other's current version (t must not be other's env's
** stranger); agents of t switch at their next tick. */
BS_INTERNAL int bs_tree_adopt(bonsai_tree *t, bonsai_tree *other);

/* Drops the tree's cached map (the tree changed version or goes away). */
BS_INTERNAL void bs_reload_forget(bonsai_tree *t);

#endif
