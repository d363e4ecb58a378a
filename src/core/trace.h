/*
** trace.h: per-agent event recording. Every status store of the VM goes
** through bs_setstatus, which tests one agent field (a->trace, NULL unless
** the agent is traced) before recording; an untraced agent pays one
** predictable branch per store and nothing else.
*/
#ifndef bonsai_trace_h
#define bonsai_trace_h

#include "bstypes.h"

#if defined(__GNUC__)
#define bs_unlikely(x) __builtin_expect(!!(x), 0)
#define bs_likely(x) __builtin_expect(!!(x), 1)
#else
#define bs_unlikely(x) (x)
#define bs_likely(x) (x)
#endif

/* Records that node i goes from status old to s (called before the store).
** A store that leaves a node running or idle as it was is not recorded. */
BS_INTERNAL void bs_trace_status(bonsai_agent *a, uint32_t i, int old, int s);
/* A running node was ticked again (a leaf: and stays running), or an
** aborting one's abort callback called again: recorded with its status. */
BS_INTERNAL void bs_trace_again(bonsai_agent *a, uint32_t i);
/* An event delivered to the tick under way. */
BS_INTERNAL void bs_trace_event(bonsai_agent *a, uint32_t name,
                                bonsai_value v);
/* An agent event (BONSAI_TRACE_RELOAD, _ERROR, _INTERRUPT, _RESET); msg:
** the error message, or NULL. A reload event also makes the agent's new
** blueprint the version that the following events refer to. */
BS_INTERNAL void bs_trace_mark(bonsai_agent *a, int kind, uint32_t node,
                               const char *msg);
/* Events recorded while migrate is set belong to the coming tick. */
BS_INTERNAL void bs_trace_migrating(bonsai_agent *a, int on);
/* Whether the agent's trace has a hook (bonsai_agent_trace_hook). */
BS_INTERNAL int bs_trace_hooked(const bonsai_agent *a);
/* Frees the agent's trace (bonsai_agent_trace(a, 0)). */
BS_INTERNAL void bs_trace_free(bonsai_agent *a);

/* After a->trace, a->prof, a->nfault or a->latent changed: whether ticks
** run the watched copy (and so which copy they run: bs_copy). */
static inline void bs_rewatch(bonsai_agent *a) {
  a->watched = (uint8_t)(a->trace != NULL || a->prof != NULL ||
                         a->nfault != 0 || a->latent != NULL);
  bs_copy(a);
}

/* The one door for status stores: st[i] = s, recorded when traced (a
** node left running or idle as it was is no change: not even a call). */
static inline void bs_setstatus(bonsai_agent *a, uint8_t *st, uint32_t i,
                                int s) {
  if (bs_unlikely(a->trace != NULL) && (st[i] != s || s > BONSAI_RUNNING))
    bs_trace_status(a, i, st[i], s);
  st[i] = (uint8_t)s;
}

/* A running node ticked again (a leaf: that stays running). */
#define bs_setagain(a, i)                                                      \
  do {                                                                         \
    if (bs_unlikely((a)->trace != NULL))                                       \
      bs_trace_again(a, i);                                                    \
  } while (0)

#endif
