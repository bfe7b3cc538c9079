// Timeline: admissions, preemptions, evictions and finishes across every workload, from the
// workloads' own event history (bounded per workload), newest first, with a per-minute strip.
import { h, listWorkloads, time } from './api.js';

const KINDS = [
  { key: 'admit', label: 'Admitted', color: '#1f9d55', test: (r) => r === 'Admitted' },
  { key: 'preempt', label: 'Preempted / evicted', color: '#d64545', test: (r) => /Preempt|Evict/.test(r) },
  { key: 'finish', label: 'Finished', color: '#667085', test: (r) => /Finished/.test(r) },
];

function strip(events) {
  const width = 1000;
  const height = 90;
  if (events.length === 0) return h('div', { class: 'muted' }, 'Nothing yet.');
  const times = events.map((e) => Date.parse(e.time));
  const start = Math.min(...times);
  const end = Math.max(...times, start + 60000, Date.now());
  const buckets = Math.min(60, Math.max(10, Math.ceil((end - start) / 60000)));
  const step = (end - start) / buckets;
  const counts = KINDS.map(() => new Array(buckets).fill(0));
  for (const e of events) {
    const i = Math.min(buckets - 1, Math.floor((Date.parse(e.time) - start) / step));
    counts[KINDS.findIndex((k) => k.key === e.kind)][i]++;
  }
  const max = Math.max(1, ...counts.flat());
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'strip');
  const bw = width / buckets / KINDS.length;
  counts.forEach((series, k) => series.forEach((n, i) => {
    if (n === 0) return;
    const rect = document.createElementNS(ns, 'rect');
    const bh = (n / max) * (height - 6);
    rect.setAttribute('x', i * (width / buckets) + k * bw);
    rect.setAttribute('y', height - bh);
    rect.setAttribute('width', Math.max(1, bw - 1));
    rect.setAttribute('height', bh);
    rect.setAttribute('fill', KINDS[k].color);
    const title = document.createElementNS(ns, 'title');
    title.textContent = `${n} ${KINDS[k].label.toLowerCase()} from ${time(new Date(start + i * step).toISOString())}`;
    rect.append(title);
    svg.append(rect);
  }));
  return h('div', {}, svg, h('div', { class: 'legend', style: 'justify-content:space-between' },
    h('span', {}, time(new Date(start).toISOString())),
    h('span', {}, KINDS.map((k) => h('span', { style: 'margin-left:12px' }, h('i', { style: `background:${k.color}` }), k.label))),
    h('span', {}, time(new Date(end).toISOString()))));
}

export async function renderTimeline(recent) {
  const workloads = await listWorkloads();
  const events = [];
  for (const w of workloads) {
    for (const e of w.status.events || []) {
      const kind = KINDS.find((k) => k.test(e.reason));
      if (!kind) continue;
      events.push({ ...e, kind: kind.key, ns: w.metadata.namespace, name: w.metadata.name });
    }
  }
  events.sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
  const shown = events.slice(0, 300);
  return h('div', {},
    h('h1', {}, 'Admission and preemption timeline'),
    h('section', { class: 'panel' }, strip(events)),
    h('section', { class: 'panel' },
      h('h2', {}, `Latest ${shown.length} of ${events.length} events`,
        h('span', { class: 'muted', style: 'font-weight:400' }, ` · ${recent.length} changes streamed since this page opened`)),
      h('ul', { class: 'events', 'data-testid': 'timeline' }, shown.map((e) => h('li', {},
        h('span', { class: 'muted' }, time(e.time)),
        h('span', { class: `reason ${e.kind}` }, e.reason),
        h('span', {}, h('a', { href: `#/workloads/${encodeURIComponent(e.ns)}/${encodeURIComponent(e.name)}` }, `${e.ns}/${e.name}`), ' ', e.message))))));
}
