---@meta bonsai
-- meta.lua: LuaLS / EmmyLua annotations of `require "bonsai"`, for editors
-- (completion, hover, wrong option names). Never run: the module is
-- lua/bonsai/init.lua. Option tables are exact classes, so a misspelt
-- option is flagged. tests/spec/annotations_spec.lua checks that every
-- public function of the module is annotated here and the reverse.

---@alias bonsai.Status "success"|"failure"|"running"|"aborted"|"idle"|"skipped"|"aborting"

---What a leaf may return: true or "success", false, nil or "failure",
---"running" (actions only).
---@alias bonsai.Result boolean|nil|"success"|"failure"|"running"

---A leaf callback: `fn(agent, bb, args)`.
---@alias bonsai.LeafFn fun(a: bonsai.Agent, bb: bonsai.Blackboard, args: table?): bonsai.Result

---`utility = fn(agent, bb)` of a child of bt.utility_selector.
---@alias bonsai.UtilityFn fun(a: bonsai.Agent, bb: bonsai.Blackboard): number

---How many children a parallel policy needs: "all", "one" or a count.
---@alias bonsai.Policy "all"|"one"|integer

---@alias bonsai.Op "=="|"~="|"<"|"<="|">"|">="

---@alias bonsai.AbortMode "none"|"self"|"lower"|"both"

---@alias bonsai.Format "behavior3"|"btcpp"|"edges"|"lua"

---A node table made by a constructor; bt.tree compiles it.
---@class bonsai.Node
---@field type string the node type ("sequence", "action", ...)
---@field name? string
---@field utility? bonsai.UtilityFn

---The fields every node's table form accepts; its array part holds the
---children.
---@class (exact) bonsai.NodeOpts
---@field name? string names the node in errors, dumps, traces, reloads
---@field utility? bonsai.UtilityFn its priority under bt.utility_selector
---@field failure_if? string script: when the node starts and it is true, the node fails without running
---@field success_if? string script: when the node starts and it is true, the node succeeds without running
---@field skip_if? string script: when the node starts and it is true, the node is skipped ("skipped")
---@field run_while? string script: checked when the node starts (false: skipped) and at every tick while it runs (false: aborted, then skipped)
---@field on_success? string script run when the node succeeds
---@field on_failure? string script run when the node fails
---@field on_halted? string script run when the node is aborted
---@field post? string script run when the node succeeds or fails (after on_success/on_failure)
---@field [integer] bonsai.Node

---@class (exact) bonsai.ParallelOpts: bonsai.NodeOpts
---@field success? bonsai.Policy default "all"
---@field failure? bonsai.Policy default "one"
---@field wait? boolean true: no child is aborted when a policy is met

---@class (exact) bonsai.FilterOpts: bonsai.NodeOpts
---@field conditions? bonsai.Node[] checked every tick before the child

---@class (exact) bonsai.TimesOpts: bonsai.NodeOpts
---@field times? integer

---@class (exact) bonsai.SecondsOpts: bonsai.NodeOpts
---@field seconds number seconds of agent time

---@class (exact) bonsai.RunOnceOpts: bonsai.NodeOpts
---@field then_skip? boolean after the first run: skipped (true) or its status again (false, the default)

---@class (exact) bonsai.KeyOpts: bonsai.NodeOpts
---@field key string the blackboard key it watches

---@class (exact) bonsai.GuardOpts: bonsai.NodeOpts
---@field abort? bonsai.AbortMode default "none" (an event guard: "none" or "lower")
---@field event? string the guard of an event (bt.event_guard): no check child

---Options of bt.event and bt.wait_event.
---@class (exact) bonsai.EventOpts
---@field name? string
---@field key? string the blackboard key its payload is written to
---@field timeout? number bt.wait_event: seconds of agent time before it fails
---@field failure_if? string
---@field success_if? string
---@field skip_if? string
---@field run_while? string
---@field on_success? string
---@field on_failure? string
---@field on_halted? string
---@field post? string

---An event guard's table: its child, its event and abort mode.
---@class (exact) bonsai.EventGuardOpts: bonsai.NodeOpts
---@field event string
---@field abort? "none"|"lower" default "none"

---A lifecycle action: `tick` is required.
---@class (exact) bonsai.Lifecycle
---@field name? string
---@field utility? bonsai.UtilityFn
---@field failure_if? string script: when the node starts and it is true, the node fails without running
---@field success_if? string script: when the node starts and it is true, the node succeeds without running
---@field skip_if? string script: when the node starts and it is true, the node is skipped ("skipped")
---@field run_while? string script: checked when the node starts (false: skipped) and at every tick while it runs (false: aborted, then skipped)
---@field on_success? string script run when the node succeeds
---@field on_failure? string script run when the node fails
---@field on_halted? string script run when the node is aborted
---@field post? string script run when the node succeeds or fails (after on_success/on_failure)
---@field enter? fun(agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?)
---@field tick fun(agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?): bonsai.Result
---@field exit? fun(agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?, status: bonsai.Status)
---@field abort? fun(agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?): ("running"|any) return bt.RUNNING to take more time (a latent abort)
---@field abort_timeout? number seconds of agent time a latent abort may take before it is cut off
---@field save? fun(agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?): any what the run keeps outside the blackboard, saved by a:save() while the leaf runs (plain values, as c.memory; nil: nothing)
---@field restore? fun(agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?, value: any) a save put the run back (it goes on without enter): value is what save returned, nil when the save holds none

