// The ide-bridge page: no framework, no build step, nothing from another origin.
// Everything the bridge or an agent wrote is put into the page as text (textContent),
// except a review's HTML, which the bridge renders and sanitises itself.
'use strict';

// ---------------------------------------------------------------- helpers

const $ = (id) => document.getElementById(id);

/** An element with attributes (`class`, `data-*`, properties) and children (text or nodes). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('data-') || k === 'role' || k.startsWith('aria-') || k === 'title' || k === 'href') el.setAttribute(k, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el[k] = v;
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces `el`'s children, leaving out the absent ones (the DOM's own
 * `replaceChildren` would show a `null` as the text "null"). */
function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

/** Goes to the sign-in page, once (the stream and a request may both find out). */
function leave() {
  if (state.leaving) return;
  state.leaving = true;
  if (state.events) state.events.close();
  location.replace('/ui/login');
}

async function api(path, options = {}) {
  const res = await fetch('/ui/api/' + path, {
    credentials: 'same-origin',
    ...options,
    headers: { 'Content-Type': 'application/json', ...(options.headers || {}) },
  });
  if (res.status === 401) {
    leave();
    throw new Error('signed out');
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}
const post = (path, body) => api(path, { method: 'POST', body: JSON.stringify(body ?? {}) });

function toast(text, kind = 'info') {
  const t = $('toast');
  t.textContent = text;
  t.className = 'show ' + kind;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.className = ''; }, 4000);
}

const pad = (n, w = 2) => String(n).padStart(w, '0');
function clock(ms) {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}
function duration(s) {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
function setBadge(id, n) {
  const b = $(id);
  b.textContent = n ? String(n) : '';
}

// ---------------------------------------------------------------- state

const state = {
  status: null,
  agents: new Map(), // session id -> label
  view: 'overview',
  tasks: [],
  taskStatus: new Map(),
  selectedTask: null,
  taskStream: null,
  reviews: [],
  review: null, // the review shown
  refIndex: null, // the reference shown in the excerpt
  diffs: [],
  diffAt: 0,
  editing: false,
  /** The person's edit of each diff's proposal, by diff id. */
  edits: new Map(),
  approvals: [],
  knownApprovals: new Set(),
  /** The live stream (EventSource). */
  events: null,
  /** On the way to the sign-in page. */
  leaving: false,
};

function agentLabel(id) {
  if (!id) return 'bridge';
  return state.agents.get(id) || id.slice(0, 8);
}

// ---------------------------------------------------------------- views

function showView() {
  const hash = location.hash.slice(1) || 'overview';
  let view = hash;
  const review = /^review-(\d+)$/.exec(hash);
  const task = /^task-(.+)$/.exec(hash);
  if (review) view = 'reviews';
  if (task) view = 'tasks';
  if (!document.querySelector(`section.view[data-view="${view}"]`)) view = 'overview';
  state.view = view;
  for (const s of document.querySelectorAll('section.view')) s.classList.toggle('active', s.dataset.view === view);
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.view === view);
  if (review) openReview(Number(review[1]));
  if (task) selectTask(task[1]);
  if (view === 'timeline') timeline.render();
  if (view === 'diffs') renderDiff();
  // The Reviews tab with none open shows the newest, not "No review yet".
  if (view === 'reviews' && !review) openNewestReview();
}

function openNewestReview() {
  if (!state.review && state.reviews.length && state.view === 'reviews' && !location.hash.startsWith('#review-')) {
    location.hash = `review-${state.reviews[0].id}`;
  }
}

// ---------------------------------------------------------------- overview

function fact(dl, name, value, cls) {
  dl.append(h('dt', {}, name), h('dd', { class: cls }, value));
}

function renderStatus(s) {
  state.status = s;
  state.agents = new Map(s.sessions.map((x) => [x.id, x.client || x.id.slice(0, 8)]));
  $('ws-name').textContent = s.workspace;
  document.title = `ide-bridge · ${s.workspace.split('/').pop()}`;

  const tbody = $('agents').tBodies[0];
  tbody.replaceChildren(...s.sessions.map((x) => h('tr', { 'data-session': x.id },
    h('td', {}, x.client || '—', x.clientPid ? h('span', { class: 'muted' }, ` pid ${x.clientPid}`) : null),
    h('td', { class: 'mono' }, x.id),
    h('td', {}, x.connections.map((c) => h('span', { class: 'pill' }, c.kind))),
    h('td', {}, x.connected
      ? h('span', { class: 'ok' }, x.unresponsive ? 'unresponsive' : 'connected')
      : h('span', { class: 'warn' }, x.inGrace ? 'in grace (may come back)' : 'gone')),
    h('td', {}, x.openedFiles),
    h('td', {}, x.activeToolCalls),
    h('td', { class: 'muted' }, x.createdAt ? new Date(x.createdAt).toLocaleTimeString() : ''),
  )));
  $('agents-empty').hidden = s.sessions.length > 0;
  $('agents-count').textContent = `${s.sessions.length} / ${s.maxSessions}`;

  const ed = $('editor');
  ed.replaceChildren();
  const x = s.extension;
  fact(ed, 'Connection', x.connected ? 'connected' : 'none', x.connected ? 'ok' : 'muted');
  fact(ed, 'Circuit breaker', x.circuit + (x.failures ? ` (${x.failures} timeouts)` : ''), x.circuit === 'closed' ? 'ok' : 'bad');
  fact(ed, 'Requests waiting', x.pendingRequests);
  fact(ed, 'Files with diagnostics', x.diagnosticFiles);
  if (!x.connected) ed.append(h('p', { class: 'muted small' }, 'Without an editor, agents\' diffs wait on the Diffs tab while this page is open.'));

  const br = $('bridge');
  br.replaceChildren();
  fact(br, 'Version', s.version);
  fact(br, 'Port', s.port);
  fact(br, 'Up', duration(s.uptimeSeconds));
  fact(br, 'Tool calls', `${s.activity.toolCalls} (${s.activity.nativeCalls} the agents' own, ${s.activity.toolErrors} failed)`);
  fact(br, 'Watching', `${s.watch.mode}, ${s.watch.changesReported} changes`);
  fact(br, 'Commands', s.commandSandbox.enforced ? `sandboxed (Landlock ${s.commandSandbox.landlockAbi})` : 'not sandboxed', s.commandSandbox.enforced ? 'ok' : 'warn');
  fact(br, 'Refused connections', Object.values(s.refusedConnections).reduce((a, b) => a + b, 0));

  renderAutomation(s.automation);
  renderClaims(s.claims);
  setBadge('badge-diffs', s.page.pendingDiffs);
  setBadge('badge-approvals', s.page.pendingApprovals);
  setBadge('badge-reviews', s.page.reviews);
  fillSelect($('f-agent'), s.sessions.map((x) => [x.id, `${x.client || 'agent'} (${x.id.slice(0, 8)})`]));
}

