/*
** bonsai.h: the public C API of Bonsai, a behavior tree runtime.
** A tree definition is built node by node (bonsai_def_*), compiled once into
** an immutable blueprint shared by every agent that runs it, and ticked with
** bonsai_agent_tick. Leaves are C functions registered by name; nothing here
** needs Lua (the Lua binding builds on this header).
*/
#ifndef bonsai_h
#define bonsai_h

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BONSAI_VERSION "0.2.0"

#if defined(__GNUC__) && __GNUC__ >= 4
#define BONSAI_API __attribute__((visibility("default")))
#else
#define BONSAI_API
#endif

/* Node statuses. */
enum {
  BONSAI_IDLE = 0, /* has not run, or was reset */
  BONSAI_RUNNING,
  BONSAI_SUCCESS,
  BONSAI_FAILURE,
  BONSAI_ABORTED, /* its run was cut off */
  BONSAI_SKIPPED, /* passed over: a pre-condition said so (skip_if, a
                  ** run_while that is false), or all its children were */
  BONSAI_ABORTING /* cut off by a decision of the tree while its abort
                  ** callback is still at work (a latent abort: the
                  ** callback returned BONSAI_RUNNING) */
};

/* "No node" (a node index that names none), and limits. */
#define BONSAI_NONE ((unsigned)-1)
#define BONSAI_MAXNODES 0x7fffffffu  /* nodes of one tree */
#define BONSAI_DEFMAXNODES 1000000u  /* default of bonsai_def_max_nodes */
#define BONSAI_MAXNAME 1024u         /* longest name (node, tree, leaf, key) */

/* Result codes (negative, so they never collide with a status). */
enum {
  BONSAI_OK = 0,
  BONSAI_ERROR = -1,  /* a leaf reports an error (see bonsai_agent_error) */
  BONSAI_ENOMEM = -2, /* out of memory */
  BONSAI_EDEF = -3,   /* bad tree definition */
  BONSAI_ELEAF = -4,  /* a leaf failed during a tick or an abort */
  BONSAI_EBUSY = -5,  /* the agent is already ticking */
  BONSAI_EARG = -6,   /* bad argument */
  BONSAI_ESTALE = -7, /* the agent must switch versions first (a host
                      ** with BONSAI_HOST_SWITCHES does that itself) */
  BONSAI_ENOSTEP = -8 /* this tick cannot be stepped: tick the agent with
                      ** bonsai_agent_run (see "Stepped ticks") */
};

/* Node kinds, for bonsai_def_begin and bonsai_def_leaf. ORDER KIND: the
** table of their facts (src/core/kinds.c) follows this order. */
typedef enum bonsai_kind {
  BONSAI_ACTION,             /* leaf: returns a status */
  BONSAI_CONDITION,          /* leaf: success or failure, never running */
  BONSAI_WAIT,               /* leaf: running for "seconds" of agent time */
  BONSAI_CHECK,              /* condition on a blackboard key, in C */
  BONSAI_IS_SET,             /* condition: blackboard key is not nil */
  BONSAI_SEQUENCE,           /* with memory */
  BONSAI_SELECTOR,           /* with memory */
  BONSAI_REACTIVE_SEQUENCE,  /* re-ticks from the first child */
  BONSAI_REACTIVE_SELECTOR,  /* re-ticks from the first child */
  BONSAI_PARALLEL,           /* "success" / "failure" policies; "wait" */
  BONSAI_FILTER,             /* conditions..., child */
  BONSAI_MONITOR,            /* conditions..., child */
  BONSAI_INVERT,
  BONSAI_FORCE_SUCCESS,
  BONSAI_FORCE_FAILURE,
  BONSAI_REPEATER,           /* "times" (0: forever) */
  BONSAI_RETRY,              /* "times" (0: forever) */
  BONSAI_REPEAT_UNTIL_FAILURE,
  BONSAI_TIMEOUT,            /* "seconds" */
  BONSAI_TIME_LIMIT,         /* "seconds" */
  BONSAI_LIMIT,              /* "times" */
  BONSAI_COOLDOWN,           /* "seconds" */
  BONSAI_RUN_ONCE,
  BONSAI_GUARD,              /* check, child; "abort" mode */
  BONSAI_PRIORITY,           /* priority filters..., root (hidden in paths) */
  BONSAI_DELAY,              /* "seconds" before its child is ticked */
  BONSAI_UTILITY_SELECTOR,   /* children by utility, highest first; reactive */
  BONSAI_SUBTREE,            /* another tree's root, inlined; passes status */
  BONSAI_KEEP_RUNNING_UNTIL_FAILURE, /* running after each success (the
                                     ** next run at the next tick) */
  BONSAI_CONTROL,            /* the host decides (bonsai_def_control) */
  BONSAI_IF_THEN_ELSE,       /* condition, then[, else]: the condition once,
                             ** then the branch it chose */
  BONSAI_WHILE_DO_ELSE,      /* condition, do[, else]: the condition at every
                             ** tick, the branch it chooses */
  BONSAI_SKIP_UNLESS_UPDATED, /* "key": skipped unless the key changed since
                              ** it last looked, then its child */
  BONSAI_WAIT_VALUE_UPDATE,  /* "key": running until the key changes, then
                             ** its child */
  BONSAI_EVENT,              /* "event" ["key"]: success when an event of
                             ** that name was delivered to this tick (its
                             ** payload written to the key first) */
  BONSAI_WAIT_EVENT,         /* "event" ["key", "timeout"]: running until an
                             ** event of that name is delivered, then
                             ** success; failure after "timeout" seconds */
  BONSAI_EVENT_GUARD,        /* child; "event", "abort" (none or lower): the
                             ** child starts in a tick the event is
                             ** delivered to, and with "lower" takes over a
                             ** lower-priority running sibling then */
  BONSAI_RANDOM_SELECTOR,    /* "key": a selector over its children in an
                             ** order drawn per run from the agent's seed
                             ** (the number at key) and its tick count */
  BONSAI_NKINDS
} bonsai_kind;

/* A kind's name as the Lua API spells it ("reactive_selector"), or NULL. */
BONSAI_API const char *bonsai_kind_name(int kind);
/* A status's name ("idle", "running", "success", "failure", "aborted",
** "skipped", "aborting"), or NULL. */
BONSAI_API const char *bonsai_status_name(int status);

/* What a kind is, for hosts that make constructors from the table of kinds
** (the Lua binding's core.KINDS). */
enum {
  BONSAI_CLASS_LEAF,      /* no children */
  BONSAI_CLASS_COMPOSITE, /* one or more children */
  BONSAI_CLASS_DECORATOR, /* exactly one child */
  BONSAI_CLASS_HIDDEN     /* made by the tree itself (the priority section) */
};
typedef struct bonsai_kindinfo {
  const char *name;
  int cls;                /* BONSAI_CLASS_* */
  const char *number;     /* the parameter a bare number sets, or NULL */
  const char *params[14]; /* the parameters it takes, NULL-terminated */
  unsigned takes;         /* the same as bits: 1 << BONSAI_P_* */
  const char *keys;       /* the other keys a node table of this kind takes
                          ** (a Lua leaf's functions, a filter's
                          ** conditions, a subtree's tree), space-separated */
} bonsai_kindinfo;
/* Fills *info for kind; BONSAI_EARG when there is no such kind. */
BONSAI_API int bonsai_kind_info(int kind, bonsai_kindinfo *info);
/* The keys every node table takes besides its kind's parameters and keys
** ("type name utility"), space-separated: with bonsai_kind_info, all a
** node table of a kind may hold (the binding refuses any other). */
BONSAI_API const char *bonsai_node_keys(void);
/* The words of 'words' (space-separated) nearest to 'word' by edit
** distance (a swap of two adjacent letters counts one edit), when within 1
** edit for a word of up to 4 bytes, 2 up to 8, 3 beyond (and fewer edits
** than the word has bytes: 'y' is near no 'x'): up to 3 of them,
** all at the nearest distance, in list order, written space-separated into
** buf as snprintf writes (buf may be NULL). Returns how many (0: none is
** near). Every did-you-mean of Bonsai comes from here. */
BONSAI_API int bonsai_nearest(const char *word, const char *words, char *buf,
                              size_t size);
/* Writes " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)" or
** " (did you mean 'a', 'b' or 'c'?)" for the space-separated words of near
** (as bonsai_nearest gives them) into buf, or "" when near has none or the
** whole does not fit in size bytes; returns its full length. */
BONSAI_API size_t bonsai_did_you_mean(const char *near, char *buf,
                                      size_t size);
