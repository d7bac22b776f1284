// Trellis interactive page. Plain JavaScript, no libraries: it talks to the
// JSON API of `trellis interactive serve` only and draws dendrograms as SVG
// with its own layout (leaves in order, a node midway between its children,
// x by the height h = 1 - t on the chosen axis: merge rank, time or log).
//
// Large trees: every leaf gets a row of at least ROW_MIN pixels and labels
// keep their font size; the query's box scrolls, and zoom (buttons, + and -,
// Ctrl/Cmd + wheel; "fit") scales the rows and the width, never the text.
// When the tree does not fit its box, an overview beside it shows the whole
// tree with the part in view framed (click or drag it to move the view), the
// search's hits and the picked items. The exact panel's two small trees
// share a zoom of their own.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

const state = {
  session: null, // GET /api/session
  query: null, // GET /api/query, with .root parsed
  sel: [], // picked names: two together, then the odd one
  busy: false,
  answers: null, // answers count last seen (to refresh the tree)
  hoverOf: new Map(),
  imageOf: new Map(),
  openKeys: new Set(), // clades (keyOf) open in the outline as last drawn
  closedKeys: new Set(), // and closed
  seenLeaves: null, // leaves the outline showed (every enclosing clade open); null before the first draw
  keyBuf: '', // digits typed so far of an item number (queries of more than 10 items)
  keyTimer: null,
  conflicts: [],
  exactDone: false,
  wasSampling: null,
  lastAnswer: null, // id of the last answer in force (POST /api/undo names it)
  offline: false, // the last request found no server
  zoom: null, // the query dendrogram's zoom (null: fit to the box)
  axis: 'rank', // the dendrograms' horizontal axis: rank, time or log
  exactKind: 'mcc', // the exact panel's tree: mcc or map
  exactSummary: null, // the exact panel's tree as last drawn
  sideZoom: 1, // the zoom of the exact panel's two small trees
};

// The smallest row of a dendrogram leaf (its label is 14 px), and the zoom
// limits of the query's dendrogram.
const ROW_MIN = 18;
const ZOOM_MAX = 6;
const ZOOM_STEP = 1.25;
// The row of the exact panel's two small trees at 100%, and the overview's width.
const SIDE_ROW = 22;
const OVERVIEW_W = 96;

// One line under the controls explaining the horizontal axis.
const AXIS_HELP = {
  rank: 'Horizontal axis: merge order. Each merge is one step, ordered by its divergence time t (late merges on the right); the times themselves are not to scale.',
  time: 'Horizontal axis: the height 1 − t to scale (t the divergence time). Merges late in the diffusion (t near 1) crowd next to the leaves.',
  log: 'Horizontal axis: log(1 + h/h₀) of the height h = 1 − t, h₀ the lowest merge, which spreads the merges late in the diffusion (t near 1).',
};

const OFFLINE = 'the server does not answer (is it running?)';

// ------------------------------------------------------------------ API

async function api(path, body) {
  const init = { method: body === undefined ? 'GET' : 'POST', headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    state.offline = true;
    return { ok: false, status: 0, data: { error: OFFLINE } };
  }
  if (state.offline) {
    // The server answers again (restarted?): the stale banner goes.
    state.offline = false;
    if ($('message').textContent === OFFLINE) say('The server answers again.', 'ok');
  }
  const type = res.headers.get('content-type') || '';
  const data = type.includes('json') ? await res.json() : await res.text();
  return { ok: res.ok, status: res.status, data };
}

// ------------------------------------------------------------------ Newick

function parseNewick(s) {
  let i = 0;
  function label() {
    if (s[i] === "'") {
      let out = '';
      i++;
      while (i < s.length) {
        if (s[i] === "'") {
          if (s[i + 1] === "'") { out += "'"; i += 2; continue; }
          i++;
          break;
        }
        out += s[i++];
      }
      return out;
    }
    const start = i;
    while (i < s.length && !'(),:;'.includes(s[i])) i++;
    return s.slice(start, i).trim();
  }
  function node() {
    const n = {};
    if (s[i] === '(') {
      i++;
      n.children = [node()];
      while (s[i] === ',') { i++; n.children.push(node()); }
      i++; // ')'
    }
    const l = label();
    if (l) n.name = l;
    if (s[i] === ':') {
      i++;
      const start = i;
      while (i < s.length && !'(),;'.includes(s[i])) i++;
      n.length = parseFloat(s.slice(start, i));
    }
    return n;
  }
  const root = node();
  (function setT(n, t) {
    n.t = t + (n.length || 0);
    (n.children || []).forEach((c) => setT(c, n.t));
  })(root, 0);
  (function setH(n) {
    n.height = n.children ? Math.max(0, 1 - n.t) : 0;
    (n.children || []).forEach(setH);
  })(root);
  return root;
}

function leavesOf(n, out = []) {
  if (!n.children) out.push(n);
  else n.children.forEach((c) => leavesOf(c, out));
  return out;
}

// ------------------------------------------------------------------ drawing

function el(tag, attrs = {}, ns = SVG) {
  const e = document.createElementNS(ns, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, v);
  return e;
}

function textWidth(s, px) { return Math.ceil(s.length * px * 0.6) + 8; }

