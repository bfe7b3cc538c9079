// The dashboard shell: hash routing, and live updates from the server's event stream.
import { h, getJson } from './api.js';
import { renderOverview } from './overview.js';
import { renderWorkloads, renderWorkload } from './workloads.js';
import { renderTimeline } from './timeline.js';
import { renderTopology } from './topology.js';

const view = document.getElementById('view');
const live = document.getElementById('live');
// Recent changes seen on the stream (newest last), for the timeline's live strip.
export const recentEvents = [];

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query] = hash.split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'workloads' && parts.length === 3) {
    return { name: 'workloads', render: () => renderWorkload(parts[1], parts[2]) };
  }
  if (parts[0] === 'workloads') return { name: 'workloads', render: () => renderWorkloads(params) };
  if (parts[0] === 'timeline') return { name: 'timeline', render: () => renderTimeline(recentEvents) };
  if (parts[0] === 'topology') return { name: 'topology', render: () => renderTopology() };
  return { name: 'overview', render: () => renderOverview() };
}

let rendering = null;
let again = false;
// Renders the current route; a refresh asked for while one runs runs once after it.
async function refresh() {
  if (rendering) { again = true; return rendering; }
  const current = route();
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('active', a.dataset.view === current.name);
  }
  rendering = (async () => {
    try {
      const content = await current.render();
      // Keep what the user is typing: re-rendering replaces the inputs.
      const focused = document.activeElement && document.activeElement.id;
      const caret = focused && document.activeElement.selectionStart;
      view.replaceChildren(content);
      if (focused) {
        const el = document.getElementById(focused);
        if (el) { el.focus(); if (caret !== null && el.setSelectionRange) el.setSelectionRange(caret, caret); }
      }
      document.body.dataset.rendered = String(Date.now());
    } catch (error) {
      view.replaceChildren(h('div', { class: 'panel error', 'data-testid': 'error' }, String(error.message || error)));
    }
  })();
  await rendering;
  rendering = null;
  if (again) { again = false; refresh(); }
}

let timer = null;
function refreshSoon() {
  clearTimeout(timer);
  timer = setTimeout(refresh, 150);
}

function setLive(state, text) {
  live.className = `live ${state}`;
  live.querySelector('.text').textContent = text;
}

// EventSource reconnects by itself (the server asks for 1 s) and resumes from the last
// revision it saw, also across a tollgated restart; every (re)connect reloads the view so
// nothing missed while away stays stale.
function connect() {
  const events = new EventSource('/api/v1/events');
  events.addEventListener('open', () => { setLive('on', 'live'); refreshSoon(); });
  events.addEventListener('error', () => setLive('off', 'reconnecting'));
  events.addEventListener('workload', (e) => {
    const change = JSON.parse(e.data);
    if (change.type === 'BOOKMARK') return;
    change.seen = new Date().toISOString();
    recentEvents.push(change);
    if (recentEvents.length > 500) recentEvents.shift();
    document.body.dataset.lastRevision = String(change.revision);
    refreshSoon();
  });
  events.addEventListener('relist', () => refreshSoon());
}

// Who is signed in, and the sign-out form's anti-forgery token (only a session cookie from the
// sign-in page gets one; a bearer header or client certificate has nothing to sign out of).
async function showSession() {
  const session = await getJson('/api/v1/session').catch(() => null);
  if (!session || !session.logoutToken) return;
  const form = document.getElementById('signout');
  form.querySelector('.who').textContent = session.user;
  form.querySelector('input[name=csrf]').value = session.logoutToken;
  form.hidden = false;
}

window.addEventListener('hashchange', refresh);
refresh();
connect();
showSession();
