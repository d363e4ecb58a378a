-- helpers/everything.lua: a tree with a node of every kind, several of
-- them running at once, whose leaves depend only on the agent (its clock),
-- so that two agents in the same state behave the same (save_spec.lua, and
-- the process it starts to restore a save).
local bt = require "bonsai"

local M = {}

local function run() return bt.RUNNING end
local function every(n, name)
  return bt.named(name, bt.action(function(a)
    return math.floor(a.time) % n == 0 and bt.SUCCESS or bt.RUNNING
  end))
end
local function when(name, f)
  return bt.named(name, bt.condition(function(a) return f(a.time) end))
end

-- The tree bt.subtree inlines in M.root(): a check on its own key "life"
-- (remapped to "hp") and a leaf reading its args and the remapped key.
function M.inner()
  return bt.tree(bt.sequence { name = "in", bt.check("life", ">", 0),
    bt.named("ia", bt.action(function(a, bb, args)
      return bb.life > 0 and math.floor(a.time) % (2 * args.n) == 0 and
             bt.SUCCESS or bt.RUNNING
    end)) }, { name = "everything.inner" })
end

function M.root()
  return bt.parallel { name = "all", success = "all", failure = "all",
    bt.parallel { name = "pw", wait = true, success = "one",
      bt.delay { name = "dl", seconds = 2, every(4, "d") },
      bt.utility_selector { name = "us",
        bt.utility(function(a) return math.floor(a.time) % 3 end,
                   every(3, "u1")),
        bt.utility(function() return 1 end, bt.named("u2", bt.action(run))) },
      bt.subtree(M.inner(), { name = "sub", args = { n = 2 },
                              remap = { life = "hp" } }) },
    bt.sequence { name = "seq", when("c1", function() return true end),
      bt.selector { name = "sel", when("c2", function() return false end),
        bt.repeater { name = "rep", times = 3, every(2, "r") } } },
    bt.reactive_sequence { name = "rseq", bt.is_set "go",
      bt.reactive_selector { name = "rsel",
        bt.check("hp", "<", 10),
        bt.retry { name = "retry", times = 4, every(3, "t") } } },
    bt.filter { name = "filt", conditions = { bt.check("hp", ">", 0) },
      bt.monitor { name = "mon", conditions = { when("ok", function()
        return true end) },
        bt.invert { name = "inv", bt.force_success { name = "fs",
          bt.force_failure { name = "ff", every(5, "f") } } } } },
    bt.timeout { name = "to", seconds = 100, bt.time_limit { name = "tl",
      seconds = 50, bt.repeat_until_failure { name = "ruf",
        bt.wait { name = "w", seconds = 2 } } } },
    bt.limit { name = "lim", times = 2, bt.cooldown { name = "cd",
      seconds = 3, bt.run_once { name = "once", every(2, "o") } } },
    bt.guard { name = "g", bt.check("hp", ">", 5), abort = "self",
      bt.named("hold", bt.action(run)) },
  }
end

-- The tree of M.root(), with a priority section, named name or "t".
function M.tree(name)
  return bt.tree(M.root(), { name = name or "t", priority = {
    bt.filter { name = "panic", conditions = { bt.check("hp", "<", 0) },
      bt.named("flee", bt.action(run)) } } })
end

-- A tree of the nodes of the third round, running at once: a bt.control
-- whose c.memory holds integers, floats, strings and a nested table (it
-- copies them to the blackboard, so summaries see the memory), and pre- and
-- post-conditions, with a node skipped at every run (lua_versions_spec).
function M.controlled()
  local ctl = bt.control { name = "ctl", tick = function(c, _, bb)
    local m = c.memory
    m.k = (m.k or 0) + 1
    m.f = (m.f or 0) + 0.25
    m.t = m.t or { list = { 1, 2.5, "x", true }, deep = { s = "y" } }
    bb.k, bb.f, bb.t = m.k, m.f, m.t
    c:tick(1)
    return bt.RUNNING
  end, every(3, "c1") }
  return bt.tree(bt.parallel { name = "all",
    ctl,
    bt.repeater { name = "rep", bt.sequence { name = "cond",
      run_while = "hp > 0", on_success = "wins += 1", post = "ends += 1",
      bt.action { name = "skipped", skip_if = "true", tick = run },
      every(2, "e") } },
  }, { name = "controlled" })
end

-- A lifecycle action whose run keeps state of its own, outside the
-- blackboard (by agent, here): its save and restore carry it across a save
-- (integers, floats, a list); each tick copies it to the blackboard, so
-- summaries see it (lua_versions_spec).
local runs = setmetatable({}, { __mode = "k" })
function M.kept()
  return bt.tree(bt.sequence { name = "shop", bt.action { name = "restock",
    enter = function(a) runs[a] = { t = 0, f = 0.5, list = { 1, 2.5, "x" } } end,
    tick = function(a, bb)
      local st = runs[a]
      st.t, st.f = st.t + 1, st.f + 0.25
      bb.t, bb.f, bb.n = st.t, st.f, #st.list
      return bt.RUNNING
    end,
    save = function(a) return runs[a] end,
    restore = function(a, _, _, v) runs[a] = v end } }, { name = "kept" })
end

-- What an agent's state reads as, to compare two agents (also across
-- processes and Luas, lua_versions_spec): its running nodes, its clock,
-- its blackboard (keys sorted; numbers written alike whether integers or
-- floats: 5.1 has only floats).
function M.summary(a)
  local function text(v)
    if type(v) == "number" then return ("%.17g"):format(v) end
    if type(v) ~= "table" then return tostring(v) end
    local keys, t = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
    for _, k in ipairs(keys) do t[#t + 1] = text(k) .. "=" .. text(v[k]) end
    return "{" .. table.concat(t, ",") .. "}"
  end
  local bb = {}
  for k, v in a.bb:pairs() do bb[k] = v end
  return table.concat(a:running(), ",") .. "|" .. text(a.time) .. "|" ..
         text(bb)
end

return M