function renderClaims(c) {
  const held = (c && c.held) || [];
  $('claims-count').textContent = held.length ? `${held.length} held · ${c.refusedWrites} writes refused` : '';
  $('claims').tBodies[0].replaceChildren(...held.map((x) => h('tr', { 'data-claim': x.id },
    h('td', {}, x.holder),
    h('td', { class: 'mono' }, x.patterns.join(', ')),
    h('td', {}, x.reason || '—'),
    h('td', { class: 'muted' }, duration(x.expiresInSeconds)),
    h('td', {}, h('button', { type: 'button', class: 'ghost danger', onclick: () => releaseClaim(x.id) }, 'Release')))));
  $('claims-empty').hidden = held.length > 0;
}

async function releaseClaim(id) {
  try {
    await post(`claims/${id}/release`, {});
    toast('Released');
  } catch (e) { toast(e.message, 'error'); }
  refreshStatus();
}

async function claimForMe(ev) {
  ev.preventDefault();
  const paths = $('claim-paths').value.split(',').map((p) => p.trim()).filter(Boolean);
  if (!paths.length) return;
  try {
    await post('claims', { paths, reason: $('claim-reason').value, ttlMinutes: Number($('claim-minutes').value) || undefined });
    toast('Claimed: agents will not edit these files');
    $('claim-paths').value = '';
  } catch (e) { toast(e.message, 'error'); }
  refreshStatus();
}

function fillSelect(select, options) {
  const keep = select.value;
  const first = select.options[0];
  select.replaceChildren(first, ...options.map(([v, t]) => h('option', { value: v }, t)));
  select.value = options.some(([v]) => v === keep) ? keep : '';
}

