-- A leaf of the first agent calls bt.tick_all with a budget on the list
-- that an outer bt.tick_all with a budget is walking. The inner call moves
-- the list's clock on; the outer call then owes the second agent a
-- negative dt. Expected: no error for the second agent. (Seen: an entry
-- "tree 't': dt must be a number >= 0" for it.)
local bt = require "bonsai"
local list, inner = {}, false
local T = bt.tree(bt.action(function(a)
  if a == list[1] and not inner then
    inner = true
    bt.tick_all(list, 0.5, { budget = 3 }) -- list[1] is busy here: skipped
  end
  return bt.RUNNING
end), { name = "t" })
list[1], list[2] = bt.agent(T), bt.agent(T)
local errs = bt.tick_all(list, 0.5, { budget = 3 })
for _, e in ipairs(errs or {}) do
  if e.agent == list[2] then
    print("REPRO-FAIL tick_all_budget_nested: " .. e.error)
    os.exit(1)
  end
end
print("REPRO-PASS tick_all_budget_nested")
