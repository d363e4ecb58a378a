/*
** bstypes.h: the core's shared records. A Blueprint is the compiled,
** immutable form of a tree: one array of Nodes in pre-order (a node's first
** child is the next node; 'next' skips its subtree), a leaf table and a string
** pool, all in one allocation. An agent owns only a status byte per node plus
** a small data block per node that needs one.
*/
#ifndef bonsai_bstypes_h
#define bonsai_bstypes_h

#include <stdint.h>

#include "bonsai.h"
#include "bsconf.h"

/* A leaf implementation: registered by name in the env, or anonymous in a
** blueprint. */
typedef struct Leaf {
  bonsai_leaf_fn fn;
  void *data;
  unsigned flags; /* BONSAI_LEAF_*, LEAF_MISSING */
  double atimeout; /* a registered leaf's abort_timeout (seconds), or -1 */
} Leaf;

/* Leaf.flags: the name has no leaf in this environment (a tree shared by
** another one names it); data is the name, and a tick fails. */
#define LEAF_MISSING 0x100u

struct bonsai_env {
  int refs;
  bonsai_alloc alloc;
  void *ud;
  size_t bytes;   /* currently allocated through alloc */
  Leaf *leaves;   /* indexed by leaf name id (names.h): unregistered
                  ** names hold a leaf that reports the error */
  uint32_t nleaves;
  uint64_t bbserial; /* stamps blackboard changes, env-wide, increasing */
  uint32_t nabortish; /* registered leaves with an exit or abort callback
                      ** (a stepped tick of a version that names leaves
                      ** needs none: step.c) */
  struct Stepping *freesteps; /* records of stepped ticks not in use,
                              ** freed when no agent is left (agent.c) */
  uint32_t nagents;           /* the environment's agents */
  bonsai_write_fn write; /* writes event payloads, or NULL (events.c) */
  bonsai_payload_fn retain, release; /* a host's payload handles, or NULL */
  void *payud;
};

/* Node flags. */
#define NF_ACTIVE 1u    /* ticked from above every tick while running */
#define NF_HIDDEN 2u    /* left out of paths (the priority wrapper) */
#define NF_NAMED 4u     /* leaf: 'leaf' is a leaf name id (env->leaves) */
#define NF_KEYREF 8u    /* check: value is another key ("$key") */
#define NF_MEMORY 16u   /* sequence, selector: resumes its running child */
#define NF_REACTIVE 32u /* reactive_sequence/_selector, priority */
#define NF_COND 64u     /* has pre- or post-conditions ('when', 'cond') */

/* Where a node's jump goes (Node.how). */
enum {
  JUMP_ROOT,    /* the root ended */
  JUMP_NEXT,    /* on to 'to', the next sibling */
  JUMP_NEXTMEM, /* the same, and the parent (with memory) remembers it */
  JUMP_PARENT   /* 'to' is the parent, which decides */
};

/* Check operators. */
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

/* Guard abort modes. */
enum { GUARD_NONE, GUARD_SELF, GUARD_LOWER, GUARD_BOTH };

