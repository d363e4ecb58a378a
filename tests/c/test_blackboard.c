/*
** test_blackboard.c: blackboards through the public C API: interned keys,
** tagged values of every type, string copies, parent fallback, and the
** conditions evaluated in C on them (BONSAI_CHECK with every operator,
** "$key" references and type errors; BONSAI_IS_SET).
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

#define R BONSAI_RUNNING

static int key(const char *name) { return bonsai_key(env, name, strlen(name)); }

static bonsai_value nil(void) {
  bonsai_value v;
  memset(&v, 0, sizeof v);
  v.type = BONSAI_TNIL;
  return v;
}

static bonsai_value boolean(int b) {
  bonsai_value v = nil();
  v.type = BONSAI_TBOOLEAN;
  v.u.b = b;
  return v;
}

static bonsai_value integer(long long i) {
  bonsai_value v = nil();
  v.type = BONSAI_TINTEGER;
  v.u.i = i;
  return v;
}

static bonsai_value number(double n) {
  bonsai_value v = nil();
  v.type = BONSAI_TNUMBER;
  v.u.n = n;
  return v;
}

static bonsai_value lstring(const char *s, size_t len) {
  bonsai_value v = nil();
  v.type = BONSAI_TSTRING;
  v.u.str.s = s;
  v.u.str.len = len;
  return v;
}

static bonsai_value string(const char *s) { return lstring(s, strlen(s)); }

static bonsai_value handle(long long h) {
  bonsai_value v = nil();
  v.type = BONSAI_THANDLE;
  v.u.handle = h;
  return v;
}

static void set(bonsai_bb *bb, const char *name, bonsai_value v) {
  assert_int_equal(bonsai_bb_set(bb, key(name), v), BONSAI_OK);
}

static bonsai_value get(const bonsai_bb *bb, const char *name) {
  return bonsai_bb_get(bb, key(name));
}

/* An agent whose root is a check of key "x" against v. */
static bonsai_agent *check(const char *op, bonsai_value v, bonsai_bb *bb) {
  bonsai_def *d = bonsai_def_new(env);
  bonsai_tree *t;
  bonsai_agent *ag;
  char err[256];
  bonsai_def_leaf(d, BONSAI_CHECK, NULL, NULL, NULL);
  bonsai_def_string(d, "key", "x");
  bonsai_def_string(d, "op", op);
  bonsai_def_value(d, "value", v);
  if (bonsai_tree_new(d, "t", &t, err, sizeof err) != BONSAI_OK)
    fail_msg("check %s: %s", op, err);
  bonsai_def_free(d);
  ag = bonsai_agent_new(t, bb, NULL);
  bonsai_tree_release(t);
  assert_non_null(ag);
  return ag;
}

/* An agent running the tree spec with blackboard bb. */
static bonsai_agent *start_bb(const char *spec, bonsai_bb *bb) {
  bonsai_tree *t = build(spec);
  bonsai_agent *ag = bonsai_agent_new(t, bb, NULL);
  bonsai_tree_release(t);
  assert_non_null(ag);
  return ag;
}

/* The check's status with x set to v. */
static int eval(bonsai_agent *ag, bonsai_value x) {
  set(bonsai_agent_bb(ag), "x", x);
  return bonsai_agent_tick(ag, 0);
}

/* {====== keys */

static void keys_are_interned(void **state) {
  int hp, ids[2000], i;
  char name[16];
  (void)state;
  hp = bonsai_key(env, "hp", 2);
  assert_true(hp >= 0);
  assert_int_equal(bonsai_key(env, "hp", 2), hp);
  assert_int_equal(bonsai_key(env, "hpx", 2), hp); /* len counts */
  assert_true(bonsai_key(env, "mp", 2) != hp);
  assert_string_equal(bonsai_key_name(env, hp), "hp");
  assert_null(bonsai_key_name(env, -1));
  assert_null(bonsai_key_name(env, 100000));
  assert_true(bonsai_key(env, "", 0) >= 0);
  assert_string_equal(bonsai_key_name(env, bonsai_key(env, "", 0)), "");
  /* stable and distinct through the table's growth */
  for (i = 0; i < 2000; i++) {
    snprintf(name, sizeof name, "key%d", i);
    ids[i] = key(name);
    assert_true(ids[i] >= 0);
  }
  for (i = 0; i < 2000; i++) {
    snprintf(name, sizeof name, "key%d", i);
    assert_int_equal(key(name), ids[i]);
    assert_string_equal(bonsai_key_name(env, ids[i]), name);
    if (i > 0)
      assert_true(ids[i] != ids[i - 1]);
  }
  assert_int_equal(bonsai_key(env, "hp", 2), hp);
}

