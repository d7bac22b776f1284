// A measurement, not a test: `trellis interactive serve` on the Zoo data (93
// animals) in headless Chromium, answered as a person would, by clicking.
// It prints the server's start time, the page's first query, and for every
// answer the server's answer latency (the POST /api/answer request, from the
// browser's resource timing) and the time from the click on "Send" (or
// "Accept") to the next query drawn; then the undo, the whole 93-leaf tree as
// a query (the smart strategy: layout, draw time, the overview) and the
// outline of the whole tree (GET /api/tree, draw time, a search). Answers are
// the target tree's triplets that the shown tree gets wrong (so they never
// contradict each other), or "accept" when it gets none wrong.
//
//   TRELLIS_BIN=target/release/trellis POINTS=../shared/data/ibhc/zoo.csv \
//   TARGET=../shared/data/ibhc/zoo_target.nwk ANSWERS=40 \
//   node crates/trellis-web/e2e/zoo.mjs
//
// (playwright-core from crates/trellis-web/e2e/node_modules: run e2e/run.sh
// once, or `npm ci` there.) Docs: docs/interactive.md, "The Zoo data in the
// browser".

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const BIN = process.env.TRELLIS_BIN;
const POINTS = process.env.POINTS;
const TARGET = process.env.TARGET;
const ANSWERS = Number(process.env.ANSWERS || 40);
assert.ok(BIN && POINTS && TARGET, 'TRELLIS_BIN, POINTS and TARGET must be set');

const work = mkdtempSync(path.join(tmpdir(), 'trellis-zoo-'));
const t0 = Date.now();
const log = (m) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${m}`);

// Newick without branch lengths: nested arrays of names.
function parseNewick(s) {
  let i = 0;
  const node = () => {
    if (s[i] === '(') {
      i++;
      const kids = [node()];
      while (s[i] === ',') { i++; kids.push(node()); }
      assert.equal(s[i], ')');
      i++;
      while (i < s.length && !/[,();]/.test(s[i])) i++; // a label or length
      return kids;
    }
    let name = '';
    while (i < s.length && !/[,():;]/.test(s[i])) name += s[i++];
    if (s[i] === ':') while (i < s.length && !/[,();]/.test(s[i])) i++;
    return name.trim();
  };
  return node();
}

// Every cluster of a tree as a set of names.
function clusters(tree) {
  const out = [];
  const walk = (n) => {
    if (!Array.isArray(n)) return [n];
    const all = n.flatMap(walk);
    out.push(new Set(all));
    return all;
  };
  walk(tree);
  return out;
}

// Whether ({a, b}, c) holds: some cluster holds a and b but not c.
const holds = (cs, a, b, c) => cs.some((s) => s.has(a) && s.has(b) && !s.has(c));

const target = clusters(parseNewick(readFileSync(TARGET, 'utf8').trim()));

// A triplet of the target over `names` that the query tree `shown` breaks.
function correction(names, shown) {
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      for (const c of names) {
        const [a, b] = [names[i], names[j]];
        if (c === a || c === b) continue;
        if (holds(target, a, b, c) && !holds(shown, a, b, c)) return [a, b, c];
      }
    }
  }
  return null;
}

function startServer(db, extra) {
  const args = ['interactive', 'serve', '--points', POINTS, '--sigma', 'var/4', '--jitter', '0.01',
    '--db', db, '--port', '0', '--seed', '1', ...extra];
  const proc = spawn(BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ proc, url: out.slice(0, nl).trim() });
    });
    proc.on('exit', (code) => reject(new Error(`the server exited (${code}): ${err}`)));
  });
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `n ${s.length}, median ${q(0.5).toFixed(1)}, p90 ${q(0.9).toFixed(1)}, max ${s[s.length - 1].toFixed(1)} ms`;
};

const queryId = (page) => page.locator('#query-tree').getAttribute('data-query-id');
const waitNewQuery = (page, old) => page.waitForFunction((o) => {
  const box = document.querySelector('#query-tree');
  return box.dataset.queryId && box.dataset.queryId !== o && box.querySelector('g.leaf');
}, old, { timeout: 30000 });

// The duration of the last POST to `p` (resource timing), in ms.
const lastPost = (page, p) => page.evaluate((p) => {
  const e = performance.getEntriesByType('resource').filter((x) => x.name.endsWith(p));
  return e.length ? e[e.length - 1].responseEnd - e[e.length - 1].startTime : NaN;
}, p);

// Answers `k` queries by clicking (a correction from the target, else
// accept) and prints the latencies.
async function answerQueries(page, server, k, what) {
  const serverMs = [];
  const roundMs = [];
  let triplets = 0;
  let accepts = 0;
  for (let i = 0; i < k; i++) {
    const old = await queryId(page);
    const q = await (await fetch(server.url + 'api/query')).json();
    assert.equal(String(q.id), old);
    const t = correction(q.points, clusters(parseNewick(q.tree)));
    // (The buffer holds 250 entries: the page polls the session every 1.5 s.)
    await page.evaluate(() => performance.clearResourceTimings());
    let clicked;
    if (t) {
      for (const name of t) await page.locator(`#query-tree g.leaf[data-name="${name}"]`).click();
      clicked = Date.now();
      await page.locator('#send').click();
      triplets++;
    } else {
      clicked = Date.now();
      await page.locator('#accept').click();
      accepts++;
    }
    await waitNewQuery(page, old);
    roundMs.push(Date.now() - clicked);
    serverMs.push(await lastPost(page, '/api/answer'));
    const msg = await page.locator('#message').textContent();
    assert.ok(msg.startsWith('Stored'), msg);
  }
  log(`${what}: ${k} answers (${triplets} triplets, ${accepts} accepts), none refused`);
  log(`  POST /api/answer (browser resource timing): ${stats(serverMs)}`);
  log(`  click to the next query drawn: ${stats(roundMs)}`);
}