/* A node: what a tick reads comes first (64 bytes); 128 bytes in all, so
** that a node's address is one shift away. */
typedef struct Node {
  uint8_t kind;     /* bonsai_kind */
  uint8_t flags;    /* NF_* */
  uint8_t op;       /* check: OP_*; parallel: 1 when its success policy
                    ** is "all" (skipped children count as successes) */
  uint8_t mode;     /* guard: GUARD_*; parallel: 1 with "wait" */
  uint8_t cont;     /* sequence-like nodes: the status on which they go on
                    ** to the next child (SUCCESS or FAILURE), else 0 */
  uint8_t how[2];   /* jump table: what 'to' is (JUMP_*) */
  uint32_t parent;  /* BS_NONE for the root */
  uint32_t next;    /* first index after this subtree */
  uint32_t up;      /* nearest NF_ACTIVE ancestor, where RUNNING goes */
  uint32_t upchild; /* the child of 'up' on the path to this node */
  /* Jump table: when this node ends with SUCCESS (0) or FAILURE (1), its
  ** 'fin' nearest ancestors, all sequences or selectors of any flavour,
  ** end with it; then control goes to 'to', as 'how' says. */
  uint32_t to[2];
  uint32_t fin[2];
  uint32_t data;    /* offset of this node's state in the data block */
  uint32_t leaf;    /* leaves: index in bp->leaves or env->leaves; utility
                    ** selector: its children's utilities in bp->leaves */
  const void *args; /* leaf arguments */
  uint32_t a, b;    /* times; policy counts; check key and value key;
                    ** events: the payload's key (or BS_NONE), the event */
  /* the rest */
  uint32_t name;    /* offset of the name in the pool */
  uint32_t depth;   /* 0 for the root */
  uint32_t nchild;
  double secs;      /* timers; wait_event's timeout, an action's or a
                    ** control node's abort_timeout (-1: none) */
  bonsai_value val; /* check: the constant (strings point into the pool) */
  uint32_t cond;    /* NF_COND: its conditions in bp->leaves, from here in
                    ** BONSAI_* condition order, one per bit of 'when' */
  uint32_t text;    /* its texts (bonsai_def_text) in the pool, or BS_NONE:
                    ** for itself then each condition in order, the source
                    ** and the keys, each NUL-terminated ("" when none) */
  uint8_t when;     /* NF_COND: bit k set when it has condition k */
  char spare[7];
} Node;

/* A pre-condition evaluated in C (bonsai_def_when_check): its leaf in
** bp->leaves has no function and its data is the index of this record. */
typedef struct Check {
  uint32_t key;     /* key id */
  uint32_t vkey;    /* the key id the value names, or BS_NONE */
  uint8_t op;       /* OP_* */
  bonsai_value val; /* strings point into the pool */
} Check;

/* A compiled version of a tree: bonsai.h's opaque bonsai_version. */
typedef struct bonsai_version {
  int refs;          /* atomic (bs_bp_retain): shared trees cross threads */
  bonsai_env *env;   /* whose allocator holds it; NULL: malloc, shared */
  uint64_t id;       /* unique in the process: addresses may be reused */
  int replaced;      /* a tree moved on from this version (the one field
                     ** written after compiling, atomically: agents check
                     ** it) */
  uint32_t n;        /* nodes */
  uint32_t nleaves;
  uint32_t nnamed;   /* named leaves use leaf name ids below this */
  uint32_t nostep;   /* callbacks a stepped tick could not hand out
                     ** (step.c): leaves with an exit or abort callback,
                     ** conditions and utilities that are functions,
                     ** control nodes with an abort callback */
  uint32_t nconds;   /* nodes with pre- or post-conditions (NF_COND) or
                     ** of a kind that may be skipped (K_SKIPS): the VM's
                     ** copy that checks them runs this version */
  void *host;        /* the host's bytes (a shared tree's Lua values) */
  size_t hostlen;
  uint32_t statsize; /* n rounded up to 8: status bytes */
  uint32_t datasize; /* bytes of node data after the statuses */
  Node *nodes;
  Leaf *leaves;
  Check *checks;     /* conditions evaluated in C */
  uint32_t nchecks;
  char *pool;
  size_t size;       /* of the whole allocation */
  /* Keys watched by guards: watchkey[k], the guards watching it are
  ** watchguard[watchfirst[k] .. watchfirst[k+1]), and each agent keeps the
  ** key's last seen change stamp at data offset watchdata + 4k. */
  uint32_t nwatch;
  uint32_t watchdata;
  uint32_t *watchkey;
  uint32_t *watchfirst;
  uint32_t *watchguard;
  /* Event guards in mode "lower" (they take over at the start of a tick
  ** their event is delivered to), in pre-order. */
  uint32_t nevguard;
  uint32_t *evguard;
} Blueprint;

