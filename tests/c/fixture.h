/*
** fixture.h: the per-test setting shared by the core tests: an environment
** whose allocator checks every byte comes back with the right size, a trace,
** and a pool of traced leaves registered by name.
*/
#ifndef bonsai_fixture_h
#define bonsai_fixture_h

#include "trace_leaf.h"

#define R BONSAI_RUNNING
#define S BONSAI_SUCCESS
#define F BONSAI_FAILURE
#define A BONSAI_ABORTED
#define ALL (BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT | BONSAI_LEAF_ABORT)

/* One tick of ag, checked: its status and the trace it left. */
#define STEP(ag, dt, status, expected)                                       \
  do {                                                                       \
    int st_ = bonsai_agent_tick((ag), (dt));                                 \
    assert_string_equal(trace_take(&trace), (expected));                     \
    assert_int_equal(st_, (status));                                         \
  } while (0)

extern Trace trace;
extern bonsai_env *env;
extern AllocStats mem;

/* cmocka setup and teardown: a fresh environment; teardown fails on a
** leaked block or a free given the wrong size. */
int setup(void **state);
int teardown(void **state);

/* A traced leaf registered under name, with the given script and flags
** (leaf: every lifecycle event). */
Script *leaf_flags(const char *name, const char *codes, unsigned flags);
Script *leaf(const char *name, const char *codes);

/* The tree written as trace_def spec (fails the test on an error); an
** agent running it (holding the only reference); its node statuses in
** pre-order, one letter each: . R S F A, K skipped, O aborting. */
bonsai_tree *build(const char *spec);
bonsai_agent *start(const char *spec);
const char *states(const bonsai_agent *ag);
/* Sets key to the number v on ag's blackboard. */
void set_number(bonsai_agent *ag, const char *key, double v);
/* The paths of ag's running nodes, outermost first, joined by ", " (valid
** until the next call). */
const char *running_paths(const bonsai_agent *ag);
/* Compiles spec (a trace_def spec), which must fail; returns the message
** (valid until the next call). */
const char *deferr(const char *spec);

/* The bytes a save writes through saved_put (ud: a Saved; free p). */
typedef struct Saved {
  unsigned char *p;
  size_t n;
} Saved;
void saved_put(void *ud, const void *p, size_t n);

#endif
