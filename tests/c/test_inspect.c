/*
** test_inspect.c: what a host learns and does through bonsai.h alone, as
** the Lua binding does: node inspection (every parameter kind), versions
** compiled first and set later, a tree adopting another's version, ids of
** the versions a tree and its agents run, blackboard iteration and own
** values, and the node being defined when a definition error happens.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bonsai.h"
#include "fixture.h"

/* Path of node i of the tree's current version. */
static const char *tpath(const bonsai_tree *t, unsigned i) {
  static char buf[256];
  bonsai_tree_node_path(t, i, buf, sizeof buf);
  return buf;
}

/* Path of node i of the version the agent runs. */
static const char *apath(const bonsai_agent *ag, unsigned i) {
  static char buf[256];
  bonsai_agent_node_path(ag, i, buf, sizeof buf);
  return buf;
}

/* A compiled version of spec (a trace_def spec), which must compile. */
static bonsai_version *compile(const char *spec) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_version *v;
  char err[256];
  assert_int_equal(trace_def(d, spec), 0);
  assert_int_equal(bonsai_def_compile(d, &v, err, sizeof err), BONSAI_OK);
  assert_non_null(v);
  bonsai_def_free(d);
  return v;
}

static int cleaf(const bonsai_call *c) {
  (void)c;
  return BONSAI_SUCCESS;
}

/* {====== node inspection */

static void params_of_every_kind(void **state) {
  bonsai_tree *t;
  bonsai_nodeinfo in;
  (void)state;
  leaf("Act", "S");
  t = build("sequence:root(repeater{times=3}(Act), wait{seconds=2},"
            " parallel{success=all,failure=1,wait=true}(Act, Act),"
            " check{key=hp,op=<,value=10}, check{key=a,op='==',value='$b'},"
            " check{key=name,op='~=',value='orc'},"
            " check{key=f,op='==',value=true},"
            " guard{abort=both}(is_set{key=k}, Act),"
            " cooldown{seconds=1.5}(Act), delay{seconds=0.5}(Act),"
            " retry(Act), limit{times=2}(Act))");
  assert_int_equal(bonsai_tree_size(t), 22);
  /* the root */
  assert_int_equal(bonsai_tree_node_info(t, 0, &in), BONSAI_OK);
  assert_int_equal(in.kind, BONSAI_SEQUENCE);
  assert_int_equal(in.parent, BONSAI_NONE);
  assert_int_equal(in.hidden, 0);
  assert_string_equal(in.name, "root");
  assert_null(in.leaf);
  assert_null(in.key);
  assert_int_equal(in.value.type, BONSAI_TNIL);
  /* repeater, and a registered leaf */
  bonsai_tree_node_info(t, 1, &in);
  assert_int_equal(in.kind, BONSAI_REPEATER);
  assert_int_equal(in.times, 3);
  assert_int_equal(in.parent, 0);
  bonsai_tree_node_info(t, 2, &in);
  assert_int_equal(in.kind, BONSAI_ACTION);
  assert_string_equal(in.leaf, "Act");
  assert_string_equal(in.name, "Act");
  assert_int_equal(in.parent, 1);
  assert_string_equal(tpath(t, 2), "root/repeater[1]/Act");
  /* wait */
  bonsai_tree_node_info(t, 3, &in);
  assert_int_equal(in.kind, BONSAI_WAIT);
  assert_true(in.seconds == 2.0);
  /* parallel: "all" counted */
  bonsai_tree_node_info(t, 4, &in);
  assert_int_equal(in.kind, BONSAI_PARALLEL);
  assert_int_equal(in.success, 2);
  assert_int_equal(in.failure, 1);
  assert_int_equal(in.wait, 1);
  /* checks: a number, another key, a string, a boolean */
  bonsai_tree_node_info(t, 7, &in);
  assert_int_equal(in.kind, BONSAI_CHECK);
  assert_string_equal(in.key, "hp");
  assert_string_equal(in.op, "<");
  assert_null(in.valuekey);
  assert_int_equal(in.value.type, BONSAI_TNUMBER);
  assert_true(in.value.u.n == 10.0);
  bonsai_tree_node_info(t, 8, &in);
  assert_string_equal(in.key, "a");
  assert_string_equal(in.op, "==");
  assert_string_equal(in.valuekey, "b");
  assert_int_equal(in.value.type, BONSAI_TNIL);
  bonsai_tree_node_info(t, 9, &in);
  assert_string_equal(in.op, "~=");
  assert_int_equal(in.value.type, BONSAI_TSTRING);
  assert_int_equal(in.value.u.str.len, 3);
  assert_memory_equal(in.value.u.str.s, "orc", 3);
  bonsai_tree_node_info(t, 10, &in);
  assert_int_equal(in.value.type, BONSAI_TBOOLEAN);
  assert_int_equal(in.value.u.b, 1);
  /* guard and its is_set */
  bonsai_tree_node_info(t, 11, &in);
  assert_int_equal(in.kind, BONSAI_GUARD);
  assert_string_equal(in.abort, "both");
  bonsai_tree_node_info(t, 12, &in);
  assert_int_equal(in.kind, BONSAI_IS_SET);
  assert_string_equal(in.key, "k");
  assert_null(in.op);
  assert_int_equal(in.parent, 11);
  /* cooldown, delay, retry (forever), limit */
  bonsai_tree_node_info(t, 14, &in);
  assert_int_equal(in.kind, BONSAI_COOLDOWN);
  assert_true(in.seconds == 1.5);
  bonsai_tree_node_info(t, 16, &in);
  assert_int_equal(in.kind, BONSAI_DELAY);
  assert_true(in.seconds == 0.5);
  bonsai_tree_node_info(t, 18, &in);
  assert_int_equal(in.kind, BONSAI_RETRY);
  assert_int_equal(in.times, 0);
  bonsai_tree_node_info(t, 20, &in);
  assert_int_equal(in.kind, BONSAI_LIMIT);
  assert_int_equal(in.times, 2);
  /* out of range */
  assert_int_equal(bonsai_tree_node_info(t, 22, &in), BONSAI_EARG);
  assert_int_equal(bonsai_tree_node_info(t, BONSAI_NONE, &in), BONSAI_EARG);
  bonsai_tree_release(t);
}

