// Topology: each topology flavor's tree of domains (block, rack, host, ...) with what its nodes
// can take, what placed workloads use and what is free, per resource
// (InventoryService.GetTopologyUsage, as `tollgate get topology -o usage`).
import { h, getJson, parseQuantity, formatQuantity } from './api.js';

// One bar per resource: used of capacity. `pods` is left out (every node has it; it rarely binds).
function usageBars(domain, testPrefix) {
  const capacity = domain.capacity || {};
  const used = domain.used || {};
  const resources = Object.keys(capacity).filter((r) => r !== 'pods').sort();
  if (resources.length === 0) return h('div', { class: 'muted' }, 'no capacity');
  return h('div', { class: 'bars' }, resources.map((r) => {
    const cap = parseQuantity(capacity[r]);
    const u = parseQuantity(used[r]);
    const pct = cap > 0 ? Math.max(0, Math.min(100, (u / cap) * 100)) : (u > 0 ? 100 : 0);
    const free = formatQuantity(r, parseQuantity((domain.free || {})[r]));
    return [
      h('div', { class: 'label' }, r),
      h('div', { class: 'bar', title: `used ${formatQuantity(r, u)} of ${formatQuantity(r, cap)}, free ${free}` },
        h('div', { class: 'u', style: `width:${pct}%` })),
      h('div', { class: 'value', 'data-testid': `${testPrefix}-${r}` },
        `${formatQuantity(r, u)} / ${formatQuantity(r, cap)}`, h('span', { class: 'muted' }, ` · ${free} free`)),
    ];
  }));
}

function renderFlavor(flavor) {
  const levels = flavor.levels || [];
  // Domains come parents first; a domain's parent has its values less the last one.
  const children = new Map();
  for (const d of flavor.domains || []) {
    const key = (d.values || []).slice(0, -1).join('/');
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(d);
  }
  const renderDomain = (d) => {
    const values = d.values || [];
    const id = `${flavor.flavor}-${values.join('-')}`;
    const kids = children.get(values.join('/')) || [];
    return h('li', { class: 'node', 'data-testid': `domain-${id}` },
      h('div', { class: 'node-head' },
        h('span', { class: 'kind' }, levels[d.level || 0] || ''),
        h('span', { class: 'name' }, values[values.length - 1]),
        h('span', { class: 'counts' }, `${d.nodes || 0} node${d.nodes === 1 ? '' : 's'}`)),
      usageBars(d, `domain-usage-${id}`),
      kids.length ? h('ul', { class: 'tree' }, kids.map(renderDomain)) : null);
  };
  const roots = children.get('') || [];
  return h('section', { class: 'panel', 'data-testid': `topology-${flavor.flavor}` },
    h('h2', {}, `${flavor.flavor}`, h('span', { class: 'muted' }, ` · topology ${flavor.topology} · ${levels.join(' › ')}`)),
    flavor.topologyMissing
      ? h('div', { class: 'error', 'data-testid': `topology-missing-${flavor.flavor}` },
        `Topology ${flavor.topology} does not exist: the flavor's ClusterQueues are inactive.`)
      : null,
    roots.length ? h('ul', { class: 'tree' }, roots.map(renderDomain))
      : h('div', { class: 'muted' }, 'No nodes match this flavor yet.'));
}

export async function renderTopology() {
  const usage = await getJson('/api/v1/topology');
  const flavors = usage.flavors || [];
  return h('div', { 'data-testid': 'topology' },
    h('div', { class: 'legend' },
      h('span', {}, h('i', { style: 'background:var(--used)' }), 'used by placed workloads'),
      h('span', {}, h('i', { style: 'background:var(--free)' }), 'free (capacity less pods Tollgate does not place)')),
    flavors.length ? flavors.map(renderFlavor)
      : h('div', { class: 'panel muted' }, 'No topology flavors: no ResourceFlavor names a topology.'));
}
