-- samples/love/npc.lua: the NPCs' tree, loaded with bt.load and reloaded
-- (bt.watch / bt.poll) when this file changes while the game runs. Scared
-- NPCs flee; the others chase the monster they see; the rest patrol.
return bt.selector { name = "npc",
  bt.guard { name = "fear", bt.check("scared", "==", true), abort = "lower",
    bt.action "flee" },
  bt.guard { name = "hunt", bt.check("sees", "==", true), abort = "lower",
    bt.action "chase" },
  bt.action "patrol",
}
