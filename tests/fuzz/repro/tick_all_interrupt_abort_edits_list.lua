-- An interrupt fires in bt.tick_all; the abort callback of the running
-- leaf replaces the agent's entry in the list, then raises. Expected: the
-- error entry names the agent that raised (A). (Seen: it names B, the
-- agent now in A's slot.)
local bt = require "bonsai"
local list = {}
local T = bt.tree(bt.action { name = "L", tick = function() return bt.RUNNING end,
  abort = function() list[1] = list[2]; error("boom", 0) end }, { name = "t" })
local A, B = bt.agent(T), bt.agent(T)
list[1], list[2] = A, B
bt.tick_all({ A }, 1)
A:add_interrupt(function(a) return a.time > 1 end)
local errs = bt.tick_all(list, 1)
if not (errs and errs[1].agent == A) then
  print("REPRO-FAIL tick_all_interrupt_abort_edits_list: " ..
        tostring(errs and errs[1].error) .. " for " ..
        tostring(errs and (errs[1].agent == B and "B" or errs[1].agent)))
  os.exit(1)
end
print("REPRO-PASS tick_all_interrupt_abort_edits_list")