/* Key names are C strings: a name holding a NUL byte is refused (the Lua
** binding raises "a blackboard key cannot contain a NUL byte"). */
static void keys_with_nul_bytes(void **state) {
  int a, i;
  char name[16];
  (void)state;
  a = bonsai_key(env, "a", 1);
  assert_true(a >= 0);
  assert_int_equal(bonsai_key(env, "a\0b", 3), -1);
  for (i = 0; i < 100; i++) {
    snprintf(name, sizeof name, "k%d", i);
    key(name);
  }
  assert_int_equal(bonsai_key(env, "a\0b", 3), -1);
  assert_int_equal(bonsai_key(env, "a", 1), a);
}

/* }====== */

/* {====== values */

static void every_type(void **state) {
  bonsai_bb *bb = bonsai_bb_new(env, NULL);
  bonsai_value v;
  (void)state;
  assert_null(bonsai_bb_parent(bb));
  assert_int_equal(get(bb, "unset").type, BONSAI_TNIL);
  set(bb, "nil", nil());
  assert_int_equal(get(bb, "nil").type, BONSAI_TNIL);
  set(bb, "t", boolean(1));
  set(bb, "f", boolean(0));
  set(bb, "i", integer(-9007199254740993LL));
  set(bb, "n", number(2.5));
  set(bb, "s", string("hello"));
  set(bb, "h", handle(77));
  v = get(bb, "t");
  assert_int_equal(v.type, BONSAI_TBOOLEAN);
  assert_true(v.u.b);
  v = get(bb, "f");
  assert_int_equal(v.type, BONSAI_TBOOLEAN);
  assert_false(v.u.b);
  v = get(bb, "i");
  assert_int_equal(v.type, BONSAI_TINTEGER);
  assert_true(v.u.i == -9007199254740993LL);
  v = get(bb, "n");
  assert_int_equal(v.type, BONSAI_TNUMBER);
  assert_true(v.u.n == 2.5);
  v = get(bb, "s");
  assert_int_equal(v.type, BONSAI_TSTRING);
  assert_int_equal(v.u.str.len, 5);
  assert_string_equal(v.u.str.s, "hello");
  v = get(bb, "h");
  assert_int_equal(v.type, BONSAI_THANDLE);
  assert_true(v.u.handle == 77);
  /* a value changes type */
  set(bb, "s", integer(3));
  assert_int_equal(get(bb, "s").type, BONSAI_TINTEGER);
  set(bb, "i", string("now a string"));
  assert_string_equal(get(bb, "i").u.str.s, "now a string");
  bonsai_bb_release(bb);
}

static void strings_are_copied(void **state) {
  bonsai_bb *bb = bonsai_bb_new(env, NULL);
  char buf[] = "hello";
  bonsai_value v;
  (void)state;
  set(bb, "s", string(buf));
  buf[0] = 'j';
  v = get(bb, "s");
  assert_true(v.u.str.s != buf);
  assert_string_equal(v.u.str.s, "hello");
  /* a length, not a terminator */
  set(bb, "bin", lstring("a\0b\0", 4));
  v = get(bb, "bin");
  assert_int_equal(v.u.str.len, 4);
  assert_memory_equal(v.u.str.s, "a\0b\0", 4);
  set(bb, "part", lstring("abcdef", 3));
  assert_string_equal(get(bb, "part").u.str.s, "abc");
  /* writing a key its own value */
  set(bb, "s", get(bb, "s"));
  assert_string_equal(get(bb, "s").u.str.s, "hello");
  /* replacing and clearing strings frees them (checked at teardown) */
  set(bb, "s", string("a longer string than before"));
  set(bb, "s", string("x"));
  set(bb, "bin", nil());
  bonsai_bb_release(bb);
}

