/*
** fixture.c: the shared per-test setting of the core tests (fixture.h).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

bonsai_tree *build(const char *spec) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = NULL;
  char err[256];
  if (trace_def(d, spec) != 0)
    fail_msg("syntax error in %s", spec);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("compile %s: %s", spec, err);
  bonsai_def_free(d);
  return t;
}

bonsai_agent *start(const char *spec) {
  bonsai_tree *t = build(spec);
  bonsai_agent *ag = bonsai_agent_new(t, NULL, NULL);
  bonsai_tree_release(t);
  assert_non_null(ag);
  return ag;
}

const char *states(const bonsai_agent *ag) {
  static char buf[128];
  unsigned i, n = bonsai_tree_size(bonsai_agent_tree(ag));
  for (i = 0; i < n && i + 1 < sizeof buf; i++)
    buf[i] = ".RSFAKO"[bonsai_agent_node_status(ag, i)];
  buf[i] = '\0';
  return buf;
}

/* Compiles spec, which must fail; returns the message. */
const char *deferr(const char *spec) {
  static char err[512];
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t = (bonsai_tree *)&t;
  if (trace_def(d, spec) != 0)
    fail_msg("syntax error in %s", spec);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_null(t);
  bonsai_def_free(d);
  return err;
}

void saved_put(void *ud, const void *p, size_t n) {
  Saved *b = (Saved *)ud;
  unsigned char *q = realloc(b->p, b->n + n);
  assert_non_null(q);
  b->p = q;
  memcpy(b->p + b->n, p, n);
  b->n += n;
}

const char *running_paths(const bonsai_agent *ag) {
  static char buf[512];
  unsigned nodes[32], k, n = bonsai_agent_running(ag, nodes, 32);
  size_t at = 0;
  buf[0] = '\0';
  for (k = 0; k < n && k < 32; k++) {
    char path[128];
    bonsai_tree_node_path(bonsai_agent_tree(ag), nodes[k], path, sizeof path);
    at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", k ? ", " : "",
                           path);
  }
  return buf;
}

void set_number(bonsai_agent *ag, const char *key, double v) {
  bonsai_value val;
  val.type = BONSAI_TNUMBER;
  val.u.n = v;
  assert_int_equal(bonsai_bb_set(bonsai_agent_bb(ag),
                                 bonsai_key(env, key, strlen(key)), val),
                   BONSAI_OK);
}
