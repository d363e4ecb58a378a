/*
** error.h: recording an agent's error (error.c). The public side is in
** bonsai.h: bonsai_agent_error, _errmsg, _errnode, _errpath, _clearerr.
*/
#ifndef bonsai_error_h
#define bonsai_error_h

#include "bstypes.h"

/* Records the current operation's error at node (of the version the agent
** runs; BS_NONE for none), unless one is recorded already. */
BS_INTERNAL void bs_agent_fail(bonsai_agent *a, uint32_t node,
                               const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
