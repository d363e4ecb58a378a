-- helpers/scratch.lua: a directory of its own for each test of a block.
-- local s = scratch("sub", ...); before_each(s.make); after_each(s.remove):
-- s.make makes a new directory, s.dir (with the subdirectories named),
-- s.remove removes it, and s.write(name, text) writes a file in it (one
-- space longer at each write, so that a change always shows in its size)
-- and returns its path.
local writes = 0

return function(...)
  local subs = { ... }
  local s = {}
  function s.make()
    s.dir = os.tmpname()
    os.remove(s.dir)
    assert(os.execute("mkdir '" .. s.dir .. "'"))
    for _, sub in ipairs(subs) do
      assert(os.execute("mkdir -p '" .. s.dir .. "/" .. sub .. "'"))
    end
  end
  function s.remove() os.execute("rm -rf '" .. s.dir .. "'") end
  function s.write(name, text)
    writes = writes + 1
    local f = assert(io.open(s.dir .. "/" .. name, "w"))
    f:write(text, (" "):rep(writes))
    f:close()
    return s.dir .. "/" .. name
  end
  return s
end
