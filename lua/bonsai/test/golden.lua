-- bonsai.test.golden: golden traces. A scenario's run is written as text,
-- one line per fact (the tree's nodes, then per tick: what the timeline
-- did, each status a node took, each stand-in call, each blackboard key
-- that changed, the status), and compared with the file recorded before. Nothing in it
-- depends on the machine or the run: no addresses (functions and userdata
-- print as their type), no wall time, numbers in %.14g. The first
-- difference is reported with its tick and node; a missing, truncated or
-- foreign file, or one recorded from another version of the tree, fails
-- with a message saying so. BONSAI_UPDATE_GOLDEN=1 (or update = true)
-- re-records instead. Running nodes ticked again ("again" events) are left
-- out: a stand-in's calls show its ticks, and a trace that reports more
-- visits keeps the same golden file.

local M = {}

local HEADER = "bonsai-golden 1"

-- Values as the traces print them: no addresses, numbers in %.14g.
local function show(v)
  local t = type(v)
  if t == "string" then
    return '"' .. v:gsub('[%c"\\]', function(ch)
      return string.format("\\%03d", ch:byte())
    end) .. '"'
  end
  if t == "number" then
    if v ~= v then return "nan" end
    return string.format("%.14g", v)
  end
  if t == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local parts = {}
    for _, k in ipairs(keys) do
      parts[#parts + 1] = tostring(k) .. "=" ..
        (type(v[k]) == "table" and "{...}" or show(v[k]))
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if t == "nil" or t == "boolean" then return tostring(v) end
  return "<" .. t .. ">"
end
M.show = show

-- The lines of a scenario's run.
function M.lines(s)
  local out = { HEADER, "tree " .. s.name }
  for _, n in ipairs(s.nodes) do
    out[#out + 1] = "node " .. (n.hidden and "(priority)" or n.path) ..
                    " " .. n.type
  end
  local calls = {}
  for _, c in ipairs(s.log) do
    calls[c.tick] = calls[c.tick] or {}
    table.insert(calls[c.tick], c)
  end
  local prev = {}
  for _, t in ipairs(s.ticks) do
    out[#out + 1] = string.format("tick %d dt %s time %s", t.n, show(t.dt),
                                  show(t.time))
    for _, what in ipairs(t.applied) do out[#out + 1] = "  timeline " .. what end
    if t.slept then out[#out + 1] = "  asleep" end
    for _, e in ipairs(t.events) do
      if e.again then -- a running node ticked again: its calls show it
      elseif e.event then
        out[#out + 1] = "  " .. e.event .. (e.node and (" " .. e.node) or "")
                        .. (e.message and (": " .. e.message) or "")
      else
        out[#out + 1] = "  node " .. (e.node == "" and "(priority)" or
                                      e.node) .. " " .. e.status
      end
    end
    for _, c in ipairs(calls[t.n] or {}) do
      out[#out + 1] = "  call " .. c.path .. " " .. c.what ..
        (c.status ~= nil and (" " .. tostring(c.status)) or "")
    end
    local keys = {}
    for k in pairs(t.bb) do keys[#keys + 1] = k end
    for k in pairs(prev) do if t.bb[k] == nil then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local a, b = show(prev[k]), show(t.bb[k])
      if a ~= b then out[#out + 1] = "  bb " .. k .. " = " .. b end
    end
    prev = t.bb
    out[#out + 1] = "  status " .. t.status ..
                    (t.error and (" " .. t.error) or "")
  end
  out[#out + 1] = "end " .. #s.ticks
  return out
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("*a")
  f:close()
  local lines = {}
  for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local rest = text:match("([^\n]+)$") -- a last line cut off
  if rest then lines[#lines + 1] = rest end
  return lines, text
end

local function write(path, lines)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("bonsai.test golden: cannot write " .. err, 0) end
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  os.remove(path)
  assert(os.rename(tmp, path))
end

local function updating(o)
  if o and o.update ~= nil then return o.update end
  local v = os.getenv("BONSAI_UPDATE_GOLDEN")
  return v ~= nil and v ~= "" and v ~= "0"
end

-- The nodes section of lines (the "node ..." lines after the header).
local function nodes_of(lines)
  local list, set = {}, {}
  for i = 3, #lines do
    local n = lines[i]:match("^node (.*)$")
    if not n then break end
    list[#list + 1] = n
    set[n] = true
  end
  return list, set
end

-- Where each tick starts: tick number -> line index.
local function tick_at(lines, i)
  for j = i, 1, -1 do
    local n = lines[j]:match("^tick (%d+) ")
    if n then return tonumber(n) end
  end
end

-- The node a line speaks of, if any.
local function node_of(line)
  if not line then return nil end
  return line:match("^  node (%S+)") or line:match("^  call (%S+)")
end

local function context(lines, i, mark)
  local out = {}
  for j = math.max(1, i - 3), math.min(#lines, i + 2) do
    out[#out + 1] = (j == i and mark or "     ") .. lines[j]
  end
  return table.concat(out, "\n")
end

local function fail(path, message)
  error("bonsai.test golden " .. path .. ": " .. message, 0)
end

-- check(s, path, o): compares s's run with the golden file at path.
function M.check(s, path, o)
  local now = M.lines(s)
  if updating(o) then
    write(path, now)
    return s
  end
  local old = read(path)
  if not old then
    write(path, now)
    fail(path, "missing: recorded it now (" .. #s.ticks .. " ticks); " ..
         "check the file and run again")
  end
  if old[1] ~= HEADER then
    fail(path, "not a golden trace of this kit (first line '" ..
         tostring(old[1]) .. "', expected '" .. HEADER .. "')")
  end
  if not (old[#old] or ""):match("^end %d+$") then
    fail(path, "truncated: it stops at line " .. #old .. " without its " ..
         "'end' line; re-record it with BONSAI_UPDATE_GOLDEN=1")
  end
  if old[2] ~= now[2] then
    fail(path, "recorded for " .. tostring(old[2]) .. ", this is " .. now[2])
  end
  local was, wasset = nodes_of(old)
  local is, isset = nodes_of(now)
  local gone, added = {}, {}
  for _, n in ipairs(was) do if not isset[n] then gone[#gone + 1] = n end end
  for _, n in ipairs(is) do if not wasset[n] then added[#added + 1] = n end end
  if #gone > 0 or #added > 0 or #was ~= #is then
    fail(path, "recorded from another version of the tree (nodes gone: " ..
         (#gone > 0 and table.concat(gone, ", ") or "none") ..
         "; nodes new: " .. (#added > 0 and table.concat(added, ", ") or
         "none") .. "); re-record it with BONSAI_UPDATE_GOLDEN=1")
  end
  for i = 1, math.max(#old, #now) do
    if old[i] ~= now[i] then
      local tick = tick_at(now, math.min(i, #now)) or
                   tick_at(old, math.min(i, #old))
      local node = node_of(old[i]) or node_of(now[i])
      fail(path, string.format("first difference at tick %s%s, line %d:\n" ..
        "  expected: %s\n  got:      %s\nrecorded:\n%s\nthis run:\n%s\n" ..
        "(BONSAI_UPDATE_GOLDEN=1 re-records it)", tostring(tick),
        node and (", node " .. node) or "", i, tostring(old[i]),
        tostring(now[i]), context(old, i, "  -> "), context(now, i, "  -> ")))
    end
  end
  return s
end

return M