static void nil_clears(void **state) {
  bonsai_bb *bb = bonsai_bb_new(env, NULL);
  bonsai_value bad;
  (void)state;
  set(bb, "x", number(1));
  set(bb, "x", nil());
  assert_int_equal(get(bb, "x").type, BONSAI_TNIL);
  set(bb, "never", nil());
  assert_int_equal(get(bb, "never").type, BONSAI_TNIL);
  set(bb, "x", boolean(0));
  assert_int_equal(get(bb, "x").type, BONSAI_TBOOLEAN);
  /* bad keys and types */
  assert_int_equal(bonsai_bb_set(bb, -1, number(1)), BONSAI_EARG);
  assert_int_equal(bonsai_bb_set(bb, 100000, number(1)), BONSAI_EARG);
  assert_int_equal(bonsai_bb_get(bb, 100000).type, BONSAI_TNIL);
  bad = number(1);
  bad.type = 17;
  assert_int_equal(bonsai_bb_set(bb, key("x"), bad), BONSAI_EARG);
  bad.type = -1;
  assert_int_equal(bonsai_bb_set(bb, key("x"), bad), BONSAI_EARG);
  assert_int_equal(get(bb, "x").type, BONSAI_TBOOLEAN);
  bonsai_bb_release(bb);
}

/* A write of an equal value of another type (or of a different number that
** compares equal as a double) must still store what was written. */
static void equal_values_of_other_types(void **state) {
  bonsai_bb *bb;
  bonsai_value v;
  (void)state;
  bb = bonsai_bb_new(env, NULL);
  set(bb, "x", integer(1));
  set(bb, "x", number(1.0));
  v = get(bb, "x");
  assert_int_equal(v.type, BONSAI_TNUMBER);
  set(bb, "y", integer(9007199254740993LL));
  set(bb, "y", number(9007199254740992.0));
  v = get(bb, "y");
  assert_int_equal(v.type, BONSAI_TNUMBER);
  assert_true(v.u.n == 9007199254740992.0);
  bonsai_bb_release(bb);
}

/* Writing the same value again keeps it (and its string) intact. */
static void same_value_again(void **state) {
  bonsai_bb *bb = bonsai_bb_new(env, NULL);
  (void)state;
  set(bb, "s", string("same"));
  set(bb, "s", string("same"));
  assert_string_equal(get(bb, "s").u.str.s, "same");
  set(bb, "b", boolean(1));
  set(bb, "b", boolean(1));
  assert_true(get(bb, "b").u.b);
  set(bb, "h", handle(3));
  set(bb, "h", handle(3));
  assert_true(get(bb, "h").u.handle == 3);
  bonsai_bb_release(bb);
}

static void many_keys(void **state) {
  bonsai_bb *bb = bonsai_bb_new(env, NULL);
  char name[16];
  int i;
  (void)state;
  for (i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "k%d", i);
    set(bb, name, i % 2 ? integer(i) : string(name));
  }
  for (i = 0; i < 1000; i += 3) {
    snprintf(name, sizeof name, "k%d", i);
    set(bb, name, nil());
  }
  for (i = 0; i < 1000; i++) {
    bonsai_value v;
    snprintf(name, sizeof name, "k%d", i);
    v = get(bb, name);
    if (i % 3 == 0)
      assert_int_equal(v.type, BONSAI_TNIL);
    else if (i % 2)
      assert_true(v.type == BONSAI_TINTEGER && v.u.i == i);
    else
      assert_string_equal(v.u.str.s, name);
  }
  bonsai_bb_release(bb);
}

/* Reads fall through to the parents; writes stay local. */
static void parent_fallback(void **state) {
  bonsai_bb *gp = bonsai_bb_new(env, NULL);
  bonsai_bb *p = bonsai_bb_new(env, gp);
  bonsai_bb *c = bonsai_bb_new(env, p);
  (void)state;
  assert_ptr_equal(bonsai_bb_parent(c), p);
  assert_ptr_equal(bonsai_bb_parent(p), gp);
  set(gp, "world", string("shared"));
  set(p, "team", number(2));
  set(gp, "team", number(1));
  assert_string_equal(get(c, "world").u.str.s, "shared");
  assert_true(get(c, "team").u.n == 2); /* the nearest wins */
  set(c, "team", number(3));
  assert_true(get(c, "team").u.n == 3);
  assert_true(get(p, "team").u.n == 2);
  assert_true(get(gp, "team").u.n == 1);
  /* clearing in the child uncovers the parent's value */
  set(c, "team", nil());
  assert_true(get(c, "team").u.n == 2);
  /* and clearing a key only a parent has does not touch the parent */
  set(c, "world", nil());
  assert_string_equal(get(c, "world").u.str.s, "shared");
  /* a child keeps its parents alive */
  bonsai_bb_release(gp);
  bonsai_bb_release(p);
  assert_string_equal(get(c, "world").u.str.s, "shared");
  bonsai_bb_release(c);
}

