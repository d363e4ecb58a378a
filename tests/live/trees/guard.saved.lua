-- The guard of tests/live/edit_game.lua: its leaves are registered by name,
-- so the live page can save the tree back as Lua (docs/DEBUGGER.md,
-- "Editing").
return {
  type = "reactive_selector",
  name = "guard",
  {
    type = "sequence",
    name = "chase",
    { type = "check", name = "brave", key = "hp", op = ">", value = 100 },
    { type = "is_set", name = "is_set[1]", key = "enemy" },
    { type = "action", name = "strike", leaf = "strike" },
  },
  {
    type = "sequence",
    name = "patrol",
    { type = "action", name = "walk", leaf = "walk" },
    { type = "action", name = "look", leaf = "look" },
  },
}
