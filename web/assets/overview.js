// Queues: the cohort tree with quota, usage and borrowing bars, and the ClusterQueue and
// LocalQueue tables.
import { h, listObjectsIfAllowed, parseQuantity, formatQuantity } from './api.js';

// Per "flavor/resource": nominal, borrowing limit, lending limit, used, borrowed.
function quotaRows(spec, status) {
  const rows = new Map();
  for (const group of spec.resourceGroups || []) {
    for (const flavor of group.flavors || []) {
      for (const r of flavor.resources || []) {
        rows.set(`${flavor.name}/${r.name}`, {
          flavor: flavor.name, resource: r.name,
          nominal: parseQuantity(r.nominalQuota),
          borrowingLimit: r.borrowingLimit === undefined ? Infinity : parseQuantity(r.borrowingLimit),
          used: 0, borrowed: 0,
        });
      }
    }
  }
  for (const flavor of (status && status.flavorsUsage) || []) {
    for (const r of flavor.resources || []) {
      const key = `${flavor.name}/${r.name}`;
      const row = rows.get(key) || { flavor: flavor.name, resource: r.name, nominal: 0, borrowingLimit: Infinity, used: 0, borrowed: 0 };
      row.used = parseQuantity(r.total);
      row.borrowed = parseQuantity(r.borrowed);
      rows.set(key, row);
    }
  }
  return [...rows.values()];
}

// `room` maps "flavor/resource" to what the queue could reach by borrowing (its cohort's total
// when its borrowing is unlimited), which sets each bar's full width.
function bars(rows, testPrefix, room = new Map()) {
  if (rows.length === 0) return h('div', { class: 'muted' }, 'no quota');
  const flavors = new Set(rows.map((r) => r.flavor));
  return h('div', { class: 'bars' }, rows.map((r) => {
    const reach = Number.isFinite(r.borrowingLimit) ? r.nominal + r.borrowingLimit
      : (room.get(`${r.flavor}/${r.resource}`) ?? r.nominal + r.borrowed);
    const ceiling = Math.max(reach, r.used, r.nominal, 1e-9);
    const own = Math.min(r.used - r.borrowed, r.nominal);
    const pct = (v) => `${Math.max(0, Math.min(100, (v / ceiling) * 100))}%`;
    return [
      h('div', { class: 'label', title: `flavor ${r.flavor}, resource ${r.resource}` }, r.resource,
        flavors.size > 1 ? h('span', { class: 'muted' }, ` · ${r.flavor}`) : null),
      h('div', { class: 'bar', title: `used ${formatQuantity(r.resource, r.used)} of nominal ${formatQuantity(r.resource, r.nominal)}, borrowed ${formatQuantity(r.resource, r.borrowed)}` },
        h('div', { class: 'u', style: `width:${pct(own)}` }),
        h('div', { class: 'b', style: `left:${pct(own)};width:${pct(r.borrowed)}` }),
        h('div', { class: 'nominal', style: `left:${pct(r.nominal)}` })),
      h('div', { class: 'value', 'data-testid': `${testPrefix}-${r.flavor}-${r.resource}` },
        `${formatQuantity(r.resource, r.used)} / ${formatQuantity(r.resource, r.nominal)}`,
        r.borrowed > 0 ? h('span', { style: 'color:var(--borrowed)' }, ` +${formatQuantity(r.resource, r.borrowed)}`) : ''),
    ];
  }));
}

function sumRows(lists) {
  const total = new Map();
  for (const rows of lists) {
    for (const r of rows) {
      const key = `${r.flavor}/${r.resource}`;
      const t = total.get(key) || { flavor: r.flavor, resource: r.resource, nominal: 0, borrowingLimit: 0, used: 0, borrowed: 0 };
      t.nominal += r.nominal; t.used += r.used;
      total.set(key, t);
    }
  }
  return [...total.values()];
}

