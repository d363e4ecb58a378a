-- npc_tree.lua: the tree of every NPC of the cluster sample, loaded with
-- bt.load and watched by every instance (an edit reloads everywhere). Leaves
-- are registered by name in world.lua. An NPC travels to a destination,
-- often in another zone (so it crosses borders, and moves to another
-- instance, in the middle of "travel"), then works there a while.
local bt = require "bonsai"

return bt.tree(
  bt.sequence { name = "trip",
    bt.action "choose",
    bt.action "travel",
    bt.action "work",
  }, { name = "npc" })
