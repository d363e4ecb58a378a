/*
** def.h: the definition records that bonsai_def_* build (def.c) and the
** compiler reads (compile.c), and the paths of definition nodes that
** definition errors name.
*/
#ifndef bonsai_def_h
#define bonsai_def_h

#include <stdarg.h>

#include "bstypes.h"
#include "kinds.h"

/* A pre- or post-condition: a function, or a check (bonsai_def_when_check;
** strings as in DefNode). */
typedef struct DefCond {
  Leaf leaf;          /* fn NULL: a check, or none */
  uint32_t key, vkey; /* check: offsets in def->strs (vkey of a "$name"
                      ** value), or BS_NONE; key BS_NONE: no check */
  uint8_t op;
  bonsai_value val;
} DefCond;

/* A node's texts: [0] its own, [1 + k] its condition k's; each the
** offsets in def->strs of the source and of the keys, or BS_NONE. */
typedef uint32_t DefText[BONSAI_NCONDS + 1][2];

typedef struct DefNode {
  uint8_t kind;
  uint8_t op, mode; /* mode: guard: GUARD_*; parallel: 1 with "wait" */
  uint8_t ctl;      /* control nodes on its path, itself included (at most
                    ** BONSAI_MAXCONTROL + 1: then refused) */
  uint32_t parent;   /* BS_NONE for the root */
  uint32_t place;    /* 1-based place among its siblings */
  uint32_t nchild;
  uint32_t name;     /* offset in def->strs, or BS_NONE */
  uint32_t leafname; /* named leaf: offset in def->strs, or BS_NONE */
  Leaf leaf;         /* anonymous leaf */
  Leaf util;         /* utility for a utility_selector parent (fn or NULL) */
  uint32_t when;     /* its pre- and post-conditions: a block of def->conds,
                     ** or BS_NONE */
  uint32_t texts;    /* its texts: a block of def->texts, or BS_NONE */
  const void *args;
  unsigned set;      /* P_* */
  double times, secs; /* secs: "seconds", "timeout" or "abort_timeout" */
  double success, failure; /* counts; -1 means "all" */
  uint32_t key, vkey;      /* offsets in def->strs */
  uint32_t event;          /* offset in def->strs, or BS_NONE */
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
  DefCond (*conds)[BONSAI_NCONDS]; /* blocks of conditions (bonsai_def_when,
                                   ** bonsai_def_when_check) */
  uint32_t nconds, capconds;
  DefText *texts; /* blocks of texts (bonsai_def_text) */
  uint32_t ntexts, captexts;
  size_t hostlen;
};

/* Writes the path of definition node i into buf (like a blueprint path);
** returns its full length (buf may be NULL to measure). */
BS_INTERNAL size_t bs_def_path(const bonsai_def *def, uint32_t i, char *buf,
                               size_t size);
/* Writes "path: message" for node i (BS_NONE: the message alone) into buf:
** the one form of definition errors. */
BS_INTERNAL void bs_def_vmessage(const bonsai_def *d, uint32_t i, char *buf,
                                 size_t size, const char *fmt, va_list ap);

#endif