static void leaf_functions_and_hidden_nodes(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_nodeinfo in;
  char err[256];
  (void)state;
  bonsai_def_begin(d, BONSAI_PRIORITY, NULL);
  bonsai_def_begin(d, BONSAI_FILTER, "danger");
  bonsai_def_leaf(d, BONSAI_IS_SET, NULL, NULL, NULL);
  bonsai_def_string(d, "key", "enemy");
  bonsai_def_cleaf(d, BONSAI_ACTION, "flee", cleaf, NULL, 0, NULL);
  bonsai_def_end(d);
  bonsai_def_cleaf(d, BONSAI_CONDITION, "idle", cleaf, NULL, 0, NULL);
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  bonsai_tree_node_info(t, 0, &in);
  assert_int_equal(in.kind, BONSAI_PRIORITY);
  assert_int_equal(in.hidden, 1);
  assert_int_equal(in.parent, BONSAI_NONE);
  assert_non_null(in.name);
  assert_string_equal(tpath(t, 0), "");
  bonsai_tree_node_info(t, 3, &in);
  assert_int_equal(in.kind, BONSAI_ACTION);
  assert_null(in.leaf); /* a function, not a registered leaf */
  assert_string_equal(in.name, "flee");
  assert_string_equal(tpath(t, 3), "danger/flee");
  bonsai_tree_node_info(t, 4, &in);
  assert_int_equal(in.kind, BONSAI_CONDITION);
  assert_int_equal(in.parent, 0);
  assert_string_equal(tpath(t, 4), "idle");
  assert_int_equal(bonsai_tree_env(t) == env, 1);
  bonsai_tree_release(t);
}