---What a bt.control's callbacks get as `c` (valid during the callback).
---@class bonsai.Control
---@field n integer the number of children
---@field memory table kept for this agent and node across ticks and runs
local Control = {}

---Ticks child i (a new run if it is not running); its status. A child
---that is aborting is not ticked: "running".
---@param i integer
---@return bonsai.Status
function Control:tick(i) end

---Aborts child i if it is running (from the tick callback, a latent abort:
---the node then waits until it has ended).
---@param i integer
function Control:abort(i) end

---A control node: `tick` is required; the array part holds the children.
---@class (exact) bonsai.ControlOpts
---@field name? string
---@field utility? bonsai.UtilityFn
---@field args? table passed to the callbacks
---@field failure_if? string script: when the node starts and it is true, the node fails without running
---@field success_if? string script: when the node starts and it is true, the node succeeds without running
---@field skip_if? string script: when the node starts and it is true, the node is skipped ("skipped")
---@field run_while? string script: checked when the node starts (false: skipped) and at every tick while it runs (false: aborted, then skipped)
---@field on_success? string script run when the node succeeds
---@field on_failure? string script run when the node fails
---@field on_halted? string script run when the node is aborted
---@field post? string script run when the node succeeds or fails (after on_success/on_failure)
---@field enter? fun(c: bonsai.Control, agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?)
---@field tick fun(c: bonsai.Control, agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?): bonsai.Result
---@field abort? fun(c: bonsai.Control, agent: bonsai.Agent, bb: bonsai.Blackboard, args: table?): ("running"|any) return bt.RUNNING to take more time (a latent abort)
---@field abort_timeout? number seconds of agent time its latent abort may take
---@field [integer] bonsai.Node