function renderAutomation(a) {
  const box = $('automation');
  if (!a) {
    box.replaceChildren(h('p', { class: 'muted' }, 'No automation policy. Start the bridge with --automation-policy FILE (see docs/automation.md).'));
    return;
  }
  box.replaceChildren(
    h('p', {}, h('span', { class: 'mono' }, a.policy), ` · ${a.firedLastHour} / ${a.maxTasksPerHour} firings this hour · ${a.skipped} skipped`,
      a.quiet ? h('span', { class: 'pill warn' }, 'quiet: automation work in flight') : null,
      a.lastReloadError ? h('span', { class: 'bad' }, ` policy edit refused: ${a.lastReloadError}`) : null),
    h('table', { class: 'table compact' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Hook'), h('th', {}, 'Action'), h('th', {}, 'Fired'), h('th', {}, 'Last fired'), h('th', {}, 'Last skipped'))),
      h('tbody', {}, a.hooks.map((k) => h('tr', {},
        h('td', { class: 'mono' }, k.name),
        h('td', {}, k.action),
        h('td', {}, k.fired),
        h('td', {}, k.lastFired ? `${k.lastFired.subject} → ${k.lastFired.result}${k.lastFired.task ? ' (' + k.lastFired.task + ')' : ''}` : '—'),
        h('td', {}, k.lastSkip ? `${k.lastSkip.kind}: ${k.lastSkip.subject || ''}` : '—'),
      )))),
  );
}

async function refreshStatus() {
  try {
    renderStatus(await api('status'));
  } catch (e) {
    if (e.message !== 'signed out') toast(`Status: ${e.message}`, 'error');
  }
}

// ---------------------------------------------------------------- charts

const charts = { samples: [] };

function drawBars(canvas, values, colors, unit) {
  const ctx = canvas.getContext('2d');
  const dpr = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || canvas.width;
  const height = canvas.clientHeight || canvas.height;
  canvas.width = width * dpr;
  canvas.height = height * dpr;
  ctx.scale(dpr, dpr);
  ctx.clearRect(0, 0, width, height);
  const styles = getComputedStyle(document.body);
  const grid = styles.getPropertyValue('--line').trim() || '#333';
  const text = styles.getPropertyValue('--muted').trim() || '#888';
  const top = Math.max(1, ...values.map((v) => v.reduce((a, b) => a + b, 0)));
  const step = 10 ** Math.floor(Math.log10(top));
  const max = [1, 2, 5, 10].map((m) => m * step).find((m) => m >= top);
  ctx.strokeStyle = grid;
  ctx.fillStyle = text;
  ctx.font = '11px system-ui, sans-serif';
  for (const f of [0, 0.5, 1]) {
    const y = height - 16 - f * (height - 28);
    ctx.beginPath(); ctx.moveTo(32, y); ctx.lineTo(width, y); ctx.stroke();
    const label = max * f;
    ctx.fillText((Number.isInteger(label) ? String(label) : label.toFixed(1)) + (unit || ''), 0, y + 4);
  }
  const n = Math.max(values.length, 60);
  const w = (width - 34) / n;
  values.forEach((stack, i) => {
    let y = height - 16;
    stack.forEach((v, j) => {
      const bar = (v / max) * (height - 28);
      ctx.fillStyle = colors[j];
      ctx.fillRect(34 + (n - values.length + i) * w, y - bar, Math.max(1, w - 1), bar);
      y -= bar;
    });
  });
}

function renderCharts() {
  const samples = charts.samples;
  const styles = getComputedStyle(document.body);
  const accent = styles.getPropertyValue('--accent').trim() || '#6aa7ff';
  const bad = styles.getPropertyValue('--bad').trim() || '#f06';
  const calls = samples.map((s) => {
    const all = s.tools.reduce((a, t) => a + t.calls, 0);
    const failed = s.tools.reduce((a, t) => a + t.failed, 0);
    return [all - failed, failed];
  });
  const latency = samples.map((s) => {
    const n = s.tools.reduce((a, t) => a + t.calls, 0);
    const sec = s.tools.reduce((a, t) => a + t.seconds, 0);
    return [n ? (sec / n) * 1000 : 0];
  });
  drawBars($('chart-calls'), calls, [accent, bad], '');
  drawBars($('chart-latency'), latency, [accent], '');
  const per = new Map();
  for (const s of samples) for (const t of s.tools) {
    const p = per.get(t.tool) || { calls: 0, failed: 0, seconds: 0 };
    p.calls += t.calls; p.failed += t.failed; p.seconds += t.seconds;
    per.set(t.tool, p);
  }
  const rows = [...per.entries()].sort((a, b) => b[1].calls - a[1].calls).slice(0, 12);
  $('tool-table').tBodies[0].replaceChildren(...rows.map(([tool, p]) => h('tr', {},
    h('td', { class: 'mono' }, tool), h('td', {}, p.calls), h('td', { class: p.failed ? 'bad' : '' }, p.failed),
    h('td', {}, (p.seconds / p.calls * 1000).toFixed(1)))));
  if (!rows.length) $('tool-table').tBodies[0].replaceChildren(h('tr', {}, h('td', { colSpan: 4, class: 'muted' }, 'No tool call in the last hour yet.')));
}

async function refreshSamples() {
  try {
    charts.samples = (await api('samples')).samples;
    if (state.view === 'overview') renderCharts();
  } catch { /* the next round tries again */ }
}

// ---------------------------------------------------------------- timeline

/** A virtual list: only the rows in view exist in the DOM, so thousands stay fast. */
const timeline = {
  rowHeight: 30,
  max: 20000,
  entries: [], // newest last
  shown: [], // indexes into entries, newest first
  tools: new Set(),
  lastId: 0,
  pending: false,
  /** Live entries that came before the history was loaded; added after it. */
  early: [],
  loaded: false,

  matches(e) {
    const agent = $('f-agent').value;
    const tool = $('f-tool').value;
    const life = $('f-life').checked;
    const text = $('f-text').value.trim().toLowerCase();
    if (e.kind === 'lifecycle' && !life) return false;
    if (tool && e.tool !== tool) return false;
    if (agent && e.sessionId !== agent) return false;
    if (text) {
      const hay = `${e.tool || e.event} ${e.summary || e.detail || ''} ${e.status || ''} ${agentLabel(e.sessionId)}`.toLowerCase();
      if (!hay.includes(text)) return false;
    }
    return true;
  },

  /** The history (once, at start); then the live entries that came meanwhile. */
  load(history) {
    this.loaded = true;
    this.add([...history, ...this.early].sort((a, b) => a.id - b.id));
    this.early = [];
  },

  /** A live entry; kept aside until the history is in (or it would hide it). */
  live(e) {
    if (this.loaded) this.add([e]);
    else this.early.push(e);
  },

  add(list) {
    let fresh = false;
    for (const e of list) {
      if (e.id <= this.lastId) continue;
      this.lastId = e.id;
      this.entries.push(e);
      if (e.tool && !this.tools.has(e.tool)) { this.tools.add(e.tool); fresh = true; }
    }
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
    if (fresh) fillSelect($('f-tool'), [...this.tools].sort().map((t) => [t, t]));
    this.refilter();
  },

  refilter() {
    const shown = [];
    for (let i = this.entries.length - 1; i >= 0; i--) if (this.matches(this.entries[i])) shown.push(i);
    const box = $('timeline');
    // Keep what the reader looks at in place when new rows arrive above it.
    const added = shown.length - this.shown.length;
    this.shown = shown;
    if (box.scrollTop > 0 && added > 0) box.scrollTop += added * this.rowHeight;
    $('t-count').textContent = `${shown.length} of ${this.entries.length} entries`;
    this.schedule();
  },

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => { this.pending = false; this.render(); });
  },

  render() {
    if (state.view !== 'timeline') return;
    const box = $('timeline');
    const spacer = box.firstElementChild;
    spacer.style.height = `${this.shown.length * this.rowHeight}px`;
    const first = Math.max(0, Math.floor(box.scrollTop / this.rowHeight) - 10);
    const last = Math.min(this.shown.length, first + Math.ceil(box.clientHeight / this.rowHeight) + 20);
    const rows = [];
    for (let i = first; i < last; i++) {
      const row = this.row(this.entries[this.shown[i]]);
      row.style.transform = `translateY(${i * this.rowHeight}px)`;
      rows.push(row);
    }
    box.replaceChildren(spacer, ...rows);
    if (!this.shown.length) box.append(h('p', { class: 'empty vlist-empty' }, this.entries.length ? 'No entry matches the filter.' : 'Nothing happened yet.'));
  },

  row(e) {
    if (e.kind === 'lifecycle') {
      return h('div', { class: 'trow life', 'data-id': e.id },
        h('span', { class: 't-time' }, clock(e.timestamp)),
        h('span', { class: 't-agent' }, e.sessionId ? agentLabel(e.sessionId) : 'bridge'),
        h('span', { class: 't-what' }, e.event.replaceAll('_', ' ')),
        h('span', { class: 't-status' }, ''),
        h('span', { class: 't-ms' }, ''),
        h('span', { class: 't-detail', title: e.detail }, e.detail));
    }
    return h('div', { class: `trow call ${e.status}${e.native ? ' native' : ''}`, 'data-id': e.id },
      h('span', { class: 't-time' }, clock(e.timestamp)),
      h('span', { class: 't-agent' }, agentLabel(e.sessionId)),
      h('span', { class: 't-what mono', title: e.native ? 'the agent\'s own tool, seen through its hooks' : 'a bridge tool' }, e.native ? `${e.tool} ◦` : e.tool),
      h('span', { class: `t-status ${e.status}` }, e.status),
      h('span', { class: 't-ms' }, `${e.durationMs} ms`),
      h('span', { class: 't-detail', title: e.summary }, e.summary));
  },
};

// ---------------------------------------------------------------- tasks

function taskOrigin(t) {
  return t.origin.kind === 'automation' ? `automation: ${t.origin.hook}` : agentLabel(t.origin.sessionId);
}

