/*
** inspect.h: what a compiled node is, read from its Blueprint: the one
** place that knows where each parameter lives in a Node (inspect.c), for
** the public node info and for dump.c.
*/
#ifndef bonsai_inspect_h
#define bonsai_inspect_h

#include "bstypes.h"

/* Fills *info for node i of bp: its kind, parent, name, and each parameter
** its kind takes (bs_kinds[].takes); BONSAI_EARG when i is out of range. */
BS_INTERNAL int bs_nodeinfo(const Blueprint *bp, unsigned i,
                            bonsai_nodeinfo *info);

/* The text of node i of bp (bonsai_tree_node_text): which, part, buf and
** size as there; returns the full length. */
BS_INTERNAL size_t bs_nodetext(const Blueprint *bp, unsigned i, int which,
                               int part, char *buf, size_t size);

#endif
