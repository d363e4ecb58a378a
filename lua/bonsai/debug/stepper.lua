-- bonsai.debug.stepper: stepping through a tick. start arms the agent's
-- trace hook (a:_on_event) for its next tick; at each status event of
-- that tick the hook notes the event's code and the blackboard keys
-- changed since the event before (since the last line sent, for the
-- first). finish hands the tick's line its 'steps', [index of the event
-- in the line, { key = value }, unset keys or nil], and the page reveals
-- the tick node by node (docs/DEBUGGER.md).

local record = require "bonsai.record"

local M = {}

-- Arms the hook of agent (st: its bonsai.record agent) for its next tick.
function M.start(agent, st)
  local run = { steps = {}, codes = {} } -- the status events seen
  local seen = {}
  for k, v in pairs(st.bb or {}) do seen[k] = v end
  st.stepping = run
  agent:_on_event(function(kind, code)
    if kind == "reload" then -- (the old version's events are dropped)
      run.steps, run.codes = {}, {}
    elseif kind == "status" then
      local changed, unset
      changed, unset, seen = record.bbdiff(agent, seen)
      if next(changed) or unset then
        run.steps[#run.steps + 1] = { #run.codes, changed, unset }
      end
      run.codes[#run.codes + 1] = code
    end
  end)
end

-- Ends a step through a tick: the steps for the line whose event codes
-- are codes, or nil when the events the hook saw are not in the line. It
-- saw those of the tick; events recorded outside it (the game aborted the
-- frozen agent before; an error's abort pass after) are in the line too:
-- the indices are shifted to where the events seen are.
function M.finish(agent, st, codes)
  local run = st.stepping
  st.stepping = nil
  agent:_on_event(nil)
  local seen = run.codes
  for shift = 0, #codes - #seen do
    local i = 1
    while i <= #seen and codes[shift + i] == seen[i] do i = i + 1 end
    if i > #seen then
      for _, s in ipairs(run.steps) do s[1] = s[1] + shift end
      return run.steps
    end
  end
end

return M