/* The name of parameter i (from 0) among all those bonsai_def_value
** knows, in a fixed order ("times", "seconds", "success", "failure", "key",
** "op", "value", "abort", "wait", "then_skip", "event", "timeout",
** "abort_timeout": BONSAI_P_*), or NULL past the last. */
BONSAI_API const char *bonsai_param_name(int i);
enum {
  BONSAI_P_TIMES,
  BONSAI_P_SECONDS,
  BONSAI_P_SUCCESS,
  BONSAI_P_FAILURE,
  BONSAI_P_KEY,
  BONSAI_P_OP,
  BONSAI_P_VALUE,
  BONSAI_P_ABORT,
  BONSAI_P_WAIT,
  BONSAI_P_THEN_SKIP,
  BONSAI_P_EVENT,         /* event, wait_event, event_guard: the name */
  BONSAI_P_TIMEOUT,       /* wait_event: seconds before it fails */
  BONSAI_P_ABORT_TIMEOUT, /* action, control: seconds a latent abort may
                          ** take before it is cut off */
  BONSAI_NPARAMS
};

typedef struct bonsai_env bonsai_env;
typedef struct bonsai_def bonsai_def;
typedef struct bonsai_tree bonsai_tree;
typedef struct bonsai_agent bonsai_agent;
typedef struct bonsai_bb bonsai_bb;

/* A tagged value (blackboard entries, check constants). */
typedef enum bonsai_type {
  BONSAI_TNIL,
  BONSAI_TBOOLEAN,
  BONSAI_TINTEGER,
  BONSAI_TNUMBER,
  BONSAI_TSTRING,
  BONSAI_THANDLE /* a value owned by the host (e.g. a Lua table) */
} bonsai_type;

typedef struct bonsai_value {
  int type; /* bonsai_type */
  union {
    int b;
    long long i;
    double n;
    struct {
      const char *s;
      size_t len;
    } str;
    long long handle;
  } u;
} bonsai_value;

/* Allocator, shaped like lua_Alloc: nsize == 0 frees. */
typedef void *(*bonsai_alloc)(void *ud, void *ptr, size_t osize,
                              size_t nsize);

/* Leaf events. */
enum {
  BONSAI_EV_TICK,  /* return a status */
  BONSAI_EV_ENTER, /* before the first tick of a run; return BONSAI_OK */
  BONSAI_EV_EXIT,  /* the run ended with call->status; return BONSAI_OK */
  BONSAI_EV_ABORT, /* the run was cut off; return BONSAI_OK, or
                   ** BONSAI_RUNNING when call->status is BONSAI_RUNNING
                   ** to take more time (a latent abort: see below) */
  BONSAI_EV_UTILITY, /* a utility function (bonsai_def_utility): write the
                     ** node's utility to *call->utility; return BONSAI_OK */
  BONSAI_EV_SAVE,    /* its agent is saved while the leaf runs: write what
                     ** the run keeps with call->write (nothing: none);
                     ** return BONSAI_OK */
  BONSAI_EV_RESTORE  /* a save put the leaf's run back (it goes on without
                     ** ENTER): call->saved, call->savedlen are what SAVE
                     ** wrote (NULL, 0: nothing, or a save from before the
                     ** leaf wrote any); return BONSAI_OK */
};

/* Which events a leaf wants besides TICK (bonsai_leaf_register flags).
** A leaf without BONSAI_LEAF_ABORT but with BONSAI_LEAF_EXIT gets EXIT with
** status BONSAI_ABORTED when its run is cut off. BONSAI_LEAF_SAVE: SAVE and
** RESTORE, for a leaf whose run keeps state of its own (docs/SAVE_FORMAT.md:
** what a leaf should do).
**
** Latent aborts. When a node of the tree cuts off a running branch by its
** own decision (a guard, a reactive composite, the priority section, an
** interrupt, run_while, a timeout, a parallel whose policy is met, a
** control node's bonsai_control_abort), the ABORT event has call->status
** BONSAI_RUNNING: the leaf may return BONSAI_RUNNING to go on aborting.
** Its node is then BONSAI_ABORTING, it gets ABORT again at each following
** tick of its agent (call->status BONSAI_RUNNING) until it returns
** BONSAI_OK or its "abort_timeout" (the node's parameter, else the one of
** its registration: bonsai_leaf_abort_timeout) has passed on the agent's
** clock, when it is cut off without a call; and the node that cut it off
** returns BONSAI_RUNNING and starts its new branch only in the tick in
** which the last abort it started ends. Other aborts (bonsai_agent_abort,
** reset, a reload that drops the node, a leaf error, restoring a save) are
** immediate: ABORT once, with call->status BONSAI_ABORTED, and a returned
** BONSAI_RUNNING is ignored. EXIT is never latent. */
#define BONSAI_LEAF_ENTER 1u
#define BONSAI_LEAF_EXIT 2u
#define BONSAI_LEAF_ABORT 4u
#define BONSAI_LEAF_SAVE 8u

typedef struct bonsai_call {
  bonsai_agent *agent; /* the agent being ticked */
  void *owner;         /* bonsai_agent_owner(agent) */
  void *data;          /* the data given at registration */
  const void *args;    /* the node's static arguments, or NULL */
  int event;           /* BONSAI_EV_* */
  int status;          /* BONSAI_EV_EXIT: how the run ended;
                       ** BONSAI_EV_ABORT: BONSAI_RUNNING when the abort
                       ** may be latent, else BONSAI_ABORTED */
  unsigned node;       /* the node's index in its tree */
  double *utility;     /* BONSAI_EV_UTILITY only: where the number goes */
  void *host;          /* the host's data (bonsai_host.ud) of the operation
                       ** under way, or NULL */
  int mayraise;        /* 1: the leaf may leave by a non-local exit (its
                       ** host raises, and this is no abort pass) */
  /* BONSAI_EV_SAVE: write(wud, p, n) appends n bytes to the run's state */
  void (*write)(void *wud, const void *p, size_t n);
  void *wud;
  /* BONSAI_EV_RESTORE: the run's state as SAVE wrote it, or NULL, 0 */
  const void *saved;
  size_t savedlen;
} bonsai_call;

/* A leaf returns a status for BONSAI_EV_TICK and BONSAI_OK for the other
** events; to fail, it returns bonsai_agent_error(call->agent, ...), or
** raises when call->mayraise says it may (see bonsai_host). */
typedef int (*bonsai_leaf_fn)(const bonsai_call *call);

/*
** Environments. An environment owns the allocator, the named-leaf registry
** and the interned blackboard keys. Trees, agents and blackboards keep it
** alive; bonsai_env_release drops the caller's reference. alloc may be NULL
** (realloc/free).
*/
BONSAI_API bonsai_env *bonsai_env_new(bonsai_alloc alloc, void *ud);
BONSAI_API void bonsai_env_release(bonsai_env *env);
/* Bytes currently allocated through env. */
BONSAI_API size_t bonsai_env_memory(const bonsai_env *env);

/* Registers (or replaces) a named leaf. A replacement takes effect in every
** tree that uses the name from the next call on. */
BONSAI_API int bonsai_leaf_register(bonsai_env *env, const char *name,
                                    bonsai_leaf_fn fn, void *data,
                                    unsigned flags);
/* The id of the leaf name (the same in every environment of the process,
** as key ids are), or -1 when env has no leaf registered under it. */
BONSAI_API int bonsai_leaf_find(const bonsai_env *env, const char *name);
/* The names of the leaves registered in env, space-separated (a name that
** holds a space left out), for messages: as many whole names as fit in buf
** (size bytes, always terminated). Returns the length of the whole list. */
BONSAI_API size_t bonsai_leaf_names(const bonsai_env *env, char *buf,
                                    size_t size);
/* The registration of leaf id (its function, data and flags), as a host
** that wraps another leaf calls it; BONSAI_EARG when id names none. */
BONSAI_API int bonsai_leaf_get(const bonsai_env *env, int id,
                               bonsai_leaf_fn *fn, void **data,
                               unsigned *flags);
/* The seconds of agent time a latent abort of the registered leaf may take
** before it is cut off (a node's "abort_timeout" wins over it); negative:
** no limit (the default; registering the name again resets it).
** BONSAI_OK, or BONSAI_EARG when no leaf is registered under name. */
BONSAI_API int bonsai_leaf_abort_timeout(bonsai_env *env, const char *name,
                                         double seconds);

