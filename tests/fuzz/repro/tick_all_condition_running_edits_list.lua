-- A condition clears its agent's entry in the list bt.tick_all walks and
-- returns running (an error the core reports). Expected: the error entry
-- names the agent (A). (Seen: agent = nil, the entry now in the slot.)
local bt = require "bonsai"
local list = {}
local T = bt.tree(bt.sequence { bt.condition(function()
  list[1] = nil
  return bt.RUNNING
end) }, { name = "t" })
local A = bt.agent(T)
list[1] = A
local errs = bt.tick_all(list, 1)
if not (errs and errs[1].agent == A) then
  print("REPRO-FAIL tick_all_condition_running_edits_list: " ..
        tostring(errs and errs[1].error) .. " for " ..
        tostring(errs and errs[1].agent))
  os.exit(1)
end
print("REPRO-PASS tick_all_condition_running_edits_list")
