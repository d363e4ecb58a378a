/*
** compile.h: the definition records that bonsai_def_* build and that the
** compiler turns into a Blueprint, plus the node-kind vocabulary (names,
** arities, data sizes) shared by the compiler, the VM and the dump.
*/
#ifndef bonsai_compile_h
#define bonsai_compile_h

#include "bstypes.h"
#include "kinds.h"

typedef struct DefNode {
  uint8_t kind;
  uint8_t op, mode; /* mode: guard: GUARD_*; parallel: 1 with "wait" */
  uint32_t parent;   /* BS_NONE for the root */
  uint32_t place;    /* 1-based place among its siblings */
  uint32_t nchild;
  uint32_t name;     /* offset in def->strs, or BS_NONE */
  uint32_t leafname; /* named leaf: offset in def->strs, or BS_NONE */
  Leaf leaf;         /* anonymous leaf */
  Leaf util;         /* utility for a utility_selector parent (fn or NULL) */
  const void *args;
  unsigned set;      /* P_* */
  double times, secs;
  double success, failure; /* counts; -1 means "all" */
  uint32_t key, vkey;      /* offsets in def->strs */
  bonsai_value val;        /* strings: offset in def->strs in u.str.len */
} DefNode;

struct bonsai_def {
  bonsai_env *env;
  DefNode *nodes;
  uint32_t n, cap;
  uint32_t open; /* innermost node still taking children */
  char *strs;
  size_t nstrs, capstrs;
  char err[256]; /* first error; "" if none */
  int nomem;     /* that error was running out of memory */
  uint32_t max;  /* most nodes allowed (bonsai_def_max_nodes) */
  const void *host; /* bytes a shared tree carries (bonsai_def_host) */
  size_t hostlen;
};




/* Bytes of per-agent data of a node of this kind with nchild children:
** its kind's, plus, for a utility selector, each child's utility (a
** double) and its place in the order of a tick (a uint32), rounded up to
** 8; for a parallel, three counts and the list of its unfinished children
** (vm.c, UNDONE). */
BS_INTERNAL uint32_t bs_datasize(int kind, uint32_t nchild);

/* Writes the path of definition node i into buf (like a blueprint path);
** returns its full length (buf may be NULL to measure). */
BS_INTERNAL size_t bs_def_path(const bonsai_def *def, uint32_t i, char *buf,
                               size_t size);
/* The same, but a path too long for buf keeps its end, after "...". */
BS_INTERNAL size_t bs_def_pathtail(const bonsai_def *def, uint32_t i,
                                   char *buf, size_t size);

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