/*
** Definitions. Nodes are added in order: bonsai_def_begin opens a composite
** or decorator whose children follow until bonsai_def_end; leaves are added
** with bonsai_def_leaf (by registered name) or bonsai_def_cleaf (a function).
** bonsai_def_number / bonsai_def_string / bonsai_def_value set a parameter
** ("times", "seconds", "success", "failure", "key", "op", "value", "abort",
** "wait": a boolean) on the node added last. Errors are remembered and
** reported by bonsai_tree_new. name may be NULL: the node is then called by
** its kind and place, e.g. "sequence[2]".
*/
BONSAI_API bonsai_def *bonsai_def_new(bonsai_env *env);
BONSAI_API void bonsai_def_free(bonsai_def *def);
BONSAI_API int bonsai_def_begin(bonsai_def *def, int kind, const char *name);
BONSAI_API int bonsai_def_end(bonsai_def *def);
BONSAI_API int bonsai_def_leaf(bonsai_def *def, int kind, const char *name,
                               const char *leaf, const void *args);
BONSAI_API int bonsai_def_cleaf(bonsai_def *def, int kind, const char *name,
                                bonsai_leaf_fn fn, void *data, unsigned flags,
                                const void *args);
BONSAI_API int bonsai_def_number(bonsai_def *def, const char *key, double v);
BONSAI_API int bonsai_def_string(bonsai_def *def, const char *key,
                                 const char *v);
BONSAI_API int bonsai_def_value(bonsai_def *def, const char *key,
                                bonsai_value v);
/* Gives the node added last a utility function, for its parent, a
** BONSAI_UTILITY_SELECTOR: fn is called with BONSAI_EV_UTILITY (call->node
** is that node, call->data is data, call->args NULL) at every tick of the
** selector, and writes a number (not NaN) to *call->utility. A child
** without one has utility 0. */
BONSAI_API int bonsai_def_utility(bonsai_def *def, bonsai_leaf_fn fn,
                                  void *data);
/*
** Pre- and post-conditions (BehaviorTree.CPP 4's _failureIf, _successIf,
** _skipIf, _while, _onHalted, _onFailure, _onSuccess, _post), on any node.
** The pre-conditions are checked in this order when the node starts (not
** while it runs): the first that holds decides, and the node does not run:
** FAILURE_IF true: failure; SUCCESS_IF true: success; SKIP_IF true, or
** RUN_WHILE false: BONSAI_SKIPPED. RUN_WHILE is also checked at every tick
** while the node runs: when false, the node is aborted (its ON_HALTED runs)
** and ends BONSAI_SKIPPED. When the node ends with success or failure
** (pre-conditions' included), ON_SUCCESS or ON_FAILURE runs, then POST; when
** it is aborted, ON_HALTED. ORDER COND.
*/
enum {
  BONSAI_FAILURE_IF,
  BONSAI_SUCCESS_IF,
  BONSAI_SKIP_IF,
  BONSAI_RUN_WHILE,
  BONSAI_ON_HALTED,
  BONSAI_ON_FAILURE,
  BONSAI_ON_SUCCESS,
  BONSAI_POST,
  BONSAI_NCONDS
};
/* Gives the node added last (a composite or decorator right after
** bonsai_def_begin) condition 'which' (BONSAI_FAILURE_IF ..): fn is called
** with BONSAI_EV_TICK (call->node is that node, call->data is data,
** call->args NULL) and returns BONSAI_SUCCESS (true) or BONSAI_FAILURE
** (false; a post-condition's result is not looked at), or fails as a leaf
** does. A second call for the same 'which' replaces the first. */
BONSAI_API int bonsai_def_when(bonsai_def *def, int which, bonsai_leaf_fn fn,
                               void *data);
/* Gives the node added last pre-condition 'which' (BONSAI_FAILURE_IF ..
** BONSAI_RUN_WHILE) as a comparison evaluated in C, as a BONSAI_CHECK
** node's: key, op (== ~= < <= > >=) and value (a string "$name" names
** another key); true when it holds. No call per tick. */
BONSAI_API int bonsai_def_when_check(bonsai_def *def, int which,
                                     const char *key, const char *op,
                                     bonsai_value value);
/* The name of condition 'which' as the Lua API spells it ("skip_if",
** "run_while", "on_halted", "post"...), or NULL. */
BONSAI_API const char *bonsai_cond_name(int which);
/*
** Texts: the source a node's script or condition was compiled from, for
** dumps, traces and debuggers (nothing runs them). 'which' is one of the
** node's conditions (BONSAI_FAILURE_IF ..) or the node itself.
*/
#define BONSAI_TEXT_NODE (-1)
/* Gives the node added last the source text of its script (which:
** BONSAI_TEXT_NODE) or of its condition 'which', and the blackboard keys
** that text reads or writes (space-separated, or NULL). At most
** BONSAI_MAXTEXT bytes each. A second call for the same which replaces the
** first. */
#define BONSAI_MAXTEXT 16384
BONSAI_API int bonsai_def_text(bonsai_def *def, int which, const char *text,
                               const char *keys);
/* Bytes the host attaches to the tree compiled from def (kept by pointer
** until then): a shared tree carries them to the other environments, for
** what only the host has (the Lua binding: the leaves' args tables). */
BONSAI_API void bonsai_def_host(bonsai_def *def, const void *bytes,
                                size_t len);
/*
** Control nodes: a composite or decorator whose decisions are the host's
** (an engine's own composites; bt.control in Lua). bonsai_def_control opens
** one, like bonsai_def_begin: its children follow until bonsai_def_end.
** fn gets BONSAI_EV_TICK at each of its ticks and returns a status
** (BONSAI_SKIPPED too in a tree with conditions: the node is skipped), and,
** as flags ask, BONSAI_EV_ENTER before the first tick of a run and
** BONSAI_EV_ABORT when a run is cut off. When a run ends (fn returned
** success, failure or skipped) or is cut off (after the ABORT callback), the
** children still running are aborted. Its errors are leaf errors of the
** node. A tree nests at most BONSAI_MAXCONTROL control nodes on a path.
*/
#define BONSAI_MAXCONTROL 32
BONSAI_API int bonsai_def_control(bonsai_def *def, const char *name,
                                  bonsai_leaf_fn fn, void *data,
                                  unsigned flags, const void *args);
/* The first error met while building, or NULL. */
BONSAI_API const char *bonsai_def_errmsg(const bonsai_def *def);
/* Sets the most nodes def may hold (default 1,000,000; at most 2^31 - 1);
** adding one more is a definition error ("more than N nodes"). Names longer
** than 1024 bytes are definition errors too. */
BONSAI_API int bonsai_def_max_nodes(bonsai_def *def, unsigned max);
/* The node that takes the nodes added next (the innermost one begun and
** not yet ended), as its index in the order of addition (the index the
** compiled tree gives it), or BONSAI_NONE at the top level. */
BONSAI_API unsigned bonsai_def_open(const bonsai_def *def);
/* Writes the path of node i of def as definition errors name it ("a/b",
** unnamed nodes as "sequence[2]", the priority section left out) into buf;
** returns its full length (0 when i is out of range). */
BONSAI_API size_t bonsai_def_node_path(const bonsai_def *def, unsigned i,
                                       char *buf, size_t size);

/*
** Trees. bonsai_tree_new compiles def (which the caller still frees) into a
** tree called name. On BONSAI_EDEF, *out is NULL and errbuf (if not NULL)
** holds a message naming the node's path. bonsai_tree_reload compiles def
** and, on success, makes every agent of the tree switch to it at its next
** tick; on failure the old version keeps running.
*/
BONSAI_API int bonsai_tree_new(const bonsai_def *def, const char *name,
                               bonsai_tree **out, char *errbuf,
                               size_t errsize);
BONSAI_API int bonsai_tree_reload(bonsai_tree *tree, const bonsai_def *def,
                                  char *errbuf, size_t errsize);
BONSAI_API void bonsai_tree_release(bonsai_tree *tree);

/*
** Shared trees. bonsai_tree_share makes the tree's version shareable (a
** copy detached from the environment, carrying the host's bytes) and
** writes its handle ("bonsai-tree:N"); bonsai_tree_shared makes, in
** another environment of the same process (another Lua state, another
** thread), a tree on the same blueprint: not a copy. Named leaves are
** looked up in each environment's own registry; a name it never
** registered fails when ticked. Reloading any of these trees reaches the
** agents of all of them at their next tick. The handle stays valid while
** one of its trees lives. Thread-safe, as are the blueprints' reference
** counts; everything else stays per environment.
*/
BONSAI_API int bonsai_tree_share(bonsai_tree *tree, const void *host,
                                 size_t hostlen, char *handle, size_t size);
