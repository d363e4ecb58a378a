/*
** blackboard.h: blackboard internals shared with the VM and the binding.
*/
#ifndef bonsai_blackboard_h
#define bonsai_blackboard_h

#include "bstypes.h"

BS_INTERNAL void bs_bb_retain(bonsai_bb *bb);

/* Writes key; *changed (if not NULL) tells whether the value changed
** (writing the same value again is not a change; handles always are). */
BS_INTERNAL int bs_bb_set(bonsai_bb *bb, int key, bonsai_value v,
                          int *changed);

/* Three-way comparison (-1, 0, 1) of numbers with numbers (exactly, as
** Lua compares integers with floats) and strings with strings; CMP_NONE
** for other pairs, CMP_NAN when a NaN is involved. *eq tells equality for
** any types. */
#define CMP_NONE (-2) /* not comparable: ordered comparisons are errors */
#define CMP_NAN (-3)  /* a NaN: ordered comparisons all fail */
BS_INTERNAL int bs_value_compare(bonsai_value x, bonsai_value y, int *eq);

/* A stamp that changes whenever key changes in bb or an ancestor. */
BS_INTERNAL uint32_t bs_bb_stamp(const bonsai_bb *bb, int key);

/* True if bb or an ancestor changed after stamp 'since'. */
BS_INTERNAL int bs_bb_changed(const bonsai_bb *bb, uint64_t since);

/* Iteration over bb's own keys: returns the next slot index after 'at'
** (start with 0) holding a value, or -1; *key gets its key. */
BS_INTERNAL int bs_bb_next(const bonsai_bb *bb, int at, int *key);

#endif