// A thumbnail of item `name` (served with `--images`, or an inline `image`
// column), `px` pixels square, or null when the item has no picture.
function thumbnail(name, px) {
  const src = state.imageOf.get(name);
  if (!src) return null;
  const im = document.createElement('img');
  im.src = src;
  im.alt = name;
  im.width = px;
  im.height = px;
  im.className = 'thumb';
  im.draggable = false;
  return im;
}

// Where a node sits on the horizontal axis, in [0, 1] (0: the leaves, 1: the
// root), for a tree whose nodes have heights h = 1 - t:
// - time: h / h(root), to scale;
// - log: log(1 + h/h0) / log(1 + h(root)/h0), h0 the lowest positive merge
//   height, which spreads merges near height 0;
// - rank: the rank of the node's height among the distinct merge heights,
//   over their number: every merge one step, in the order of the heights.
// Every axis keeps a parent at or left of its children. O(m log m) for m
// internal nodes.
function axisOf(root, axis) {
  const internal = [];
  (function walk(n) {
    if (!n.children) return;
    internal.push(n.height);
    n.children.forEach(walk);
  })(root);
  const maxH = root.height > 0 ? root.height : 1;
  if (axis === 'rank') {
    const distinct = [...new Set(internal)].sort((a, b) => a - b);
    const rank = new Map(distinct.map((h, i) => [h, (i + 1) / distinct.length]));
    return (n) => (n.children ? rank.get(n.height) : 0);
  }
  if (axis === 'log') {
    const positive = internal.filter((h) => h > 0);
    const h0 = positive.length ? Math.min(...positive) : maxH;
    const top = Math.log1p(maxH / h0);
    return (n) => (n.height > 0 ? Math.log1p(n.height / h0) / top : 0);
  }
  return (n) => Math.max(0, n.height) / maxH;
}

// A horizontal dendrogram: the root on the left, leaves on the right with labels
// (and each leaf's thumbnail when the items have pictures).
// opts: { rowH, width, zoom, axis, pick (leaf click handler), numbered,
//         nodeLabel, thumb (px) }
// The zoom scales the row height (never below ROW_MIN) and, above 1, the
// width; labels keep their font size.
function dendrogram(root, opts = {}) {
  const leaves = leavesOf(root);
  const thumb = state.imageOf.size ? (opts.thumb || 0) : 0;
  const zoom = opts.zoom || 1;
  const rowH = Math.max(Math.round((opts.rowH || 26) * zoom), ROW_MIN, thumb ? thumb + 6 : 0);
  const pad = 10;
  const labelW = Math.min(260 + thumb, Math.max(...leaves.map((l) => textWidth((opts.numbered ? '0  ' : '') + l.name, 14))) + 16 + (thumb ? thumb + 6 : 0));
  const base = Math.max(opts.width || 520, labelW + 160);
  const width = Math.round(labelW + (base - labelW) * Math.max(1, zoom));
  const height = leaves.length * rowH + 2 * pad;
  const left = pad + 16;
  const right = width - labelW;
  const pos = axisOf(root, opts.axis || 'time');
  const X = (n) => right - (right - left) * pos(n);
  leaves.forEach((l, k) => { l.y = pad + rowH * (k + 0.5); l.k = k; });
  (function place(n) {
    if (!n.children) return;
    n.children.forEach(place);
    n.y = (n.children[0].y + n.children[n.children.length - 1].y) / 2;
  })(root);
  const svg = el('svg', {
    width, height, viewBox: `0 0 ${width} ${height}`, class: 'dendrogram',
    'data-row': rowH, 'data-axis': opts.axis || 'time',
  });
  svg.append(el('line', { x1: pad, x2: X(root), y1: root.y, y2: root.y, class: 'link stem' }));
  (function links(n) {
    if (!n.children) return;
    const x = X(n);
    const ys = n.children.map((c) => c.y);
    svg.append(el('line', { x1: x, x2: x, y1: Math.min(...ys), y2: Math.max(...ys), class: 'link merge' }));
    for (const c of n.children) {
      svg.append(el('line', { x1: x, x2: X(c), y1: c.y, y2: c.y, class: 'link' }));
      links(c);
    }
    const lab = opts.nodeLabel && opts.nodeLabel(n);
    if (lab) {
      const cls = opts.nodeClass ? opts.nodeClass(n) : 'plabel';
      const t = el('text', { x: x - 3, y: n.y - 4, class: cls, 'text-anchor': 'end' });
      t.textContent = lab;
      svg.append(t);
    }
  })(root);
  for (const l of leaves) {
    const g = el('g', {
      class: 'leaf' + (opts.pick ? ' pickable' : ''),
      'data-name': l.name,
      transform: `translate(${right + 2},${l.y})`,
      tabindex: opts.pick ? 0 : null,
      role: opts.pick ? 'button' : null,
      'aria-label': l.name,
    });
    g.append(el('rect', { x: 0, y: -rowH / 2 + 2, width: labelW - 6, height: rowH - 4 }));
    let x = 6;
    // Keys: 1-9 and 0 for up to 10 leaves; above, every leaf's number (typed).
    const many = leaves.length > 10;
    if (opts.numbered && (many || l.k < 10)) {
      const key = el('text', { x, y: 0, class: 'key' });
      key.textContent = String(many ? l.k + 1 : (l.k + 1) % 10);
      g.append(key);
    }
    if (opts.numbered) x += many ? 8 + 8 * String(leaves.length).length : 18;
    const im = thumb ? thumbnail(l.name, thumb) : null;
    if (im) {
      const fo = el('foreignObject', { x, y: -thumb / 2, width: thumb, height: thumb });
      fo.append(im);
      g.append(fo);
      x += thumb + 6;
    }
    const t = el('text', { x, y: 0 });
    t.textContent = l.name;
    g.append(t);
    if (opts.pick) {
      g.addEventListener('click', () => opts.pick(l.name));
      g.addEventListener('keydown', (e) => {
        if (e.key === ' ' || (e.key === 'Enter' && state.sel.length < 3)) {
          e.preventDefault();
          e.stopPropagation();
          opts.pick(l.name);
        }
      });
    }
    tip(g, l.name);
    svg.append(g);
  }
  return svg;
}