---Options of bt.load, handed to the file's loader.
---@class (exact) bonsai.LoadOpts
---@field main? string the BehaviorTree.CPP tree to run (a file of several, or of its library)
---@field library? string|string[] files and folders whose trees the file may use and `main`/`tree` may create: a folder stands for its tree files (.xml for BehaviorTree.CPP, .json and .b3 for behavior3; not its subfolders); BehaviorTree.CPP's read as if the file included each, by ID; behavior3's classic trees by id or title, current editor files by name or workspace path (relative to the file's directory, or `dir`; docs/FORMATS.md "Libraries of files")
---@field include_dirs? string[] the directories a BehaviorTree.CPP <include> or a behavior3 subtree `path` may read (default: the file's own directory tree, or `dir`'s; docs/FORMATS.md "Which files a tree file may read")
---@field tree? string the behavior3 tree to create: a project's or its library's tree (id or title), or a current editor file of the library (its name, or its path in the workspace)
---@field dir? string the behavior3 workspace directory subtree `path`s are relative to (default: the file's)

---@class (exact) bonsai.TreeOpts
---@field name? string
---@field priority? bonsai.Node[] bt.filter nodes checked before the root
---@field max_nodes? integer most nodes the definition may expand to (1e6)

---@class (exact) bonsai.AgentOpts
---@field owner? any a.owner, given to nothing else
---@field blackboard? table|bonsai.Blackboard initial values, or a blackboard
---@field restore? string a string from a:save()
---@field events? integer the most events its queue holds (64)

---@class (exact) bonsai.BlackboardOpts
---@field parent? bonsai.Blackboard lookups that miss fall through to it
---@field [string] any initial values

---@class (exact) bonsai.SubtreeOpts
---@field name? string
---@field utility? bonsai.UtilityFn
---@field failure_if? string script: when the node starts and it is true, the node fails without running
---@field success_if? string script: when the node starts and it is true, the node succeeds without running
---@field skip_if? string script: when the node starts and it is true, the node is skipped ("skipped")
---@field run_while? string script: checked when the node starts (false: skipped) and at every tick while it runs (false: aborted, then skipped)
---@field on_success? string script run when the node succeeds
---@field on_failure? string script run when the node fails
---@field on_halted? string script run when the node is aborted
---@field post? string script run when the node succeeds or fails (after on_success/on_failure)
---@field args? table the subtree's leaves see it as their args
---@field remap? table<string, string> subtree key -> caller's key

---@class (exact) bonsai.TickAllOpts
---@field budget? integer ticks at most this many awake agents per call

---@class bonsai.TickError
---@field agent bonsai.Agent
---@field error string
---@field count integer how many times in a row this agent failed with this message (1: new; again 1 after a tick without an error): print when 1

---One recorded event of a:events().
---@class bonsai.Event
---@field tick integer the agent's tick count (1 for its first tick)
---@field time number a.time during that tick
---@field node? string the node's path
---@field status? bonsai.Status
---@field event? "reload"|"error"|"interrupt"|"reset"
---@field message? string
---@field again? boolean a running node ticked again (a leaf: that stays running)
---@field forced? boolean the status a fault forced (a:force)
---@field id? integer the node's 0-based index, with a:events("id")

---What a subscription passes on (a:subscribe): a list of statuses, or a
---function of an event.
---@class bonsai.EventFilter
---@field status? bonsai.Status|bonsai.Status[] only status events with one of these
---@field node? string only events whose node path matches this Lua pattern
---@field again? boolean false: no "ticked again" events
---@field events? boolean false: no events at all (fn gets nil; no trace needed)

---A subscription, for a:unsubscribe and bt.unsubscribe.
---@class bonsai.Subscription

---A tick's events for a subscriber: read-only, the tick as fields.
---@class bonsai.TickEvents: bonsai.Event[]
---@field tick integer the agent's tick count
---@field time number a.time during that tick

---@alias bonsai.Subscriber fun(agent: bonsai.Agent, events: bonsai.TickEvents?, status: bonsai.Status?, err: string?)

---@class bonsai.Recorder
local Recorder = {}

---Stops recording and closes the trace file.
function Recorder:close() end

---Records one more agent.
---@param a bonsai.Agent
---@return bonsai.Recorder
function Recorder:add(a) end

---Stops recording one agent.
---@param a bonsai.Agent
---@return bonsai.Recorder
function Recorder:remove(a) end

---Writes what is buffered to the file.
---@return bonsai.Recorder
function Recorder:flush() end

---A blackboard: `bb.key` reads (through parents), `bb.key = v` writes
---(nil clears); any Lua value.
---@class bonsai.Blackboard
---@field [string] any
local Blackboard = {}

---@param key string
---@param default? any returned when the key is not set
---@return any
function Blackboard:get(key, default) end

---@param key string
---@param value any nil clears
function Blackboard:set(key, value) end

---@param key string
---@return boolean
function Blackboard:has(key) end

---Calls fn after each change of key.
---@param key string
---@param fn fun(bb: bonsai.Blackboard, key: string, new: any, old: any)
---@return any handle for bb:unobserve
function Blackboard:observe(key, fn) end

---@param handle any what bb:observe returned
function Blackboard:unobserve(handle) end

---The keys and values of this blackboard (as pairs(bb)).
---@return fun(): string?, any
function Blackboard:pairs() end

---A compiled tree, shared by its agents.
---@class bonsai.Tree
---@field name string
---@field size integer number of nodes
local Tree = {}

---A text picture of the tree, with a's statuses if given.
---@param a? bonsai.Agent
---@return string
function Tree:dump(a) end

---Compiles a new version; agents switch at their next tick.
---@param root bonsai.Node|bonsai.Tree
---@param opts? bonsai.TreeOpts
---@return true|nil ok
---@return string? message when the old version keeps running
function Tree:reload(root, opts) end

---Holds every agent of the tree on the version it runs (true): reloads
---make new versions, but only agents with a pass (a:pass) switch to them;
---false releases the tree (every pass taken back), and each agent switches
---to the newest version at its next tick, its running nodes matched by
---path as for any reload (an agent's own hold, a:hold, still keeps it).
---@param on boolean
function Tree:hold(on) end

---Whether the tree holds its agents on their versions (tree:hold).
---@return boolean
function Tree:held() end

---Graphviz text of the tree, with a's statuses if given.
---@param a? bonsai.Agent
---@return string
function Tree:dot(a) end

---Mermaid text of the tree, with a's statuses if given.
---@param a? bonsai.Agent
---@return string
function Tree:mermaid(a) end

---The nodes of the version a runs (or the current one), in pre-order, and
---that version's id.
---@param a? bonsai.Agent
---@return table[] nodes { id, name, type, parent?, path, params, hidden?, status?, script?, conditions?, keys? } (script: its script's source or a check's comparison; conditions: { skip_if = source, ... }; keys: those they read or write)
---@return integer version
function Tree:nodes(a) end

---One node's counts in a tree's profile.
---@class bonsai.ProfileNode
---@field id integer 0-based index (as tree:nodes)
---@field path string
---@field name string
---@field type string
---@field calls integer times a tick reached the node
---@field runtime number seconds of the runtime at the node
---@field leaf number seconds in the leaf's own callbacks (leaves)

---A tree's profile; tostring gives a report, a line per node.
---@class bonsai.Profile
---@field on boolean counting
---@field version integer the version's id (as tree:nodes' second result)
---@field ticks integer agent ticks counted
---@field time number seconds inside them
---@field nodes bonsai.ProfileNode[] in node order (empty without a profile)

---The per-node profile, summed over every agent of the tree: true starts
---it from zero (agents made later count too), false stops it; either way,
---or with nothing, returns the counts. A reload starts them again.
---@param on? boolean
---@return bonsai.Profile
function Tree:profile(on) end

---Fault injection on every agent of the tree that runs its current
---version (agents made later have none): see Agent:force.
---@param node string|integer path or 0-based id
---@param status? "success"|"failure" nil removes the node's fault
---@param ticks? integer the agents' next ticks (0 or nil: until removed)
---@return bonsai.Tree
function Tree:force(node, status, ticks) end

---Text that the editor of that format opens ("behavior3": the classic
---behavior3editor's tree, laid out; "behavior3-current": the current
---behavior3 editor's tree file; "edges": an edge list, as bt.load reads
---a .bt file).
---@param format "behavior3"|"behavior3-current"|"btcpp"|"edges"
---@return string
function Tree:export(format) end

---A string naming the compiled tree for other Lua states (bt.shared).
---@return string
function Tree:share() end

---An agent: its own state of a tree, a clock and a blackboard.
---@class bonsai.Agent
---@field owner any
---@field bb bonsai.Blackboard
---@field tree bonsai.Tree
---@field time number the agent clock: the sum of dt ticked so far
local Agent = {}

---Adds dt to a.time, then runs the tree.
---@param dt number
---@return bonsai.Status
function Agent:tick(dt) end

---Aborts every running node (deepest first).
function Agent:abort() end

---Aborts, then clears every node's state (limits, cooldowns, run_once).
function Agent:reset() end

---The root's last status.
---@return bonsai.Status
function Agent:status() end

---The names of the running nodes, outermost first; an aborting one's with
---" (aborting)".
---@return string[]
function Agent:running() end

---Queues an event for the agent's next tick (payload: nil or a value
---a:save can save); wakes a sleeping agent; a full queue drops its oldest.
---@param name string
---@param payload? any
function Agent:send(name, payload) end

---Events dropped from the agent's full queue since it was made.
---@return integer
function Agent:dropped_events() end

---fn is checked at the start of every tick; true aborts everything.
---@param fn fun(agent: bonsai.Agent, bb: bonsai.Blackboard): boolean?
function Agent:add_interrupt(fn) end

---@param fn function
---@return boolean removed
function Agent:remove_interrupt(fn) end

---Records events in a ring buffer of n (default 1024); false stops.
---@param n? integer|false
---@return bonsai.Agent
function Agent:trace(n) end

---The recorded events, oldest first; forgets them ("id": nodes as ids).
---@param how? "id"
---@return bonsai.Event[]
function Agent:events(how) end

---Frozen agents are not ticked (a breakpoint); "step": one tick, then
---frozen again.
---@param on boolean|"step"
---@return bonsai.Agent
function Agent:freeze(on) end

---@return boolean
function Agent:frozen() end

---fn(agent, status, err) after each tick of this agent (nil removes it):
---the agent's one on_tick subscription, which a next call replaces.
---@param fn? fun(agent: bonsai.Agent, status: bonsai.Status?, err: string?)
function Agent:on_tick(fn) end

---fn(agent, events, status, err) after each tick of this agent, with the
---tick's events that pass the filter; any number of subscriptions.
---@param fn bonsai.Subscriber
---@param filter? bonsai.EventFilter|fun(e: bonsai.Event): boolean
---@return bonsai.Subscription
function Agent:subscribe(fn, filter) end

---Ends a subscription of this agent; true if it was on.
---@param sub bonsai.Subscription
---@return boolean
function Agent:unsubscribe(sub) end

---{ [node id] = status } for the nodes that are not idle.
---@return table<integer, bonsai.Status>
function Agent:node_statuses() end

---Fault injection: the node returns status when a tick reaches it, without
---running (a running node is aborted first), for the agent's next ticks
---(0 or nil: until removed); nil removes it. Its events are marked
---forced. A reload drops the agent's faults.
---@param node string|integer path or 0-based id
---@param status? "success"|"failure"
---@param ticks? integer
---@return bonsai.Agent
function Agent:force(node, status, ticks) end

---The status forced on the node and the ticks it has left (0: until
---removed), or nil.
---@param node string|integer
---@return ("success"|"failure")? status
---@return integer? ticks
function Agent:forced(node) end

---Its next tick runs the tree.
function Agent:wake() end

---Holds the agent on the version of its tree it runs (true): reloads do
---not switch it until it is released (false), and at its next tick after
---the release it switches to the newest version, its running nodes matched
---by path as for any reload (unless its tree holds it: tree:hold).
---@param on boolean
function Agent:hold(on) end

---Whether the agent is held on its version by its own hold (a:hold).
---@return boolean
function Agent:held() end

---Gives the agent a pass through its tree's hold (true): it switches at
---its next tick as if the tree were not held (its own hold still keeps
---it); false takes the pass back. Ending the tree's hold takes every pass
---back.
---@param on boolean
function Agent:pass(on) end

---Whether the agent has a pass through its tree's hold (a:pass).
---@return boolean
function Agent:passes() end

---Seconds of sleep left, or nil.
---@return number?
function Agent:sleeping() end

---The agent's state as a string, for bt.agent(tree, { restore = s }).
---@return string
function Agent:save() end

---The fluent builder: composites stay open until :back().
---@class bonsai.Builder
local Builder = {}

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:sequence(opts) end

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:selector(opts) end

Builder.fallback = Builder.selector

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:reactive_sequence(opts) end

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:reactive_selector(opts) end

Builder.active_selector = Builder.reactive_selector

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:utility_selector(opts) end

---@param opts bonsai.NodeOpts `key`: the agent's seed
---@return bonsai.Builder
function Builder:random_selector(opts) end

---Opens an if_then_else: condition, then, else (closed by :back()).
---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:if_then_else(opts) end

---Opens a while_do_else: condition, do, else (closed by :back()).
---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:while_do_else(opts) end

---A bt.control: its callbacks in opts, its children added next.
---@param opts bonsai.ControlOpts
---@return bonsai.Builder
function Builder:control(opts) end

---@param opts? bonsai.ParallelOpts|string
---@return bonsai.Builder
function Builder:parallel(opts) end

---@param opts? bonsai.FilterOpts|string
---@return bonsai.Builder
function Builder:filter(opts) end

---@param opts? bonsai.FilterOpts|string
---@return bonsai.Builder
function Builder:monitor(opts) end

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:invert(opts) end

Builder.inverter = Builder.invert

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:force_success(opts) end

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:force_failure(opts) end

---@param opts? bonsai.TimesOpts|integer|string
---@return bonsai.Builder
function Builder:repeater(opts) end

---@param opts? bonsai.TimesOpts|integer|string
---@return bonsai.Builder
function Builder:retry(opts) end

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:repeat_until_failure(opts) end

---@param opts? bonsai.NodeOpts|string
---@return bonsai.Builder
function Builder:keep_running_until_failure(opts) end

---@param opts bonsai.SecondsOpts|number
---@return bonsai.Builder
function Builder:timeout(opts) end

---@param opts bonsai.SecondsOpts|number
---@return bonsai.Builder
function Builder:time_limit(opts) end

---@param opts bonsai.TimesOpts|integer
---@return bonsai.Builder
function Builder:limit(opts) end

---@param opts bonsai.SecondsOpts|number
---@return bonsai.Builder
function Builder:cooldown(opts) end

---@param opts bonsai.SecondsOpts|number
---@return bonsai.Builder
function Builder:delay(opts) end

---@param opts? bonsai.RunOnceOpts|string
---@return bonsai.Builder
function Builder:run_once(opts) end

---@param opts bonsai.KeyOpts
---@return bonsai.Builder
function Builder:skip_unless_updated(opts) end

---@param opts bonsai.KeyOpts
---@return bonsai.Builder
function Builder:wait_value_update(opts) end

---Opens a guard on a bt.check / bt.is_set node.
---@param check bonsai.Node
---@param mode? bonsai.AbortMode
---@param name? string
---@return bonsai.Builder
function Builder:guard(check, mode, name) end

---Opens the guard of an event (bt.guard{ event = ... }).
---@param opts bonsai.EventGuardOpts
---@return bonsai.Builder
function Builder:event_guard(opts) end

---Adds bt.event(name, opts).
---@param name string
---@param opts? bonsai.EventOpts
---@return bonsai.Builder
function Builder:event(name, opts) end

---Adds bt.wait_event(name, opts).
---@param name string
---@param opts? bonsai.EventOpts
---@return bonsai.Builder
function Builder:wait_event(name, opts) end

---@param fn bonsai.LeafFn|bonsai.Lifecycle|string
---@param args? table
---@return bonsai.Builder
function Builder:action(fn, args) end

---@param fn bonsai.LeafFn|string
---@param args? table
---@return bonsai.Builder
function Builder:condition(fn, args) end

---@param fn bonsai.LeafFn
---@param args? table
---@return bonsai.Builder
function Builder:task(fn, args) end

---@param s number|bonsai.SecondsOpts
---@return bonsai.Builder
function Builder:wait(s) end

---@param key string
---@param op bonsai.Op
---@param value any
---@return bonsai.Builder
function Builder:check(key, op, value) end

---@param key string
---@return bonsai.Builder
function Builder:is_set(key) end

---Adds any node built with the DSL.
---@param node bonsai.Node
---@return bonsai.Builder
function Builder:leaf(node) end

---Adds bt.subtree(tree, opts); given a node, adds it (as :leaf does).
---@param tree bonsai.Tree|string|bonsai.Node a tree, the name of one, or a node
---@param opts? bonsai.SubtreeOpts
---@return bonsai.Builder
function Builder:subtree(tree, opts) end

---Gives the node added or opened last a utility (under a utility_selector).
---@param fn bonsai.UtilityFn
---@return bonsai.Builder
function Builder:utility(fn) end

---Names the node added or opened last.
---@param name string
---@return bonsai.Builder
function Builder:name(name) end

---Closes the innermost open composite.
---@return bonsai.Builder
function Builder:back() end

Builder["end"] = Builder.back

---The root node, closing whatever is still open.
---@return bonsai.Node
function Builder:node() end

---Closes everything and compiles: bt.tree(root, opts).
---@param opts? bonsai.TreeOpts
---@return bonsai.Tree
function Builder:build(opts) end

---The live view of running agents in the trace viewer.
---@class bonsai.Debug
local Debug = {}

---Options of bt.debug.serve (docs/DEBUGGER.md, "Security").
---@class bonsai.DebugServeOpts
---@field port? integer the port (0, the default: a free one)
---@field host? string the address to listen on ("127.0.0.1"; another needs allow_remote)
---@field allow_remote? boolean listen on an address other than the loopback's
---@field hosts? string[] more host names the page may be opened by (Host and Origin are checked)
---@field token? string the page's token, 16 or more letters, digits or -_.~ (default: 128 bits from /dev/urandom)
---@field root? string the viewer's directory (default: the one installed with the module)
---@field agents? bonsai.Agent[] agents offered and streamed at once
---@field file? string a trace file to serve to the page instead of a live game

---Starts serving the viewer's live protocol; the page's URL carries the
---token that every request showing or changing the game needs.
---@param opts? bonsai.DebugServeOpts
---@return integer port
---@return string url http://127.0.0.1:PORT/?token=...
function Debug.serve(opts) end

---Answers pending viewer requests; call once per frame.
---@return any
function Debug.poll() end

---Offers an agent to the page (streamed unless record = false).
---@param a bonsai.Agent
---@param opts? { record: boolean? }
---@return integer id
function Debug.add(a, opts) end

---@param a bonsai.Agent
function Debug.remove(a) end

---A command of the live protocol, from Lua: the page's (set, break,
---watch, force, freeze, resume, step, record) and its editing commands
---(tree, palette, edit, undo, redo, script, preview, apply, rollback,
---save: docs/DEBUGGER.md, "Editing the running game's trees"), which
---answer a table.
---@param cmd table
---@return true|table|nil ok true, or what the command answers
---@return string? error
function Debug.command(cmd) end

