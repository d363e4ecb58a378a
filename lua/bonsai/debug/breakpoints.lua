-- bonsai.debug.breakpoints: the page's breakpoints, rules on the nodes of
-- a tree, each "STATUS@AGENT" ("*" for any status or any agent: "*@*"
-- stops every agent at any event of the node), and which event of a tick
-- stops the agent.

local M = {}

local Breakpoints = {}
Breakpoints.__index = Breakpoints

-- new(names): no breakpoints; names: the status names by number
-- (bt.STATUS), which rules use.
function M.new(names)
  return setmetatable({
    trees = {},     -- tree name -> node path -> { [rule] = true }
    count = 0,      -- rules in all
    names = names,
  }, Breakpoints)
end

-- Whether the node at path of tree has the rule.
function Breakpoints:has(tree, path, rule)
  local marks = self.trees[tree]
  return marks ~= nil and marks[path] ~= nil and marks[path][rule] == true
end

function Breakpoints:add(tree, path, rule)
  if self:has(tree, path, rule) then return end
  local marks = self.trees[tree] or {}
  self.trees[tree] = marks
  marks[path] = marks[path] or {}
  marks[path][rule], self.count = true, self.count + 1
end

-- Takes the rule away (if the node has it); a node, then a tree, left
-- without rules goes.
function Breakpoints:remove(tree, path, rule)
  if not self:has(tree, path, rule) then return end
  local marks = self.trees[tree]
  marks[path][rule], self.count = nil, self.count - 1
  if next(marks[path]) == nil then marks[path] = nil end
  if next(marks) == nil then self.trees[tree] = nil end
end

-- Agent id is gone: the rules that name it go.
function Breakpoints:forget(id)
  for tree, marks in pairs(self.trees) do
    for path, rules in pairs(marks) do
      for rule in pairs(rules) do
        if rule:match("@(.*)$") == tostring(id) then
          self:remove(tree, path, rule)
        end
      end
    end
  end
end

-- Whether a node's rules stop agent id on an event with status s.
local function stops(rules, s, id)
  return rules["*@*"] or rules[s .. "@*"] or rules["*@" .. id] or
         rules[s .. "@" .. id]
end

-- The id of the node whose event, among the codes of a tick's line of
-- agent st (a bonsai.record agent), a rule names first, or nil.
function Breakpoints:stop(st, codes)
  local marks = self.trees[st.v.tree]
  if not marks then return nil end
  for _, code in ipairs(codes) do
    local id = math.floor(code / 32)
    local nd = st.v.nodes[id + 1]
    local rules = nd and marks[nd.path]
    if code % 2 == 0 and rules and
       stops(rules, self.names[math.floor(code / 2) % 8], st.id) then
      return id
    end
  end
  return nil
end

return M
