-- The guard of tests/live/edit_game.lua: its leaves are registered by name,
-- so the live page can save the tree back as Lua (docs/DEBUGGER.md,
-- "Editing").
return bt.reactive_selector { name = "guard",
  bt.sequence { name = "chase",
    bt.is_set "enemy",
    bt.named("strike", bt.action "strike"),
  },
  bt.sequence { name = "patrol",
    bt.named("look", bt.action "look"),
    bt.named("walk", bt.action "walk"),
  },
}