---Closes the connections and the server.
function Debug.close() end

---The connections open, and how many of them are pages following the
---stream (a game may wait for one before its first tick).
---@return integer connections
---@return integer pages
function Debug.clients() end

---@class bonsai
local bt = {}

---"MAJOR.MINOR.PATCH"
bt.VERSION = "0.2.0"
---The node kinds of the core, in its order: each { name, class =
---"leaf"|"composite"|"decorator"|"hidden", number (the parameter a bare
---number sets), params (the parameters it takes), keys (every key its node
---tables may hold, space-separated; any other is refused) }.
---@type { name: string, class: string, number: string?, params: string[], keys: string }[]
bt.KINDS = {}
---The status names of the core by number ([0] = "idle", then "running",
---"success", "failure", "aborted", "skipped", "aborting"), as the trace's
---status events number them.
---@type table<integer, string>
bt.STATUS = {}
bt.SUCCESS = "success"
bt.FAILURE = "failure"
bt.RUNNING = "running"
bt.ABORTED = "aborted"
bt.IDLE = "idle"
---The status of a node passed over by its pre-conditions (skip_if, run_while)
---or whose children all were; a:tick returns it when the root is skipped.
bt.SKIPPED = "skipped"
---The status of a node whose abort callback takes its time (returned
---bt.RUNNING: a latent abort); a:running() marks it " (aborting)".
bt.ABORTING = "aborting"

