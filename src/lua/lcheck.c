/*
** lcheck.c: refusing typos with a suggestion. A word list is one string of
** space-separated names (as kinds.c writes a kind's keys); the nearest word
** to a misspelt one is the same word in snake case, the word another
** runtime's name stands for (hints below), or the closest by edit distance.
** Used by the walk of node tables (ltree.c), the option tables of bt.agent
** and bt.tick_all, and from Lua (core._checkopts, core._nearest) by the DSL.
** Calls no other binding file.
*/
#include <string.h>

#include "bonsai.h"
#include "lbonsai.h"

#define MAXWORD 64 /* longer words get no suggestion */

/* Names other runtimes (BehaviorTree.CPP, behavior3, py_trees, Unreal) and
** habits give to Bonsai's nodes and options, in snake case: other, ours.
** A hint is offered only when 'ours' is in the list being searched. */
static const char *const hints[] = {
    /* nodes */
    "sequence_star", "sequence", "sequence_with_memory", "sequence",
    "mem_sequence", "sequence", "fallback_star", "selector",
    "fallback_with_memory", "selector", "priority", "selector",
    "mem_priority", "selector", "reactive_fallback", "reactive_selector",
    "parallel_all", "parallel", "simple_parallel", "parallel",
    "parallel_node", "parallel", "repeat", "repeater", "loop", "repeater",
    "retry_until_successful", "retry", "repeat_until_success", "retry",
    "retry_until_success", "retry", "succeeder", "force_success",
    "always_succeed", "force_success", "failure_is_success",
    "force_success", "failer", "force_failure", "always_fail",
    "force_failure", "success_is_failure", "force_failure", "not", "invert",
    "negate", "invert", "max_time", "time_limit", "limiter", "limit",
    "one_shot", "run_once", "sleep", "wait", "sub_tree", "subtree",
    "precondition", "guard", "blackboard", "check",
    "check_blackboard_variable_value", "check",
    "check_blackboard_variable_exists", "is_set", "compare_bb_entries",
    "check", "conditional_loop", "repeat_until_failure", "leaf", "action",
    /* options */
    "count", "times", "num_cycles", "times", "num_attempts", "times",
    "max_attempts", "times", "attempts", "times", "max_loop", "times",
    "duration", "seconds", "time", "seconds", "msec", "seconds",
    "delay_msec", "seconds", "timeout", "seconds", "wait_time", "seconds",
    "success_count", "success", "success_threshold", "success",
    "failure_count", "failure", "failure_threshold", "failure",
    "abort_mode", "abort", "observer_aborts", "abort",
    "bb", "blackboard", "func", "fn", "function", "fn", "on_tick", "tick",
    "on_enter", "enter", "on_exit", "exit", "on_abort", "abort",
    "arguments", "args", "params", "args", NULL};

/* Whether words (space-separated) holds w (of length n). */
static int haswordn(const char *words, const char *w, size_t n) {
  const char *p = words;
  while (*p != '\0') {
    size_t len = strcspn(p, " ");
    if (len == n && memcmp(p, w, n) == 0)
      return 1;
    p += len;
    while (*p == ' ')
      p++;
  }
  return 0;
}

int lb_hasword(const char *words, const char *w) {
  return haswordn(words, w, strlen(w));
}

/* Edit distance of a and b with transpositions (optimal string
** alignment); both at most MAXWORD long. */
static size_t distance(const char *a, size_t n, const char *b, size_t m) {
  size_t d[MAXWORD + 1][MAXWORD + 1], i, j;
  for (i = 0; i <= n; i++)
    d[i][0] = i;
  for (j = 0; j <= m; j++)
    d[0][j] = j;
  for (i = 1; i <= n; i++)
    for (j = 1; j <= m; j++) {
      size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < best)
        best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best)
        best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

#define ISUPPER(c) ((c) >= 'A' && (c) <= 'Z')
#define ISLOWER(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9'))

