/*
** compile.h: the compiler, which turns a definition (def.h) into a
** Blueprint, and what every user of a Blueprint needs: references, the
** detached copy of shared trees, node paths.
*/
#ifndef bonsai_compile_h
#define bonsai_compile_h

#include "bstypes.h"
#include "def.h"

/* Bytes of per-agent data of a node of this kind with nchild children:
** its kind's, plus, for a utility selector, each child's utility (a
** double) and its place in the order of a tick (a uint32), rounded up to
** 8; for a parallel, three counts and the list of its unfinished children
** (vm.c, UNDONE). */
BS_INTERNAL uint32_t bs_datasize(int kind, uint32_t nchild);

/* Compiles def into a new Blueprint (refs = 1); on error returns NULL with a
** message in err and *code BONSAI_EDEF or BONSAI_ENOMEM. */
BS_INTERNAL Blueprint *bs_compile(const bonsai_def *def, char *err,
                                  size_t errsize, int *code);
BS_INTERNAL void bs_bp_retain(Blueprint *bp);
BS_INTERNAL void bs_bp_release(Blueprint *bp);
/* A copy of bp in memory of its own (malloc), with the host's bytes: what
** trees shared by several environments and threads run (refs = 1). */
BS_INTERNAL Blueprint *bs_bp_detach(const Blueprint *bp, const void *host,
                                    size_t hostlen);

/* Writes the path of node i ("a/b/c", hidden nodes left out) into buf. */
BS_INTERNAL size_t bs_bp_path(const Blueprint *bp, uint32_t i, char *buf,
                              size_t size);

#endif