/* Texts: a script's source and keys given by bonsai_def_text, a check's
** comparison without one, a condition's text, replaced by a second call,
** refused past BONSAI_MAXTEXT; in dumps on one line. */
static void node_texts(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_value v;
  char err[256], buf[64], *big;
  (void)state;
  leaf("Act", "S");
  bonsai_def_begin(d, BONSAI_SEQUENCE, "s");
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Act", NULL);
  assert_int_equal(bonsai_def_text(d, BONSAI_TEXT_NODE, "n += 1\nm := 2",
                                   "n m"), BONSAI_OK);
  v.type = BONSAI_TINTEGER;
  v.u.i = 10;
  assert_int_equal(bonsai_def_when_check(d, BONSAI_SKIP_IF, "hp", "<", v),
                   BONSAI_OK);
  bonsai_def_leaf(d, BONSAI_CHECK, NULL, NULL, NULL);
  bonsai_def_string(d, "key", "name");
  bonsai_def_string(d, "op", "~=");
  bonsai_def_string(d, "value", "bob's");
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Act", NULL);
  assert_int_equal(bonsai_def_text(d, BONSAI_ON_SUCCESS, "x := 1", "x"),
                   BONSAI_OK);
  assert_int_equal(bonsai_def_text(d, BONSAI_ON_SUCCESS, "y := 2", NULL),
                   BONSAI_OK); /* replaces */
  bonsai_def_end(d);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_OK);
  bonsai_def_free(d);
  assert_int_equal(bonsai_tree_node_text(t, 1, BONSAI_TEXT_NODE, 0, buf,
                                         sizeof buf), 13);
  assert_string_equal(buf, "n += 1\nm := 2");
  bonsai_tree_node_text(t, 1, BONSAI_TEXT_NODE, 1, buf, sizeof buf);
  assert_string_equal(buf, "n m");
  bonsai_tree_node_text(t, 1, BONSAI_SKIP_IF, 0, buf, sizeof buf);
  assert_string_equal(buf, "hp < 10");
  bonsai_tree_node_text(t, 1, BONSAI_SKIP_IF, 1, buf, sizeof buf);
  assert_string_equal(buf, "hp");
  bonsai_tree_node_text(t, 2, BONSAI_TEXT_NODE, 0, buf, sizeof buf);
  assert_string_equal(buf, "name != \"bob's\"");
  bonsai_tree_node_text(t, 3, BONSAI_ON_SUCCESS, 0, buf, sizeof buf);
  assert_string_equal(buf, "y := 2");
  assert_int_equal(bonsai_tree_node_text(t, 3, BONSAI_ON_SUCCESS, 1, buf,
                                         sizeof buf), 0);
  assert_int_equal(bonsai_tree_node_text(t, 0, BONSAI_TEXT_NODE, 0, buf,
                                         sizeof buf), 0);
  assert_string_equal(buf, "");
  assert_int_equal(bonsai_tree_node_text(t, 9, BONSAI_TEXT_NODE, 0, buf,
                                         sizeof buf), 0);
  assert_int_equal(bonsai_tree_node_text(t, 1, BONSAI_NCONDS, 0, buf,
                                         sizeof buf), 0);
  /* cut to the buffer as snprintf does, the full length returned */
  assert_int_equal(bonsai_tree_node_text(t, 1, BONSAI_TEXT_NODE, 0, buf, 4),
                   13);
  assert_string_equal(buf, "n +");
  bonsai_tree_release(t);
  /* too long */
  d = bonsai_def_new(env);
  bonsai_def_leaf(d, BONSAI_ACTION, NULL, "Act", NULL);
  big = test_malloc(BONSAI_MAXTEXT + 2);
  memset(big, 'x', BONSAI_MAXTEXT + 1);
  big[BONSAI_MAXTEXT + 1] = '\0';
  assert_int_equal(bonsai_def_text(d, BONSAI_TEXT_NODE, big, NULL),
                   BONSAI_EDEF);
  test_free(big);
  assert_int_equal(bonsai_tree_new(d, "t", &t, err, sizeof err), BONSAI_EDEF);
  assert_non_null(strstr(err, "a text of at most"));
  bonsai_def_free(d);
}

static void param_names(void **state) {
  (void)state;
  assert_string_equal(bonsai_param_name(0), "times");
  assert_string_equal(bonsai_param_name(6), "value");
  assert_string_equal(bonsai_param_name(8), "wait");
  assert_string_equal(bonsai_param_name(9), "then_skip");
  assert_string_equal(bonsai_param_name(10), "event");
  assert_string_equal(bonsai_param_name(11), "timeout");
  assert_string_equal(bonsai_param_name(12), "abort_timeout");
  assert_null(bonsai_param_name(13));
  assert_null(bonsai_param_name(-1));
}