async function refreshTasks() {
  let tasks;
  try {
    tasks = await api('tasks');
  } catch { return; }
  for (const t of tasks) {
    const before = state.taskStatus.get(t.id);
    const final = !['pending', 'running'].includes(t.status);
    if (before && ['pending', 'running'].includes(before) && final) {
      notify(`Task ${t.status}`, `${t.prompt.split('\n')[0].slice(0, 80)}`);
    }
    state.taskStatus.set(t.id, t.status);
  }
  state.tasks = tasks;
  setBadge('badge-tasks', tasks.filter((t) => t.status === 'running' || t.status === 'pending').length);
  const list = $('task-list');
  list.replaceChildren(...[...tasks].reverse().map((t) => h('li', {
    class: `item ${t.id === state.selectedTask ? 'selected' : ''}`, 'data-task': t.id,
    onclick: () => { location.hash = `task-${t.id}`; },
  },
  h('div', { class: 'row' }, h('span', { class: `pill ${t.status}` }, t.status), h('span', { class: 'muted small' }, taskOrigin(t)), h('span', { class: 'muted small right' }, ago(t.createdAt))),
  h('div', { class: 'ellipsis' }, t.prompt.split('\n')[0]))));
  if (!tasks.length) list.replaceChildren(h('li', { class: 'empty' }, 'No Claude task yet. Agents start them with runClaudeTask; automation hooks too.'));
}

function selectTask(id) {
  if (state.selectedTask === id && state.taskStream) return;
  state.selectedTask = id;
  if (state.taskStream) state.taskStream.close();
  for (const li of document.querySelectorAll('#task-list li')) li.classList.toggle('selected', li.dataset.task === id);
  const out = h('pre', { class: 'output', id: 'task-output' });
  const head = h('div', { class: 'row' });
  const detail = $('task-detail');
  detail.replaceChildren(head, out);
  const stream = new EventSource(`/ui/api/tasks/${encodeURIComponent(id)}/output`);
  state.taskStream = stream;
  stream.addEventListener('task', (ev) => {
    const t = JSON.parse(ev.data);
    const running = t.status === 'running' || t.status === 'pending';
    fill(head,
      h('span', { class: `pill ${t.status}`, id: 'task-status' }, t.status),
      h('span', { class: 'mono small' }, t.id),
      h('span', { class: 'muted small' }, taskOrigin(t)),
      h('span', { class: 'spacer' }),
      running ? h('button', { type: 'button', class: 'danger', id: 'task-cancel', onclick: () => cancelTask(t.id) }, 'Cancel') : null);
    detail.insertBefore(h('p', { class: 'prompt' }, t.prompt), out);
    out.textContent = t.output + (t.error ? `\n[error] ${t.error}` : '');
  });
  stream.addEventListener('output', (ev) => {
    out.textContent += JSON.parse(ev.data) + '\n';
    out.scrollTop = out.scrollHeight;
  });
  stream.addEventListener('end', () => {
    stream.close();
    if (state.taskStream === stream) state.taskStream = null;
    refreshTasks().then(() => {
      const t = state.tasks.find((x) => x.id === id);
      const pill = $('task-status');
      if (t && pill) { pill.textContent = t.status; pill.className = `pill ${t.status}`; }
      const cancel = $('task-cancel');
      if (cancel) cancel.remove();
    });
  });
  stream.onerror = () => { stream.close(); };
}

async function cancelTask(id) {
  try {
    await post(`tasks/${encodeURIComponent(id)}/cancel`);
    toast('Task cancelled');
    refreshTasks();
  } catch (e) { toast(e.message, 'error'); }
}

// ---------------------------------------------------------------- reviews

async function refreshReviews() {
  try {
    state.reviews = await api('reviews');
  } catch { return; }
  setBadge('badge-reviews', state.reviews.length);
  $('review-list').replaceChildren(...state.reviews.map((r) => h('li', {
    class: `item ${state.review && state.review.id === r.id ? 'selected' : ''}`, 'data-review': r.id,
    onclick: () => { location.hash = `review-${r.id}`; },
  }, h('div', {}, r.title), h('div', { class: 'muted small' }, `${agentLabel(r.sessionId)} · ${r.references} references · ${ago(r.createdAt)}`))));
  if (!state.reviews.length) $('review-list').replaceChildren(h('li', { class: 'empty' }, 'No review yet.'));
  openNewestReview();
}

const FATE_TEXT = {
  kept: 'unchanged',
  moved: 'moved with the code',
  stale: 'stale: the lines changed since the review',
  gone: 'stale: the file is gone',
  outOfRange: 'past the end of the file the review saw',
};

async function openReview(id, keepExcerpt = false) {
  let r;
  try {
    r = await api(`reviews/${id}`);
  } catch (e) { toast(e.message, 'error'); return; }
  state.review = r;
  for (const li of document.querySelectorAll('#review-list li')) li.classList.toggle('selected', Number(li.dataset.review) === id);
  $('review-head').replaceChildren(h('div', { class: 'muted small' },
    `Review ${r.id} by ${agentLabel(r.sessionId)} · ${new Date(r.createdAt).toLocaleString()}`,
    r.baseRef ? ` · lines as of ${r.baseRef}` : ''));
  const body = $('review-body');
  // The bridge rendered and sanitised this HTML (raw HTML in the review became text).
  body.innerHTML = r.html;
  for (const a of body.querySelectorAll('a.ref')) {
    const ref = r.refs[Number(a.dataset.ref)];
    if (!ref) continue;
    a.classList.add(ref.now.fate);
    const now = ref.now.start === ref.start && ref.now.end === ref.end ? '' : ` → now ${ref.now.start}${ref.now.end !== ref.now.start ? '-' + ref.now.end : ''}`;
    a.title = `${ref.path}:${ref.start}${ref.end !== ref.start ? '-' + ref.end : ''}${now} (${FATE_TEXT[ref.now.fate]})`;
    a.addEventListener('click', (ev) => { ev.preventDefault(); showReference(Number(a.dataset.ref), true); });
  }
  for (const a of body.querySelectorAll('a[href^="http"]')) { a.target = '_blank'; a.rel = 'noreferrer noopener'; }
  $('review-commit').hidden = false;
  if (!keepExcerpt || $('commit-message').dataset.review !== String(r.id)) {
    $('commit-message').value = r.commitMessage;
    $('commit-message').dataset.review = String(r.id);
    $('commit-result').textContent = '';
  }
  if (keepExcerpt && state.refIndex !== null) showReference(state.refIndex, false);
  else $('excerpt').replaceChildren(h('p', { class: 'empty' }, 'Click a reference to see the code it points at.'));
}

