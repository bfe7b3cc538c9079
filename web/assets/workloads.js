// Workloads: the searchable, filterable list, and one workload's page (why it waits, its
// position, who holds the quota it needs, conditions and events).
import { h, listWorkloads, listObjects, getWorkload, stateName, age, time } from './api.js';

const STATES = ['', 'PENDING', 'QUOTA_RESERVED', 'ADMITTED', 'EVICTING', 'FINISHED'];

function badge(state) {
  const name = stateName(state);
  const words = name.toLowerCase().split('_').map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return h('span', { class: `badge ${name}` }, words.join(''));
}

// A quota-reserved workload waits for its admission checks: which, and why.
function waitingChecks(w) {
  return (w.status.admissionChecks || []).filter((c) => c.state !== 'Ready')
    .map((c) => `${c.name}: ${c.state}${c.message ? ` (${c.message})` : ''}`).join('; ');
}

function whyOf(w) {
  return stateName(w.status.state) === 'QUOTA_RESERVED' ? `Waiting for admission checks: ${waitingChecks(w)}` : (w.status.pendingMessage || '');
}

function checksPanel(w) {
  const checks = w.status.admissionChecks || [];
  if (checks.length === 0) return null;
  return h('section', { class: 'panel', 'data-testid': 'admission-checks' },
    h('h2', {}, 'Admission checks'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Check', 'State', 'Since', 'Retries', 'Message'].map((c) => h('th', {}, c)))),
      h('tbody', {}, checks.map((c) => h('tr', { 'data-testid': `check-${c.name}` },
        h('td', {}, c.name), h('td', {}, h('span', { class: `badge check-${c.state}` }, c.state)),
        h('td', {}, time(c.lastTransitionTime)), h('td', { class: 'num' }, c.retryCount || 0),
        h('td', {}, c.message || ''))))));
}

// MultiKueue (docs/multicluster.md): the state of the copy on each nominated or winning worker,
// as the manager's controller last saw it (status.multiKueueRemotes).
function remotesPanel(w) {
  const remotes = w.status.multiKueueRemotes || [];
  if (remotes.length === 0) return null;
  return h('section', { class: 'panel', 'data-testid': 'multikueue-workers' },
    h('h2', {}, 'MultiKueue workers'),
    h('table', {}, h('thead', {}, h('tr', {}, ['Worker', 'Copy'].map((c) => h('th', {}, c)))),
      h('tbody', {}, remotes.map((r) => h('tr', { 'data-testid': `remote-${r.cluster}` },
        h('td', {}, r.cluster + (r.cluster === w.status.clusterName ? ' (winner)' : '')),
        h('td', {}, h('span', { class: `badge remote-${r.state}` }, r.state)))))));
}

// MultiKueue (docs/multicluster.md): the worker cluster that admitted it, or the ones it was
// dispatched to while none has.
function workerCluster(w) {
  if (w.status.clusterName) return w.status.clusterName;
  const nominees = w.status.nominatedClusterNames || [];
  return nominees.length ? `nominated: ${nominees.join(', ')}` : '';
}