/* }====== */

/* {====== versions */

static void agent_runs_its_version_until_it_switches(void **state) {
  bonsai_agent *ag;
  bonsai_tree *t;
  bonsai_version *v;
  bonsai_nodeinfo in;
  unsigned long long old;
  (void)state;
  leaf("A", "R");
  leaf("B", "S");
  ag = start("sequence:root(A)");
  t = bonsai_agent_tree(ag);
  old = bonsai_tree_version_id(t);
  assert_true(old != 0);
  assert_true(bonsai_agent_version_id(ag) == old);
  STEP(ag, 0, R, "enter A; tick A");
  v = compile("selector:top(B, A)");
  assert_int_equal(bonsai_tree_set_version(t, v, NULL, 0), BONSAI_OK);
  /* the tree moved on; the agent still runs the old version */
  assert_true(bonsai_tree_version_id(t) != old);
  assert_true(bonsai_agent_version_id(ag) == old);
  assert_int_equal(bonsai_agent_nodes(ag), 2);
  assert_int_equal(bonsai_tree_size(t), 3);
  assert_string_equal(apath(ag, 1), "root/A");
  assert_string_equal(tpath(t, 1), "top/B");
  assert_int_equal(bonsai_agent_node_info(ag, 0, &in), BONSAI_OK);
  assert_int_equal(in.kind, BONSAI_SEQUENCE);
  assert_int_equal(bonsai_agent_node_info(ag, 2, &in), BONSAI_EARG);
  assert_int_equal(bonsai_agent_node_status(ag, 1), R);
  assert_int_equal(bonsai_agent_node_path(ag, 2, NULL, 0), 0);
  /* at its next tick it switches */
  STEP(ag, 0, S, "abort A; enter B; tick B; exit B success");
  assert_true(bonsai_agent_version_id(ag) == bonsai_tree_version_id(t));
  assert_int_equal(bonsai_agent_nodes(ag), 3);
  assert_string_equal(apath(ag, 2), "top/A");
  bonsai_agent_node_info(ag, 1, &in);
  assert_string_equal(in.leaf, "B");
  bonsai_agent_free(ag);
}

static void compile_errors_and_other_environments(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_version *v = (bonsai_version *)&v;
  bonsai_env *other = bonsai_env_new(NULL, NULL);
  bonsai_def *od = bonsai_def_new(other);
  bonsai_tree *t;
  char err[256];
  (void)state;
  leaf("A", "S");
  /* a definition error: nothing compiled */
  bonsai_def_begin(d, BONSAI_SEQUENCE, "root");
  bonsai_def_begin(d, BONSAI_INVERT, NULL);
  bonsai_def_end(d);
  bonsai_def_end(d);
  assert_int_equal(bonsai_def_compile(d, &v, err, sizeof err), BONSAI_EDEF);
  assert_null(v);
  assert_string_equal(err, "root/invert[1]: 'invert' needs a child");
  assert_int_equal(bonsai_def_compile(d, &v, NULL, 0), BONSAI_EDEF);
  bonsai_def_free(d);
  bonsai_version_release(NULL);
  /* a version of another environment is refused (and released) */
  t = build("A");
  assert_int_equal(trace_def(od, "sequence(invert(wait{seconds=1}))"), 0);
  assert_int_equal(bonsai_def_compile(od, &v, err, sizeof err), BONSAI_OK);
  assert_int_equal(bonsai_tree_set_version(t, v, NULL, 0), BONSAI_EARG);
  assert_int_equal(bonsai_tree_set_version(t, NULL, NULL, 0), BONSAI_EARG);
  assert_int_equal(bonsai_tree_size(t), 1);
  /* a version compiled and never set */
  bonsai_version_release(compile("sequence(A, A)"));
  bonsai_tree_release(t);
  bonsai_def_free(od);
  bonsai_env_release(other);
}

