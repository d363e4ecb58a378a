/*
** test_compile.c: definition errors name the node's path; names and layout
** of compiled trees.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"

static int ok(const bonsai_call *c) {
  (void)c;
  return BONSAI_SUCCESS;
}

static void decorator_without_child(void **state) {
  bonsai_env *env = bonsai_env_new(NULL, NULL);
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  char err[256];
  (void)state;
  bonsai_def_begin(d, BONSAI_SEQUENCE, "root");
  bonsai_def_begin(d, BONSAI_SELECTOR, "combat");
  bonsai_def_begin(d, BONSAI_RETRY, NULL);
  bonsai_def_end(d);
  bonsai_def_end(d);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "guard", &t, err, sizeof err),
                   BONSAI_EDEF);
  assert_null(t);
  assert_string_equal(err, "root/combat/retry[1]: 'retry' needs a child");
  bonsai_def_free(d);
  bonsai_env_release(env);
}

static void unknown_leaf_name(void **state) {
  bonsai_env *env = bonsai_env_new(NULL, NULL);
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  char err[256];
  (void)state;
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_cleaf(d, BONSAI_ACTION, NULL, ok, NULL, 0, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "attack", NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "guard", &t, err, sizeof err),
                   BONSAI_EDEF);
  assert_string_equal(err, "sequence/attack: no leaf registered as 'attack'");
  bonsai_def_free(d);
  bonsai_env_release(env);
}

static void sibling_names_are_unique(void **state) {
  bonsai_env *env = bonsai_env_new(NULL, NULL);
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  char path[64];
  (void)state;
  bonsai_leaf_register(env, "step", ok, NULL, 0);
  bonsai_def_begin(d, BONSAI_SEQUENCE, NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "step", NULL);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "step", NULL);
  bonsai_def_cleaf(d, BONSAI_ACTION, NULL, ok, NULL, 0, NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, NULL, 0), BONSAI_OK);
  assert_string_equal(bonsai_tree_node_name(t, 1), "step");
  assert_string_equal(bonsai_tree_node_name(t, 2), "step#2");
  bonsai_tree_node_path(t, 3, path, sizeof path);
  assert_string_equal(path, "sequence/action[3]");
  bonsai_tree_release(t);
  bonsai_def_free(d);
  bonsai_env_release(env);
}

/* bonsai_def_max_nodes: the node past the limit is a definition error,
** and so are names longer than 1024 bytes and NUL bytes in parameters. */
static void definition_limits(void **state) {
  bonsai_env *env = bonsai_env_new(NULL, NULL);
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_value v;
  char err[256], name[1100];
  int k;
  (void)state;
  assert_int_equal(bonsai_def_max_nodes(d, 0), BONSAI_EARG);
  assert_int_equal(bonsai_def_max_nodes(d, 4), BONSAI_OK);
  bonsai_def_begin(d, BONSAI_SEQUENCE, "root");
  for (k = 0; k < 3; k++)
    assert_int_equal(bonsai_def_cleaf(d, BONSAI_ACTION, NULL, ok, NULL, 0,
                                      NULL), BONSAI_OK);
  assert_int_equal(bonsai_def_cleaf(d, BONSAI_ACTION, NULL, ok, NULL, 0, NULL),
                   BONSAI_EDEF);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_string_equal(err, "root: more than 4 nodes (raise the limit: "
                           "max_nodes)");
  bonsai_def_free(d);

  d = bonsai_def_new(env);
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  assert_int_equal(bonsai_def_begin(d, BONSAI_SEQUENCE, name), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "a name is longer than 1024 bytes");
  bonsai_def_free(d);

  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_CHECK, NULL, NULL, NULL);
  v.type = BONSAI_TSTRING;
  v.u.str.s = "hp\0x";
  v.u.str.len = 4;
  assert_int_equal(bonsai_def_value(d, "key", v), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "check: argument 'key' must be a "
                                            "string without NUL bytes");
  bonsai_def_free(d);
  bonsai_env_release(env);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decorator_without_child),
      cmocka_unit_test(unknown_leaf_name),
      cmocka_unit_test(sibling_names_are_unique),
      cmocka_unit_test(definition_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
