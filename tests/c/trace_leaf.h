/*
** trace_leaf.h: a scripted C leaf for the core tests. Each leaf returns the
** statuses of its script in turn (the last one repeats) and appends its
** events ("enter A", "tick A", "exit A success", "abort A") to a shared
** trace, which the tests compare tick by tick. Also: a compact text form
** of tree definitions (trace_def) and a checking allocator (trace_alloc).
*/
#ifndef bonsai_trace_leaf_h
#define bonsai_trace_leaf_h

#include "bonsai.h"

typedef struct Trace {
  char buf[8192];
  size_t n;
} Trace;

typedef struct Script {
  const char *name;
  Trace *trace;
  int statuses[16]; /* ends at the first 0 (BONSAI_IDLE) */
  int at;           /* ticks so far */
  int fail_event;   /* event (+1) on which the leaf reports an error; 0 none */
  int latent;       /* abort calls that may be latent to answer RUNNING
                    ** (-1: all) */
  int marks;        /* 1: a final abort call (status BONSAI_ABORTED) is
                    ** traced "abort A final" */
} Script;

/* Empties the trace. */
void trace_clear(Trace *t);
/* Appends one event to the trace ("; " between events). */
void trace_append(Trace *t, const char *s);
/* Returns the trace and empties it (valid until the next call). */
const char *trace_take(Trace *t);

/* The leaf function; call->data is a Script. */
int trace_leaf(const bonsai_call *call);

/* Registers s under s->name with every lifecycle event. */
void trace_register(bonsai_env *env, Script *s);
/* Registers s under s->name with only the given BONSAI_LEAF_* flags. */
void trace_register_flags(bonsai_env *env, Script *s, unsigned flags);

/* Fills s with a name, a trace and a script written as letters: 'R'
** running, 'S' success, 'F' failure, 'X' the invalid status 42. */
void trace_script(Script *s, const char *name, Trace *t, const char *codes);

/*
** Adds the tree described by spec to d, through the bonsai_def_* calls:
**   node   := leaf | kind [':' name] ['{' param {',' param} '}']
**             ['(' node {',' node} ')']
**   leaf   := ['?'] Name [':' name]    a registered leaf (its name starts
**                                      with a capital); '?': a condition
**   param  := key '=' value            a number, true or false, or else a
**                                      string ('...' quotes allowed)
** e.g. "sequence:root(?Ready, repeater{times=3}(Step), wait{seconds=2})".
** Returns 0, or -1 on a syntax error (definition errors stay in d).
*/
int trace_def(bonsai_def *d, const char *spec);

/* Allocator statistics for trace_alloc (pass a pointer as its ud). */
typedef struct AllocStats {
  size_t bytes;   /* live bytes */
  long blocks;    /* live blocks */
  long calls;     /* allocations and growths so far */
  long fail_at;   /* the allocation or growth with this number fails; 0 never */
  long failed;    /* how many failed */
  long bad_osize; /* frees or reallocs given a wrong old size */
} AllocStats;

/* A bonsai_alloc that counts, checks every osize against the block's real
** size, and fails on request. */
void *trace_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

#endif