static void adopt_takes_the_other_version(void **state) {
  bonsai_tree *t, *u, *x;
  bonsai_agent *ag;
  bonsai_env *other = bonsai_env_new(NULL, NULL);
  bonsai_def *od = bonsai_def_new(other);
  char err[256];
  (void)state;
  leaf("A", "S");
  leaf("B", "F");
  t = build("sequence:one(A)");
  u = build("selector:two(B, A)");
  ag = bonsai_agent_new(t, NULL, NULL);
  assert_int_equal(bonsai_tree_adopt(t, u), BONSAI_OK);
  assert_true(bonsai_tree_version_id(t) == bonsai_tree_version_id(u));
  assert_string_equal(tpath(t, 2), "two/A");
  assert_int_equal(bonsai_tree_size(t), 3);
  assert_int_equal(bonsai_tree_adopt(t, u), BONSAI_OK); /* no change */
  STEP(ag, 0, S, "enter B; tick B; exit B failure; enter A; tick A; "
                 "exit A success");
  assert_true(bonsai_agent_version_id(ag) == bonsai_tree_version_id(u));
  /* not across environments */
  assert_int_equal(trace_def(od, "wait{seconds=1}"), 0);
  assert_int_equal(bonsai_tree_new(od, "x", &x, err, sizeof err), BONSAI_OK);
  assert_int_equal(bonsai_tree_adopt(t, x), BONSAI_EARG);
  assert_true(bonsai_tree_env(x) == other);
  bonsai_agent_free(ag);
  bonsai_tree_release(t);
  bonsai_tree_release(u);
  bonsai_tree_release(x);
  bonsai_def_free(od);
  bonsai_env_release(other);
}

/* }====== */

/* {====== leaves, blackboards, definitions */

static void leaf_find(void **state) {
  bonsai_env *other = bonsai_env_new(NULL, NULL);
  int id;
  (void)state;
  leaf("Found", "S");
  id = bonsai_leaf_find(env, "Found");
  assert_true(id >= 0);
  assert_int_equal(bonsai_leaf_find(env, "Lost"), -1);
  assert_int_equal(bonsai_leaf_find(env, NULL), -1);
  assert_int_equal(bonsai_leaf_find(other, "Found"), -1); /* not there */
  assert_int_equal(bonsai_leaf_register(other, "Found", cleaf, NULL, 0),
                   BONSAI_OK);
  assert_int_equal(bonsai_leaf_find(other, "Found"), id); /* one id */
  bonsai_env_release(other);
}

static bonsai_value num(double n) {
  bonsai_value v;
  v.type = BONSAI_TNUMBER;
  v.u.n = n;
  return v;
}

static void blackboard_iteration(void **state) {
  bonsai_bb *parent = bonsai_bb_new(env, NULL);
  bonsai_bb *bb = bonsai_bb_new(env, parent);
  int a = bonsai_key(env, "a", 1), b = bonsai_key(env, "b", 1);
  int c = bonsai_key(env, "c", 1), p = bonsai_key(env, "p", 1);
  int key, seen = 0;
  unsigned cursor = 0;
  bonsai_value v, nil, h;
  (void)state;
  nil.type = BONSAI_TNIL;
  h.type = BONSAI_THANDLE;
  h.u.handle = 7;
  assert_int_equal(bonsai_bb_next(bb, &cursor, &key, &v), 0); /* empty */
  assert_int_equal(bonsai_bb_update(bb, a, num(1)), 1);
  assert_int_equal(bonsai_bb_update(bb, a, num(1)), 0); /* the same */
  assert_int_equal(bonsai_bb_update(bb, b, num(2)), 1);
  assert_int_equal(bonsai_bb_update(bb, c, h), 1);
  assert_int_equal(bonsai_bb_update(bb, c, h), 1); /* handles always */
  assert_int_equal(bonsai_bb_update(bb, b, nil), 1); /* cleared */
  assert_int_equal(bonsai_bb_update(bb, b, nil), 0);
  assert_int_equal(bonsai_bb_update(bb, -5, nil), BONSAI_EARG);
  assert_int_equal(bonsai_bb_set(parent, p, num(9)), BONSAI_OK);
  assert_int_equal(bonsai_bb_set(parent, a, num(8)), BONSAI_OK);
  /* its own keys, not the cleared one nor its parent's */
  cursor = 0;
  while (bonsai_bb_next(bb, &cursor, &key, &v)) {
    if (key == a) {
      assert_int_equal(v.type, BONSAI_TNUMBER);
      assert_true(v.u.n == 1);
      seen |= 1;
    } else if (key == c) {
      assert_int_equal(v.type, BONSAI_THANDLE);
      assert_int_equal(v.u.handle, 7);
      seen |= 2;
    } else {
      fail_msg("unexpected key %s", bonsai_key_name(env, key));
    }
    /* changing and clearing during the walk is safe */
    assert_int_equal(bonsai_bb_set(bb, key, nil), BONSAI_OK);
  }
  assert_int_equal(seen, 3);
  cursor = 0;
  assert_int_equal(bonsai_bb_next(bb, &cursor, &key, &v), 0);
  /* own values against values seen through the chain */
  assert_int_equal(bonsai_bb_get_own(bb, p).type, BONSAI_TNIL);
  assert_int_equal(bonsai_bb_get(bb, p).type, BONSAI_TNUMBER);
  assert_int_equal(bonsai_bb_get_own(parent, p).type, BONSAI_TNUMBER);
  assert_int_equal(bonsai_bb_get_own(bb, -1).type, BONSAI_TNIL);
  bonsai_bb_set(bb, a, num(3));
  assert_true(bonsai_bb_get_own(bb, a).u.n == 3);
  assert_true(bonsai_bb_get_own(parent, a).u.n == 8);
  bonsai_bb_release(bb);
  bonsai_bb_release(parent);
}