function tip(target, name) {
  const box = $('tip');
  const show = () => {
    const text = state.hoverOf.get(name);
    const img = state.imageOf.get(name);
    if (!text && !img) return;
    box.replaceChildren();
    const b = document.createElement('b');
    b.textContent = name;
    box.append(b);
    if (text) box.append(document.createTextNode(': ' + text));
    if (img) {
      const im = document.createElement('img');
      im.src = img;
      im.alt = name;
      box.append(im);
    }
    const r = target.getBoundingClientRect();
    box.style.left = Math.min(window.innerWidth - 330, r.right + 8) + 'px';
    box.style.top = Math.max(4, r.top - 4) + 'px';
    box.hidden = false;
  };
  const hide = () => { box.hidden = true; };
  target.addEventListener('mouseenter', show);
  target.addEventListener('mouseleave', hide);
  target.addEventListener('focus', show);
  target.addEventListener('blur', hide);
}

// ------------------------------------------------------------------ messages

function say(text, kind = '') {
  const m = $('message');
  m.textContent = text;
  m.className = kind;
}

const fmtTriplet = (t) => `({${t[0]}, ${t[1]}}, ${t[2]})`;

// ------------------------------------------------------------------ session

async function loadSession() {
  const r = await api('/api/session');
  if (!r.ok) { say(r.data.error || 'cannot read the session', 'error'); return; }
  const s = r.data;
  const first = state.session === null;
  state.session = s;
  if (first) {
    s.names.forEach((n, i) => {
      state.hoverOf.set(n, s.hover ? s.hover[i] : '');
      if (s.images && s.images[i]) state.imageOf.set(n, s.images[i]);
    });
    $('session-name').textContent = s.session;
    $('npoints').textContent = s.n;
  }
  $('nconstraints').textContent = s.triplets.length;
  $('nconstraints2').textContent = s.triplets.length;
  $('nanswers').textContent = s.answers;
  state.lastAnswer = s.last_answer;
  if (document.activeElement !== $('strategy')) $('strategy').value = s.strategy;
  const chip = $('sampler');
  chip.textContent = `sampler ${s.sampling ? 'working' : 'idle'} · ${s.iterations.toLocaleString('en')} iterations`;
  chip.classList.toggle('working', s.sampling);
  const list = $('triplet-list');
  list.replaceChildren();
  for (const t of s.triplets) {
    const li = document.createElement('li');
    li.textContent = fmtTriplet(t);
    if (state.conflicts.some((c) => c.join('\u0000') === t.join('\u0000'))) li.className = 'conflict';
    list.append(li);
  }
  // Another tab answered, or the sampler has a new query.
  if (!state.busy && s.query_id !== null && (!state.query || state.query.id !== s.query_id)) {
    loadQuery();
  }
  const changed = state.answers !== s.answers;
  const settled = state.wasSampling === true && !s.sampling;
  state.answers = s.answers;
  state.wasSampling = s.sampling;
  if (first || changed || settled) loadTree();
  if (changed) state.exactDone = false;
  if (first || !state.exactDone) loadExact();
}

async function loadQuery() {
  if (state.loadingQuery) return;
  state.loadingQuery = true;
  try {
    for (;;) {
      const r = await api('/api/query');
      if (r.ok) {
        showQuery(r.data);
        return;
      }
      if (r.status !== 503) { say(r.data.error || 'cannot read the query', 'error'); return; }
      $('query-tree').classList.add('waiting');
      await new Promise((ok) => setTimeout(ok, 300));
    }
  } finally {
    state.loadingQuery = false;
  }
}

function showQuery(q) {
  if (state.query && state.query.id === q.id) return;
  q.root = parseNewick(q.tree);
  state.query = q;
  state.sel = [];
  const box = $('query-tree');
  box.classList.remove('waiting');
  drawQuery(undefined, false);
  box.dataset.queryId = q.id;
  search();
  $('query-title').textContent =
    q.points.length === state.session?.n
      ? 'Is the whole hierarchy right?'
      : `Is this part of the hierarchy right? (${q.points.length} items, ${q.strategy})`;
  renderSelection();
}

// The query's dendrogram options before zoom: 28 px rows (20 above 40 items).
function queryBase() {
  const many = state.query.points.length > 40;
  return { rowH: many ? 20 : 28, thumb: many ? 28 : 44 };
}