BONSAI_API int bonsai_tree_shared(bonsai_env *env, const char *handle,
                                  bonsai_tree **out, char *errbuf,
                                  size_t errsize);
BONSAI_API int bonsai_tree_is_shared(const bonsai_tree *tree);
/* The host's bytes of the tree's current version, and that version's id
** (unique in the process: the host redoes what it made from the bytes
** when the id changes). */
BONSAI_API const void *bonsai_tree_host(const bonsai_tree *tree, size_t *len,
                                        unsigned long long *version);
BONSAI_API const char *bonsai_tree_name(const bonsai_tree *tree);
BONSAI_API unsigned bonsai_tree_size(const bonsai_tree *tree);
/* The name of node i ("" for a hidden node), or NULL out of range. */
BONSAI_API const char *bonsai_tree_node_name(const bonsai_tree *tree,
                                             unsigned i);
/* Writes node i's path ("a/b/c") into buf; returns its full length. */
BONSAI_API size_t bonsai_tree_node_path(const bonsai_tree *tree, unsigned i,
                                        char *buf, size_t size);
/* Writes a text picture of the tree, with agent's statuses when agent is
** not NULL, through write. */
BONSAI_API void bonsai_tree_dump(const bonsai_tree *tree,
                                 const bonsai_agent *agent,
                                 void (*write)(void *ud, const char *s,
                                               size_t n),
                                 void *ud);

/*
** Versions. A version is a compiled definition: immutable, shared by every
** agent that runs it, reference-counted. A tree has a current version; an
** agent runs the version it last switched to (at its first tick after a
** reload). Ids are unique in the process (addresses may be reused, ids
** never are). bonsai_def_compile compiles without putting the version
** anywhere: a host that reloads several trees at once (a tree and those
** that inline it) compiles them all first, then sets each, so that a
** definition error changes none of them.
*/
typedef struct bonsai_version bonsai_version;
/* Compiles def into a new version held by the caller (*out); on failure
** returns BONSAI_EDEF or BONSAI_ENOMEM with *out NULL and the message in
** errbuf (if not NULL), as bonsai_tree_new does. */
BONSAI_API int bonsai_def_compile(const bonsai_def *def, bonsai_version **out,
                                  char *errbuf, size_t errsize);
/* Drops the caller's reference (NULL is ignored). */
BONSAI_API void bonsai_version_release(bonsai_version *v);
/* Makes v the tree's current version, taking the caller's reference in
** every case; agents switch at their next tick. host and hostlen are the
** bytes a shared tree carries to its other environments (as
** bonsai_def_host; not kept by a tree that is not shared). BONSAI_OK,
** BONSAI_EARG (v was compiled in another environment) or BONSAI_ENOMEM
** (the old version stays). */
BONSAI_API int bonsai_tree_set_version(bonsai_tree *tree, bonsai_version *v,
                                       const void *host, size_t hostlen);
/* Makes tree run other's current version (with its host's bytes), as a
** reload would; agents switch at their next tick. BONSAI_OK, BONSAI_EARG
** (trees of two environments) or BONSAI_ENOMEM. */
BONSAI_API int bonsai_tree_adopt(bonsai_tree *tree, bonsai_tree *other);
/* The id of the tree's current version (what bonsai_tree_host tells). */
BONSAI_API unsigned long long bonsai_tree_version_id(const bonsai_tree *tree);
/* The id of the version the agent runs. */
BONSAI_API unsigned long long
bonsai_agent_version_id(const bonsai_agent *agent);
BONSAI_API bonsai_env *bonsai_tree_env(const bonsai_tree *tree);

/*
** Node inspection, for debuggers, trace files and exporters: what a
** compiled node is. bonsai_tree_node_info reads the tree's current version,
** bonsai_agent_node_info the version the agent runs; nodes are numbered in
** pre-order from 0, the root. Names stay valid while that version lives,
** key and leaf names as long as the process. A field the node's kind does
** not have is 0, NULL or BONSAI_TNIL.
*/
typedef struct bonsai_nodeinfo {
  int kind;             /* bonsai_kind */
  unsigned parent;      /* the parent's index, or BONSAI_NONE for the root */
  int hidden;           /* 1: left out of paths (the priority section) */
  const char *name;     /* its name, unique among its siblings (a hidden
                        ** node has one too) */
  const char *leaf;     /* action, condition: the name of the registered
                        ** leaf it calls, or NULL (a leaf function) */
  unsigned times;       /* repeater, retry (0: forever), limit */
  double seconds;       /* wait, timeout, time_limit, cooldown, delay */
  unsigned success;     /* parallel: children that must succeed ... */
  unsigned failure;     /* ... or fail, counted ("all" resolved) */
  int wait;             /* parallel: 1 with "wait" */
  int then_skip;        /* run_once: 1 with "then_skip" */
  const char *key;      /* check, is_set: the key read */
  const char *op;       /* check: "==", "~=", "<", "<=", ">" or ">=" */
  const char *valuekey; /* check: the key compared with ("$key"), or NULL */
  bonsai_value value;   /* check without valuekey: the constant */
  const char *abort;    /* guard, event_guard: "none", "self", "lower" or
                        ** "both" */
  const char *event;    /* event, wait_event, event_guard: its name */
  double timeout;       /* wait_event: seconds, or -1 for none */
  double abort_timeout; /* action, control: seconds, or -1 for none (an
                        ** action's registered leaf may give one) */
} bonsai_nodeinfo;
/* Fills *info for node i; BONSAI_OK, or BONSAI_EARG when i is out of
** range. */
BONSAI_API int bonsai_tree_node_info(const bonsai_tree *tree, unsigned i,
                                     bonsai_nodeinfo *info);
BONSAI_API int bonsai_agent_node_info(const bonsai_agent *agent, unsigned i,
                                      bonsai_nodeinfo *info);
/* The text of node i's script (which: BONSAI_TEXT_NODE) or of its
** condition 'which' (part 0: the source; 1: the keys it reads or writes,
** space-separated), as bonsai_def_text gave it; a check (a BONSAI_CHECK
** node, a condition of bonsai_def_when_check) without a text gives its
** comparison ("hp < 10", "hp != max_hp"; part 1: its keys). Written into buf
** as snprintf does; returns the full length, 0 when there is none. */
BONSAI_API size_t bonsai_tree_node_text(const bonsai_tree *tree, unsigned i,
                                        int which, int part, char *buf,
                                        size_t size);
BONSAI_API size_t bonsai_agent_node_text(const bonsai_agent *agent,
                                         unsigned i, int which, int part,
                                         char *buf, size_t size);
/* The number of nodes of the version the agent runs. */
BONSAI_API unsigned bonsai_agent_nodes(const bonsai_agent *agent);
/* Writes the path of node i of the version the agent runs into buf, as
** bonsai_tree_node_path does; returns its full length. */
BONSAI_API size_t bonsai_agent_node_path(const bonsai_agent *agent,
                                         unsigned i, char *buf, size_t size);
/* The leaf of node i (an action, condition or control node) of the
** version the agent runs, as its calls get it (a named one as registered
** now): its function, data and flags (any pointer may be NULL).
** BONSAI_OK, or BONSAI_EARG for another node. */
BONSAI_API int bonsai_agent_node_leaf(const bonsai_agent *agent, unsigned i,
                                      bonsai_leaf_fn *fn, void **data,
                                      unsigned *flags);

/*
** Agents. An agent runs one tree with its own node state and blackboard.
** bb may be NULL (the agent gets an empty blackboard of its own). owner is
** the caller's pointer, handed to leaves as call->owner.
*/
BONSAI_API bonsai_agent *bonsai_agent_new(bonsai_tree *tree, bonsai_bb *bb,
                                          void *owner);
BONSAI_API void bonsai_agent_free(bonsai_agent *agent);
/* One tick: dt (>= 0) is added to the agent clock first. Returns the root's
** status, or a negative code: BONSAI_ELEAF (the running nodes were aborted;
** see bonsai_agent_errmsg), BONSAI_EBUSY (the agent is ticking: this call
** is refused and changes nothing, not even the error message), BONSAI_EARG
** (dt is not a number >= 0, see bonsai_dt_check: refused the same way),
** BONSAI_ENOMEM. */
BONSAI_API int bonsai_agent_tick(bonsai_agent *agent, double dt);
/* The one check of a tick's dt (every call that ticks or dozes makes it):
** NULL when dt is a number >= 0, else the message that says so. */
BONSAI_API const char *bonsai_dt_check(double dt);
/* Aborts every running node, deepest first. BONSAI_ELEAF if an abort
** callback failed (all the others still ran). */
BONSAI_API int bonsai_agent_abort(bonsai_agent *agent);
/* Aborts, then forgets all node state (counters, timers). */
BONSAI_API int bonsai_agent_reset(bonsai_agent *agent);

