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

/* Pushes the words of words nearest to w (snake case, n bytes) by edit
** distance, through the hints: a misspelling of another runtime's name
** ("cout" for "count") means the word that name stands for. Returns how
** many words it pushed (as one space-separated string), 0 for none. */
static int nearhints(lua_State *L, const char *w, const char *words) {
  char buf[4 * (MAXWORD + 1)];
  luaL_Buffer b;
  int i, k = 0;
  luaL_buffinit(L, &b);
  for (i = 0; hints[i] != NULL; i += 2)
    if (lb_hasword(words, hints[i + 1])) {
      luaL_addstring(&b, hints[i]);
      luaL_addchar(&b, ' ');
    }
  luaL_pushresult(&b);
  if (bonsai_nearest(w, lua_tostring(L, -1), buf, sizeof buf) > 0) {
    for (i = 0; hints[i] != NULL; i += 2) /* the first one near: its word */
      if (strncmp(hints[i], buf, strcspn(buf, " ")) == 0 &&
          hints[i][strcspn(buf, " ")] == '\0') {
        lua_pushstring(L, hints[i + 1]);
        k = 1;
        break;
      }
  }
  lua_remove(L, k > 0 ? -2 : -1);
  return k;
}

/* Pushes the word (or the words, up to 3, space-separated) of words that
** word most likely means; returns how many (0: nothing pushed). */
static int meant(lua_State *L, const char *word, const char *words) {
  char w[MAXWORD + 1], buf[4 * (MAXWORD + 1)];
  size_t n = snake(word, w);
  int i, k;
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
  if ((k = bonsai_nearest(w, words, buf, sizeof buf)) > 0 ||
      (strcmp(word, w) != 0 &&
       (k = bonsai_nearest(word, words, buf, sizeof buf)) > 0)) {
    lua_pushstring(L, buf);
    return k;
  }
  return nearhints(L, w, words);
}

int lb_nearest(lua_State *L, const char *word, const char *words) {
  if (meant(L, word, words) == 0)
    return 0;
  lua_pushlstring(L, lua_tostring(L, -1), strcspn(lua_tostring(L, -1), " "));
  lua_remove(L, -2);
  return 1;
}

const char *lb_suggest(lua_State *L, const char *word, const char *words) {
  char buf[4 * (MAXWORD + 3) + 40];
  if (meant(L, word, words) == 0) {
    lua_pushliteral(L, "");
    return "";
  }
  bonsai_did_you_mean(lua_tostring(L, -1), buf, sizeof buf);
  lua_pop(L, 1);
  lua_pushstring(L, buf); /* (void before Lua 5.2) */
  return lua_tostring(L, -1);
}

const char *lb_badkey(lua_State *L, const char *what, const char *key,
                      const char *words) {
  if (*lb_suggest(L, key, words) != '\0')
    return lua_pushfstring(L, "%s has no option '%s'%s", what, key,
                           lua_tostring(L, -1));
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

/* The words at idx: a string of space-separated words, or a list (or
** set) of strings, joined (those holding a space or a NUL left out);
** pushed. */
static const char *wordsat(lua_State *L, int idx) {
  int acc;
  if (lua_type(L, idx) != LUA_TTABLE) {
    lua_pushstring(L, luaL_checkstring(L, idx));
    return lua_tostring(L, -1);
  }
  idx = lua_absindex(L, idx);
  lua_pushliteral(L, "");
  acc = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    int k = lua_type(L, -2) == LUA_TSTRING ? acc + 1 : acc + 2; /* set, list */
    size_t len;
    const char *s = lua_type(L, k) == LUA_TSTRING ? lua_tolstring(L, k, &len)
                                                  : NULL;
    if (s != NULL && len > 0 && len <= MAXWORD &&
        memchr(s, ' ', len) == NULL && strlen(s) == len) {
      lua_pushvalue(L, acc);
      lua_pushvalue(L, k);
      lua_pushliteral(L, " ");
      lua_concat(L, 3);
      lua_replace(L, acc);
    }
    lua_pop(L, 1);
  }
  return lua_tostring(L, acc);
}

/* core._nearest(word, words): the word of words meant, or nil; words: a
** string of space-separated words, or a list or set of strings */
int lb_nearest_lua(lua_State *L) {
  const char *word = luaL_checkstring(L, 1);
  if (!lb_nearest(L, word, wordsat(L, 2)))
    lua_pushnil(L);
  return 1;
}

/* core._suggest(word, words): " (did you mean 'x'?)", " (did you mean 'x'
** or 'y'?)", or "" when no word is near */
int lb_suggest_lua(lua_State *L) {
  const char *word = luaL_checkstring(L, 1);
  lb_suggest(L, word, wordsat(L, 2));
  return 1;
}

const char *lb_leafnames(lua_State *L) {
  const bonsai_env *env = lb_context(L)->env;
  luaL_Buffer b;
  size_t len = bonsai_leaf_names(env, NULL, 0);
  char *p = luaL_buffinitsize(L, &b, len + 1);
  bonsai_leaf_names(env, p, len + 1);
  luaL_pushresultsize(&b, len);
  return lua_tostring(L, -1);
}

/* core._leafnames(): the names of the registered leaves, space-separated */
int lb_leafnames_lua(lua_State *L) {
  lb_leafnames(L);
  return 1;
}