---The metatable of node tables.
---@type table
bt.Node = {}

---Loaders by file extension: fn(path_or_text, opts) -> node.
---@type table<string, fun(path_or_text: string, opts: table?): bonsai.Node>
bt.loaders = {}

---The live view (bt.debug.serve, bt.debug.poll).
---@type bonsai.Debug
bt.debug = Debug

---An action: fn returns a status; or a lifecycle table; or the name of a
---registered leaf.
---@param fn bonsai.LeafFn|bonsai.Lifecycle|string
---@param args? table the static args table passed to the callbacks
---@return bonsai.Node
function bt.action(fn, args) end

---A condition: fn returns a boolean; or the name of a registered leaf.
---@param fn bonsai.LeafFn|string
---@param args? table
---@return bonsai.Node
function bt.condition(fn, args) end

---An action run as a coroutine: each yield means running.
---@param fn bonsai.LeafFn
---@param args? table
---@return bonsai.Node
function bt.task(fn, args) end

---From a task's body (bt.task): registers fn to run when this run of the
---task ends, however it ends: it returns, fails (fn gets the error) or is
---aborted. The last registered runs first, after the body's to-be-closed
---variables (Lua 5.4); the same on every Lua. Raises outside a task's body.
---@param fn fun(err: any)
function bt.defer(fn) end