/*
** Hosts. A runtime that embeds Bonsai and runs its own code in leaves (the
** Lua binding is one) ticks, aborts and resets agents with a host: its ud
** reaches every callback of the operation as call->host, and its
** interrupt hook is asked at the start of each tick after the agent's C
** interrupts, with their protocol (1 aborts the tick, 0 goes on,
** BONSAI_ERROR fails it). With BONSAI_HOST_RAISES a leaf, a utility or the
** interrupt hook may leave a tick by a non-local exit (a longjmp, a Lua
** error) except where call->mayraise is 0 (abort passes, which must run
** every callback); the host then calls bonsai_agent_recover before
** anything else touches the agent. A NULL host is the plain C one.
*/
#define BONSAI_HOST_RAISES 1u
#define BONSAI_HOST_SWITCHES 2u /* a tick or doze of a stale agent returns
                                ** BONSAI_ESTALE and does nothing: the
                                ** host switches it (bonsai_agent_switch) */
typedef struct bonsai_host {
  void *ud;       /* call->host of every callback */
  unsigned flags; /* BONSAI_HOST_* */
  int (*interrupt)(bonsai_agent *agent, void *ud); /* or NULL */
} bonsai_host;
/* bonsai_agent_tick, bonsai_agent_abort, bonsai_agent_reset with a host. */
BONSAI_API int bonsai_agent_run(bonsai_agent *agent, double dt,
                                const bonsai_host *host);
BONSAI_API int bonsai_agent_abort_hosted(bonsai_agent *agent,
                                         const bonsai_host *host);
BONSAI_API int bonsai_agent_reset_hosted(bonsai_agent *agent,
                                         const bonsai_host *host);
/* After a non-local exit out of a tick (or a doze) with message msg: the
** error is recorded against the node whose callback was running, every
** running node is aborted (callbacks protected, with host), and the agent
** is free again with status BONSAI_ABORTED. Does nothing to an agent that
** was not inside an operation. */
BONSAI_API void bonsai_agent_recover(bonsai_agent *agent, const char *msg,
                                     const bonsai_host *host);
/* Whether the agent is inside a tick, an abort or a switch. */
BONSAI_API int bonsai_agent_busy(const bonsai_agent *agent);

/*
** Stepped ticks, for a host that calls its leaves itself (a JIT-compiled
** Lua loop, which a call from C into Lua would leave). A stepped tick is
** the tick bonsai_agent_run makes, but where it would call a leaf's tick,
** enter or exit, or a control node's enter or tick, it stops and returns
** BONSAI_STEP: bonsai_agent_stepcall gives the call (the record the
** callback would get, its function, and the level of the run it belongs
** to); the host makes it and passes what it returned to
** bonsai_agent_step, which goes on to the next call or the end. The
** stepping functions never call a callback themselves.
** bonsai_agent_step_begin returns BONSAI_ENOSTEP, and does nothing, when
** the tick may need a callback that is not handed out: an abort callback
** (a leaf with exit or abort, a task, a control node with abort), a
** condition or utility that is a function, an interrupt (C, or the
** host's), a profile or a trace hook; then tick with bonsai_agent_run.
** Its other results are bonsai_agent_run's: the tick's status (it ended
** without a call), BONSAI_ELEAF (it failed: recorded, recovered),
** BONSAI_EBUSY, BONSAI_EARG, BONSAI_ESTALE (host switches) or, without
** BONSAI_HOST_SWITCHES, BONSAI_ENOSTEP for a stale agent (a switch calls
** abort callbacks). A host that raises (BONSAI_HOST_RAISES) and leaves a
** stepped tick by a non-local exit calls bonsai_agent_recover, as after
** bonsai_agent_run.
** During a control node's tick callback handed out, bonsai_control_step
** starts child k's run as a stepped run a level above (where
** bonsai_control_tick runs it in the callback): BONSAI_STEP, or the child's
** status as bonsai_control_tick returns it, or BONSAI_ENOSTEP (nothing
** done: use bonsai_control_tick). bonsai_agent_step(agent, level, r) goes
** on with the run at 'level' and returns BONSAI_STEP, or the status of
** that run when it ends: the tick's (level 0), or the child's. Passing the
** result of a level below the innermost ends the runs above it: their
** child's error was caught in the callback, which then fails, as with
** bonsai_control_tick. BONSAI_EARG: no run at that level waits for a
** result.
*/
#define BONSAI_STEP 16
BONSAI_API int bonsai_agent_step_begin(bonsai_agent *agent, double dt,
                                       const bonsai_host *host);
/* Whether bonsai_agent_step_begin would step a tick now (1) or not (0:
** it would refuse it, or return BONSAI_ENOSTEP). */
BONSAI_API int bonsai_agent_stepable(const bonsai_agent *agent,
                                     const bonsai_host *host);
BONSAI_API int bonsai_agent_step(bonsai_agent *agent, unsigned level,
                                 int result);
/* The call handed out (NULL when none waits), its function in *fn and its
** run's level in *level (if not NULL). Valid until the next stepping
** call. */
BONSAI_API const bonsai_call *bonsai_agent_stepcall(const bonsai_agent *agent,
                                                    bonsai_leaf_fn *fn,
                                                    unsigned *level);
BONSAI_API int bonsai_control_step(bonsai_agent *agent, unsigned node,
                                   unsigned k, void *host);
/* bonsai_agent_step_begin and bonsai_agent_step and, when they return
** BONSAI_STEP, the call handed out in *call and its function in *fn (its
** level is 0 and 'level'): each in one call, for a host's loop. */
BONSAI_API int bonsai_agent_stepfirst(bonsai_agent *agent, double dt,
                                      const bonsai_host *host,
                                      const bonsai_call **call,
                                      bonsai_leaf_fn *fn);
BONSAI_API int bonsai_agent_stepnext(bonsai_agent *agent, unsigned level,
                                     int result, const bonsai_call **call,
                                     bonsai_leaf_fn *fn);

/*
** Events. bonsai_agent_send queues an event for the agent: a name (1 to
** 1024 bytes, no NUL; interned for the process) and a payload (a string is
** copied; a BONSAI_THANDLE is the host's, carried as it is). The queue
** holds at most BONSAI_EVENTS events unless bonsai_agent_queue says
** otherwise; when it is full the oldest is dropped and counted. Queued
** events are delivered, in the order sent, to the agent's next tick (a
** tick of its tree, not a doze): every node reached in that tick sees them
** (bonsai_agent_received; several of one name: the payload of the last),
** and at the end of that tick they are gone, whether a node looked at
** them or not. An event sent during the agent's own tick waits for the
** next one. Sending wakes a sleeping agent. BONSAI_OK, BONSAI_EARG (a bad
** name or payload type) or BONSAI_ENOMEM.
*/
#define BONSAI_EVENTS 64
/* How the event nodes (event, wait_event with a "key") write a payload v
** into the agent's blackboard at key, for the environment's agents: fn is
** called with the operation's host data (call->host) and writes it (the
** Lua binding: as a Lua write, its observers called; a BONSAI_THANDLE is
** its own). It returns BONSAI_OK, or BONSAI_ERROR after bonsai_agent_error
** (or raises, under BONSAI_HOST_RAISES). Without one (NULL, the default)
** the core writes v as bonsai_bb_set does, a handle as it is. */
typedef int (*bonsai_write_fn)(bonsai_agent *agent, void *host, int key,
                               bonsai_value v);
BONSAI_API void bonsai_env_payload_writer(bonsai_env *env,
                                          bonsai_write_fn fn);
/* Payloads the host owns (BONSAI_THANDLE): the core calls retain(ud, h)
** each time it keeps handle h somewhere (an event queued, restored, or
** recorded by a trace) and release(ud, h) each time one of those lets it go
** (the end of the tick it was delivered to, a drop from a full queue, a
** trace event read or overwritten, the agent freed, a restore replacing the
** queue): a host that counts them frees a payload at 0. They may be called
** anywhere, from bonsai_agent_free too: they must not call back into
** Bonsai. NULL (the default): the host keeps its handles its own way. */
typedef void (*bonsai_payload_fn)(void *ud, long long handle);
BONSAI_API void bonsai_env_payload_hooks(bonsai_env *env,
                                         bonsai_payload_fn retain,
                                         bonsai_payload_fn release,
                                         void *ud);