// The zoom that fits the query's rows in the box's height (its CSS maximum,
// 70% of the window), between the legible minimum and 1.
function fitZoom() {
  const n = state.query.points.length;
  const { rowH } = queryBase();
  const avail = window.innerHeight * 0.7 - 24;
  return Math.min(1, Math.max(ROW_MIN / rowH, avail / (n * rowH)));
}

// Draws the query's dendrogram at the current zoom and axis; with `keep`,
// `anchor` (a point in the box, {x, y} from its top left; default its
// centre) stays over the same part of the tree.
function drawQuery(anchor, keep = true) {
  const q = state.query;
  if (!q) return;
  const box = $('query-tree');
  const min = ROW_MIN / queryBase().rowH;
  // A zoom kept from a query of another size: within this one's limits.
  if (state.zoom !== null) state.zoom = Math.min(ZOOM_MAX, Math.max(min, state.zoom));
  const zoom = state.zoom === null ? fitZoom() : state.zoom;
  const old = box.querySelector('svg');
  const ax = anchor ? anchor.x : box.clientWidth / 2;
  const ay = anchor ? anchor.y : box.clientHeight / 2;
  const size = (svg) => [Number(svg.getAttribute('width')), Number(svg.getAttribute('height'))];
  const [ow, oh] = old ? size(old) : [1, 1];
  const fx = (box.scrollLeft + ax) / ow;
  const fy = (box.scrollTop + ay) / oh;
  const svg = dendrogram(q.root, {
    pick, numbered: true, ...queryBase(), zoom, axis: state.axis,
    width: Math.max(520, box.clientWidth - 4),
  });
  box.replaceChildren(svg);
  // The overview shows when the tree overflows its box; showing or hiding it
  // changes the box's width, so the fitted tree is drawn once more.
  const [w, h] = size(svg);
  const over = h > box.clientHeight + 1 || w > box.clientWidth + 1;
  if (over === $('query-overview').hidden) {
    $('query-overview').hidden = !over;
    if (state.zoom === null) {
      drawQuery(anchor, keep);
      return;
    }
  }
  if (old && keep) {
    box.scrollLeft = fx * w - ax;
    box.scrollTop = fy * h - ay;
  }
  $('zoom-level').textContent = `${Math.round(zoom * 100)}%${state.zoom === null ? ' (fit)' : ''}`;
  $('zoom-out').disabled = zoom <= min + 1e-9;
  $('zoom-in').disabled = zoom >= ZOOM_MAX - 1e-9;
  drawOverview();
  renderSelection();
  search();
}

// The overview of the query's dendrogram (when it overflows its box): its
// links scaled into a box OVERVIEW_W wide and as tall as the query's box, a
// mark per leaf (coloured for the search's hits and the picked items) and
// a frame around the part in view.
function drawOverview() {
  const ov = $('query-overview');
  const box = $('query-tree');
  const svg = box.querySelector('svg');
  if (ov.hidden || !svg) { ov.replaceChildren(); return; }
  const w = Number(svg.getAttribute('width'));
  const h = Number(svg.getAttribute('height'));
  const H = box.clientHeight;
  ov.style.height = `${H}px`;
  const mini = el('svg', {
    width: OVERVIEW_W - 2, height: H - 2, viewBox: `0 0 ${w} ${h}`,
    preserveAspectRatio: 'none', 'aria-hidden': 'true', 'data-width': w, 'data-height': h,
  });
  for (const l of svg.querySelectorAll('line.link')) {
    const c = el('line', { class: 'link' });
    for (const a of ['x1', 'x2', 'y1', 'y2']) c.setAttribute(a, l.getAttribute(a));
    mini.append(c);
  }
  const row = Number(svg.dataset.row);
  const lx = Math.max(...[...svg.querySelectorAll('line.link:not(.merge)')].map((l) => Number(l.getAttribute('x2'))));
  for (const g of svg.querySelectorAll('g.leaf')) {
    const y = g.transform.baseVal[0].matrix.f;
    mini.append(el('rect', {
      class: 'ov-leaf', 'data-name': g.dataset.name, x: lx + 2, y: y - row / 2 + 1, width: Math.max(1, w - lx - 4), height: Math.max(1, row - 2),
    }));
  }
  mini.append(el('rect', { class: 'ov-view' }));
  ov.replaceChildren(mini);
  markOverview();
  overviewView();
}

// The overview's frame: the part of the tree in the query's box.
function overviewView() {
  const box = $('query-tree');
  const r = $('query-overview').querySelector('rect.ov-view');
  if (!r) return;
  r.setAttribute('x', box.scrollLeft);
  r.setAttribute('y', box.scrollTop);
  r.setAttribute('width', box.clientWidth);
  r.setAttribute('height', box.clientHeight);
}

// The overview's leaf marks follow the query's leaves: hits and picks.
function markOverview() {
  const ov = $('query-overview');
  if (ov.hidden) return;
  const cls = new Map([...$('query-tree').querySelectorAll('g.leaf')].map((g) => [g.dataset.name, g.classList]));
  for (const m of ov.querySelectorAll('rect.ov-leaf')) {
    const c = cls.get(m.dataset.name);
    for (const k of ['hit', 'together', 'odd']) m.classList.toggle(k, !!c && c.contains(k));
  }
}

