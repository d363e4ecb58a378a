---@meta bonsai.test
-- bonsai/test/meta.lua: LuaLS / EmmyLua annotations of `require "bonsai.test"`,
-- the test kit (docs/TESTING.md), for editors. Never run: the module is
-- lua/bonsai/test.lua. Option tables are exact classes, so a misspelt
-- option is flagged. tests/spec/testkit_spec.lua checks that every public
-- name of the kit is annotated here and the reverse.

---What a stand-in may be: a status every tick, a function of the call, or
---a script made by T.statuses, T.runs, T.running, T.raise.
---@alias bonsai.test.StandInDef boolean|"success"|"failure"|"running"|fun(call: bonsai.test.Call): any|bonsai.test.Script

---A scripted stand-in (T.statuses, T.runs, T.running, T.raise).
---@class bonsai.test.Script

---A call of a stand-in, as recorded (and as its function receives it).
---@class bonsai.test.Call
---@field what "enter"|"tick"|"exit"|"abort"
---@field path string the node's path
---@field tick integer the scenario's tick
---@field time number a.time during the call
---@field run integer the leaf's run (1 for its first)
---@field step integer the tick within that run (0 in enter)
---@field args table? the leaf's args
---@field bb table a snapshot of the blackboard at the call
---@field bb_view bonsai.Blackboard the live blackboard, during a tick call
---@field agent bonsai.Agent
---@field status any what tick returned, or the status exit received

---One entry of a timeline: applied before tick `at` runs.
---@class (exact) bonsai.test.TimelineEntry
---@field at integer the tick (1 for the first)
---@field set? table<string, any> keys to set
---@field clear? string[] keys to clear
---@field interrupt? boolean the agent's interrupt fires at that tick
---@field wake? boolean a:wake() before that tick
---@field call? fun(s: bonsai.test.Scenario, a: bonsai.Agent, bb: bonsai.Blackboard)

---@class (exact) bonsai.test.ScenarioOpts
---@field tree bonsai.Node|string|bonsai.Tree|fun(): (bonsai.Node|bonsai.Tree), bonsai.TreeOpts? a root node, a file, a tree, or a function returning the root and tree options
---@field options? bonsai.TreeOpts tree options, with a root node
---@field name? string the tree's name in messages, golden files, coverage
---@field trees? table<string, any> definitions of subtrees by tree name (node, function or file), to reach their leaves
---@field blackboard? table|fun(): table initial values (copied)
---@field owner? any a.owner
---@field dt? number|number[]|fun(n: integer): number seconds per tick (default 0.1)
---@field stand_ins? table<string, bonsai.test.StandInDef> by registered leaf name or node path
---@field timeline? bonsai.test.TimelineEntry[]
---@field max_ticks? integer no scenario runs longer (default 1000)
---@field errors? "raise"|"record" a tree that raises fails the run (default; "record" with a T.raise stand-in)
---@field coverage? bonsai.test.Coverage|false the collector fed (default T.coverage)

---@class (exact) bonsai.test.ExpectOpts
---@field at? integer at that tick only
---@field times? integer exactly that many times (expect_entered)
---@field when? fun(bb: table): boolean the blackboard the tree saw at that tick (expect_aborted)
---@field within? integer among the first ticks (expect_returned)

---@class (exact) bonsai.test.GoldenOpts
---@field update? boolean re-record (default: BONSAI_UPDATE_GOLDEN set)

---@class (exact) bonsai.test.CheckOpts
---@field min number percent of the outcomes a tree must cover
---@field tree? string that tree only

---@class (exact) bonsai.test.PropertyOpts
---@field tree bonsai.Node|string|bonsai.Tree|fun(): (bonsai.Node|bonsai.Tree), bonsai.TreeOpts?
---@field options? bonsai.TreeOpts
---@field name? string
---@field trees? table<string, any>
---@field blackboard? table|fun(): table
---@field owner? any
---@field dt? number|number[]|fun(n: integer): number
---@field stand_ins? table<string, bonsai.test.StandInDef>
---@field keys table<string, bonsai.test.Generator> the keys the world changes
---@field invariants table<string, fun(t: bonsai.test.Tick, s: bonsai.test.Scenario): boolean?, string?> by name
---@field ticks? integer ticks per run (default 50)
---@field runs? integer histories tried (default 100)
---@field seed? integer the first run's seed (default BONSAI_SEED or 1)
---@field rate? number chance of a change each tick (default 0.2)
---@field shrinks? integer most runs spent shrinking (default 500)
---@field errors? "allow" a tree that raises breaks no invariant
---@field coverage? bonsai.test.Coverage|false

