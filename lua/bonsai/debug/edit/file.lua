-- bonsai.debug.edit.file: the editor's tree files: the format a file is
-- in, a fingerprint of its text (to see that it changed since the page
-- read it), and writing a file by replacing it (never through a link).
local cjson = require "cjson.safe"

local M = {}

-- A fingerprint of a file's text, to see that it changed: its length and
-- a 32-bit polynomial hash, in hex (not a defence against anyone: the
-- pages are the developer's own).
function M.stamp(text)
  if not text then return "none" end
  local h = 0
  for i = 1, #text do h = (h * 31 + text:byte(i)) % 4294967296 end
  return ("%d:%08x"):format(#text, h)
end

-- The format of a tree file, by its name (and, for behavior3, its text).
function M.format(path, text)
  local ext = path:match("%.([^./]*)$")
  if ext == "xml" then return "btcpp" end
  if ext == "json" or ext == "b3" then
    -- the current editor's files have "root" as a node, the classic's a
    -- "nodes" table
    local doc = text and cjson.decode(text)
    if type(doc) == "table" and type(doc.root) == "table" then
      return "behavior3-current"
    end
    return "behavior3"
  end
  if ext == "bt" then return "edges" end
  if ext == "lua" then return "lua" end
  return nil
end

-- Writes text to path: beside the file, then renamed over it: a tree file
-- that is a symbolic link is replaced by the file, never written through
-- (what it pointed to, maybe outside the folder, is left alone); a link
-- planted at the temporary name is removed first, not followed. true, or
-- nil and why.
function M.replace(path, text)
  local tmp = path .. ".bonsai-save"
  os.remove(tmp)
  local f, err = io.open(tmp, "wb")
  if not f then return nil, err end
  f:write(text)
  f:close()
  local ok
  ok, err = os.rename(tmp, path)
  if not ok then
    os.remove(tmp)
    return nil, err
  end
  return true
end

return M