// A point of the overview (client coordinates) becomes the centre of the view.
function overviewJump(e) {
  const mini = $('query-overview').querySelector('svg');
  if (!mini) return;
  const r = mini.getBoundingClientRect();
  const box = $('query-tree');
  const fx = Math.min(1, Math.max(0, (e.clientX - r.left) / r.width));
  const fy = Math.min(1, Math.max(0, (e.clientY - r.top) / r.height));
  box.scrollLeft = fx * Number(mini.dataset.width) - box.clientWidth / 2;
  box.scrollTop = fy * Number(mini.dataset.height) - box.clientHeight / 2;
  overviewView();
}

// Zooms the query's dendrogram by `factor` (null: fit), keeping `anchor` in place.
function zoomBy(factor, anchor) {
  if (!state.query) return;
  if (factor === null) {
    state.zoom = null;
  } else {
    const now = state.zoom === null ? fitZoom() : state.zoom;
    const min = ROW_MIN / queryBase().rowH;
    state.zoom = Math.min(ZOOM_MAX, Math.max(min, now * factor));
  }
  drawQuery(anchor);
}

function setAxis(axis) {
  state.axis = axis;
  $('axis').value = axis;
  $('axis-help').textContent = AXIS_HELP[axis];
  drawQuery();
  drawTree();
}

function pick(name) {
  const i = state.sel.indexOf(name);
  if (i >= 0) state.sel.splice(i, 1);
  else if (state.sel.length < 3) state.sel.push(name);
  else { say('Three items are picked: send the triplet, or click one to unpick it.'); return; }
  renderSelection();
}

function renderSelection() {
  const [a, b, c] = state.sel;
  for (const g of $('query-tree').querySelectorAll('g.leaf')) {
    const n = g.dataset.name;
    g.classList.toggle('together', n === a || n === b);
    g.classList.toggle('odd', n === c);
  }
  markOverview();
  const p = $('selection');
  p.replaceChildren();
  const span = (t, cls) => { const s = document.createElement('span'); s.className = cls; s.textContent = t; return s; };
  if (state.sel.length === 0) p.textContent = 'Nothing picked.';
  else if (state.sel.length === 1) p.append(span(a, 'together'), ' belongs together with … (pick one more)');
  else if (state.sel.length === 2) p.append(span(a, 'together'), ' and ', span(b, 'together'), ' belong together, apart from … (pick the odd one out)');
  else p.append(span(a, 'together'), ' and ', span(b, 'together'), ' belong together, apart from ', span(c, 'odd'), '.');
  $('send').disabled = state.sel.length !== 3;
}

async function answer(body, what) {
  if (state.busy || !state.query) return;
  state.busy = true;
  $('accept').disabled = true;
  try {
    const r = await api('/api/answer', { id: state.query.id, ...body });
    if (r.ok) {
      state.conflicts = [];
      state.lastAnswer = r.data.answer;
      say(`Stored: ${what}. ${r.data.triplets} constraint${r.data.triplets === 1 ? '' : 's'} in force.`, 'ok');
      state.query = null;
      state.sel = [];
      await loadQuery();
    } else if (r.status === 409 && r.data.conflicts) {
      state.conflicts = r.data.conflicts;
      say(`Not added: ${what} contradicts the constraint${r.data.conflicts.length === 1 ? '' : 's'} ` +
        r.data.conflicts.map(fmtTriplet).join(', ') + '. Undo one of them first, or pick differently.', 'error');
      $('constraints-panel').open = true;
    } else if (r.status === 409) {
      say('The query changed (answered in another tab?): here is the current one.', 'error');
      state.query = null;
      await loadQuery();
    } else {
      say(r.data.error || `error ${r.status}`, 'error');
    }
  } finally {
    state.busy = false;
    $('accept').disabled = false;
    loadSession();
  }
}

function accept() { answer({ accept: true }, 'accepted'); }

function sendTriplet() {
  if (state.sel.length !== 3) return;
  const t = state.sel.slice();
  answer({ triplet: t }, fmtTriplet(t));
}

async function undo() {
  if (state.busy) return;
  if (state.lastAnswer === null || state.lastAnswer === undefined) {
    say('There is no answer to undo.', 'error');
    return;
  }
  state.busy = true;
  try {
    // Undo names the answer: a second click (or another tab) cannot take
    // back a second answer by accident.
    const r = await api('/api/undo', { answer: state.lastAnswer });
    if (r.ok) {
      state.conflicts = [];
      state.lastAnswer = r.data.last_answer;
      const u = r.data.undone;
      say(`Took back ${Array.isArray(u) ? 'the triplet ' + fmtTriplet(u) : 'the last accept'}. ${r.data.triplets} constraints in force.`, 'ok');
      state.query = null;
      await loadQuery();
    } else if (r.status === 409) {
      state.lastAnswer = r.data.last_answer;
      say('Not undone: the answers changed (another tab?); the last answer in force is now ' +
        (r.data.last_answer === null ? 'none' : r.data.last_answer) + '. Press Undo again to take it back.', 'error');
    } else {
      say(r.data.error || `error ${r.status}`, 'error');
    }
  } finally {
    state.busy = false;
    loadSession();
  }
}