---A value generator for random worlds.
---@class bonsai.test.Generator

---@class bonsai.test.Random
local Random = {}

---The next number, in 1..2^31-2.
---@return integer
function Random:next() end

---@param lo integer
---@param hi integer
---@return integer
function Random:int(lo, hi) end

---@return number in [0, 1)
function Random:float() end

---One tick of a scenario.
---@class bonsai.test.Tick
---@field n integer
---@field dt number
---@field time number a.time after the tick
---@field status bonsai.Status|"error"
---@field error? string
---@field events bonsai.Event[] the tick's trace events
---@field running string[] paths of the running leaves
---@field statuses table<string, bonsai.Status> path -> status after the tick
---@field started table<string, boolean> paths of the nodes that began a run
---@field before table the blackboard the tree saw (after the timeline)
---@field bb table the blackboard after the tick
---@field slept boolean asleep: skipped
---@field applied string[] what the timeline did before it
local Tick = {}

---A node `who` names (stand-in key, leaf name, path, end of a path, node
---name) is running after the tick.
---@param who string
---@return boolean
function Tick:is_running(who) end

---@param who string
---@return bonsai.Status?
function Tick:status_of(who) end

---@param who string
---@return boolean
function Tick:entered(who) end

---@param who string
---@param status bonsai.Status
---@return boolean
function Tick:took(who, status) end

---@param who string
---@return boolean
function Tick:aborted(who) end

---A tree run for one agent, tick by tick.
---@class bonsai.test.Scenario
---@field agent bonsai.Agent (subscribe, record or debug it freely)
---@field subscription table the scenario's own (a:subscribe)
---@field tree bonsai.Tree the tree run (a copy named "<name>~test" with stand-ins)
---@field name string
---@field ticks bonsai.test.Tick[]
---@field calls table<string, bonsai.test.Call[]> by stand-in key
---@field log bonsai.test.Call[] every call, in order
local Scenario = {}

---Runs one more tick.
---@return bonsai.test.Tick
function Scenario:step() end

---Runs n more ticks (default 1).
---@param n? integer
---@return bonsai.test.Scenario
function Scenario:run(n) end

---Ticks until a tick returns that status or makes the function true;
---fails after limit ticks (default max_ticks).
---@param what bonsai.Status|fun(t: bonsai.test.Tick): boolean
---@param limit? integer
---@return bonsai.test.Scenario
---@return bonsai.test.Tick
function Scenario:run_until(what, limit) end

---Ticks until the tree returns success or failure.
---@param limit? integer
---@return bonsai.test.Scenario
---@return bonsai.test.Tick
function Scenario:finish(limit) end

---@param n integer
---@return bonsai.test.Tick
function Scenario:tick(n) end

---The paths `who` names (raises when none).
---@param who string
---@return table<string, true>
function Scenario:paths(who) end

---@param from integer
---@param to integer
---@return string
function Scenario:trace_text(from, to) end

---Raises message with the trace of the ticks around tick n.
---@param n integer
---@param message string
function Scenario:fail(n, message) end

---@param n integer
---@param path string
---@return bonsai.test.Scenario
function Scenario:expect_running(n, path) end

---@param n integer
---@param status bonsai.Status|"error"
---@return bonsai.test.Scenario
function Scenario:expect_status(n, status) end

---@param status bonsai.Status
---@param opts? bonsai.test.ExpectOpts
---@return bonsai.test.Scenario
---@return integer tick
function Scenario:expect_returned(status, opts) end

---@param pred fun(t: bonsai.test.Tick): boolean
---@return bonsai.test.Tick[]
function Scenario:ticks_where(pred) end

---@param who string
---@param opts? bonsai.test.ExpectOpts
---@return bonsai.test.Scenario
function Scenario:expect_entered(who, opts) end

---@param who string
---@return bonsai.test.Scenario
function Scenario:expect_never_entered(who) end