static void agent_blackboards(void **state) {
  bonsai_bb *shared = bonsai_bb_new(env, NULL);
  bonsai_bb *child = bonsai_bb_new(env, shared);
  bonsai_agent *a1 = start_bb("is_set{key=x}", NULL);
  bonsai_agent *a2 = start_bb("is_set{key=x}", NULL);
  bonsai_agent *b1 = start_bb("is_set{key=x}", shared);
  bonsai_agent *b2 = start_bb("is_set{key=x}", child);
  bonsai_env *other = bonsai_env_new(NULL, NULL);
  bonsai_bb *foreign = bonsai_bb_new(other, NULL);
  (void)state;
  /* each agent without a blackboard gets its own */
  assert_non_null(bonsai_agent_bb(a1));
  assert_true(bonsai_agent_bb(a1) != bonsai_agent_bb(a2));
  set(bonsai_agent_bb(a1), "x", number(1));
  assert_int_equal(bonsai_agent_tick(a1, 0), S);
  assert_int_equal(bonsai_agent_tick(a2, 0), F);
  /* a shared one is seen by both, through the parent for b2 */
  assert_ptr_equal(bonsai_agent_bb(b1), shared);
  assert_int_equal(bonsai_agent_tick(b1, 0), F);
  assert_int_equal(bonsai_agent_tick(b2, 0), F);
  set(shared, "x", boolean(0));
  assert_int_equal(bonsai_agent_tick(b1, 0), S);
  assert_int_equal(bonsai_agent_tick(b2, 0), S);
  /* agents hold their blackboards */
  bonsai_bb_release(child);
  bonsai_bb_release(shared);
  assert_int_equal(bonsai_agent_tick(b2, 0), S);
  /* a blackboard from another environment is refused */
  {
    bonsai_tree *t = bonsai_agent_tree(a1);
    assert_null(bonsai_agent_new(t, foreign, NULL));
  }
  bonsai_bb_release(foreign);
  bonsai_env_release(other);
  bonsai_agent_free(a1);
  bonsai_agent_free(a2);
  bonsai_agent_free(b1);
  bonsai_agent_free(b2);
}

/* }====== */

/* {====== BONSAI_CHECK */

static const char *const ops[] = {"==", "~=", "<", "<=", ">", ">="};

/* Expected status of x op y from the sign of x - y. */
static int expect(int op, int c) {
  switch (op) {
  case 0: return c == 0 ? S : F;
  case 1: return c != 0 ? S : F;
  case 2: return c < 0 ? S : F;
  case 3: return c <= 0 ? S : F;
  case 4: return c > 0 ? S : F;
  default: return c >= 0 ? S : F;
  }
}

static void check_numbers(void **state) {
  static const double xs[] = {-1, 9, 9.5, 10, 10.5, 11, 1e300};
  int op;
  unsigned k;
  (void)state;
  for (op = 0; op < 6; op++) {
    bonsai_agent *ag = check(ops[op], number(10), NULL);
    bonsai_agent *ai = check(ops[op], integer(10), NULL);
    for (k = 0; k < sizeof xs / sizeof *xs; k++) {
      int c = xs[k] < 10 ? -1 : xs[k] > 10;
      assert_int_equal(eval(ag, number(xs[k])), expect(op, c));
      assert_int_equal(eval(ai, number(xs[k])), expect(op, c));
      if (xs[k] == (long long)xs[k] && xs[k] < 1e18) {
        assert_int_equal(eval(ag, integer((long long)xs[k])), expect(op, c));
        assert_int_equal(eval(ai, integer((long long)xs[k])), expect(op, c));
      }
    }
    bonsai_agent_free(ag);
    bonsai_agent_free(ai);
  }
}

/* Large integers compare exactly. */
static void check_large_integers(void **state) {
  bonsai_agent *ag = check(">", integer(4611686018427387904LL), NULL);
  (void)state;
  assert_int_equal(eval(ag, integer(4611686018427387905LL)), S);
  assert_int_equal(eval(ag, integer(4611686018427387904LL)), F);
  bonsai_agent_free(ag);
}