/* The path of the node being defined, as a host names it in its own
** errors. */
static const char *openpath(const bonsai_def *d) {
  static char buf[256];
  unsigned open = bonsai_def_open(d);
  if (open == BONSAI_NONE)
    return "-";
  bonsai_def_node_path(d, open, buf, sizeof buf);
  return buf;
}

static void open_node_in_a_definition_error(void **state) {
  bonsai_def *d = bonsai_def_new(env);
  char small[6];
  (void)state;
  assert_string_equal(openpath(d), "-");
  bonsai_def_begin(d, BONSAI_PRIORITY, NULL);
  assert_int_equal(bonsai_def_open(d), 0);
  assert_string_equal(openpath(d), ""); /* hidden: no path */
  bonsai_def_begin(d, BONSAI_SEQUENCE, "root");
  assert_string_equal(openpath(d), "root");
  bonsai_def_begin(d, BONSAI_SELECTOR, NULL);
  assert_int_equal(bonsai_def_open(d), 2);
  assert_string_equal(openpath(d), "root/selector[1]");
  bonsai_def_begin(d, BONSAI_REPEATER, NULL);
  assert_string_equal(openpath(d), "root/selector[1]/repeater[1]");
  /* the error names the node the host names */
  assert_int_equal(bonsai_def_number(d, "seconds", 1), BONSAI_EDEF);
  assert_string_equal(bonsai_def_errmsg(d), "root/selector[1]/repeater[1]: "
                                            "'repeater' takes no argument "
                                            "'seconds'");
  /* lengths, truncation, out of range */
  assert_int_equal(bonsai_def_node_path(d, 3, NULL, 0), 28);
  assert_int_equal(bonsai_def_node_path(d, 3, small, sizeof small), 28);
  assert_string_equal(small, "root/");
  assert_int_equal(bonsai_def_node_path(d, 4, small, sizeof small), 0);
  assert_string_equal(small, "");
  /* after an error the definition stays where it failed */
  assert_int_equal(bonsai_def_end(d), BONSAI_EDEF);
  assert_string_equal(openpath(d), "root/selector[1]/repeater[1]");
  bonsai_def_free(d);
}

/* }====== */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(params_of_every_kind, setup, teardown),
      cmocka_unit_test_setup_teardown(leaf_functions_and_hidden_nodes, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(param_names, setup, teardown),
      cmocka_unit_test_setup_teardown(node_texts, setup, teardown),
      cmocka_unit_test_setup_teardown(agent_runs_its_version_until_it_switches,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(compile_errors_and_other_environments,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(adopt_takes_the_other_version, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(leaf_find, setup, teardown),
      cmocka_unit_test_setup_teardown(blackboard_iteration, setup, teardown),
      cmocka_unit_test_setup_teardown(open_node_in_a_definition_error, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
