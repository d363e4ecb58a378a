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

#endif