async function showReference(index, openEditor) {
  const r = state.review;
  if (!r) return;
  state.refIndex = index;
  for (const a of document.querySelectorAll('#review-body a.ref')) a.classList.toggle('current', Number(a.dataset.ref) === index);
  let x;
  try {
    x = await api(`reviews/${r.id}/excerpt?ref=${index}`);
  } catch (e) { toast(e.message, 'error'); return; }
  const fate = x.now.fate;
  const span = (a, b) => `${a}${b !== a ? '-' + b : ''}`;
  // A stale reference shows the lines it was written for, and where they were now.
  const where = x.from === 'review'
    ? `${x.path}:${span(x.written.start, x.written.end)}`
    : `${x.path}:${span(x.now.start, x.now.end)}`;
  const agents = (state.status ? state.status.sessions : []).filter((s) => s.connected);
  const target = h('select', { id: 'mention-target', 'aria-label': 'Send to' },
    h('option', { value: '' }, 'all agents'),
    agents.map((s) => h('option', { value: s.id }, `${s.client || 'agent'} (${s.id.slice(0, 8)})`)));
  const lines = h('div', { class: 'code', id: 'excerpt-lines' }, x.lines.map((l) => h('div', { class: `line ${l.hit ? 'hit' : ''}`, 'data-n': l.n },
    h('span', { class: 'ln' }, l.n), h('span', { class: 'lt' }, l.text))));
  fill($('excerpt'),
    h('div', { class: 'excerpt-head' }, h('span', { class: 'mono', id: 'excerpt-where' }, where), h('span', { class: `pill ${fate}` }, FATE_TEXT[fate])),
    x.from === 'review' ? h('p', { class: 'warn small' }, fate === 'gone'
      ? 'The file is gone; showing the lines as the review saw them.'
      : `Showing the lines as the review saw them; they were around line ${x.now.start} now.`) : null,
    lines,
    h('div', { class: 'row wrap' },
      h('button', { type: 'button', class: 'ghost', onclick: () => openInEditor({ review: r.id, ref: index }) }, 'Open in editor'),
      h('button', { type: 'button', id: 'send-ref', onclick: () => sendMention({ review: r.id, ref: index }) }, 'Send to agent'),
      target),
    h('p', { class: 'muted small' }, 'Select lines above to send only those.'));
  const hit = lines.querySelector('.hit');
  if (hit) hit.scrollIntoView({ block: 'center' });
  if (openEditor && state.status && state.status.extension.connected) openInEditor({ review: r.id, ref: index }, true);
}

/** The line range of the text selected in the excerpt, if any. */
function selectedLines() {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed) return null;
  const lineOf = (node) => (node.nodeType === 1 ? node : node.parentElement)?.closest('.line');
  const a = lineOf(sel.anchorNode);
  const b = lineOf(sel.focusNode);
  if (!a || !b || !$('excerpt-lines').contains(a)) return null;
  const [s, e] = [Number(a.dataset.n), Number(b.dataset.n)].sort((x, y) => x - y);
  return { start: s, end: e };
}

async function openInEditor(place, quiet = false) {
  try {
    const answer = await post('open', place);
    if (!quiet || answer.opened) toast(answer.opened ? `Opened ${answer.file.split('/').pop()}:${answer.line} in the editor` : answer.reason, answer.opened ? 'info' : 'warn');
  } catch (e) { toast(e.message, 'error'); }
}

async function sendMention(place) {
  const lines = selectedLines();
  const body = lines ? { path: state.review.refs[state.refIndex].path, start: lines.start, end: lines.end } : { ...place };
  const target = $('mention-target');
  if (target && target.value) body.sessionId = target.value;
  try {
    const answer = await post('mention', body);
    const place = `@${answer.filePath.split('/').pop()}#L${answer.lineStart}-${answer.lineEnd}`;
    toast(answer.sent ? `Sent ${place}` : `${place}: ${answer.reason}`);
  } catch (e) { toast(e.message, 'error'); }
}

async function commitReview() {
  const r = state.review;
  if (!r) return;
  $('commit-result').textContent = 'Committing…';
  try {
    const answer = await post(`reviews/${r.id}/commit`, { message: $('commit-message').value });
    $('commit-result').textContent = `Committed ${answer.commit.slice(0, 10)}`;
    toast('Committed');
  } catch (e) {
    $('commit-result').textContent = e.message;
    toast(e.message, 'error');
  }
}

// ---------------------------------------------------------------- diffs

async function refreshDiffs() {
  try {
    const diffs = await api('diffs');
    const current = state.diffs[state.diffAt];
    state.diffs = diffs;
    const same = current ? diffs.findIndex((d) => d.id === current.id) : -1;
    state.diffAt = same >= 0 ? same : Math.min(state.diffAt, Math.max(0, diffs.length - 1));
    if (same < 0) state.editing = false;
    setBadge('badge-diffs', diffs.length);
    if (diffs.length && !current) notify('A diff waits for you', `${diffs[0].tabName}`);
    if (state.view === 'diffs' && (same < 0 || !state.editing)) renderDiff();
  } catch { /* next event */ }
}