/* w in snake case and lower case ("SequenceStar" -> "sequence_star",
** "CompareBBEntries" -> "compare_bb_entries", "SUCCESS" -> "success") into
** out (MAXWORD + 1 bytes); its length, or 0 if it does not fit. */
static size_t snake(const char *w, char *out) {
  size_t n = 0, i;
  for (i = 0; w[i] != '\0'; i++) {
    int c = (unsigned char)w[i];
    if (n + 2 > MAXWORD)
      return 0;
    if (ISUPPER(c)) {
      if (i > 0 && (ISLOWER(w[i - 1]) ||
                    (ISUPPER(w[i - 1]) && ISLOWER(w[i + 1]))))
        out[n++] = '_';
      c += 'a' - 'A';
    } else if (c == '-' || c == ' ') {
      c = '_';
    }
    out[n++] = (char)c;
  }
  out[n] = '\0';
  return n;
}

int lb_nearest(lua_State *L, const char *word, const char *words) {
  char w[MAXWORD + 1];
  size_t n = snake(word, w), bestd = (size_t)-1, maxd;
  const char *p = words, *best = NULL;
  int i;
  if (n == 0)
    return 0;
  if (haswordn(words, w, n)) {
    lua_pushstring(L, w);
    return 1;
  }
  for (i = 0; hints[i] != NULL; i += 2)
    if (strcmp(hints[i], w) == 0 && lb_hasword(words, hints[i + 1])) {
      lua_pushstring(L, hints[i + 1]);
      return 1;
    }
  maxd = n <= 4 ? 1 : n <= 8 ? 2 : 3;
  while (*p != '\0') {
    size_t len = strcspn(p, " "), d;
    if (len <= MAXWORD && (d = distance(w, n, p, len)) < bestd) {
      bestd = d;
      best = p;
    }
    p += len;
    while (*p == ' ')
      p++;
  }
  if (best == NULL || bestd > maxd)
    return 0;
  lua_pushlstring(L, best, strcspn(best, " "));
  return 1;
}

const char *lb_badkey(lua_State *L, const char *what, const char *key,
                      const char *words) {
  if (lb_nearest(L, key, words))
    return lua_pushfstring(L, "%s has no option '%s' (did you mean '%s'?)",
                           what, key, lua_tostring(L, -1));
  return lua_pushfstring(L, "%s has no option '%s' (it takes: %s)", what, key,
                         words);
}

void lb_checkopts(lua_State *L, int idx, const char *what, const char *words) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "%s: the options are named (got a %s key)", what,
                 luaL_typename(L, -1));
    if (!lb_hasword(words, lua_tostring(L, -1))) {
      lb_badkey(L, what, lua_tostring(L, -1), words);
      lua_error(L);
    }
  }
}

const char *lb_kindwords(lua_State *L, int kind) {
  bonsai_kindinfo ki;
  luaL_Buffer b;
  int p;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, bonsai_node_keys());
  if (bonsai_kind_info(kind, &ki) == BONSAI_OK) {
    for (p = 0; ki.params[p] != NULL; p++) {
      luaL_addchar(&b, ' ');
      luaL_addstring(&b, ki.params[p]);
    }
    if (ki.keys[0] != '\0') {
      luaL_addchar(&b, ' ');
      luaL_addstring(&b, ki.keys);
    }
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/* core._checkopts(t, what, words): refuses a key of t not among words */
int lb_checkopts_lua(lua_State *L) {
  const char *what = luaL_checkstring(L, 2);
  const char *words = luaL_checkstring(L, 3);
  if (!lua_isnil(L, 1)) {
    if (!lua_istable(L, 1))
      return luaL_error(L, "%s: the options must be a table (got %s)", what,
                        luaL_typename(L, 1));
    lb_checkopts(L, 1, what, words);
  }
  return 0;
}

/* core._nearest(word, words): the word of words meant, or nil */
int lb_nearest_lua(lua_State *L) {
  if (!lb_nearest(L, luaL_checkstring(L, 1), luaL_checkstring(L, 2)))
    lua_pushnil(L);
  return 1;
}
