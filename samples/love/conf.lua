-- samples/love/conf.lua: the LÖVE window of the NPC sample (main.lua).
function love.conf(t)
  t.identity = "bonsai-npcs"
  t.window.title = "Bonsai NPCs (LÖVE)"
  t.window.width, t.window.height = 800, 600
  t.modules.joystick, t.modules.physics = false, false
  t.modules.audio, t.modules.sound = false, false
end