/** Side-by-side rows from the line diff; long unchanged runs fold. */
function diffRows(d) {
  const old = d.original.split('\n');
  const neu = d.proposed.split('\n');
  if (old[old.length - 1] === '') old.pop();
  if (neu[neu.length - 1] === '') neu.pop();
  const rows = [];
  const row = (cls, o, n) => rows.push(h('tr', { class: cls },
    h('td', { class: 'ln' }, o === null ? '' : o + 1), h('td', { class: 'lt old' }, o === null ? '' : old[o]),
    h('td', { class: 'ln' }, n === null ? '' : n + 1), h('td', { class: 'lt new' }, n === null ? '' : neu[n])));
  for (const op of d.ops) {
    if (op.tag === 'equal') {
      const fold = op.oldLen > 8;
      for (let i = 0; i < op.oldLen; i++) {
        if (fold && i === 3) {
          const hidden = op.oldLen - 6;
          const tr = h('tr', { class: 'fold' }, h('td', { colSpan: 4 }, h('button', { type: 'button', class: 'link', onclick: () => {
            const extra = [];
            for (let j = 3; j < op.oldLen - 3; j++) {
              extra.push(h('tr', { class: 'eq' },
                h('td', { class: 'ln' }, op.oldStart + j + 1), h('td', { class: 'lt old' }, old[op.oldStart + j]),
                h('td', { class: 'ln' }, op.newStart + j + 1), h('td', { class: 'lt new' }, neu[op.newStart + j])));
            }
            tr.replaceWith(...extra);
          } }, `⋯ ${hidden} unchanged lines`)));
          rows.push(tr);
          i = op.oldLen - 4;
          continue;
        }
        row('eq', op.oldStart + i, op.newStart + i);
      }
    } else if (op.tag === 'delete') {
      for (let i = 0; i < op.oldLen; i++) row('del', op.oldStart + i, null);
    } else if (op.tag === 'insert') {
      for (let i = 0; i < op.newLen; i++) row('ins', null, op.newStart + i);
    } else {
      for (let i = 0; i < Math.max(op.oldLen, op.newLen); i++) {
        row('chg', i < op.oldLen ? op.oldStart + i : null, i < op.newLen ? op.newStart + i : null);
      }
    }
  }
  return rows;
}

function renderDiff() {
  const view = $('diff-view');
  const n = state.diffs.length;
  $('diff-pos').textContent = n ? `${state.diffAt + 1} of ${n}` : '';
  for (const id of ['diff-prev', 'diff-next', 'diff-accept-all', 'diff-reject-all']) $(id).disabled = n < (id.startsWith('diff-p') || id.startsWith('diff-n') ? 2 : 1);
  if (!n) {
    view.replaceChildren(h('p', { class: 'empty' }, 'No diff waits. While no editor is connected, an agent\'s proposed changes appear here to accept (after editing them, if you like) or reject.'));
    return;
  }
  const d = state.diffs[state.diffAt];
  const editor = h('textarea', { id: 'diff-edit', class: 'mono', rows: 18, spellcheck: false, 'aria-label': 'Proposed text' });
  editor.value = state.edits.get(d.id) ?? d.proposed;
  editor.addEventListener('input', () => state.edits.set(d.id, editor.value));
  editor.hidden = !state.editing;
  const table = h('table', { class: 'diff' },
    h('colgroup', {}, h('col', { class: 'ln' }), h('col', {}), h('col', { class: 'ln' }), h('col', {})),
    h('thead', {}, h('tr', {}, h('th', { colSpan: 2 }, 'Now'), h('th', { colSpan: 2 }, 'Proposed'))), h('tbody', {}, diffRows(d)));
  table.hidden = state.editing;
  view.replaceChildren(
    h('div', { class: 'diff-head' },
      h('div', {}, h('strong', { class: 'mono', id: 'diff-file' }, d.newFilePath), h('div', { class: 'muted small' }, `${agentLabel(d.sessionId)} · tab "${d.tabName}" · ${ago(d.createdAt)}`),
        diffCheck(d)),
      h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'ghost', id: 'diff-edit-toggle', onclick: () => {
        state.editing = !state.editing;
        editor.hidden = !state.editing;
        table.hidden = state.editing;
        $('diff-edit-toggle').textContent = state.editing ? 'Show the diff' : 'Edit the proposed text';
      } }, state.editing ? 'Show the diff' : 'Edit the proposed text'),
      h('button', { type: 'button', class: 'danger', id: 'diff-reject', onclick: () => decideDiff(d, false) }, 'Reject'),
      h('button', { type: 'button', id: 'diff-accept', onclick: () => decideDiff(d, true, state.edits.get(d.id) ?? d.proposed) },
        state.edits.has(d.id) ? 'Accept with my edit' : 'Accept')),
    table, editor);
}

/** What the file's language server says of the proposal, once it answered. */
function diffCheck(d) {
  const c = d.check;
  if (!c) return h('div', { class: 'muted small', id: 'diff-check' }, '');
  const cls = c.errorsAdded > 0 ? 'bad' : (c.added.length ? 'warn' : 'muted');
  return h('div', { class: `small ${cls}`, id: 'diff-check', title: c.added.join('\n') }, `Language server: ${c.summary}`);
}

async function decideDiff(d, accept, content) {
  try {
    await post(`diffs/${d.id}`, accept ? { accept: true, content } : { accept: false });
    toast(accept ? `Accepted the change to ${d.newFilePath.split('/').pop()}` : 'Rejected');
    state.editing = false;
    state.edits.delete(d.id);
  } catch (e) { toast(e.message, 'error'); }
  await refreshDiffs();
  renderDiff();
}

/** A button whose action needs a second click within 4 s (it says so meanwhile): a
 * stray click on "Reject all" next to "Reject" decides nothing. */
function confirmSecond(button, asking, action) {
  if (button.dataset.armed) {
    clearTimeout(Number(button.dataset.armed));
    delete button.dataset.armed;
    button.textContent = button.dataset.label;
    action();
    return;
  }
  button.dataset.label = button.textContent;
  button.textContent = asking;
  button.dataset.armed = String(setTimeout(() => {
    delete button.dataset.armed;
    button.textContent = button.dataset.label;
  }, 4000));
}

async function decideAllDiffs(accept) {
  for (const d of [...state.diffs]) {
    try { await post(`diffs/${d.id}`, accept ? { accept: true, content: state.edits.get(d.id) ?? d.proposed } : { accept: false }); } catch { /* decided meanwhile */ }
    state.edits.delete(d.id);
  }
  toast(accept ? 'Accepted every diff' : 'Rejected every diff');
  await refreshDiffs();
  renderDiff();
}

// ---------------------------------------------------------------- approvals