BONSAI_API int bonsai_agent_send(bonsai_agent *agent, const char *name,
                                 bonsai_value payload);
/* Sets the most events the agent's queue holds (0: every event is dropped);
** events beyond it are dropped, oldest first, and counted. */
BONSAI_API int bonsai_agent_queue(bonsai_agent *agent, unsigned n);
BONSAI_API unsigned bonsai_agent_queue_size(const bonsai_agent *agent);
/* Events dropped from the agent's queue since it was made. */
BONSAI_API unsigned long long
bonsai_agent_dropped_events(const bonsai_agent *agent);
/* Event k (0: the oldest) waiting for the next tick, or with 'delivered'
** set, delivered to the tick under way (for a debugger): its name and
** payload (a string valid while the event lives); 0 past the last. */
BONSAI_API int bonsai_agent_queued(const bonsai_agent *agent, int delivered,
                                   unsigned k, const char **name,
                                   bonsai_value *payload);
/* For a leaf: 1 when an event called name was delivered to the tick under
** way (*payload, if not NULL, gets the payload of the last), else 0. */
BONSAI_API int bonsai_agent_received(const bonsai_agent *agent,
                                     const char *name,
                                     bonsai_value *payload);

/*
** Agents in the host's memory (the Lua binding puts one inside a
** userdata): bonsai_agent_size(tree) bytes, aligned for a double, given to
** bonsai_agent_init (BONSAI_OK, BONSAI_ENOMEM, or BONSAI_EARG for a
** blackboard of another environment); bonsai_agent_done releases what the
** agent holds, not its memory. An agent stays where it was made until
** bonsai_agent_done: its tree lists it (for bonsai_tree_profile).
*/
BONSAI_API size_t bonsai_agent_size(const bonsai_tree *tree);
BONSAI_API int bonsai_agent_init(bonsai_agent *mem, bonsai_tree *tree,
                                 bonsai_bb *bb, void *owner);
BONSAI_API void bonsai_agent_done(bonsai_agent *agent);

/*
** Switching versions. A reload gives the tree a new version; each agent
** switches to it at its next tick (bonsai_agent_tick does so itself). A
** host that keeps data per running node (e.g. a coroutine per task)
** switches the agent step by step before ticking it: while bonsai_agent_stale, one
** bonsai_agent_switch, after which map[old node] holds the node's index in
** the new version, or BONSAI_NONE for a node that did not carry over (its
** run was aborted). map has n entries; it is written only when n covers
** the old version's nodes (bonsai_agent_nodes before the step). The abort
** callbacks of a step may reload the tree again: hence the loop. Returns
** BONSAI_OK, BONSAI_ELEAF (an abort failed: recorded; the switch was
** made) or BONSAI_ENOMEM (when bonsai_agent_version_id did not change, the
** agent is still on its version).
*/
BONSAI_API int bonsai_agent_stale(const bonsai_agent *agent);
BONSAI_API int bonsai_agent_switch(bonsai_agent *agent,
                                   const bonsai_host *host, unsigned *map,
                                   unsigned n);

/*
** Holding agents on their versions (to try a reload on some agents first).
** bonsai_agent_hold(agent, 1) keeps that agent on the version it runs
** whatever reloads come; bonsai_tree_hold(tree, 1) keeps every agent of the
** tree on the version it runs, but those given a pass
** (bonsai_agent_pass(agent, 1)), which switch as if the tree were not
** held. An agent is kept by its own hold, or by its tree's unless it has a
** pass: a pass does not undo the agent's own hold. While kept,
** bonsai_agent_stale says 0 and a tick, an abort or a reset does not switch
** it; the version stays alive while it runs it. Once nothing keeps it
** (bonsai_agent_hold(agent, 0), bonsai_tree_hold(tree, 0), a pass), at its
** next tick (abort, reset, or bonsai_agent_switch) it switches to the
** tree's current version, the newest, in one step from the version it
** held, running nodes matched as for any reload. Ending a tree's hold
** takes every pass of its agents back (a pass lets an agent through one
** hold). New agents start on the current version; a save records neither
** hold nor pass. bonsai_agent_held, bonsai_tree_held and
** bonsai_agent_passes say whether each is set.
*/
BONSAI_API void bonsai_agent_hold(bonsai_agent *agent, int on);
BONSAI_API int bonsai_agent_held(const bonsai_agent *agent);
BONSAI_API void bonsai_tree_hold(bonsai_tree *tree, int on);
BONSAI_API int bonsai_tree_held(const bonsai_tree *tree);
BONSAI_API void bonsai_agent_pass(bonsai_agent *agent, int on);
BONSAI_API int bonsai_agent_passes(const bonsai_agent *agent);

/*
** Control nodes at work. During the TICK callback of control node 'node'
** (call->node), bonsai_control_tick ticks its child k (from 0): a new run
** if the child is not running. It returns the child's status (any number
** of children may be running at once), or BONSAI_ELEAF: the child's run
** failed, or k is out of range, or the callback ticked its children more
** than BONSAI_CONTROL_TICKS + 2 * children times (a control node cannot
** keep a tick going: each child tick is bounded, and so is their number).
** The error is recorded and the node fails whatever fn then returns: fn
** should return at once. BONSAI_EARG: not inside the TICK callback of that
** node (another callback, or a child's run under way), nothing done.
** bonsai_control_abort aborts child k if it runs (also from an ABORT
** callback): BONSAI_OK, BONSAI_ELEAF (an abort callback failed) or
** BONSAI_EARG. host: call->host of the callbacks under the child (NULL:
** the operation's; the Lua binding gives a stack of its own). A child's
** run is the VM run over that child's subtree,
** nested in the callback: as deep as control nodes nest (at most
** BONSAI_MAXCONTROL), never deeper.
** Latent aborts: bonsai_control_abort from TICK is a decision of the tree,
** so the child's abort may take its time (it returns BONSAI_OK, the child
** BONSAI_ABORTING); bonsai_control_tick of a child that is aborting returns
** BONSAI_RUNNING without ticking it; once TICK returns, the node waits for
** the aborts it started (the tick returns BONSAI_RUNNING), then has TICK
** called again, or, when TICK had returned a final status, ends with it.
** Its own ABORT (BONSAI_LEAF_ABORT) may return BONSAI_RUNNING when
** call->status is BONSAI_RUNNING, as a leaf's, its "abort_timeout" the
** node's parameter; bonsai_control_abort from ABORT is immediate.
*/
#define BONSAI_CONTROL_TICKS 1000
BONSAI_API int bonsai_control_tick(bonsai_agent *agent, unsigned node,
                                   unsigned k, void *host);
BONSAI_API int bonsai_control_abort(bonsai_agent *agent, unsigned node,
                                    unsigned k, void *host);
/* A host whose callbacks raise (BONSAI_HOST_RAISES) catches a non-local
** exit out of every bonsai_control_tick and bonsai_control_abort it calls
** (the Lua binding: a protected call around each) and then, before
** anything else touches the agent, calls bonsai_control_recover with the
** node and the message; then it may raise again. The error is recorded
** against the node whose callback was running (unless it is the error
** recorded already: a child's error raised again on its way out), the
** node's callback is the one under way again (a raise from it now names
** the node), and the node fails whatever fn then returns: further
** bonsai_control_tick and bonsai_control_abort of it return BONSAI_ELEAF
** and do nothing; if fn returns, the node's error is "a child's error was
** caught inside the callback". A host that raises a BONSAI_ELEAF of
** bonsai_control_tick or _abort into the callback (the binding's c:tick
** does) calls it too, after: a callback that catches that error and
** returns fails its node the same way. BONSAI_OK, or BONSAI_EARG (neither
** case: nothing done). */
BONSAI_API int bonsai_control_recover(bonsai_agent *agent, unsigned node,
                                      const char *msg);
/* The number of children of control node 'node', or 0 for another node. */
BONSAI_API unsigned bonsai_control_children(const bonsai_agent *agent,
                                            unsigned node);
/* The index of child k of control node 'node' (as bonsai_agent_node_status
** takes it), or BONSAI_NONE. */
BONSAI_API unsigned bonsai_control_child(const bonsai_agent *agent,
                                         unsigned node, unsigned k);
/* The agent's BONSAI_CONTROL_MEMORY bytes for control node 'node' (NULL
** for another node): zero at first, kept across its runs while the agent
** runs a version with the node (matched by path on a reload), zeroed by a
** reset, saved with the agent. Valid until the agent's next switch. */
#define BONSAI_CONTROL_MEMORY 16
BONSAI_API void *bonsai_control_memory(bonsai_agent *agent, unsigned node);