struct bonsai_tree {
  int refs;
  struct Share *share; /* its entry in the process's shared trees, or NULL */
  bonsai_env *env;
  Blueprint *bp;      /* current version */
  char *name;
  struct Plan *plan;  /* cached migration plan to bp (reload.h) */
  struct bonsai_agent *agents; /* its agents, linked by tnext (profile.c) */
  struct Prof *prof;  /* its profile (profile.c), or NULL */
  uint8_t held;       /* its agents keep the versions they run across
                      ** reloads, but those with a pass (bonsai_tree_hold) */
};

/* A control node's callback under way (vm.c): on the C stack of its call,
** linked from the agent while it runs (in a stepped tick, in the run that
** handed the call out: step.c). */
typedef struct Frame {
  struct Frame *prev; /* the callback it is nested in, or NULL */
  struct Frame *prevrun; /* while busy: the frame whose child's run was
                         ** under way before this one's (a->run) */
  void *host;         /* while busy: a->hostud before the child's run */
  uint32_t node;      /* the control node */
  uint32_t budget;    /* child ticks it may still ask for */
  uint8_t event;      /* BONSAI_EV_TICK or BONSAI_EV_ABORT */
  uint8_t busy;       /* a child's run is under way */
  uint8_t failed;     /* a child's run failed: the error is recorded */
  uint8_t caught;     /* a non-local exit left a child's run and the host
                      ** caught it inside the callback
                      ** (bonsai_control_recover) */
  uint8_t latent;     /* ABORT: the abort pass may be latent; TICK: a child
                      ** it aborted is aborting, so the node waits */
} Frame;

/* A run of a stepped tick (step.c): level 0 is the tick, each level above
** a control node's child run, nested in that node's callback. A run that
** stopped to hand a call out keeps where it stopped; one that handed out a
** control node's callback keeps that callback's frame. Each is allocated
** when a tick first nests that deep, and kept: a->ctl may point into it. */
typedef struct StepRun {
  Frame f;              /* a control node's callback handed out */
  void *host;           /* the host's data when it was handed out */
  Frame *ctl;           /* a child run: its control node's callback */
  struct StepRun *next; /* the level above, or NULL */
  struct StepRun *prev; /* the level below, or NULL */
  uint32_t from;        /* a child run: the child; BS_NONE: the tick */
  uint32_t i;           /* the node it stopped at */
  uint8_t at;           /* where (vm.h: BS_AT_*); BS_AT_NONE: not stopped */
  uint8_t copy;         /* the copy of the tick it runs (bs_copy) */
  uint8_t watched;      /* the tick: it began watched (vm.c) */
} StepRun;

/* A stepped tick under way (step.c): the call handed out last, and the
** runs. An agent holds one only while its tick steps; the environment
** keeps those not in use, whose memory the next stepped ticks reuse. */
typedef struct Stepping {
  bonsai_call call;  /* the call handed out */
  bonsai_leaf_fn fn; /* its function */
  StepRun *top;      /* the innermost run (level a->nstep - 1) */
  struct Stepping *nextfree; /* in env->freesteps */
  StepRun run;       /* level 0 */
} Stepping;