async function refreshApprovals() {
  let list;
  try { list = await api('approvals'); } catch { return; }
  state.approvals = list;
  setBadge('badge-approvals', list.length);
  for (const a of list) {
    if (!state.knownApprovals.has(a.id)) notify(a.agent ? `${a.agent} asks for permission` : 'A task asks for approval', `${a.tool}: ${JSON.stringify(a.input).slice(0, 80)}`);
    state.knownApprovals.add(a.id);
  }
  const box = $('approval-list');
  if (!list.length) {
    box.replaceChildren(h('p', { class: 'empty' }, 'No tool request waits. Agents\' permission dialogs and tasks whose permission rule says "ask" wait here for you.'));
    return;
  }
  box.replaceChildren(...list.map((a) => h('article', { class: 'card approval', 'data-approval': a.id },
    h('div', { class: 'row' }, h('strong', {}, a.tool),
      h('span', { class: 'muted small' }, a.agent ? `${a.agent} · its terminal asks too; the first answer wins` : `task ${a.taskId} · ${a.rule}`),
      h('span', { class: 'spacer' }),
      h('span', { class: 'muted small countdown', 'data-deadline': a.deadline, 'data-agent': a.agent ? '1' : '' }, '')),
    h('pre', { class: 'output small' }, JSON.stringify(a.input, null, 2)),
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'danger', onclick: () => decideApproval(a.id, false) }, 'Deny'),
      h('button', { type: 'button', onclick: () => decideApproval(a.id, true) }, 'Allow')))));
  tickCountdowns();
}

function tickCountdowns() {
  for (const el of document.querySelectorAll('.countdown')) {
    const left = Math.max(0, Math.round((Number(el.dataset.deadline) - Date.now()) / 1000));
    el.textContent = el.dataset.agent ? `waits here ${left} s more` : `denied in ${left} s unless you decide`;
  }
}

// ---------------------------------------------------------------- changes

/** Words of `a` and `b` that differ, marked: two lists of [text, changed]. */
function wordDiff(a, b) {
  const x = a.split(/(\s+|\b)/).filter((t) => t !== '');
  const y = b.split(/(\s+|\b)/).filter((t) => t !== '');
  if (x.length * y.length > 40000) return [[[a, true]], [[b, true]]];
  const m = x.map(() => new Array(y.length + 1).fill(0));
  m.push(new Array(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) m[i][j] = x[i] === y[j] ? m[i + 1][j + 1] + 1 : Math.max(m[i + 1][j], m[i][j + 1]);
  }
  const l = [], r = [];
  let i = 0, j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) { l.push([x[i], false]); r.push([y[j], false]); i++; j++; }
    else if (j < y.length && (i >= x.length || m[i][j + 1] >= m[i + 1][j])) { r.push([y[j], true]); j++; }
    else { l.push([x[i], true]); i++; }
  }
  return [l, r];
}

function marked(parts) {
  return parts.map(([t, changed]) => (changed ? h('mark', {}, t) : t));
}

function hunkTable(hk) {
  const rows = [];
  const n = Math.max(hk.old.length, hk.new.length);
  for (let k = 0; k < n; k++) {
    const o = hk.old[k], nw = hk.new[k];
    let left = o === undefined ? '' : o.replace(/\n$/, ''), right = nw === undefined ? '' : nw.replace(/\n$/, '');
    let l = [left], r = [right];
    if (o !== undefined && nw !== undefined) [l, r] = wordDiff(left, right).map(marked);
    rows.push(h('tr', { class: o === undefined ? 'ins' : nw === undefined ? 'del' : 'chg' },
      h('td', { class: 'ln' }, o === undefined ? '' : String(hk.oldStart + k)), h('td', { class: 'old' }, ...[].concat(l)),
      h('td', { class: 'ln' }, nw === undefined ? '' : String(hk.newStart + k)), h('td', { class: 'new' }, ...[].concat(r))));
  }
  return h('table', { class: 'diff' }, h('colgroup', {}, h('col', { class: 'ln' }), h('col', {}), h('col', { class: 'ln' }), h('col', {})), h('tbody', {}, ...rows));
}

/** "1 hunk", "3 hunks". */
function hunks(n) {
  return n === 1 ? '1 hunk' : `${n} hunks`;
}

/** "line 4", "lines 4–6". */
function lineSpan(from, to) {
  return from === to ? `line ${from}` : `lines ${from}–${to}`;
}

async function refreshChanges() {
  let list;
  try { list = await api('changes'); } catch { return; }
  const open = list.flatMap((c) => c.hunks.filter((hk) => hk.state === 'open').map((hk) => ({ c, hk })));
  setBadge('badge-changes', open.length);
  const box = $('change-list');
  if (!open.length) {
    box.replaceChildren(h('p', { class: 'empty' }, 'No agent change waits for you. What agents write (their own Edit and Write, and the bridge\'s write tools) shows here, hunk by hunk, to keep or undo.'));
    return;
  }
  const agents = new Map();
  for (const x of open) {
    if (!agents.has(x.c.session)) agents.set(x.c.session, { agent: x.c.agent, files: new Map() });
    const files = agents.get(x.c.session).files;
    if (!files.has(x.c.file)) files.set(x.c.file, []);
    files.get(x.c.file).push(x);
  }
  box.replaceChildren(...[...agents].map(([session, a]) => h('section', { class: 'card change-agent', 'data-session': session },
    h('div', { class: 'row' }, h('strong', {}, a.agent), h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'danger', onclick: () => decideChanges('undo', { session }) }, 'Undo all of this agent'),
      h('button', { type: 'button', onclick: () => decideChanges('keep', { session }) }, 'Keep all')),
    ...[...a.files].map(([file, list]) => h('div', { class: 'change-file', 'data-file': file },
      h('div', { class: 'row' }, h('code', {}, file), h('span', { class: 'muted small' }, hunks(list.length)), h('span', { class: 'spacer' }),
        h('button', { type: 'button', class: 'ghost danger', onclick: () => decideChanges('undo', { file, session }) }, 'Undo file'),
        h('button', { type: 'button', class: 'ghost', onclick: () => decideChanges('keep', { file, session }) }, 'Keep file')),
      ...list.map(({ c, hk }) => h('article', { class: 'change-hunk', 'data-change': c.id, 'data-hunk': hk.index },
        h('div', { class: 'row' }, h('span', { class: 'muted small' }, `${c.tool} · ${lineSpan(hk.newStart, hk.newStart + Math.max(hk.new.length, 1) - 1)} · ${ago(c.at)}`), h('span', { class: 'spacer' }),
          h('button', { type: 'button', class: 'danger', onclick: () => decideChanges('undo', { change: c.id, hunk: hk.index }) }, 'Undo'),
          h('button', { type: 'button', onclick: () => decideChanges('keep', { change: c.id, hunk: hk.index }) }, 'Keep')),
        hunkTable(hk))))))));
}

