/*
** fixture.c: the shared per-test setting of the core tests (fixture.h).
*/
#include <stdio.h>
#include <string.h>

#include "fixture.h"

Trace trace;
bonsai_env *env;
AllocStats mem;
static Script pool[32];
static int npool;

int setup(void **state) {
  (void)state;
  memset(&mem, 0, sizeof mem);
  env = bonsai_env_new(trace_alloc, &mem);
  trace_clear(&trace);
  npool = 0;
  return env == NULL;
}

int teardown(void **state) {
  (void)state;
  bonsai_env_release(env);
  if (mem.blocks != 0 || mem.bad_osize != 0) {
    fprintf(stderr, "leaked %ld blocks; %ld wrong sizes\n", mem.blocks,
            mem.bad_osize);
    return -1;
  }
  return 0;
}

Script *leaf_flags(const char *name, const char *codes, unsigned flags) {
  Script *s = &pool[npool++];
  trace_script(s, name, &trace, codes);
  trace_register_flags(env, s, flags);
  return s;
}

Script *leaf(const char *name, const char *codes) {
  return leaf_flags(name, codes, ALL);
}
