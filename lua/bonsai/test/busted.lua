-- bonsai.test.busted: a coverage threshold for CI over a team's busted
-- suite, as a busted helper (docs/TESTING.md, "Coverage in CI"):
--
--   busted --helper=bonsai.test.busted -Xhelper min=90,report=coverage.json
--
-- When the suite ends it prints the coverage table of T.coverage (what
-- every scenario fed), writes its JSON report for the viewer (report=FILE)
-- and ends the run with exit status 1 when a tree covers less than min
-- percent of its outcomes (tree=NAME: that tree only), listing the gaps.
-- Options: min=P, report=FILE, tree=NAME, quiet (no table). Loaded before
-- the spec files, the kit is one module for all of them.
local T = require "bonsai.test"
local busted = require "busted"

local OPTIONS = "min=P, report=FILE, tree=NAME, quiet"

-- The -Xhelper options (busted splits them at commas).
local function options(args)
  local o = {}
  for _, a in ipairs(args or {}) do
    local k, v = a:match "^(%a+)=(.*)$"
    if k == "min" and tonumber(v) then
      o.min = tonumber(v)
    elseif (k == "report" or k == "tree") and v ~= "" then
      o[k] = v
    elseif a == "quiet" then
      o.quiet = true
    else
      error("bonsai.test.busted: unknown option '" .. a .. "' (" ..
            OPTIONS .. ")", 0)
    end
  end
  return o
end

local o = options(arg)

busted.subscribe({ "exit" }, function()
  local cov = T.coverage
  if not o.quiet then
    io.write("\nCoverage of the trees (bonsai.test):\n", cov:text(), "\n")
  end
  if o.report then
    cov:write(o.report)
    io.write("bonsai.test: coverage report written to ", o.report, "\n")
  end
  if o.min then
    local ok, err = pcall(cov.check, cov, { min = o.min, tree = o.tree })
    if not ok then
      io.stderr:write(tostring(err), "\n")
      io.stdout:flush()
      os.exit(1, true)
    end
  end
  return nil, true
end)