async function decideChanges(what, which) {
  const reason = $('change-reason').value;
  try {
    const r = await post(`changes/${what}`, what === 'undo' ? { ...which, reason } : which);
    if (what === 'keep') toast(`Kept ${hunks(r.kept)}`);
    else if (r.declined.length) toast(`Not undone: ${r.declined.map((d) => `${d.file}: ${d.why}`).join('; ')}`, 'error');
    else toast(`Undone: ${hunks(r.undone.length)}; the agent is told`);
    // A reason is for one undo: the next one does not send it again unsaid.
    if (what === 'undo' && r.undone.length) $('change-reason').value = '';
  } catch (e) { toast(e.message, 'error'); }
  refreshChanges();
}

async function decideApproval(id, allow) {
  try {
    await post(`approvals/${id}`, { allow });
    toast(allow ? 'Allowed' : 'Denied');
  } catch (e) { toast(e.message, 'error'); }
  refreshApprovals();
}

// ---------------------------------------------------------------- notifications

function notify(title, body) {
  if (!('Notification' in window) || Notification.permission !== 'granted') return;
  if (!document.hidden) return;
  try { new Notification(`ide-bridge: ${title}`, { body }); } catch { /* not allowed here */ }
}

// ---------------------------------------------------------------- live stream

let reconnects = 0;

/** The live stream. The browser retries a dropped stream by itself, but not one that
 * was refused (a bridge shutting down answers 503): then this retries, backing off. */
function connectEvents() {
  if (state.leaving) return;
  const live = $('live');
  const events = new EventSource('/ui/api/events');
  state.events = events;
  events.addEventListener('hello', (ev) => {
    const hello = JSON.parse(ev.data);
    live.className = hello.liveActivity ? 'live on' : 'live partial';
    live.title = hello.liveActivity ? 'Live' : 'Live, but the timeline is not (too many streams)';
    if (reconnects > 0 || events.wasDown) resync();
    reconnects = 0;
    events.wasDown = false;
  });
  events.addEventListener('activity', (ev) => {
    const e = JSON.parse(ev.data);
    timeline.live(e);
    if (e.tool === 'runClaudeTask' || e.event === 'permission_decision') refreshTasks();
    if (e.kind === 'lifecycle' && /agent|session|editor|circuit|claim|refused/.test(e.event)) refreshStatus();
  });
  events.addEventListener('page', (ev) => {
    const p = JSON.parse(ev.data);
    if (p.kind === 'diffs') refreshDiffs();
    if (p.kind === 'approvals') refreshApprovals();
    if (p.kind === 'changes') refreshChanges();
    if (p.kind === 'reviews') refreshReviews();
    if (p.kind === 'reviewsMoved' && state.review && p.ids.includes(state.review.id)) openReview(state.review.id, true);
    refreshStatus();
  });
  events.onerror = async () => {
    live.className = 'live off';
    live.title = 'Reconnecting…';
    events.wasDown = true;
    if (events.readyState === EventSource.CLOSED) {
      reconnects += 1;
      setTimeout(connectEvents, Math.min(10000, 500 * 2 ** Math.min(reconnects, 5)));
    }
    // A signed-out browser gets 401: go to the sign-in page instead of retrying.
    try { await api('status'); } catch { /* api() redirects on 401 */ }
  };
}

/** After the stream was down: what happened meanwhile. */
async function resync() {
  const missed = await api(`activity?limit=5000&after=${timeline.lastId}`).catch(() => []);
  timeline.add(missed);
  await Promise.all([refreshStatus(), refreshTasks(), refreshReviews(), refreshDiffs(), refreshApprovals(), refreshChanges()]);
}

// ---------------------------------------------------------------- start

async function start() {
  window.addEventListener('hashchange', showView);
  for (const id of ['f-agent', 'f-tool', 'f-life']) $(id).addEventListener('change', () => timeline.refilter());
  $('f-text').addEventListener('input', () => timeline.refilter());
  $('timeline').addEventListener('scroll', () => timeline.schedule(), { passive: true });
  window.addEventListener('resize', () => { timeline.schedule(); if (state.view === 'overview') renderCharts(); });
  $('diff-prev').addEventListener('click', () => { state.diffAt = (state.diffAt + state.diffs.length - 1) % state.diffs.length; state.editing = false; renderDiff(); });
  $('diff-next').addEventListener('click', () => { state.diffAt = (state.diffAt + 1) % state.diffs.length; state.editing = false; renderDiff(); });
  $('diff-accept-all').addEventListener('click', () => decideAllDiffs(true));
  $('diff-reject-all').addEventListener('click', (ev) => confirmSecond(ev.currentTarget, `Reject all ${state.diffs.length}? Click again`, () => decideAllDiffs(false)));
  $('commit-btn').addEventListener('click', commitReview);
  $('claim-form').addEventListener('submit', claimForMe);
  $('signout').addEventListener('click', async () => {
    // The stream ends with the sign-in: stop listening first, then leave once.
    if (state.events) state.events.close();
    state.leaving = true;
    await fetch('/ui/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => {});
    state.leaving = false;
    leave();
  });
  const notifyButton = $('notify');
  if (!('Notification' in window)) notifyButton.hidden = true;
  else {
    const label = () => { notifyButton.textContent = Notification.permission === 'granted' ? 'Notifications on' : 'Notify me'; };
    label();
    notifyButton.addEventListener('click', async () => { await Notification.requestPermission(); label(); });
  }

  await refreshStatus();
  connectEvents();
  const [entries] = await Promise.all([api('activity?limit=5000').catch(() => []), refreshTasks(), refreshReviews(), refreshDiffs(), refreshApprovals(), refreshChanges(), refreshSamples()]);
  timeline.load(entries);
  showView();
  renderCharts();
  setInterval(() => { if (!document.hidden) refreshStatus(); }, 3000);
  setInterval(refreshSamples, 10000);
  setInterval(() => { tickCountdowns(); if (state.tasks.some((t) => t.status === 'running' || t.status === 'pending')) refreshTasks(); }, 1000);
  document.body.classList.add('ready');
}

start();
