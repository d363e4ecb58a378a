/*
** kinds.h: the facts of every node kind, in one table (kinds.c) that the
** definition builder, the compiler, reload, saves, dumps and the binding's
** constructors read. Adding a kind: its bonsai_kind entry (bonsai.h), its
** row here (kinds.c) and its behaviour in vm.c.
*/
#ifndef bonsai_kinds_h
#define bonsai_kinds_h

#include "bstypes.h"

/* Parameters a node may carry (KindInfo.takes/needs; DefNode.set bits),
** in the order of bs_param_names. */
#define P_TIMES 1u
#define P_SECONDS 2u
#define P_SUCCESS 4u
#define P_FAILURE 8u
#define P_KEY 16u
#define P_OP 32u
#define P_VALUE 64u
#define P_ABORT 128u
#define P_WAIT 256u

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

typedef struct KindInfo {
  const char *name;  /* as the Lua API spells it */
  uint8_t cls;       /* KC_* */
  uint8_t data;      /* bytes of per-agent data (0, 4 or a multiple of 8),
                     ** what vm.c's W0/W1/F64 mean for it is said in its
                     ** row */
  uint8_t flags;     /* K_* */
  uint8_t cont;      /* sequence-like: the status on which it goes on to
                     ** its next child, else 0 */
  uint16_t takes;    /* P_* it accepts */
  uint16_t needs;    /* P_* it must have */
  const char *number; /* the parameter a bare number means (:timeout(2)) */
} KindInfo;

/* ORDER KIND: indexed by bonsai_kind. */
BS_INTERNAL extern const KindInfo bs_kinds[BONSAI_NKINDS];

/* Parameter names, NULL-terminated, in the order of the P_* bits. */
BS_INTERNAL extern const char *const bs_param_names[];

#endif