---Registers a leaf by name, for every tree (from the next tick on).
---@param name string
---@param def bonsai.LeafFn|bonsai.Lifecycle|bonsai.Node
function bt.register(name, def) end

---Strict mode for every tree of this Lua state: with on true, a Lua leaf
---(or task) that returns nothing is an error ("did you forget return?")
---instead of a failure, and a task that yields a final status
---(coroutine.yield(bt.SUCCESS), true, false) is an error instead of running
---forever. Returns the previous setting; bt.strict() only reads it.
---@param on? boolean
---@return boolean
function bt.strict(on) end

---@class (exact) bonsai.Config
---@field ffi? boolean the LuaJIT path: bt.tick_all, a:tick and c:tick step the C core through the FFI and call the leaves from compiled Lua (on LuaJIT with its compiler and the FFI, unless BONSAI_FFI=0 was set when bonsai loaded); false: the lua_call path. Both give the same results.

---Sets what opts gives and returns the settings now ({ ffi = true } where
---this Lua cannot take the LuaJIT path leaves ffi false: see
---docs/LUA_VERSIONS.md).
---@param opts? bonsai.Config
---@return bonsai.Config
function bt.config(opts) end

---Running until s seconds of agent time have passed.
---@param s number|bonsai.SecondsOpts
---@return bonsai.Node
function bt.wait(s) end

---A condition evaluated in C; a value string "$key" names another key.
---@param key string
---@param op bonsai.Op
---@param value any
---@return bonsai.Node
function bt.check(key, op, value) end

---Succeeds when the key holds a value other than nil.
---@param key string
---@return bonsai.Node
function bt.is_set(key) end

---A condition: success when an event of that name was delivered to this
---tick (its payload written to opts.key first), failure otherwise.
---@param name string
---@param opts? bonsai.EventOpts
---@return bonsai.Node
function bt.event(name, opts) end

---An action: running until an event of that name is delivered, then
---success (its payload to opts.key); failure after opts.timeout seconds.
---@param name string
---@param opts? bonsai.EventOpts
---@return bonsai.Node
function bt.wait_event(name, opts) end

---The same event to every agent of the list, in one call (an element
---that is no agent sends to none).
---@param list bonsai.Agent[]
---@param name string
---@param payload? any
function bt.send(list, name, payload) end

---With memory: resumes the running child next tick.
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.sequence(t) end

---With memory: tries children in order until one succeeds.
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.selector(t) end

bt.fallback = bt.selector

---Re-ticks from the first child every tick.
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.reactive_sequence(t) end

---Tries children from the first every tick; aborts a lower running one.
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.reactive_selector(t) end

bt.active_selector = bt.reactive_selector

