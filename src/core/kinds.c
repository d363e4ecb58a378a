/*
** kinds.c: the table of node kinds (kinds.h): per kind its name, its
** class, the children it takes, its per-agent data and what that data
** means, its flags, and the parameters it takes and needs, the other keys
** its node tables take. Rows follow bonsai_kind (ORDER KIND). Also the
** keys every node table takes, the names of statuses and of pre- and
** post-conditions: the vocabulary of trees in one place.
*/
#include "bonsai.h"
#include "kinds.h"

#define S BONSAI_SUCCESS
#define F BONSAI_FAILURE
/* The children a kind takes: none, one, one or more, any number. */
#define LEAF 0, 0
#define ONE 1, 1
#define MANY 1, BS_MANY
#define ANY 0, BS_MANY
/* What a Lua leaf's node table holds besides the common keys. */
#define LEAFKEYS "fn leaf task tick enter exit abort save restore args script"

const KindInfo bs_kinds[BONSAI_NKINDS] = {
  /* name, class, children (fewest, most), data bytes, flags, cont, takes,
  ** needs, number param, other keys of its node tables (besides
  ** bs_node_keys) */
  /* data: none (a latent abort's time is kept by the abort path, latent.c;
  ** its abort_timeout is the node's secs, else its registered leaf's) */
  {"action", KC_LEAF, LEAF, 0, 0, 0, P_ABORT_TIMEOUT, 0, NULL, LEAFKEYS},
  {"condition", KC_LEAF, LEAF, 0, 0, 0, 0, 0, NULL, LEAFKEYS},
  /* data: F64 start time */
  {"wait", KC_LEAF, LEAF, 8, 0, 0, P_SECONDS, P_SECONDS, "seconds", NULL},
  {"check", KC_LEAF, LEAF, 0, 0, 0, P_KEY | P_OP | P_VALUE, P_KEY | P_OP, NULL,
   "script"},
  {"is_set", KC_LEAF, LEAF, 0, 0, 0, P_KEY, P_KEY, NULL, NULL},
  /* data: W0 the running (or next) child */
  {"sequence", KC_COMPOSITE, MANY, 4, K_MEMORY | K_CHILDWORD, S, 0, 0, NULL,
   NULL},
  {"selector", KC_COMPOSITE, MANY, 4, K_MEMORY | K_CHILDWORD, F, 0, 0, NULL,
   NULL},
  /* data: W0 the child running since the last tick, or none */
  {"reactive_sequence", KC_COMPOSITE, MANY, 4,
   K_ACTIVE | K_REACTIVE | K_CHILDWORD, S, 0, 0, NULL, NULL},
  {"reactive_selector", KC_COMPOSITE, MANY, 4,
   K_ACTIVE | K_REACTIVE | K_CHILDWORD, F, 0, 0, NULL, NULL},
  /* data: W0 successes, W1 failures in this run; then the list of its
  ** unfinished children (compile.c, nodesize), not saved: rebuilt from
  ** their statuses after a reload or a restore */
  {"parallel", KC_COMPOSITE, MANY, 8, K_ACTIVE, 0,
   P_SUCCESS | P_FAILURE | P_WAIT, 0, NULL, NULL},
  /* data: W0 the tick in which its child runs */
  {"filter", KC_COMPOSITE, MANY, 4, K_ACTIVE, 0, 0, 0, NULL, "conditions"},
  {"monitor", KC_COMPOSITE, MANY, 4, K_ACTIVE, 0, 0, 0, NULL, "conditions"},
  {"invert", KC_DECORATOR, ONE, 0, 0, 0, 0, 0, NULL, NULL},
  {"force_success", KC_DECORATOR, ONE, 0, 0, 0, 0, 0, NULL, NULL},
  {"force_failure", KC_DECORATOR, ONE, 0, 0, 0, 0, 0, NULL, NULL},
  /* data: W0 runs so far, W1 the tick its child's run started */
  {"repeater", KC_DECORATOR, ONE, 8, 0, 0, P_TIMES, 0, "times", NULL},
  {"retry", KC_DECORATOR, ONE, 8, 0, 0, P_TIMES, 0, "times", NULL},
  /* data: W0 the tick its child's run started */
  {"repeat_until_failure", KC_DECORATOR, ONE, 4, 0, 0, 0, 0, NULL, NULL},
  /* data: F64 start time */
  {"timeout", KC_DECORATOR, ONE, 8, K_ACTIVE, 0, P_SECONDS, P_SECONDS,
   "seconds", NULL},
  {"time_limit", KC_DECORATOR, ONE, 8, K_ACTIVE, 0, P_SECONDS, P_SECONDS,
   "seconds", NULL},
  /* data: W0 runs started in the agent's life */
  {"limit", KC_DECORATOR, ONE, 4, K_LASTING, 0, P_TIMES, P_TIMES, "times",
   NULL},
  /* data: F64 the time until which it refuses */
  {"cooldown", KC_DECORATOR, ONE, 8, K_LASTING, 0, P_SECONDS, P_SECONDS,
   "seconds", NULL},
  /* data: W0 its child's final status, or 0 */
  {"run_once", KC_DECORATOR, ONE, 4, K_LASTING | K_SKIPS, 0, P_THEN_SKIP, 0,
   NULL, NULL},
  /* data: W0 the last result of its check */
  {"guard", KC_COMPOSITE, 2, 2, 4, K_LASTING, 0, P_ABORT, 0, NULL, NULL},
  /* data: W0 the branch running since the last tick */
  {"priority", KC_HIDDEN, MANY, 4, K_ACTIVE | K_REACTIVE | K_CHILDWORD, F, 0,
   0, NULL, NULL},
  /* data: F64 start time */
  {"delay", KC_DECORATOR, ONE, 8, 0, 0, P_SECONDS, P_SECONDS, "seconds", NULL},
  /* data: W0 the child running since the last tick, W1 the place reached
  ** in this tick's order; then per child its utility (a double) and its
  ** place in the order (compile.c, nodesize) */
  {"utility_selector", KC_COMPOSITE, MANY, 8, K_ACTIVE | K_CHILDWORD, 0, 0, 0,
   NULL, NULL},
  {"subtree", KC_DECORATOR, ONE, 0, 0, 0, 0, 0, NULL, "tree args remap"},
  {"keep_running_until_failure", KC_DECORATOR, ONE, 0, 0, 0, 0, 0, NULL, NULL},
  /* data: the host's memory (bonsai_control_memory), BONSAI_CONTROL_MEMORY
  ** bytes; its callbacks are a leaf of the blueprint */
  {"control", KC_COMPOSITE, ANY, BONSAI_CONTROL_MEMORY, K_ACTIVE | K_LASTING,
   0, P_ABORT_TIMEOUT, 0, NULL, "args enter tick abort"},
  /* data: none (the child that runs is the one whose status is running) */
  {"if_then_else", KC_COMPOSITE, 2, 3, 0, 0, 0, 0, 0, NULL, NULL},
  /* data: none; ticked from above while it runs, its condition first */
  {"while_do_else", KC_COMPOSITE, 2, 3, 0, K_ACTIVE, 0, 0, 0, NULL, NULL},
  /* data: W0 the change stamp of its key when it last looked */
  {"skip_unless_updated", KC_DECORATOR, ONE, 4,
   K_LASTING | K_SKIPS | K_STAMPWORD, 0, P_KEY, P_KEY, NULL, NULL},
  {"wait_value_update", KC_DECORATOR, ONE, 4, K_LASTING | K_STAMPWORD, 0,
   P_KEY, P_KEY, NULL, NULL},
  /* data: none (the events delivered to the tick are the agent's: events.c;
  ** the node's a: the key its payload goes to, or none; b: the event) */
  {"event", KC_LEAF, LEAF, 0, 0, 0, P_EVENT | P_KEY, P_EVENT, NULL, NULL},
  /* data: F64 start time (secs: its timeout, or -1) */
  {"wait_event", KC_LEAF, LEAF, 8, 0, 0, P_EVENT | P_KEY | P_TIMEOUT, P_EVENT,
   NULL, NULL},
  /* data: none; its event takes over at the start of the tick it is
  ** delivered to (wakeevents in vm.c), "abort" none or lower */
  {"event_guard", KC_DECORATOR, ONE, 0, 0, 0, P_EVENT | P_ABORT, P_EVENT,
   NULL, NULL},
  /* data: W0 the place reached in this run's order, W1 the run's draw */
  {"random_selector", KC_COMPOSITE, MANY, 8, 0, 0, P_KEY, P_KEY, NULL, NULL},
};