/*
** Interrupts. bonsai_agent_tick asks them in the order they were added, at
** the start of every tick after the clock moved, until one returns 1: then
** every running node is aborted, the tree is not ticked and the tick
** returns BONSAI_ABORTED (an interrupt's abort may be latent: the ticks
** return BONSAI_RUNNING, the tree not ticked, until the last abort ends,
** and that tick returns BONSAI_ABORTED). One that returns BONSAI_ERROR (after
** bonsai_agent_error) fails the tick (BONSAI_ELEAF, every running node
** aborted, no node named); 0 goes on. The list is taken before the calls:
** one added meanwhile waits for the next tick, one removed before its turn
** is not asked. Adding the same function and data twice asks it twice;
** removing takes the first. (The Lua binding has its own, a:add_interrupt.)
*/
typedef int (*bonsai_interrupt_fn)(bonsai_agent *agent, void *data);
BONSAI_API int bonsai_agent_add_interrupt(bonsai_agent *agent,
                                          bonsai_interrupt_fn fn, void *data);
/* BONSAI_OK, or BONSAI_EARG when that function and data were not there. */
BONSAI_API int bonsai_agent_remove_interrupt(bonsai_agent *agent,
                                             bonsai_interrupt_fn fn,
                                             void *data);

/*
** Sleeping agents. A leaf puts its agent to sleep for some seconds of agent
** time (typically while it returns BONSAI_RUNNING); a loop over many agents
** then skips it cheaply: bonsai_agent_asleep advances a sleeping agent's
** clock by dt and returns 1 while it sleeps, or wakes it and returns 0 when
** its time is up or a key one of its guards watches changed (then tick it
** with the same dt). Any tick of the tree wakes the agent (a leaf sleeps
** again by asking again); so do aborts, resets, bonsai_agent_wake and an
** event sent to it. An agent does not sleep while a latent abort goes on
** (its callback is called at every tick): bonsai_agent_sleep is then
** ignored, and a sleep asked for in the tick is forgotten at its end.
*/
BONSAI_API void bonsai_agent_sleep(bonsai_agent *agent, double seconds);
BONSAI_API void bonsai_agent_wake(bonsai_agent *agent);
/* Seconds of sleep left, or -1 when awake. */
BONSAI_API double bonsai_agent_sleeping(const bonsai_agent *agent);
BONSAI_API int bonsai_agent_asleep(bonsai_agent *agent, double dt);
/* A sleeping agent that has interrupts sleeps on, but they are asked: its
** clock moves by dt, its interrupts (C, then the host's) are asked, the
** tree is not ticked. Returns 0 (it sleeps on), 1 (one fired: every
** running node was aborted, its status is BONSAI_ABORTED and it is
** awake), or a negative code as bonsai_agent_tick. */
BONSAI_API int bonsai_agent_doze(bonsai_agent *agent, double dt,
                                 const bonsai_host *host);
BONSAI_API int bonsai_agent_status(const bonsai_agent *agent);
/* Status of node i as of the last tick. */
BONSAI_API int bonsai_agent_node_status(const bonsai_agent *agent,
                                        unsigned i);
BONSAI_API double bonsai_agent_time(const bonsai_agent *agent);
BONSAI_API void *bonsai_agent_owner(const bonsai_agent *agent);
BONSAI_API bonsai_tree *bonsai_agent_tree(const bonsai_agent *agent);
BONSAI_API bonsai_bb *bonsai_agent_bb(const bonsai_agent *agent);
/* Fills nodes (up to max) with the running nodes, outermost first; returns
** how many there are. */
BONSAI_API unsigned bonsai_agent_running(const bonsai_agent *agent,
                                         unsigned *nodes, unsigned max);