static void check_strings(void **state) {
  static const char *const xs[] = {"", "ab", "abb", "abc", "abcd", "abd",
                                   "b"};
  int op;
  unsigned k;
  (void)state;
  for (op = 0; op < 6; op++) {
    bonsai_agent *ag = check(ops[op], string("abc"), NULL);
    for (k = 0; k < sizeof xs / sizeof *xs; k++) {
      int c = strcmp(xs[k], "abc");
      c = c < 0 ? -1 : c > 0;
      assert_int_equal(eval(ag, string(xs[k])), expect(op, c));
    }
    bonsai_agent_free(ag);
  }
}

/* A value string starting with '$' names another key. */
static void check_key_references(void **state) {
  bonsai_bb *bb = bonsai_bb_new(env, NULL);
  int op;
  (void)state;
  for (op = 0; op < 6; op++) {
    bonsai_agent *ag = check(ops[op], string("$y"), bb);
    set(bb, "y", number(5));
    assert_int_equal(eval(ag, number(4)), expect(op, -1));
    assert_int_equal(eval(ag, integer(5)), expect(op, 0));
    set(bb, "y", number(3));
    assert_int_equal(eval(ag, number(4)), expect(op, 1));
    set(bb, "y", string("m"));
    assert_int_equal(eval(ag, string("a")), expect(op, -1));
    assert_int_equal(eval(ag, string("m")), expect(op, 0));
    assert_int_equal(eval(ag, string("z")), expect(op, 1));
    bonsai_agent_free(ag);
  }
  /* equality with a missing key: compared with nil */
  {
    bonsai_agent *eq = check("==", string("$missing"), bb);
    bonsai_agent *ne = check("~=", string("$missing"), bb);
    assert_int_equal(eval(eq, number(1)), F);
    assert_int_equal(eval(ne, number(1)), S);
    assert_int_equal(eval(eq, nil()), S);
    bonsai_agent_free(eq);
    bonsai_agent_free(ne);
  }
  bonsai_bb_release(bb);
}

/* == and ~= take any types; different types are never equal. */
static void check_equality_any_type(void **state) {
  bonsai_agent *eq = check("==", number(5), NULL);
  bonsai_agent *ne = check("~=", number(5), NULL);
  bonsai_agent *bt = check("==", boolean(1), NULL);
  bonsai_agent *bn = check("==", nil(), NULL);
  bonsai_agent *nn = check("~=", nil(), NULL);
  (void)state;
  assert_int_equal(eval(eq, string("5")), F);
  assert_int_equal(eval(ne, string("5")), S);
  assert_int_equal(eval(eq, boolean(1)), F);
  assert_int_equal(eval(eq, nil()), F);
  assert_int_equal(eval(ne, nil()), S);
  assert_int_equal(eval(eq, handle(5)), F);
  assert_int_equal(eval(bt, boolean(1)), S);
  assert_int_equal(eval(bt, boolean(0)), F);
  assert_int_equal(eval(bt, integer(1)), F);
  assert_int_equal(eval(bn, nil()), S);
  assert_int_equal(eval(bn, boolean(0)), F);
  assert_int_equal(eval(nn, boolean(0)), S);
  assert_int_equal(eval(nn, nil()), F);
  bonsai_agent_free(eq);
  bonsai_agent_free(ne);
  bonsai_agent_free(bt);
  bonsai_agent_free(bn);
  bonsai_agent_free(nn);
}

/* A check with no value compares with nil. */
static void check_without_value(void **state) {
  bonsai_agent *ag = start_bb("check{key=x, op='=='}", NULL);
  (void)state;
  assert_int_equal(bonsai_agent_tick(ag, 0), S);
  assert_int_equal(eval(ag, number(0)), F);
  bonsai_agent_free(ag);
}