---@param who string
---@param opts? bonsai.test.ExpectOpts
---@return bonsai.test.Scenario
---@return integer tick
function Scenario:expect_aborted(who, opts) end

---@param who string
---@return bonsai.test.Scenario
function Scenario:expect_never_aborted(who) end

---@param text string plain text the message contains
---@param opts? bonsai.test.ExpectOpts
---@return bonsai.test.Scenario
---@return integer tick
function Scenario:expect_error(text, opts) end

---@param key string the stand-in's key
---@param what? "enter"|"tick"|"exit"|"abort"
---@return bonsai.test.Call[]
function Scenario:calls_of(key, what) end

---Coverage of trees over a test run.
---@class bonsai.test.Coverage
local Coverage = {}

---Registers a tree's nodes (tree:nodes()) under name.
---@param name string
---@param nodes table[]
---@return table
function Coverage:tree(name, nodes) end

---Counts one tick: a table with events (as a subscription hands them).
---@param name string
---@param nodes table[]
---@param tick { events: bonsai.Event[] }
function Coverage:feed(name, nodes, tick) end

---Counts this agent's ticks from now on, each as it ends (a subscription:
---the recorder, the debugger and other subscribers may watch it too).
---@param a bonsai.Agent
---@param name? string default a.tree.name
---@return bonsai.test.Coverage
function Coverage:add(a, name) end

---Stops counting the agent's ticks (what was counted stays).
---@param a bonsai.Agent
---@return bonsai.test.Coverage
function Coverage:remove(a) end

---@return table[] per tree: { tree, covered, total, nodes }
function Coverage:report() end

---@return string
function Coverage:text() end

---Writes the JSON report.
---@param path string
---@return bonsai.test.Coverage
function Coverage:write(path) end

---Raises when a tree covers less than min percent of its outcomes.
---@param opts bonsai.test.CheckOpts
---@return bonsai.test.Coverage
function Coverage:check(opts) end

---@return bonsai.test.Coverage
function Coverage:reset() end

---@class bonsai.test
local T = {}

---The collector every scenario feeds unless told otherwise.
---@type bonsai.test.Coverage
T.coverage = nil

---@type bonsai.test.Scenario
T.Scenario = nil

---@type bonsai.test.Tick
T.Tick = nil

---@param opts bonsai.test.ScenarioOpts
---@return bonsai.test.Scenario
function T.scenario(opts) end

---Each run returns these in turn, the last one again after.
---@param list any[]
---@return bonsai.test.Script
function T.statuses(list) end

---Run i plays list i (the last list for the runs after).
---@param lists any[][]
---@return bonsai.test.Script
function T.runs(lists) end

---Running for n ticks of each run, then status (default success);
---forever without n.
---@param n? integer
---@param status? any
---@return bonsai.test.Script
function T.running(n, status) end

---Raises message each tick.
---@param message? string
---@return bonsai.test.Script
function T.raise(message) end

---A shallow copy of a blackboard's values.
---@param bb bonsai.Blackboard
---@return table
function T.snapshot(bb) end

---A value as traces print it (no addresses).
---@param v any
---@return string
function T.show(v) end

---@return bonsai.test.Coverage
function T.new_coverage() end

---Compares the scenario's run with the golden file (records it if missing,
---and fails once).
---@param s bonsai.test.Scenario
---@param path string
---@param opts? bonsai.test.GoldenOpts
---@return bonsai.test.Scenario
function T.golden(s, path, opts) end

---@param seed integer
---@return bonsai.test.Random
function T.random(seed) end

---@param lo integer
---@param hi integer
---@return bonsai.test.Generator
function T.int(lo, hi) end

---@param lo number
---@param hi number
---@return bonsai.test.Generator
function T.number(lo, hi) end

---@return bonsai.test.Generator
function T.bool() end

---@param values any[]
---@return bonsai.test.Generator
function T.one_of(values) end

---nil (the key cleared) with chance p (default 0.5), else g's value.
---@param g bonsai.test.Generator
---@param p? number
---@return bonsai.test.Generator
function T.maybe(g, p) end

---Runs the tree over random worlds; raises with the seed and the shrunk
---history when an invariant breaks.
---@param opts bonsai.test.PropertyOpts
---@return integer runs
function T.property(opts) end

return T
