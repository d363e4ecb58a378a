// measure_large.js: how the viewer copes with large trace files, for the
// figures in docs/DEBUGGER.md (not part of the test suite: it takes
// minutes and gigabytes). Opens each file through the page's file picker
// in headless Chromium, as a user would, and prints: the time until the
// page shows the tree, the longest stall of the page while reading (the
// largest gap between two 10 ms heartbeats), the JavaScript heap after,
// and how long a step to the next tick takes. A file cut in the middle
// of a line is measured the same way. Make a large file with
//   lua5.4 samples/arena.lua --record big.jsonl --no-map --fast --ticks=1500
// then
//   node tests/browser/measure_large.js big.jsonl [more.jsonl ...]
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const VIEWER = path.resolve(__dirname, '../../viewer/index.html');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

async function measure(page, file) {
  await page.goto('file://' + VIEWER);
  await page.evaluate(() => {
    window.gaps = { last: performance.now(), max: 0 };
    setInterval(() => {
      const now = performance.now();
      window.gaps.max = Math.max(window.gaps.max, now - window.gaps.last);
      window.gaps.last = now;
    }, 10);
  });
  const t0 = Date.now();
  await page.setInputFiles('#file', file);
  await page.waitForSelector('body.loaded #tree li[data-path]', { timeout: 600000 });
  const opened = (Date.now() - t0) / 1000;
  const stall = await page.evaluate(() => window.gaps.max);
  const heap = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : NaN);
  const message = await page.textContent('#message');
  await page.click('#tree-head');
  await page.keyboard.press('Home');
  await page.waitForFunction(() => document.body.dataset.tick === '1');
  const tick = '1';
  const t1 = Date.now();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((t) => document.body.dataset.tick !== t, tick);
  const step = Date.now() - t1;
  const mb = fs.statSync(file).size / 1e6;
  console.log(path.basename(file) + ': ' + mb.toFixed(1) + ' MB opened in ' + opened.toFixed(1) +
    ' s, longest stall ' + (stall / 1000).toFixed(2) + ' s, heap ' + (heap / 1e6).toFixed(0) +
    ' MB, a step ' + step + ' ms' + (message.trim() ? ' (' + message.trim().slice(0, 80) + ')' : ''));
}

async function main() {
  const files = process.argv.slice(2);
  if (!files.length) {
    console.error('usage: node measure_large.js TRACE.jsonl ...');
    process.exit(2);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bonsai-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--enable-precise-memory-info'],
    viewport: { width: 1400, height: 860 },
  });
  const cut = path.join(os.tmpdir(), 'bonsai-cut-' + process.pid + '.jsonl');
  try {
    const page = context.pages()[0] || await context.newPage();
    for (const file of files) {
      await measure(page, file);
      // the same file cut in the middle of a line, halfway
      const fd = fs.openSync(file, 'r');
      const half = Math.floor(fs.fstatSync(fd).size / 2);
      fs.closeSync(fd);
      fs.copyFileSync(file, cut);
      fs.truncateSync(cut, half);
      await measure(page, cut);
    }
  } finally {
    fs.rmSync(cut, { force: true });
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e && e.stack || e);
  process.exit(1);
});