struct bonsai_agent {
  /* what every tick reads and writes, together; first what a sleeping
  ** agent's skip reads (bonsai_agent_asleep), in the fewest bytes */
  Blueprint *bp;    /* the version this agent runs */
  double time;      /* agent clock: sum of dt */
  double wake;      /* asleep until this time (0: awake) */
  uint8_t busy;     /* inside a tick or an abort */
  uint8_t last;     /* status of the last tick */
  uint8_t raises;   /* the operation's host may raise (BONSAI_HOST_RAISES) */
  uint8_t protect;  /* callbacks must not raise (abort passes) */
  uint8_t event;    /* event being delivered to 'current' */
  uint8_t copy;     /* the copy of the tick it runs (vm.c): bs_copy */
  uint8_t failed;   /* an error is recorded (err, errnode, errbp): the
                    ** first of an operation; cleared by the next one */
  uint8_t watched;  /* traced, profiled or with faults: ticks run the
                    ** watched copy (bs_rewatch) */
  uint32_t serial;  /* ticks so far */
  uint32_t resume;  /* where the next tick starts (0 unless the root runs) */
  uint32_t current; /* node whose callback is being called */
  uint8_t *state;   /* statsize status bytes, then datasize data bytes */
  void *owner;
  struct Trace *trace; /* event ring buffer, or NULL (see trace.h) */
  void *hostud;     /* the host's data during an operation (call->host) */
  struct Events *events; /* its event queue (events.c), or NULL: none sent
                    ** yet (a tick tests it twice) */
  bonsai_bb *bb;    /* then what a tick of a tree with guards reads */
  uint64_t seen;    /* blackboard change stamp last looked at (guards) */
  /* the rest */
  uint32_t errnode; /* node of the error, in errbp */
  bonsai_tree *tree;
  char *err;        /* BS_ERRSIZE bytes, allocated on first error */
  Blueprint *errbp; /* the version errnode belongs to (held), or NULL */
  struct Interrupt *intr; /* C interrupts (bonsai_agent_add_interrupt) */
  uint32_t nintr;
  uint32_t statecap; /* bytes available at state (a block of its own
                     ** after a reload to a larger version) */
  uint32_t inlinecap; /* bytes of state inside the agent's allocation */
  uint8_t held;     /* keeps the version it runs across reloads
                    ** (bonsai_agent_hold) */
  uint8_t pass;     /* switches though its tree is held (bonsai_agent_pass;
                    ** cleared when the tree's hold ends) */
  Frame *ctl;       /* the innermost control callback under way, or NULL */
  Frame *run;       /* the innermost one whose child's run is under way:
                    ** live whenever a host catches a non-local exit
                    ** (bonsai_control_recover) */
  struct Latent *latent; /* latent aborts under way (latent.c), or NULL:
                    ** while there are some, ticks run the watched copy */
  struct Prof *prof; /* its tree's profile while it counts, or NULL */
  struct Fault *fault; /* forced nodes (fault.c), nfault of them */
  uint32_t nfault, capfault;
  uint32_t forcing; /* the forced node whose status is being stored (its
                    ** event is marked forced), or BS_NONE */
  uint8_t stepping; /* inside a stepping function: no callback may run */
  uint8_t nstep;    /* runs of a stepped tick under way (levels) */
  struct Stepping *step; /* the stepped tick under way, or NULL */
  uint32_t cutting; /* the node whose latent abort is being cut off by its
                    ** abort_timeout (its event is marked), or BS_NONE */
  struct bonsai_agent *tnext, *tprev; /* the tree's agents (profile.c) */
};

/* Picks the copy of the tick an agent runs (vm.c): the one that checks
** conditions for a version that has some, else the watched one when it is
** traced, profiled or has faults (a->watched, bs_rewatch), else the plain
** one. After any change of a->bp or a->watched. */
static inline void bs_copy(bonsai_agent *a) {
  a->copy = (uint8_t)(a->bp->nconds != 0 ? 2 : a->watched != 0);
}

/* Blackboard slot: key id, value, and the stamp of its last change. */
typedef struct Slot {
  uint32_t key;    /* BS_NONE: empty */
  uint32_t serial; /* low bits of the change stamp */
  bonsai_value v;
} Slot;

struct bonsai_bb {
  int refs;
  bonsai_env *env;
  bonsai_bb *parent;
  uint32_t n, cap; /* cap: power of 2, or 0 */
  uint64_t serial; /* stamp of the last change of any key */
  Slot *slots;
};

#endif