let started = Date.now();
const server = await startServer(path.join(work, 'zoo.sqlite'), ['--strategy', 'active']);
log(`server ready in ${Date.now() - started} ms at ${server.url}`);
const context = await chromium.launchPersistentContext(path.join(work, 'profile'), {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  viewport: { width: 1400, height: 900 },
});
const page = context.pages()[0] || (await context.newPage());
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
try {
  started = Date.now();
  await page.goto(server.url);
  await page.waitForSelector('#query-tree g.leaf', { timeout: 30000 });
  log(`page loaded, first query drawn in ${Date.now() - started} ms`);
  await page.waitForFunction(() => document.querySelectorAll('#whole-tree li.wleaf').length === 93);

  await answerQueries(page, server, ANSWERS, 'active queries of 10 animals');

  await page.evaluate(() => performance.clearResourceTimings());
  started = Date.now();
  await page.locator('#undo').click();
  await page.waitForFunction(() => /Undid|undone|Took back/i.test(document.querySelector('#message').textContent));
  log(`undo: POST /api/undo ${(await lastPost(page, '/api/undo')).toFixed(1)} ms, ${Date.now() - started} ms to the message`);

  // The whole tree as a query.
  const old = await queryId(page);
  started = Date.now();
  await page.locator('#strategy').selectOption('smart');
  await waitNewQuery(page, old);
  // (A query made before the switch may come first.)
  await page.waitForFunction(() => document.querySelectorAll('#query-tree g.leaf').length === 93);
  log(`smart strategy: the 93-leaf query drawn ${Date.now() - started} ms after the switch`);
  const layout = await page.evaluate(() => {
    const box = document.querySelector('#query-tree');
    const svg = box.querySelector('svg');
    const t = performance.now();
    for (let i = 0; i < 10; i++) drawQuery(); // eslint-disable-line no-undef
    const draw = (performance.now() - t) / 10;
    const texts = [...box.querySelectorAll('g.leaf text:not(.key)')];
    const rects = texts.map((x) => x.getBoundingClientRect());
    let overlap = 0;
    for (let i = 1; i < rects.length; i++) if (rects[i].top < rects[i - 1].bottom - 0.5) overlap++;
    return {
      leaves: box.querySelectorAll('g.leaf').length,
      row: Number(box.querySelector('svg').dataset.row),
      font: getComputedStyle(texts[0]).fontSize,
      overlap,
      svgH: Number(svg.getAttribute('height')),
      boxH: box.clientHeight,
      overview: !document.querySelector('#query-overview').hidden,
      marks: document.querySelectorAll('#query-overview rect.ov-leaf').length,
      draw,
    };
  });
  log(`93-leaf query: ${JSON.stringify(layout)}`);

  await answerQueries(page, server, Number(process.env.SMART_ANSWERS || 10), 'the whole 93-leaf tree (smart)');
  const treeAt = Date.now();
  const r = await fetch(server.url + 'api/tree?format=json');
  await r.json();
  log(`GET /api/tree (from node): ${Date.now() - treeAt} ms`);
  const outline = await page.evaluate(() => {
    const t = performance.now();
    for (let i = 0; i < 10; i++) drawTree(); // eslint-disable-line no-undef
    return {
      draw: (performance.now() - t) / 10,
      leaves: document.querySelectorAll('#whole-tree li.wleaf').length,
      clades: document.querySelectorAll('#whole-tree details').length,
    };
  });
  log(`outline of the whole tree: ${JSON.stringify(outline)}`);
  await page.locator('#search').fill('bat');
  const hits = await page.evaluate(() => ({
    outline: document.querySelectorAll('#whole-tree li.wleaf.hit').length,
    query: document.querySelectorAll('#query-tree g.leaf.hit').length,
    overview: document.querySelectorAll('#query-overview rect.ov-leaf.hit').length,
  }));
  log(`search "bat": ${JSON.stringify(hits)}`);
  const exact = await (await fetch(server.url + 'api/exact')).json();
  log(`exact panel: ${exact.status} (${exact.reason || ''}); shown: ${!(await page.locator('#exact-panel').isHidden())}`);
  log(`page errors: ${errors.length ? errors.join(' | ') : 'none'}`);
} finally {
  await context.close();
  server.proc.kill('SIGINT');
  rmSync(work, { recursive: true, force: true });
}