async function setStrategy(s) {
  const r = await api('/api/strategy', { strategy: s });
  if (!r.ok) { say(r.data.error, 'error'); return; }
  say(`Strategy: ${s}.`, 'ok');
  state.query = null;
  await loadQuery();
  loadSession();
}

// ------------------------------------------------------------------ whole tree

function keyOf(n) { return leavesOf(n).map((l) => l.name).sort().join('\u0000'); }

// Support classes: high (>= 0.95), mid (>= 0.5), low.
function supClass(s) { return s >= 0.95 ? 'high' : s >= 0.5 ? 'mid' : 'low'; }

// The tree with every internal clade of support below `thr` dissolved into
// its parent (its children hang from the parent directly); the root stays.
function collapsed(n, thr) {
  if (!n.children) return n;
  const kids = [];
  for (const c of n.children) {
    const k = collapsed(c, thr);
    if (k.children && k.support !== undefined && k.support < thr) kids.push(...k.children);
    else kids.push(k);
  }
  return { ...n, children: kids };
}

async function loadTree() {
  const r = await api('/api/tree?format=json');
  if (!r.ok) return;
  state.tree = r.data;
  const k = r.data.support_samples;
  $('support-samples').textContent =
    `${k} of the last ${r.data.support_window} trees kept, one every ${r.data.support_thin} iterations`;
  drawTree();
}

function drawTree() {
  if (!state.tree) return;
  const thr = Number($('collapse').value);
  $('collapse-value').textContent = thr.toFixed(2);
  const root = collapsed(state.tree, thr);
  const box = $('whole-tree');
  // Keep what the person opened across redraws (a new tree after an answer):
  // a clade open (closed) before stays open (closed), and every new clade
  // that holds a leaf the outline showed opens, so those leaves stay in view.
  if (box.querySelector('details')) {
    state.openKeys = new Set([...box.querySelectorAll('details[open]')].map((d) => d.dataset.key));
    state.closedKeys = new Set([...box.querySelectorAll('details:not([open])')].map((d) => d.dataset.key));
    state.seenLeaves = new Set([...box.querySelectorAll('li.wleaf')]
      .filter((li) => !li.closest('details:not([open])'))
      .map((li) => li.dataset.name));
  }
  const build = (n, depth) => {
    const li = document.createElement('li');
    if (!n.children) {
      li.className = 'wleaf';
      li.dataset.name = n.name;
      const im = thumbnail(n.name, 24);
      if (im) li.append(im, ' ');
      li.append(n.name);
      tip(li, n.name);
      return li;
    }
    const d = document.createElement('details');
    const key = keyOf(n);
    d.dataset.key = key;
    d.dataset.support = n.support;
    const names = leavesOf(n).map((l) => l.name);
    if (state.openKeys.has(key)) d.open = true;
    else if (state.closedKeys.has(key)) d.open = false;
    else if (state.seenLeaves) d.open = names.some((x) => state.seenLeaves.has(x));
    else d.open = depth < 2;
    const sum = document.createElement('summary');
    if (n.support !== undefined) {
      const sup = document.createElement('span');
      sup.className = 'sup ' + supClass(n.support);
      sup.textContent = `support ${n.support.toFixed(2)}`;
      sup.title = 'the fraction of the sampler\'s recent trees that contain this clade';
      sum.append(sup);
    }
    sum.append(`${names.length} points, t = ${(1 - n.height).toFixed(3)} `);
    const ex = document.createElement('span');
    ex.className = 'names';
    ex.textContent = names.slice(0, 6).join(', ') + (names.length > 6 ? ', …' : '');
    sum.append(ex);
    const ul = document.createElement('ul');
    n.children.forEach((c) => ul.append(build(c, depth + 1)));
    d.append(sum, ul);
    li.append(d);
    return li;
  };
  const ul = document.createElement('ul');
  ul.append(build(root, 0));
  box.replaceChildren(ul);
  if (state.session && state.session.n <= 20) {
    $('sampler-tree').replaceChildren(dendrogram(root, {
      rowH: SIDE_ROW,
      zoom: state.sideZoom,
      thumb: 20,
      width: 320,
      axis: state.axis,
      nodeLabel: (n) => (n.support === undefined ? null : n.support.toFixed(2)),
      nodeClass: (n) => 'slabel ' + supClass(n.support),
    }));
  }
  search();
}

