-- bonsai.debug.edit: editing the running game's trees from the live page
-- (docs/DEBUGGER.md, "Editing"). It adds commands to a debug session, each
-- a function of the session's editor (edit/editor.lua: the drafts, one
-- per tree, and the trees held): tree, edit, undo, redo (edit/history:
-- tree operations on a draft, edit/ops and edit/make, each batch checked
-- as bt.tree checks a definition); palette and script (edit/palette: what
-- can be inserted, a script's parse error as it is typed); preview (a dry
-- run of the reload's migration over the live agents); apply and rollback
-- (edit/apply: tree:reload with the draft, to some agents first: the
-- tree held, tree:hold, and those agents let through, a:pass); save
-- (edit/save: the draft written to the file the tree came from, in its
-- format, only inside the watched folders, refused when the file changed
-- since the page read it). The draft keeps the definition's own tables:
-- an inline Lua function is carried along untouched; only a save to a Lua
-- file refuses it (the page cannot write a function).
local Editor = require "bonsai.debug.edit.editor"

local M = {}

M.MAX_OPS = 256      -- operations in one edit command
M.MAX_HISTORY = 64   -- drafts kept for undo, versions kept for rollback

-- (root, opts, map, old, external, bt)
M.lua_text = require "bonsai.debug.edit.luatext"

-- The modules of the commands, each a table name -> f(editor, cmd).
local COMMANDS = {
  require "bonsai.debug.edit.history", -- tree, edit, undo, redo
  require "bonsai.debug.edit.palette", -- palette, script
  require "bonsai.debug.edit.preview", -- preview
  require "bonsai.debug.edit.apply",   -- apply, rollback
  require "bonsai.debug.edit.save",    -- save
}
local NAMES = { "tree", "edit", "undo", "redo", "palette", "script",
                "preview", "apply", "rollback", "save" }

-- add(S, bt): the editing commands on session S.
function M.add(S, bt)
  local E = Editor.new(S, bt, M)
  for _, name in ipairs(NAMES) do
    local f
    for _, mod in ipairs(COMMANDS) do f = f or mod[name] end
    S.commands[name] = function(cmd) return f(E, cmd) end
  end
  local close = S.close
  function S.close() -- (the drafts go with the session's agents)
    E:close()
    return close()
  end
end

return M