/* The keys every node table takes, whatever its kind: a key added to every
** node goes here (and is read by the binding's walk, ltree.c); the pre-
** and post-conditions are bonsai_cond_name's. */
const char *const bs_node_keys = "type name utility failure_if success_if "
                                 "skip_if run_while on_halted on_failure "
                                 "on_success post";

/* The values of a parallel's policy counts. */
#define COUNT "\"all\", \"one\" or a count >= 1"

/* The parameters, in the order of the P_* bits: name, values. */
const ParamInfo bs_params[BS_NPARAMS] = {
    {"times", "a whole number >= 0"},
    {"seconds", "a number >= 0"},
    {"success", COUNT},
    {"failure", COUNT},
    {"key", "a key name"},
    {"op", "one of == ~= < <= > >="},
    {"value", "a number, string, boolean or nil"},
    {"abort", "\"none\", \"self\", \"lower\" or \"both\""},
    {"wait", "a boolean"},
    {"then_skip", "a boolean"},
    {"event", "an event name (a non-empty string)"},
    {"timeout", "a number >= 0"},
    {"abort_timeout", "a number >= 0"},
};

const char *bonsai_param_name(int i) {
  return i >= 0 && i < BS_NPARAMS ? bs_params[i].name : NULL;
}

const char *bonsai_node_keys(void) { return bs_node_keys; }

const char *bonsai_status_name(int status) {
  static const char *const names[] = {"idle",    "running", "success",
                                      "failure", "aborted", "skipped",
                                      "aborting"};
  return status >= BONSAI_IDLE && status <= BONSAI_ABORTING ? names[status]
                                                            : NULL;
}

const char *bonsai_cond_name(int which) {
  static const char *const names[] = {
      "failure_if", "success_if", "skip_if", "run_while", /* ORDER COND */
      "on_halted",  "on_failure", "on_success", "post"};
  return which >= 0 && which < BONSAI_NCONDS ? names[which] : NULL;
}

const char *bonsai_kind_name(int kind) {
  return kind >= 0 && kind < BONSAI_NKINDS ? bs_kinds[kind].name : NULL;
}

int bonsai_kind_info(int kind, bonsai_kindinfo *info) {
  const KindInfo *k;
  int p, n = 0;
  if (kind < 0 || kind >= BONSAI_NKINDS)
    return BONSAI_EARG;
  k = &bs_kinds[kind];
  info->name = k->name;
  info->cls = k->cls; /* KC_* follow BONSAI_CLASS_* */
  info->number = k->number;
  info->takes = k->takes;
  info->keys = k->keys != NULL ? k->keys : "";
  for (p = 0; p < BS_NPARAMS; p++)
    if (k->takes & (1u << p))
      info->params[n++] = bs_params[p].name;
  info->params[n] = NULL;
  return BONSAI_OK;
}