---Tries children highest `utility` first, every tick.
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.utility_selector(t) end

---Tries children in an order drawn at each run from the agent's seed (the
---number at blackboard key `key`), the node and the agent's tick count:
---the same seed and ticks draw the same orders (replays match).
---@param t bonsai.NodeOpts `key` (required): the key of the agent's seed
---@return bonsai.Node
function bt.random_selector(t) end

---`{ condition, then, else? }`: the condition once (it may run), then the
---branch it chose, which goes on without the condition; without an else,
---a failed condition fails (BehaviorTree.CPP's IfThenElse).
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.if_then_else(t) end

---`{ condition, do, else? }`: the condition at every tick, then the branch
---it chooses; the other, if it runs, is aborted; without an else, a failed
---condition fails (BehaviorTree.CPP's WhileDoElse).
---@param t bonsai.NodeOpts
---@return bonsai.Node
function bt.while_do_else(t) end

---Ticks every unfinished child each tick.
---@param t bonsai.ParallelOpts
---@return bonsai.Node
function bt.parallel(t) end

---Checks its conditions every tick before its child.
---@param t bonsai.FilterOpts
---@return bonsai.Node
function bt.filter(t) end

---The conditions are ticked again every tick while the child runs.
---@param t bonsai.FilterOpts
---@return bonsai.Node
function bt.monitor(t) end

---A decorator on a bt.check / bt.is_set (its first child), observed by key;
---with `event = name`, the guard of an event (bt.event_guard).
---@param t bonsai.GuardOpts
---@return bonsai.Node
function bt.guard(t) end

---Its child starts in a tick its event is delivered to; with abort =
---"lower" it takes over a lower-priority running sibling in that tick.
---@param t bonsai.EventGuardOpts
---@return bonsai.Node
function bt.event_guard(t) end

---Runs another tree's root as a child.
---@param tree bonsai.Tree|string a tree, or the name of one
---@param opts? bonsai.SubtreeOpts
---@return bonsai.Node
function bt.subtree(tree, opts) end

---Success becomes failure and failure success.
---@param child bonsai.Node|bonsai.NodeOpts
---@return bonsai.Node
function bt.invert(child) end

bt.inverter = bt.invert

---@param child bonsai.Node|bonsai.NodeOpts
---@return bonsai.Node
function bt.force_success(child) end

---@param child bonsai.Node|bonsai.NodeOpts
---@return bonsai.Node
function bt.force_failure(child) end

---n successes of the child; times = nil or 0: forever.
---@param t bonsai.TimesOpts
---@return bonsai.Node
function bt.repeater(t) end

---Up to n tries until the child succeeds.
---@param t bonsai.TimesOpts
---@return bonsai.Node
function bt.retry(t) end

---@param child bonsai.Node|bonsai.NodeOpts
---@return bonsai.Node
function bt.repeat_until_failure(child) end

---Running after each success of its child, whose next run starts at the
---next tick; fails when the child fails (BehaviorTree.CPP's
---KeepRunningUntilFailure).
---@param child bonsai.Node|bonsai.NodeOpts
---@return bonsai.Node
function bt.keep_running_until_failure(child) end

---Aborts the child and fails when s seconds pass while it runs.
---@param t bonsai.SecondsOpts
---@return bonsai.Node
function bt.timeout(t) end

---Aborts the child and succeeds when s seconds pass while it runs.
---@param t bonsai.SecondsOpts
---@return bonsai.Node
function bt.time_limit(t) end

---The child may run n times in the agent's life.
---@param t bonsai.TimesOpts
---@return bonsai.Node
function bt.limit(t) end

---After the child finishes, fails for s seconds without ticking it.
---@param t bonsai.SecondsOpts
---@return bonsai.Node
function bt.cooldown(t) end

---Starts its child after s seconds of agent time.
---@param t bonsai.SecondsOpts
---@return bonsai.Node
function bt.delay(t) end

---Its child's first run; then its final status again, or with
---`then_skip = true` skipped (BehaviorTree.CPP's RunOnce).
---@param child bonsai.Node|bonsai.RunOnceOpts
---@return bonsai.Node
function bt.run_once(child) end

---Skipped unless its `key` changed (and is set) since it last looked, then
---its child; a run of its child goes on whatever the key does
---(BehaviorTree.CPP's SkipUnlessUpdated).
---@param t bonsai.KeyOpts
---@return bonsai.Node
function bt.skip_unless_updated(t) end

---Running, without its child, until its `key` changes (and is set), then
---its child (BehaviorTree.CPP's WaitValueUpdate).
---@param t bonsai.KeyOpts
---@return bonsai.Node
function bt.wait_value_update(t) end

---Sets node.name and returns the node.
---@generic N: bonsai.Node
---@param name string
---@param node N
---@return N
function bt.named(name, node) end

---Sets node.utility (its priority under bt.utility_selector) and returns
---the node.
---@generic N: bonsai.Node
---@param fn bonsai.UtilityFn
---@param node N
---@return N
function bt.utility(fn, node) end

---Is x a node table?
---@param x any
---@return boolean
function bt.isnode(x) end

---Is x a tree (made by bt.tree or bt.load)?
---@param x any
---@return boolean
function bt.istree(x) end

---Compiles a node once into a shared blueprint.
---@param root bonsai.Node
---@param opts? bonsai.TreeOpts
---@return bonsai.Tree
function bt.tree(root, opts) end

---An agent running tree.
---@param tree bonsai.Tree
---@param opts? bonsai.AgentOpts
---@return bonsai.Agent
function bt.agent(tree, opts) end

---Ticks a list of agents from C; nil, or the errors.
---@param list bonsai.Agent[]
---@param dt number
---@param opts? bonsai.TickAllOpts
---@return bonsai.TickError[]|nil
function bt.tick_all(list, dt, opts) end

---A blackboard, optionally with a parent.
---@param t? bonsai.BlackboardOpts
---@return bonsai.Blackboard
function bt.blackboard(t) end

---Bytes held by the C core.
---@return integer
function bt.memory() end

---A fluent builder.
---@return bonsai.Builder
function bt.builder() end

---Loads a tree file (.lua, .json, .xml, .bt or a bt.loaders extension);
---bt.reload and bt.poll keep opts.
---@param path string
---@param opts? bonsai.LoadOpts
---@return bonsai.Tree|nil tree
---@return string? message
function bt.load(path, opts) end

---Compiles a loaded file again; the old version keeps running on failure.
---@param path string
---@return bonsai.Tree|nil tree
---@return string? message
function bt.reload(path) end

---bt.poll() will reload the file, or the files of the directory.
---@param path string
---@return true|nil ok
---@return string? message
function bt.watch(path) end

---Reloads the watched files that changed.
---@return string[] reloaded
---@return { path: string, error: string }[] failed
function bt.poll() end

---The bytes of a regular file, read with the bounds of tree files: a
---FIFO, a device, a socket or a directory is refused (never waited on),
---and so is a file of more than max bytes (default 8 MiB), counted as
---they arrive; the debugger reads its files with it.
---@param path string
---@param max? integer
---@return string|nil bytes
---@return string? message
function bt.readfile(path, max) end

---A tree definition from text; returns the root node (not yet a tree).
---@param text string
---@param format bonsai.Format
---@param opts? table
---@return bonsai.Node
function bt.import(text, format, opts) end

---a:subscribe(fn, filter) for each agent of the list (as it is now).
---@param agents bonsai.Agent[]
---@param fn bonsai.Subscriber
---@param filter? bonsai.EventFilter|fun(e: bonsai.Event): boolean
---@return bonsai.Subscription
function bt.subscribe(agents, fn, filter) end

---Ends a subscription of a:subscribe or bt.subscribe; true if it was on.
---@param sub bonsai.Subscription
---@return boolean
function bt.unsubscribe(sub) end

---Appends every tick of the agents to a trace file.
---@param path string
---@param agents bonsai.Agent[]
---@return bonsai.Recorder
function bt.record(path, agents) end

---From a leaf's tick: running, and the agent sleeps s seconds.
---@param s number
---@return "running"
function bt.sleep(s) end

---The tree named by tree:share() in another Lua state.
---@param handle string
---@return bonsai.Tree
function bt.shared(handle) end

---A node type by name: builder(args, children) returns a node. Importers
---and bt.node use it; a defined name wins over a format's own mapping.
---@param name string
---@param builder fun(args: table, children: bonsai.Node[]): bonsai.Node
function bt.define(name, builder) end

---A node of a type defined with bt.define.
---@param name string
---@param args? table
---@param children? bonsai.Node[]
---@return bonsai.Node
function bt.node(name, args, children) end

---A control node (composite or decorator) whose decisions are Lua:
---`tick(c, agent, bb, args)` returns a status; c:tick(i), c:abort(i), c.n,
---c.memory inside it (docs/CUSTOM_NODES.md).
---@param t bonsai.ControlOpts
---@return bonsai.Node
function bt.control(t) end

---An action running a script (BehaviorTree.CPP's script language, see
---docs/SCRIPTS.md) on the agent's blackboard; success. The node holds the
---code in its field `script`; bt.tree refuses a script that does not parse,
---or reads a field or a global (`x := math.pi`), naming the node's path,
---the character and the code. Division by zero gives inf, -inf or NaN.
---@param code string e.g. "count := count + 1; state := 'done'"
---@return bonsai.Node
function bt.script(code) end

---A condition: success when the script's last value is true (false, nil
---and 0 are false; a string or a table is an error naming the operand). A
---comparison of a key with a constant or a key is a bt.check. A script
---that does not compile is refused by bt.tree, naming the node's path.
---@param code string e.g. "hp > 50 && ammo > 0"
---@return bonsai.Node
function bt.script_condition(code) end

---Names scripts may use as constants (calls add names; a script reads them
---when it is defined).
---@param t table<string, number>
function bt.enums(t) end

---The kind ("script" or "condition") and the code of the script a node
---table was made from (bt.script, bt.script_condition, a file's script
---node; kept by bt.copy), or nil for a node no script made.
---@param node any
---@return "script"|"condition"|nil kind
---@return string? code
function bt.script_of(node) end

---Whether code parses as a script (as an editor checks it while typed):
---true, or nil and the message ("at character N: ...").
---@param code any
---@return true|nil ok
---@return string? message
function bt.parse_script(code) end

---A definition's deep copy: node tables and their inner tables copied
---(metatables kept), functions, userdata (trees) and other values shared,
---a script node's provenance kept (bt.script_of, the exporters). seen,
---given, is filled with original table -> its copy.
---@generic T
---@param node T
---@param seen? table<table, table>
---@return T
function bt.copy(node, seen) end

return bt
