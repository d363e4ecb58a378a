/*
** kinds.h: the facts of every node kind, in one table (kinds.c) that the
** definition builder, the compiler, reload, saves, dumps and the binding's
** constructors read. Adding a kind: its bonsai_kind entry (bonsai.h), its
** row in kinds.c and its case in vm.c's step().
*/
#ifndef bonsai_kinds_h
#define bonsai_kinds_h

#include "bstypes.h"

/* Parameters a node may carry (KindInfo.takes/needs; DefNode.set bits),
** in the order of bs_params. */
#define P_TIMES (1u << BONSAI_P_TIMES)
#define P_SECONDS (1u << BONSAI_P_SECONDS)
#define P_SUCCESS (1u << BONSAI_P_SUCCESS)
#define P_FAILURE (1u << BONSAI_P_FAILURE)
#define P_KEY (1u << BONSAI_P_KEY)
#define P_OP (1u << BONSAI_P_OP)
#define P_VALUE (1u << BONSAI_P_VALUE)
#define P_ABORT (1u << BONSAI_P_ABORT)
#define P_WAIT (1u << BONSAI_P_WAIT)
#define P_THEN_SKIP (1u << BONSAI_P_THEN_SKIP)
#define P_EVENT (1u << BONSAI_P_EVENT)
#define P_TIMEOUT (1u << BONSAI_P_TIMEOUT)
#define P_ABORT_TIMEOUT (1u << BONSAI_P_ABORT_TIMEOUT)

/* Classes of kinds: what children they take (the order of
** BONSAI_CLASS_*). */
enum {
  KC_LEAF,       /* none */
  KC_COMPOSITE,  /* one or more */
  KC_DECORATOR,  /* exactly one */
  KC_HIDDEN      /* the priority wrapper: made by the tree, not by users */
};

/* Kind flags. */
#define K_ACTIVE 1u  /* ticked from above every tick while running */
#define K_LASTING 2u /* its data lasts while it is idle (reload, save) */
#define K_MEMORY 4u  /* sequence, selector: resumes its running child */
#define K_REACTIVE 8u /* restarts from its first child every tick */
#define K_CHILDWORD 16u /* W0 of its data is the index of a child: moved
                        ** to the new numbering by a reload, saved as the
                        ** child's name */
#define K_SKIPS 32u     /* may end its tick SKIPPED: a version with one
                        ** runs the copy of the tick that knows that status
                        ** (the one with pre- and post-conditions) */
#define K_STAMPWORD 64u /* W0 of its data is the change stamp of its key
                        ** (bs_bb_stamp) when it last looked: saved as
                        ** whether that was the key's latest change */

/* KindInfo.maxchild of a kind that takes any number of children. */
#define BS_MANY 255u

typedef struct KindInfo {
  const char *name;  /* as the Lua API spells it */
  uint8_t cls;       /* KC_* */
  uint8_t minchild;  /* children it takes: at least minchild, ... */
  uint8_t maxchild;  /* ... at most maxchild (BS_MANY: no limit) */
  uint8_t data;      /* bytes of per-agent data (0, 4 or a multiple of 8),
                     ** what vm.c's W0/W1/F64 mean for it is said in its
                     ** row */
  uint8_t flags;     /* K_* */
  uint8_t cont;      /* sequence-like: the status on which it goes on to
                     ** its next child, else 0 */
  uint16_t takes;    /* P_* it accepts */
  uint16_t needs;    /* P_* it must have */
  const char *number; /* the parameter a bare number means (:timeout(2)) */
  const char *keys;  /* the other keys its node tables take (space-separated:
                     ** a leaf's functions, a filter's conditions), or NULL */
} KindInfo;

/* ORDER KIND: indexed by bonsai_kind. */
BS_INTERNAL extern const KindInfo bs_kinds[BONSAI_NKINDS];

/* The keys every node table takes (space-separated). */
BS_INTERNAL extern const char *const bs_node_keys;

/* A parameter, in the order of the P_* bits: the facts every kind that
** takes it shares (a kind's row says which it takes and needs; where a
** Node keeps it, inspect.c says, and what a node without it gets,
** compile.c). */
typedef struct ParamInfo {
  const char *name;  /* as node tables and bonsai_def_value spell it */
  const char *range; /* the values it takes, for messages */
} ParamInfo;
BS_INTERNAL extern const ParamInfo bs_params[BONSAI_NPARAMS];
#define BS_NPARAMS BONSAI_NPARAMS

#endif