function setParam(params, key, value) {
  const next = new URLSearchParams(params);
  if (value) next.set(key, value); else next.delete(key);
  const query = next.toString();
  history.replaceState(null, '', `#/workloads${query ? `?${query}` : ''}`);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

export async function renderWorkloads(params) {
  const query = new URLSearchParams();
  for (const key of ['namespace', 'queue', 'clusterQueue', 'state']) {
    if (params.get(key)) query.set(key, params.get(key));
  }
  const [all, lqs] = await Promise.all([listWorkloads(query.toString() ? `?${query}` : ''), listObjects('localqueues').catch(() => [])]);
  // Where a pending workload would be admitted: its LocalQueue's ClusterQueue.
  const target = new Map(lqs.map((o) => [`${o.localQueue.metadata.namespace}/${o.localQueue.metadata.name}`, o.localQueue.spec.clusterQueue]));
  const search = (params.get('q') || '').toLowerCase();
  const shown = all.filter((w) => !search ||
    `${w.metadata.namespace}/${w.metadata.name} ${w.spec.queueName} ${(w.status.admission || {}).clusterQueue || ''}`.toLowerCase().includes(search));
  const namespaces = [...new Set(all.map((w) => w.metadata.namespace))].sort();
  if (params.get('namespace') && !namespaces.includes(params.get('namespace'))) namespaces.push(params.get('namespace'));

  const select = (id, key, options) => h('select', { id, 'data-testid': id, onchange: (e) => setParam(params, key, e.target.value) },
    options.map((o) => h('option', { value: o, selected: (params.get(key) || '') === o }, o || `any ${key === 'state' ? 'state' : key}`)));

  // A MultiKueue manager's workloads run on worker clusters: only then a column says which.
  const multiCluster = shown.some((w) => workerCluster(w));
  const columns = ['Namespace', 'Name', 'Queue', 'ClusterQueue', ...(multiCluster ? ['Worker cluster'] : []),
    'State', 'Priority', 'Age', 'Why'];
  return h('div', {},
    h('h1', {}, 'Workloads'),
    h('div', { class: 'filters' },
      h('input', { type: 'search', id: 'search', 'data-testid': 'search', placeholder: 'Search name, queue, ClusterQueue…',
        value: params.get('q') || '', oninput: (e) => setParam(params, 'q', e.target.value) }),
      select('filter-namespace', 'namespace', ['', ...namespaces]),
      select('filter-state', 'state', STATES),
      params.get('clusterQueue') ? h('span', { class: 'badge FINISHED' }, `ClusterQueue ${params.get('clusterQueue')} `,
        h('a', { href: '#', onclick: (e) => { e.preventDefault(); setParam(params, 'clusterQueue', ''); } }, '×')) : null,
      params.get('queue') ? h('span', { class: 'badge FINISHED' }, `LocalQueue ${params.get('queue')} `,
        h('a', { href: '#', onclick: (e) => { e.preventDefault(); setParam(params, 'queue', ''); } }, '×')) : null,
      h('span', { class: 'muted', style: 'align-self:center', 'data-testid': 'workload-count' }, `${shown.length} of ${all.length}`)),
    h('section', { class: 'panel' },
      h('table', { 'data-testid': 'workload-table' },
        h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c)))),
        h('tbody', {}, shown.map((w) => h('tr', { 'data-testid': `wl-row-${w.metadata.namespace}-${w.metadata.name}` },
          h('td', {}, w.metadata.namespace),
          h('td', {}, h('a', { href: `#/workloads/${encodeURIComponent(w.metadata.namespace)}/${encodeURIComponent(w.metadata.name)}` }, w.metadata.name)),
          h('td', {}, w.spec.queueName),
          h('td', {}, (w.status.admission || {}).clusterQueue ||
            h('span', { class: 'muted', title: 'the ClusterQueue of its LocalQueue' }, target.get(`${w.metadata.namespace}/${w.spec.queueName}`) || '')),
          multiCluster ? h('td', { 'data-testid': `wl-cluster-${w.metadata.namespace}-${w.metadata.name}` }, workerCluster(w)) : null,
          h('td', { 'data-testid': `wl-state-${w.metadata.namespace}-${w.metadata.name}` }, badge(w.status.state)),
          h('td', { class: 'num' }, w.status.priority),
          h('td', {}, age(w.metadata.creationTimestamp)),
          h('td', { class: 'muted', title: whyOf(w) }, h('div', { class: 'why-cell' }, whyOf(w)))))))));
}

function eventClass(reason) {
  if (/Admitted|QuotaReserved/.test(reason)) return 'admit';
  if (/Preempt|Evict/.test(reason)) return 'preempt';
  if (/Finished/.test(reason)) return 'finish';
  return '';
}

function usage(w) {
  const parts = [];
  for (const ps of (w.status.admission || {}).podSetAssignments || []) {
    for (const [resource, amount] of Object.entries(ps.resourceUsage || {}).sort()) {
      parts.push(`${resource} ${amount} (${(ps.flavors || {})[resource] || ''})`);
    }
  }
  return parts.join(', ');
}