function search() {
  const q = $('search').value.trim().toLowerCase();
  const box = $('whole-tree');
  let hits = 0;
  for (const li of box.querySelectorAll('li.wleaf')) {
    const hit = q !== '' && li.dataset.name.toLowerCase().includes(q);
    li.classList.toggle('hit', hit);
    li.classList.toggle('dim', q !== '' && !hit);
    if (hit) {
      hits++;
      for (let d = li.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
    }
  }
  $('search-count').textContent = q ? `${hits} found` : '';
  // The same hits marked in the dendrograms (the query, the exact panel, the
  // sampler's small tree).
  for (const g of document.querySelectorAll('#query-tree g.leaf, #exact-tree g.leaf, #sampler-tree g.leaf')) {
    g.classList.toggle('hit', q !== '' && g.dataset.name.toLowerCase().includes(q));
  }
  markOverview();
  // The hits' pictures in a strip (the first 60); a click shows the leaf.
  const strip = $('search-hits');
  strip.replaceChildren();
  if (q && state.imageOf.size) {
    for (const li of [...box.querySelectorAll('li.wleaf.hit')].slice(0, 60)) {
      const name = li.dataset.name;
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'hit-thumb';
      b.title = name;
      b.append(thumbnail(name, 40) || '', name);
      b.addEventListener('click', () => li.scrollIntoView({ block: 'center' }));
      strip.append(b);
    }
  }
  strip.hidden = strip.childElementCount === 0;
}

// ------------------------------------------------------------------ exact panel

async function loadExact() {
  const kind = state.exactKind;
  const r = await api(`/api/exact?tree=${kind}`);
  if (kind !== state.exactKind) return; // toggled meanwhile: a newer request follows
  if (!r.ok) return;
  const e = r.data;
  if (e.status === 'unavailable') { state.exactDone = true; return; }
  $('exact-panel').hidden = false;
  const status = $('exact-status');
  const inForce = e.triplets_in_force;
  const tr = (k) => `${k} triplet${k === 1 ? '' : 's'}`;
  status.className = e.status;
  status.dataset.status = e.status;
  status.dataset.used = e.triplets_used === undefined ? '' : e.triplets_used;
  if (e.status === 'computing') {
    state.exactDone = false;
    $('exact-model').textContent = `Computing the exact posterior over all hierarchies that satisfy the ${tr(inForce)} in force…`;
    status.textContent = '';
    return;
  }
  if (e.status === 'contradiction' || e.status === 'failed') {
    state.exactDone = true;
    status.textContent = e.reason;
    return;
  }
  // ready or recomputing: a result to show.
  state.exactDone = e.status === 'ready';
  $('exact-model').textContent = `${e.model}, conditioned on the ${tr(e.triplets_used)} in force: log Z = ${e.log_z.toFixed(3)}. ` +
    'Every cluster\'s probability is exact (the cluster trellis sums over all hierarchies that satisfy the triplets).';
  const cap = $('exact-caption');
  cap.dataset.kind = e.tree;
  cap.textContent = e.tree === 'map'
    ? 'Exact MAP tree (the single most probable hierarchy), each cluster labelled with its marginal probability'
    : `Exact MCC tree (maximum clade credibility: the tree whose clusters have the largest product of exact marginals, log ${(e.log_credibility ?? 0).toFixed(2)}), each cluster labelled with its marginal as support`;
  status.textContent = e.status === 'recomputing'
    ? `Recomputing under the ${tr(inForce)} now in force; shown: the posterior under ${tr(e.triplets_used)}.`
    : `Up to date: conditioned on all ${tr(e.triplets_used)} in force.`;
  const key = `${e.tree}|${e.status}|${e.triplets_used}|${e.log_z}`;
  if (state.exactKey === key) return;
  state.exactKey = key;
  $('exact-tree').dataset.kind = e.tree;
  state.exactSummary = e.summary;
  drawExact();
}

function drawExact() {
  if (!state.exactSummary) return;
  $('exact-tree').replaceChildren(dendrogram(state.exactSummary, {
    rowH: SIDE_ROW, zoom: state.sideZoom,
    thumb: 20, width: 320, nodeLabel: (n) => (n.p === undefined ? null : n.p.toFixed(2)),
  }));
  search();
}

// The zoom of the exact panel's two small trees (null: back to 100%):
// rows from the legible minimum up to ZOOM_MAX times, and the width above
// 100%, as in the query's dendrogram; the labels keep their size.
function sideZoomBy(factor) {
  const min = ROW_MIN / SIDE_ROW;
  state.sideZoom = factor === null ? 1 : Math.min(ZOOM_MAX, Math.max(min, state.sideZoom * factor));
  $('side-zoom-level').textContent = `${Math.round(state.sideZoom * 100)}%`;
  $('side-zoom-out').disabled = state.sideZoom <= min + 1e-9;
  $('side-zoom-in').disabled = state.sideZoom >= ZOOM_MAX - 1e-9;
  drawExact();
  drawTree();
}

// ------------------------------------------------------------------ export

async function download(path, file, transform) {
  const r = await api(path);
  if (!r.ok) { say(r.data.error || 'export failed', 'error'); return; }
  const text = transform ? transform(r.data) : (typeof r.data === 'string' ? r.data : JSON.stringify(r.data, null, 1));
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  a.download = file;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function tripletLines(data) {
  const spaced = data.triplets.some((t) => t.some((n) => /\s/.test(n)));
  return '# triplets ({a, b}, c): a and b together, apart from c\n' +
    data.triplets.map((t) => t.join(spaced ? ', ' : ' ')).join('\n') + '\n';
}

// ------------------------------------------------------------------ keys

function onKey(e) {
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) {
    if (e.key === 'Escape' && t === $('search')) { t.value = ''; search(); t.blur(); }
    return;
  }
  const inButton = t instanceof HTMLButtonElement || t instanceof HTMLElement && t.tagName === 'SUMMARY';
  if (/^[0-9]$/.test(e.key) && state.query) {
    const leaves = leavesOf(state.query.root);
    e.preventDefault();
    if (leaves.length <= 10) {
      const k = (Number(e.key) + 9) % 10;
      if (k < leaves.length) pick(leaves[k].name);
    } else {
      typeNumber(e.key, leaves);
    }
  } else if (e.key === 'a' || e.key === 'A') { accept(); e.preventDefault(); }
  else if (e.key === 'u' || e.key === 'U') { undo(); e.preventDefault(); }
  else if (e.key === 'Enter' && !inButton && state.sel.length === 3) { sendTriplet(); e.preventDefault(); }
  else if (e.key === 'Escape') { clearKeyBuf(); state.sel = []; renderSelection(); }
  else if (e.key === '/') { $('search').focus(); e.preventDefault(); }
  else if (e.key === '+' || e.key === '=') { zoomBy(ZOOM_STEP); e.preventDefault(); }
  else if (e.key === '-' || e.key === '_') { zoomBy(1 / ZOOM_STEP); e.preventDefault(); }
  else if (e.key === 'f' || e.key === 'F') { zoomBy(null); e.preventDefault(); }
}

// Above 10 items a key picks by number: the digits typed within 0.9 s make
// the number (1 then 2: item 12); it is taken as soon as no longer number
// fits, else when the pause ends.
function typeNumber(d, leaves) {
  clearTimeout(state.keyTimer);
  const buf = state.keyBuf + d;
  const id = state.query.id;
  const commit = () => {
    clearKeyBuf();
    if (!state.query || state.query.id !== id) return;
    const k = Number(buf);
    if (k >= 1 && k <= leaves.length) pick(leaves[k - 1].name);
    else say(`There is no item ${buf} (1 to ${leaves.length}).`, 'error');
  };
  if (Number(buf) * 10 > leaves.length || buf.length >= String(leaves.length).length) {
    state.keyBuf = buf;
    commit();
    return;
  }
  state.keyBuf = buf;
  $('keybuf').textContent = `item ${buf}…`;
  state.keyTimer = setTimeout(commit, 900);
}

function clearKeyBuf() {
  clearTimeout(state.keyTimer);
  state.keyBuf = '';
  $('keybuf').textContent = '';
}

// ------------------------------------------------------------------ start

function start() {
  $('accept').addEventListener('click', accept);
  $('send').addEventListener('click', sendTriplet);
  $('clear').addEventListener('click', () => { state.sel = []; renderSelection(); });
  $('undo').addEventListener('click', undo);
  $('strategy').addEventListener('change', (e) => setStrategy(e.target.value));
  $('search').addEventListener('input', search);
  $('refresh').addEventListener('click', loadTree);
  $('collapse').addEventListener('input', drawTree);
  $('zoom-in').addEventListener('click', () => zoomBy(ZOOM_STEP));
  $('zoom-out').addEventListener('click', () => zoomBy(1 / ZOOM_STEP));
  $('zoom-fit').addEventListener('click', () => zoomBy(null));
  $('axis').addEventListener('change', (e) => setAxis(e.target.value));
  // Ctrl (or Cmd) + wheel zooms the query's dendrogram about the pointer;
  // the wheel alone scrolls it.
  $('query-tree').addEventListener('wheel', (e) => {
    if (!(e.ctrlKey || e.metaKey) || !state.query) return;
    e.preventDefault();
    const r = $('query-tree').getBoundingClientRect();
    zoomBy(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP, { x: e.clientX - r.left, y: e.clientY - r.top });
  }, { passive: false });
  $('query-tree').addEventListener('scroll', overviewView, { passive: true });
  const ov = $('query-overview');
  ov.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    ov.setPointerCapture(e.pointerId);
    overviewJump(e);
  });
  ov.addEventListener('pointermove', (e) => { if (ov.hasPointerCapture(e.pointerId)) overviewJump(e); });
  $('side-zoom-in').addEventListener('click', () => sideZoomBy(ZOOM_STEP));
  $('side-zoom-out').addEventListener('click', () => sideZoomBy(1 / ZOOM_STEP));
  $('side-zoom-reset').addEventListener('click', () => sideZoomBy(null));
  for (const id of ['exact-tree', 'sampler-tree']) {
    $(id).addEventListener('wheel', (e) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      e.preventDefault();
      sideZoomBy(e.deltaY < 0 ? ZOOM_STEP : 1 / ZOOM_STEP);
    }, { passive: false });
  }
  for (const radio of document.querySelectorAll('input[name="exact-kind"]')) {
    radio.addEventListener('change', (e) => {
      state.exactKind = e.target.value;
      state.exactKey = null;
      loadExact();
    });
  }
  let resized = null;
  window.addEventListener('resize', () => {
    clearTimeout(resized);
    resized = setTimeout(() => { if (state.zoom === null) drawQuery(); else drawOverview(); }, 200);
  });
  setAxis(state.axis);
  $('export-newick').addEventListener('click', () => download('/api/tree?format=newick', `${state.session.session}-tree.nwk`));
  $('export-json').addEventListener('click', () => download('/api/tree?format=json', `${state.session.session}-tree.json`));
  $('export-triplets').addEventListener('click', () => download('/api/export', `${state.session.session}-triplets.txt`, tripletLines));
  document.addEventListener('keydown', onKey);
  renderSelection();
  loadSession().then(loadQuery);
  setInterval(loadSession, 1500);
}

start();