/* Message of the last error ("" if none). */
BONSAI_API const char *bonsai_agent_errmsg(const bonsai_agent *agent);
/* Forgets the last error (every operation does so as it starts; a host
** that switches an agent step by step does so before the first step). */
BONSAI_API void bonsai_agent_clearerr(bonsai_agent *agent);
/* For leaves: records a message and returns BONSAI_ERROR. */
BONSAI_API int bonsai_agent_error(bonsai_agent *agent, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The node whose leaf failed in the last error, or (unsigned)-1. After a
** reload the node belongs to the version that was running then: its path
** is what bonsai_agent_errpath writes (like bonsai_tree_node_path; "" when
** no node is at fault). */
BONSAI_API unsigned bonsai_agent_errnode(const bonsai_agent *agent);
BONSAI_API size_t bonsai_agent_errpath(const bonsai_agent *agent, char *buf,
                                       size_t size);

/*
** Traces. bonsai_agent_trace(agent, n) starts recording the agent's events
** in a ring buffer of n events (the oldest are overwritten when it is
** full); n = 0 stops and frees it. An agent without a trace pays nothing
** more than a predictable branch. Returns BONSAI_OK or BONSAI_ENOMEM.
** One event each time a node's status changes, or a running action or
** wait is ticked again and stays running (again = 1), plus agent events.
*/
enum {
  BONSAI_TRACE_STATUS,    /* node took status */
  BONSAI_TRACE_RELOAD,    /* the agent switched to a reloaded version */
  BONSAI_TRACE_ERROR,     /* a tick failed: message, node (or -1) */
  BONSAI_TRACE_INTERRUPT, /* an interrupt aborted the tick */
  BONSAI_TRACE_RESET,     /* every node's state was replaced: by
                          ** bonsai_agent_reset (all idle) or a restore */
  BONSAI_TRACE_EVENT      /* an event delivered to this tick: its name in
                          ** message, its payload in payload */
};

typedef struct bonsai_event {
  double time;         /* the agent clock during that tick */
  unsigned tick;       /* the agent's tick count, 1 for its first tick */
  unsigned node;       /* node index, or (unsigned)-1 */
  unsigned version;    /* which version of the tree 'node' refers to */
  int kind;            /* BONSAI_TRACE_* */
  int status;          /* BONSAI_TRACE_STATUS: the node's new status */
  int again;           /* 1: a running node ticked again, still running */
  int forced;          /* 1: the status a fault forced (bonsai_agent_force) */
  const char *message; /* BONSAI_TRACE_ERROR, else NULL; valid until the
                       ** next bonsai_agent_events or bonsai_agent_trace;
                       ** BONSAI_TRACE_EVENT: the event's name (valid as
                       ** long as the process) */
  int cutoff;          /* 1: a latent abort cut off by its abort_timeout
                       ** (status BONSAI_ABORTED) */
  bonsai_value payload; /* BONSAI_TRACE_EVENT: the event's payload (a
                        ** string valid as message is) */
} bonsai_event;

BONSAI_API int bonsai_agent_trace(bonsai_agent *agent, unsigned n);
/* Moves up to max of the oldest recorded events into out and forgets them;
** returns how many were written (with out NULL, how many are waiting). */
BONSAI_API unsigned bonsai_agent_events(bonsai_agent *agent,
                                        bonsai_event *out, unsigned max);
/* Events lost because the ring was full, since the last call (reset by
** bonsai_agent_events). */
BONSAI_API unsigned bonsai_agent_dropped(const bonsai_agent *agent);
/* Writes the path of the event's node, in the version the event refers to,
** into buf; returns its full length (0 when the event has no node). Valid
** for the events of the last bonsai_agent_events call. */
BONSAI_API size_t bonsai_agent_event_path(const bonsai_agent *agent,
                                          const bonsai_event *ev, char *buf,
                                          size_t size);

/* bonsai_agent_trace_hook(agent, fn, ud): fn(agent, event, ud) each time
** the agent's trace records an event, right after (the event still waits
** for bonsai_agent_events); NULL removes it. For a debugger that looks at
** the agent as each node left it (bt.debug's step through a tick). fn runs
** at the status door, in the middle of the tick and before the node's
** status is stored: it may read the agent's blackboard, but must not write
** it, tick, abort or reset agents, or start or stop traces. The hook goes
** with the trace (bonsai_agent_trace of another size, or 0, drops it).
** BONSAI_OK, or BONSAI_EARG when the agent has no trace. */
typedef void (*bonsai_trace_hook)(bonsai_agent *agent,
                                  const bonsai_event *event, void *ud);
BONSAI_API int bonsai_agent_trace_hook(bonsai_agent *agent,
                                       bonsai_trace_hook fn, void *ud);

/*
** Fault injection. bonsai_agent_force(agent, node, status, ticks): from now
** on, for the agent's next 'ticks' ticks (0: until removed), node (an index
** in the version the agent runs) returns status (BONSAI_SUCCESS or
** BONSAI_FAILURE) when a tick reaches it, without running: a running node
** is aborted first, its leaf is not called, its children are not ticked.
** BONSAI_IDLE removes the node's fault. Its event is marked forced. A
** reload drops the agent's faults (their nodes were the old version's).
** An agent with faults runs the traced copy of the tick; the others pay
** nothing. BONSAI_OK, BONSAI_EARG (no such node, another status) or
** BONSAI_ENOMEM. bonsai_agent_forced: the status forced on the node now
** (BONSAI_IDLE: none) and into *ticks (if not NULL) the ticks it has left
** (0: until removed).
*/
BONSAI_API int bonsai_agent_force(bonsai_agent *agent, unsigned node,
                                  int status, unsigned ticks);
BONSAI_API int bonsai_agent_forced(const bonsai_agent *agent, unsigned node,
                                   unsigned *ticks);
/* bonsai_agent_force on every agent of the tree that runs its current
** version (node: an index in that version); agents made later have none. */
BONSAI_API int bonsai_tree_force(bonsai_tree *tree, unsigned node, int status,
                                 unsigned ticks);

/*
** Profiles. bonsai_tree_profile(tree, 1) starts counting, for every agent
** of the tree (those made later too), calls and seconds per node of its
** current version, from zero; bonsai_tree_profile(tree, 0) stops (the
** counts stay readable). A reload starts the counts again for the new
** version. Profiled agents run the traced copy of the tick (a few clock
** reads per node); the others pay nothing. Returns BONSAI_OK or
** BONSAI_ENOMEM.
*/
typedef struct bonsai_profile_node {
  unsigned long long calls; /* times a tick reached the node */
  double runtime; /* seconds of the runtime at the node: from when a tick
                  ** reaches it until it reaches the next node (the steps
                  ** that end its parents included) */
  double leaf;    /* seconds in the node's leaf callbacks (leaves only) */
} bonsai_profile_node;

typedef struct bonsai_profile {
  int on;                   /* counting */
  unsigned long long ticks; /* agent ticks counted */
  double time;              /* seconds inside them */
} bonsai_profile;

BONSAI_API int bonsai_tree_profile(bonsai_tree *tree, int on);
/* Writes the totals into *out and up to max nodes' counts (in node order)
** into nodes; returns the number of nodes of the version counted, 0 when
** there is no profile of the tree's current version. */
BONSAI_API unsigned bonsai_tree_profile_read(const bonsai_tree *tree,
                                             bonsai_profile *out,
                                             bonsai_profile_node *nodes,
                                             unsigned max);

/*
** Saving and restoring an agent (format: docs/SAVE_FORMAT.md): its clock,
** the state of its running nodes and of data that lasts (limit counts,
** cooldowns...), and its own blackboard's values. A saved agent can be
** restored in another process, also after its tree was reloaded: nodes are
** matched by path and kind, as a reload does; running nodes go on without
** being entered again. Blackboard values the host owns (BONSAI_THANDLE)
** need a host that writes and reads them (else saving them fails, naming
** the key); their bytes follow the tag BONSAI_SAVE_HOST. The queued events
** are saved too, and so is a latent abort under way: restored, each
** aborting node gets its ABORT once more at the agent's first tick (a
** returned BONSAI_RUNNING ignored), and the node that waited for it goes
** on in that tick.
*/
#define BONSAI_SAVE_HOST 6
typedef struct bonsai_savehost {
  void *ud;
  /* call->host of the leaves' SAVE and RESTORE events (BONSAI_LEAF_SAVE:
  ** the state of a leaf's run, saved in its node's record) */
  void *leafhost;
  /* Writes the value of handle h (at blackboard key 'key') with write;
  ** returns BONSAI_OK, or BONSAI_ERROR (see 'error'). */
  int (*save)(void *ud, bonsai_agent *agent, int key, long long h,
              void (*write)(void *wud, const void *p, size_t n), void *wud);
  /* Reads one value from p[0..n) for key (-1: only check it), telling how
  ** many bytes it took in *used; returns BONSAI_OK or BONSAI_ERROR. */
  int (*load)(void *ud, bonsai_agent *agent, int key,
              const unsigned char *p, size_t n, size_t *used);
  /* Why the last save failed (or NULL). */
  const char *(*error)(void *ud);
  /* Queued events' payloads the host owns (or NULL: saving one fails):
  ** writes payload h of the agent's queue; reads one from p[0..n) into
  ** *h (h NULL: only check it), telling how many bytes it took. */
  int (*save_payload)(void *ud, bonsai_agent *agent, long long h,
                      void (*write)(void *wud, const void *p, size_t n),
                      void *wud);
  int (*load_payload)(void *ud, bonsai_agent *agent, const unsigned char *p,
                      size_t n, size_t *used, long long *h);
} bonsai_savehost;
/* Writes the agent's state through write (host may be NULL); each running
** leaf that asks (BONSAI_LEAF_SAVE) gets BONSAI_EV_SAVE (its callbacks may
** not raise, nor tick, abort or save this agent: it is busy meanwhile).
** BONSAI_OK, BONSAI_EARG (a value cannot be saved: bonsai_agent_errmsg
** names the key; or a leaf's SAVE failed: bonsai_agent_errnode is its
** node), BONSAI_ENOMEM or BONSAI_EBUSY. */
BONSAI_API int bonsai_agent_save(bonsai_agent *agent,
                                 const bonsai_savehost *host,
                                 void (*write)(void *ud, const void *p,
                                               size_t n),
                                 void *ud);
/* Puts an agent that runs nothing (new, aborted or reset) in the saved
** state. The whole input is checked first: bytes that are not a save of
** this tree (another tree's, a newer format, corrupted) give BONSAI_EARG
** with a message and change nothing. Then, the state in place, each
** running leaf that asks (BONSAI_LEAF_SAVE) gets BONSAI_EV_RESTORE with
** what its SAVE wrote (matched by path and kind, as its run was):
** BONSAI_ELEAF if one failed (the error at its node; the state stays). */
BONSAI_API int bonsai_agent_restore(bonsai_agent *agent, const void *data,
                                    size_t len, const bonsai_savehost *host);

/*
** Blackboards. Values are tagged; keys are interned per environment.
** A read that misses falls through to the parent.
*/

BONSAI_API bonsai_bb *bonsai_bb_new(bonsai_env *env, bonsai_bb *parent);
BONSAI_API void bonsai_bb_release(bonsai_bb *bb);
BONSAI_API bonsai_bb *bonsai_bb_parent(const bonsai_bb *bb);
/* The interned id of a key name (created if new), or -1 on error. Key ids
** are the same in every environment of the process. */
BONSAI_API int bonsai_key(bonsai_env *env, const char *name, size_t len);
/* The id of a key name that was interned already, or -1. */
BONSAI_API int bonsai_key_find(const bonsai_env *env, const char *name,
                               size_t len);
BONSAI_API const char *bonsai_key_name(const bonsai_env *env, int key);
/* Reads key, falling through to parents; BONSAI_TNIL when unset. The
** string of a BONSAI_TSTRING stays valid until the key is written. */
BONSAI_API bonsai_value bonsai_bb_get(const bonsai_bb *bb, int key);
/* Writes key in bb itself (BONSAI_TNIL clears it). */
BONSAI_API int bonsai_bb_set(bonsai_bb *bb, int key, bonsai_value v);
/* Writes key as bonsai_bb_set does; returns 1 when the value changed, 0
** when bb held that value already (a handle is always a change), or a
** negative code. */
BONSAI_API int bonsai_bb_update(bonsai_bb *bb, int key, bonsai_value v);
/* Reads key in bb itself, not in its parents (BONSAI_TNIL when bb holds no
** value for it): which blackboard of a chain holds a value, for a host that
** keeps what a BONSAI_THANDLE means beside the blackboard holding it. */
BONSAI_API bonsai_value bonsai_bb_get_own(const bonsai_bb *bb, int key);
/* Iterates over the keys bb itself holds (not its parents'), in no fixed
** order: start with *cursor = 0; each call writes the next key and its
** value and returns 1, or returns 0 at the end. Changing or clearing keys
** during an iteration is safe; adding keys may make it skip or repeat
** some. */
BONSAI_API int bonsai_bb_next(const bonsai_bb *bb, unsigned *cursor, int *key,
                              bonsai_value *v);

#ifdef __cplusplus
}
#endif

#endif