export async function renderWorkload(ns, name) {
  const data = await getWorkload(ns, name);
  const w = data.workload;
  const pending = data.pending;
  const requests = (w.spec.podSets || []).map((ps) =>
    `${ps.count} × {${Object.entries(ps.requests || {}).map(([r, q]) => `${r}: ${q}`).join(', ')}}`).join('; ');
  return h('div', {},
    h('h1', {}, h('a', { href: '#/workloads' }, 'Workloads'), ' / ', `${ns}/${name} `, badge(w.status.state)),
    stateName(w.status.state) === 'PENDING' ? h('section', { class: 'why', 'data-testid': 'why-pending' },
      h('div', { style: 'font-weight:600;margin-bottom:4px' }, 'Why is it waiting?'),
      h('div', { 'data-testid': 'pending-message' }, w.status.pendingMessage || 'Waiting for the next scheduling cycle.'),
      h('div', { class: 'muted', style: 'margin-top:6px', 'data-testid': 'position' }, pending
        ? `Position ${pending.positionInClusterQueue + 1} in ClusterQueue ${pending.clusterQueue}, ` +
          `${pending.positionInLocalQueue + 1} in LocalQueue ${pending.localQueue}.`
        : 'Not queued: it waits for what the message above names.')) : null,
    stateName(w.status.state) === 'QUOTA_RESERVED' ? h('section', { class: 'why', 'data-testid': 'why-quota-reserved' },
      h('div', { style: 'font-weight:600;margin-bottom:4px' }, 'Quota reserved: why is it not running yet?'),
      h('div', {}, `Waiting for admission checks: ${waitingChecks(w)}`)) : null,
    h('div', { class: 'grid' },
      h('section', { class: 'panel' },
        h('h2', {}, 'Workload'),
        h('div', { class: 'kv' },
          h('div', {}, 'LocalQueue'), h('div', {}, w.spec.queueName),
          h('div', {}, 'ClusterQueue'), h('div', {}, (w.status.admission || {}).clusterQueue || (pending ? pending.clusterQueue : '—')),
          ...(workerCluster(w) ? [h('div', {}, 'Worker cluster'), h('div', { 'data-testid': 'worker-cluster' }, workerCluster(w))] : []),
          h('div', {}, 'Priority'), h('div', {}, `${w.status.priority}${w.spec.priorityClassName ? ` (${w.spec.priorityClassName})` : ''}`),
          h('div', {}, 'Requests'), h('div', {}, requests),
          h('div', {}, 'Admission'), h('div', {}, usage(w) || '—'),
          h('div', {}, 'Created'), h('div', {}, time(w.metadata.creationTimestamp)),
          h('div', {}, 'Preemptions'), h('div', {}, `${w.status.preemptionCount}${w.status.lastPreemptionReason ? ` (last: ${w.status.lastPreemptionReason})` : ''}`))),
      h('section', { class: 'panel' },
        h('h2', {}, 'Conditions'),
        h('table', {}, h('thead', {}, h('tr', {}, ['Type', 'Status', 'Reason', 'Since'].map((c) => h('th', {}, c)))),
          h('tbody', {}, (w.status.conditions || []).map((c) => h('tr', { title: c.message },
            h('td', {}, c.type), h('td', {}, c.status), h('td', {}, c.reason), h('td', {}, time(c.lastTransitionTime)))))))),
    checksPanel(w),
    remotesPanel(w),
    data.quotaHolders ? h('section', { class: 'panel', 'data-testid': 'quota-holders' },
      h('h2', {}, `Who holds the quota ${data.cohort ? `in cohort ${data.cohort}` : `of ${pending.clusterQueue}`}`),
      data.quotaHolders.length === 0 ? h('div', { class: 'muted' }, 'Nobody: the quota it needs does not exist or its queue is inactive.') :
        h('table', {}, h('thead', {}, h('tr', {}, ['Workload', 'ClusterQueue', 'Priority', 'State', 'Holds'].map((c) => h('th', {}, c)))),
          h('tbody', {}, data.quotaHolders.map((q) => h('tr', {},
            h('td', {}, h('a', { href: `#/workloads/${encodeURIComponent(q.metadata.namespace)}/${encodeURIComponent(q.metadata.name)}` }, `${q.metadata.namespace}/${q.metadata.name}`)),
            h('td', {}, q.status.admission.clusterQueue), h('td', { class: 'num' }, q.status.priority),
            h('td', {}, badge(q.status.state)), h('td', {}, usage(q))))))) : null,
    h('section', { class: 'panel' },
      h('h2', {}, 'Events'),
      h('ul', { class: 'events', 'data-testid': 'events' }, [...(w.status.events || [])].reverse().map((e) => h('li', {},
        h('span', { class: 'muted' }, time(e.time)), h('span', { class: `reason ${eventClass(e.reason)}` }, e.reason), h('span', {}, e.message))))));
}
