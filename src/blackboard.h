/*
** blackboard.h: blackboard internals shared with the VM and the binding.
*/
#ifndef bonsai_blackboard_h
#define bonsai_blackboard_h

#include "bstypes.h"

BS_INTERNAL void bs_bb_retain(bonsai_bb *bb);

/* The blackboard (bb or an ancestor) that holds key, or NULL. */
BS_INTERNAL const bonsai_bb *bs_bb_owner(const bonsai_bb *bb, int key);

/* Iteration over bb's own keys: returns the next slot index after 'at'
** (start with 0) holding a value, or -1; *key gets its key. */
BS_INTERNAL int bs_bb_next(const bonsai_bb *bb, int at, int *key);

#endif
