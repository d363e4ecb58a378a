-- formats_kinds_spec: walks the kind table (core.KINDS) over every format's
-- name table (formats/kit.lua): each kind is mapped to a name of the file
-- or refused by name, with the reason; a kind added to the core fails here
-- until each format says what it does with it. Exporting a refused kind
-- gives its reason; a mapped one is written under its row's name.
local core = require "bonsai.core"
local kit = require "bonsai.formats.kit"
local examples = require("helpers.examples").examples

local formats = {
  btcpp = require "bonsai.formats.btcpp",
  behavior3 = require "bonsai.formats.behavior3",
  edges = require "bonsai.formats.edges",
}

describe("every format's name table", function()
  for fname, f in pairs(formats) do
    for t, names in ipairs(f.names) do
      for _, k in ipairs(core.KINDS) do
        it(fname .. " (table " .. t .. ") says what it does with " .. k.name,
           function()
          local said, why = kit.says(names, k.name)
          assert.is_truthy(said, fname .. " says nothing of kind '" ..
                           k.name .. "': add its row, or refuse it by name")
          if said == "refused" then
            assert.is_string(why)
            assert.is_truthy(#why > 0)
          end
        end)
      end
      it(fname .. " (table " .. t .. ") names only kinds of the core",
         function()
        local known = {}
        for _, k in ipairs(core.KINDS) do known[k.name] = true end
        for kind in pairs(names.by_kind) do
          assert.is_truthy(known[kind], "no kind '" .. kind .. "'")
        end
        for kind in pairs(names.refused) do
          assert.is_truthy(known[kind], "no kind '" .. kind .. "'")
        end
      end)
    end
  end

  -- exporting one node of each kind: refused kinds give their reason
  local exporters = {
    { "btcpp", formats.btcpp.names[1], formats.btcpp.export },
    { "behavior3", formats.behavior3.names[1], formats.behavior3.export },
    { "behavior3 current", formats.behavior3.names[2], function(n)
      return formats.behavior3.export(n, { current = true })
    end },
    { "edges", formats.edges.names[1], formats.edges.export },
  }
  for _, e in ipairs(exporters) do
    local name, names, export = e[1], e[2], e[3]
    for _, k in ipairs(core.KINDS) do
      local reason = names.refused[k.name]
      if reason and examples[k.name] then
        it(name .. " refuses to export a " .. k.name .. " with its reason",
           function()
          local ok, err = pcall(export, examples[k.name]())
          assert.is_false(ok)
          assert.is_truthy(tostring(err):find("'" .. k.name .. "' " .. reason,
                                              1, true), tostring(err))
        end)
      end
    end
  end
end)

describe("the formats' modules", function()
  it("never require bonsai: what they need is passed in (opts.bt)", function()
    for _, name in ipairs { "btcpp", "behavior3", "edges", "kit", "xml" } do
      local f = assert(io.open("lua/bonsai/formats/" .. name .. ".lua"))
      local text = f:read("*a")
      f:close()
      for req in text:gmatch("require%s*%(?%s*[\"']([%w_.]+)[\"']") do
        assert.is_truthy(req ~= "bonsai" and req ~= "bonsai.init",
                         name .. ".lua requires " .. req)
      end
    end
  end)
end)
