-- guard_spec.lua: the guard of samples/guard.lua tested as a game team
-- would test its AI with the kit (require "bonsai.test", docs/TESTING.md):
-- each situation of the design is a scenario with the world's moves
-- replaced by stand-ins, a timeline of what the senses would write, and
-- assertions that read like the design document. A golden trace keeps
-- the whole fight as it is; random worlds check what must never happen;
-- the last test fails the run when the guard's tree is not covered enough.
--
--   busted samples/testing/guard_spec.lua     (from the checkout; the test
--                                               command runs it too)

-- Find bonsai and the samples (samples/setup.lua).
local here = debug.getinfo(1, "S").source:match("^@(.-)[^/\\]*$")
if here == nil or here == "" then here = "./" end
assert(loadfile(here .. "../setup.lua"))(here .. "../")

local bt = require "bonsai"
local T = require "bonsai.test"
local guard = require "guard"

local DT = 0.1

-- A fresh guard's blackboard, with changes.
local function stats(changes)
  local bb = { leg = 1 }
  for k, v in pairs(guard.stats) do bb[k] = v end
  for k, v in pairs(changes or {}) do bb[k] = v end
  return bb
end

-- The moves of the guard need a world; in these tests they are scripted.
-- Each test gives what differs.
local function moves(changes)
  local m = { patrol = T.running(), chase = T.running(),
              attack = T.running(), flee = T.running(), rest = T.running(),
              hold_post = T.running(), die = T.running(),
              in_reach = false }
  for k, v in pairs(changes or {}) do m[k] = v end
  return m
end

local function guard_scenario(o)
  return T.scenario { tree = guard.definition, dt = DT,
    blackboard = stats(o.blackboard), stand_ins = moves(o.moves),
    timeline = o.timeline, owner = o.owner }
end

describe("the guard", function()
  it("walks its beat when nobody is around", function()
    -- the real patrol leaf, with a real NPC (two legs in three seconds)
    local npc = guard.spawn({ dt = DT, w = 40, h = 20, players = {} }, 10, 10)
    local s = T.scenario { tree = guard.definition, dt = DT,
      blackboard = stats(), owner = npc,
      stand_ins = { rest = T.running(), chase = T.running() } }
    s:run(30)
    s:expect_running(30, "guard/patrol"):expect_never_entered("fight")
    assert.equal(2, npc.did["patrol leg"])
  end)

  it("drops its patrol for the fight at the tick it sees an enemy",
     function()
    local s = guard_scenario { timeline = {
      { at = 5, set = { enemy = "hero" } } } }
    s:run(6)
    s:expect_running(4, "patrol")
      :expect_aborted("patrol", { at = 5 })
      :expect_running(5, "combat/fight/chase")
    assert.equal(1, #s:calls_of("patrol", "abort"))
  end)

  it("strikes only in reach", function()
    local s = guard_scenario {
      moves = { in_reach = T.statuses { false, false, false, true } },
      timeline = { { at = 1, set = { enemy = "hero" } } } }
    s:run(5)
    s:expect_running(3, "fight/chase")
      :expect_entered("attack", { at = 4, times = 1 })
      :expect_aborted("chase", { at = 4 })
  end)

  it("flees when hurt, escapes when the enemy is out of sight, then rests",
     function()
    local s = guard_scenario { timeline = {
      { at = 1, set = { enemy = "hero" } },
      { at = 3, set = { hp = 2 } },
      { at = 8, clear = { "enemy" } } } }
    s:run(9)
    s:expect_running(3, "retreat/flee")
      :expect_aborted("flee", { when = function(bb)
        return bb.enemy == nil
      end })
      :expect_running(8, "recover/rest")
      :expect_never_entered("attack")
  end)

  it("goes to its post while the alarm rings, and back to its beat after",
     function()
    local s = guard_scenario { timeline = {
      { at = 3, set = { alarm = true } },
      { at = 6, clear = { "alarm" } } } }
    s:run(6)
    s:expect_aborted("patrol", { at = 3 })
      :expect_running(3, "alert/hold_post")
      :expect_aborted("hold_post", { at = 6 })
      :expect_running(6, "guard/patrol")
  end)

  it("dies whatever it was doing", function()
    local s = guard_scenario { timeline = {
      { at = 1, set = { enemy = "hero" } },
      { at = 4, set = { hp = 0 } } } }
    s:run(6)
    s:expect_aborted("chase", { at = 4 })
      :expect_running(6, "death/die")
      :expect_entered("die", { times = 1 })
  end)

  it("fights as it always did (golden trace)", function()
    local s = guard_scenario {
      moves = { in_reach = T.statuses { false, false, true },
                attack = T.running(3, bt.SUCCESS) },
      timeline = { { at = 2, set = { enemy = "hero" } },
                   { at = 9, clear = { "enemy" } } } }
    s:run(10)
    T.golden(s, here .. "golden/guard_fight.txt")
  end)

  it("never attacks when it should flee, and is dead when hp is gone",
     function()
    T.property {
      tree = guard.definition, dt = DT, blackboard = stats(),
      stand_ins = moves { in_reach = function(call) return call.bb.near end },
      keys = { hp = T.int(-1, 10), enemy = T.maybe(T.one_of { "hero" }),
               alarm = T.maybe(T.one_of { true }), near = T.bool() },
      ticks = 40, runs = 60, seed = 2026,
      invariants = {
        ["never attacks when hp <= flee_hp"] = function(t)
          return not (t:is_running("attack") and t.before.hp <= 3)
        end,
        ["dies when hp <= 0"] = function(t)
          return t.before.hp > 0 or t:is_running("die")
        end,
        ["fights whenever an enemy is in sight"] = function(t)
          return t.before.enemy == nil or t.before.hp <= 0 or
                 t:is_running("combat")
        end,
      },
    }
  end)

  it("is covered by these tests", function()
    print("\n" .. T.coverage:text())
    T.coverage:check { tree = "guard", min = 90 }
  end)
end)
