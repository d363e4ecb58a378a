// test_cluster.js: the cluster sample's one view of the world in Debian's
// Chromium (headless, through playwright-core). Runs the driver
// (samples/cluster/cluster.lua, three replica sets of two Tarantool
// instances, a small world without kills) with --view 0 (a free port, read
// from its output), opens its page and checks: the three sets' cards, the
// twelve zones of the map, NPC counts that add up to the world's, and the
// page, left to pick an NPC itself, following it across a hand-over to
// another set (checked against the driver's own answer for that NPC);
// then the driver must end with its invariants kept. Writes
// BUILDDIR/browser-screenshots/cluster.png.
//
//   node test_cluster.js BUILDDIR      (a LuaJIT build)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const assert = require('assert/strict');
const { chromium } = require('playwright-core');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '../..');
const BUILD = path.resolve(process.argv[2] || path.join(ROOT, 'build-luajit'));
const OUT = path.join(BUILD, 'browser-screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const NPCS = 90;

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  // Its own process group: the instances go with it if the test fails.
  const driver = spawn('tarantool', [path.join(ROOT, 'samples/cluster/cluster.lua'),
    '--npcs', String(NPCS), '--seconds', '30', '--kills', '0', '--view', '0'], {
    env: Object.assign({}, process.env, { BONSAI_CPATH: BUILD + '/src/?.so' }),
    detached: true, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  driver.stdout.on('data', (d) => { output += d; process.stdout.write(d); });
  const ended = new Promise((resolve) => driver.on('exit', (code) => resolve(code)));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-chromium-'));
  let context = null;
  try {
    // (bounded: the sets start, a replica each, on a machine that may be busy)
    for (let k = 0; k < 900 && !/one view of the world on (\S+)/.test(output); k++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const served = output.match(/one view of the world on (http:\/\/127\.0\.0\.1:\d+\/)/);
    assert.ok(served, 'the driver serves the page');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1100, height: 560 },
    });
    const page = context.pages()[0] || await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(served[1]);

    await page.waitForSelector('.card .active');
    const cards = await page.$$eval('.card', (cs) => cs.map((c) => c.dataset.name));
    assert.deepEqual(cards, ['a', 'b', 'c'], 'a card per replica set');
    const counts = await page.$$eval('.card .active', (cs) => cs.map((c) => Number(c.textContent)));
    const total = counts.reduce((x, y) => x + y, 0);
    // (read one instance after another: an NPC handed over meanwhile may
    // be counted on neither or on both)
    assert.ok(Math.abs(total - NPCS) <= 5, `NPCs on the cards: ${counts} (${total} of ${NPCS})`);
    const zones = await page.$$eval('.zone b', (zs) => zs.map((z) => Number(z.textContent)));
    assert.equal(zones.length, 12, 'twelve zones on the map');

    // The page follows an NPC it picked; wait for a hand-over in its trail.
    await page.waitForFunction(() => document.querySelectorAll('#trail li').length >= 2,
      null, { timeout: 25000 });
    const who = (await page.textContent('#who')).replace('npc ', '');
    const trail = await page.$$eval('#trail li', (ls) => ls.map((l) => l.textContent));
    console.log('# followed npc ' + who + ': ' + trail.join(' | '));
    const first = trail[0].match(/seen on (\w)/)[1];
    const second = trail[1].match(/handed over to (\w)/)[1];
    assert.notEqual(first, second, 'the trail moves to another set');
    // The driver's own answer: the NPC is where the page says.
    const w = await page.evaluate(async (id) => (await fetch('/world?follow=' + id)).json(), who);
    const last = (await page.$$eval('#trail li', (ls) => ls.map((l) => l.textContent))).pop();
    assert.ok(w.follow && w.follow.on && last.includes(w.follow.on),
      `the page's last hand-over (${last}) is where the driver finds npc ${who} (${w.follow && w.follow.on})`);
    assert.ok(await page.isVisible('#marker'), 'the followed NPC is on the map');
    assert.equal(await page.$$eval('.card.holds', (cs) => cs.length), 1, 'one card holds it');
    await page.screenshot({ path: path.join(OUT, 'cluster.png') });
    assert.deepEqual(errors, [], 'no error on the page');

    let timer = null;
    const code = await Promise.race([ended,
      new Promise((r) => { timer = setTimeout(() => r('timeout'), 90000); })]);
    clearTimeout(timer);
    assert.equal(code, 0, 'the driver ends with every invariant kept');
    assert.match(output, /lost 0, duplicated 0/);
    console.log('cluster view: ok');
  } finally {
    if (context) await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
    try { process.kill(-driver.pid, 'SIGKILL'); } catch (e) { /* already ended */ }
  }
}

main().catch((e) => {
  console.error('cluster view: FAILED: ' + (e && e.stack || e));
  process.exit(1);
});