/* Ordering values of different types is an error of the check node. */
static void check_type_mismatch(void **state) {
  Script a;
  bonsai_agent *ag;
  char path[64];
  (void)state;
  trace_script(&a, "A", &trace, "R");
  trace_register(env, &a);
  ag = start_bb("parallel(A, check{key=x, op='<', value=10})", NULL);
  set(bonsai_agent_bb(ag), "x", string("abc"));
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(trace_take(&trace), "enter A; tick A; abort A");
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "'x' is a string, compared with a number");
  bonsai_tree_node_path(bonsai_agent_tree(ag), bonsai_agent_errnode(ag), path,
                        sizeof path);
  assert_string_equal(path, "parallel/check[2]");
  assert_int_equal(bonsai_agent_status(ag), BONSAI_ABORTED);
  /* unset */
  set(bonsai_agent_bb(ag), "x", nil());
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "key 'x' is not set");
  bonsai_agent_free(ag);
  /* a key not set, with the set keys it may mean */
  ag = start_bb("check{key=stok, op='<', value=3}", NULL);
  set(bonsai_agent_bb(ag), "stock", integer(4));
  set(bonsai_agent_bb(ag), "hp", integer(1));
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "key 'stok' is not set (did you mean 'stock'?)");
  bonsai_agent_free(ag);
  ag = start_bb("parallel(A, check{key=x, op='<', value=10})", NULL);
  set(bonsai_agent_bb(ag), "x", nil());
  set(bonsai_agent_bb(ag), "x", boolean(1));
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "'x' is a boolean, compared with a number");
  /* fixed: the agent runs again */
  trace_clear(&trace);
  set(bonsai_agent_bb(ag), "x", number(20));
  assert_int_equal(bonsai_agent_tick(ag, 1), F);
  assert_string_equal(trace_take(&trace), "enter A; tick A; abort A");
  set(bonsai_agent_bb(ag), "x", integer(2));
  assert_int_equal(bonsai_agent_tick(ag, 1), R);
  bonsai_agent_free(ag);
  /* a referenced key of another type */
  ag = start_bb("check{key=x, op='>=', value='$y'}", NULL);
  set(bonsai_agent_bb(ag), "x", number(1));
  set(bonsai_agent_bb(ag), "y", string("1"));
  assert_int_equal(bonsai_agent_tick(ag, 1), BONSAI_ELEAF);
  assert_string_equal(bonsai_agent_errmsg(ag),
                      "'y' is a string, compared with a number");
  bonsai_agent_free(ag);
}

/* Checks read through the blackboard's parents. */
static void check_reads_parents(void **state) {
  bonsai_bb *p = bonsai_bb_new(env, NULL);
  bonsai_bb *c = bonsai_bb_new(env, p);
  bonsai_agent *ag = start_bb("check{key=hp, op='<=', value='$max'}", c);
  (void)state;
  set(p, "max", number(100));
  set(p, "hp", number(100));
  assert_int_equal(bonsai_agent_tick(ag, 0), S);
  set(c, "hp", number(101));
  assert_int_equal(bonsai_agent_tick(ag, 0), F);
  set(c, "max", number(200));
  assert_int_equal(bonsai_agent_tick(ag, 0), S);
  bonsai_agent_free(ag);
  bonsai_bb_release(c);
  bonsai_bb_release(p);
}

static void is_set_node(void **state) {
  bonsai_bb *p = bonsai_bb_new(env, NULL);
  bonsai_bb *c = bonsai_bb_new(env, p);
  bonsai_agent *ag = start_bb("is_set{key=target}", c);
  (void)state;
  assert_int_equal(bonsai_agent_tick(ag, 0), F);
  set(c, "target", boolean(0)); /* false is a value */
  assert_int_equal(bonsai_agent_tick(ag, 0), S);
  set(c, "target", nil());
  assert_int_equal(bonsai_agent_tick(ag, 0), F);
  set(p, "target", handle(1));
  assert_int_equal(bonsai_agent_tick(ag, 0), S);
  set(p, "target", string(""));
  assert_int_equal(bonsai_agent_tick(ag, 0), S);
  bonsai_agent_free(ag);
  bonsai_bb_release(c);
  bonsai_bb_release(p);
}

/* }====== */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(keys_are_interned),
      T(keys_with_nul_bytes),
      T(every_type),
      T(strings_are_copied),
      T(nil_clears),
      T(equal_values_of_other_types),
      T(same_value_again),
      T(many_keys),
      T(parent_fallback),
      T(agent_blackboards),
      T(check_numbers),
      T(check_large_integers),
      T(check_strings),
      T(check_key_references),
      T(check_equality_any_type),
      T(check_without_value),
      T(check_type_mismatch),
      T(check_reads_parents),
      T(is_set_node),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