export async function renderOverview() {
  const [cqs, lqs, cohorts] = await Promise.all([listObjectsIfAllowed('clusterqueues'),
    listObjectsIfAllowed('localqueues'), listObjectsIfAllowed('cohorts')]);
  const denied = [[cqs, 'ClusterQueues'], [lqs, 'LocalQueues'], [cohorts, 'Cohorts']]
    .filter(([list]) => list === null).map(([, label]) => label);
  const clusterQueues = (cqs || []).map((o) => o.clusterQueue);
  const localQueues = (lqs || []).map((o) => o.localQueue);
  // JSON leaves empty messages out: a Cohort without quota or parent has no spec.
  const cohortSpecs = new Map((cohorts || []).map((o) => [o.cohort.metadata.name, o.cohort]));
  // Cohorts named by a ClusterQueue or as a Cohort's parent but not declared (never, or
  // deleted) exist implicitly, as in Kueue: no quota of their own and no parent.
  const named = [...clusterQueues.map((cq) => cq.spec.cohort),
    ...[...cohortSpecs.values()].map((c) => (c.spec || {}).parent)];
  for (const name of named) {
    if (name && !cohortSpecs.has(name)) {
      cohortSpecs.set(name, { metadata: { name }, spec: {}, status: {}, implicit: true });
    }
  }
  const children = new Map();
  const add = (parent, item) => { if (!children.has(parent)) children.set(parent, []); children.get(parent).push(item); };
  for (const [name, c] of cohortSpecs) add((c.spec || {}).parent || '', { kind: 'cohort', name, obj: c });
  for (const cq of clusterQueues) add(cq.spec.cohort || '', { kind: 'cq', name: cq.metadata.name, obj: cq });

  const rowsOf = (item) => item.kind === 'cq' ? quotaRows(item.obj.spec, item.obj.status)
    : sumRows((children.get(item.name) || []).map(rowsOf));
  const renderNode = (item, room) => {
    const kids = (children.get(item.name) || []).filter(() => item.kind === 'cohort');
    const rows = rowsOf(item);
    // What a member could borrow up to: this cohort's whole quota.
    const cohortRoom = new Map(rows.map((r) => [`${r.flavor}/${r.resource}`, r.nominal]));
    const st = item.obj.status || {};
    const counts = item.kind === 'cq'
      ? `${st.pendingWorkloads} pending · ${st.admittedWorkloads} admitted · share ${(st.fairSharing || {}).weightedShare ?? 0}`
      : `share ${((st.fairSharing || {}).weightedShare) ?? 0}`;
    return h('li', { class: 'node', 'data-testid': `node-${item.kind}-${item.name}` },
      h('div', { class: 'node-head' },
        h('span', { class: 'kind' }, item.kind === 'cq' ? 'ClusterQueue' : 'Cohort'),
        item.obj.implicit ? h('span', { class: 'muted', 'data-testid': `implicit-${item.name}`,
          title: 'Named by its members, with no Cohort object: no quota of its own, no parent' },
        'implicit') : null,
        item.kind === 'cq' ? h('a', { class: 'name', href: `#/workloads?clusterQueue=${encodeURIComponent(item.name)}` }, item.name)
          : h('span', { class: 'name' }, item.name),
        h('span', { class: 'counts' }, counts)),
      bars(rows, `usage-${item.kind}-${item.name}`, room),
      kids.length ? h('ul', { class: 'tree' }, kids.map((kid) => renderNode(kid, cohortRoom))) : null);
  };
  const roots = children.get('') || [];

  const totalPending = clusterQueues.reduce((s, cq) => s + (cq.status.pendingWorkloads || 0), 0);
  const totalAdmitted = clusterQueues.reduce((s, cq) => s + (cq.status.admittedWorkloads || 0), 0);
  const card = (n, label, id) => h('div', { class: 'card' }, h('div', { class: 'n', 'data-testid': id }, n), h('div', { class: 'l' }, label));

  return h('div', {},
    denied.length ? h('div', { class: 'panel muted', 'data-testid': 'denied-kinds' },
      `Not shown: your role may not list ${denied.join(', ')}.`) : null,
    h('div', { class: 'cards' },
      card(cqs === null ? '—' : clusterQueues.length, 'ClusterQueues', 'total-cqs'),
      card(lqs === null ? '—' : localQueues.length, 'LocalQueues', 'total-lqs'),
      card(totalPending, 'Pending', 'total-pending'),
      card(totalAdmitted, 'Admitted', 'total-admitted')),
    h('div', { class: 'grid' },
      h('section', { class: 'panel' },
        h('h2', {}, 'Cohorts and quota'),
        h('div', { class: 'legend' },
          h('span', {}, h('i', { style: 'background:var(--used)' }), 'used within nominal'),
          h('span', {}, h('i', { style: 'background:var(--borrowed)' }), 'borrowed'),
          h('span', {}, h('i', { style: 'background:#1d2330;opacity:.55;width:3px' }), 'nominal quota')),
        roots.length ? h('ul', { class: 'tree' }, roots.map((root) => renderNode(root, new Map()))) : h('div', { class: 'muted' }, 'No ClusterQueues yet.')),
      h('div', {},
        h('section', { class: 'panel' },
          h('h2', {}, 'ClusterQueues'),
          h('table', { 'data-testid': 'cq-table' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Cohort'), h('th', { class: 'num' }, 'Pending'),
              h('th', { class: 'num' }, 'Admitted'), h('th', { class: 'num' }, 'Share'), h('th', {}, 'Active'))),
            h('tbody', {}, clusterQueues.map((cq) => {
              const active = (cq.status.conditions || []).find((c) => c.type === 'Active');
              return h('tr', { 'data-testid': `cq-row-${cq.metadata.name}` },
                h('td', {}, h('a', { href: `#/workloads?clusterQueue=${encodeURIComponent(cq.metadata.name)}` }, cq.metadata.name)),
                h('td', {}, cq.spec.cohort || h('span', { class: 'muted' }, '—')),
                h('td', { class: 'num', 'data-testid': `cq-pending-${cq.metadata.name}` }, cq.status.pendingWorkloads),
                h('td', { class: 'num', 'data-testid': `cq-admitted-${cq.metadata.name}` }, cq.status.admittedWorkloads),
                h('td', { class: 'num', 'data-testid': `cq-share-${cq.metadata.name}` }, (cq.status.fairSharing || {}).weightedShare ?? 0),
                h('td', { 'data-testid': `cq-active-${cq.metadata.name}` },
                  active ? (active.status === 'False' && active.reason ? `False (${active.reason})` : active.status) : ''));
            })))),
        h('section', { class: 'panel' },
          h('h2', {}, 'LocalQueues'),
          h('table', { 'data-testid': 'lq-table' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Namespace'), h('th', {}, 'Name'), h('th', {}, 'ClusterQueue'),
              h('th', { class: 'num' }, 'Pending'), h('th', { class: 'num' }, 'Admitted'))),
            h('tbody', {}, localQueues.map((lq) => {
              const id = `${lq.metadata.namespace}-${lq.metadata.name}`;
              return h('tr', { 'data-testid': `lq-row-${id}` },
                h('td', {}, lq.metadata.namespace),
                h('td', {}, h('a', { href: `#/workloads?namespace=${encodeURIComponent(lq.metadata.namespace)}&queue=${encodeURIComponent(lq.metadata.name)}` }, lq.metadata.name)),
                h('td', {}, lq.spec.clusterQueue),
                h('td', { class: 'num', 'data-testid': `lq-pending-${id}` }, lq.status.pendingWorkloads),
                h('td', { class: 'num', 'data-testid': `lq-admitted-${id}` }, lq.status.admittedWorkloads));
            })))))));
}
