// Fetching the dashboard's JSON API and formatting what it returns. No dependencies.

export async function getJson(path) {
  const response = await fetch(path, { cache: 'no-store' });
  // tollgated asks for credentials: sign in, then come back.
  if (response.status === 401) {
    window.location.assign('/login');
    throw new Error('signing in');
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(body.error || `${path}: HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

export const listObjects = (kind) => getJson(`/api/v1/objects/${kind}`).then((r) => r.objects || []);
// The same, or null when the caller's role may not list that kind (403): a page shows what the
// caller may see rather than failing as a whole.
export const listObjectsIfAllowed = (kind) =>
  listObjects(kind).catch((error) => { if (error.status === 403) return null; throw error; });
export const listWorkloads = (query = '') => getJson(`/api/v1/workloads${query}`).then((r) => r.workloads || []);
export const getWorkload = (ns, name) =>
  getJson(`/api/v1/workloads/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`);

// Kubernetes quantities ("500m", "16Gi", "2") as numbers, for bar widths and sums.
const SUFFIX = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};
export function parseQuantity(text) {
  if (text === undefined || text === null || text === '') return 0;
  const m = String(text).trim().match(/^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/);
  if (!m) return NaN;
  const scale = SUFFIX[m[2]];
  return scale === undefined ? NaN : parseFloat(m[1]) * scale;
}

// A number back in a readable unit for the resource (bytes in binary units).
export function formatQuantity(resource, value) {
  if (!Number.isFinite(value)) return '∞';
  const bytes = /memory|storage|hugepages/.test(resource);
  if (bytes && value >= 1024) {
    const units = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
    let v = value / 1024;
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return `${trim(v)}${units[i]}`;
  }
  return trim(value);
}
const trim = (v) => (Math.round(v * 100) / 100).toString();

export function stateName(state) {
  return (state || 'WORKLOAD_STATE_UNSPECIFIED').replace('WORKLOAD_STATE_', '');
}

export function age(timestamp) {
  if (!timestamp) return '';
  const seconds = Math.max(0, (Date.now() - Date.parse(timestamp)) / 1000);
  if (seconds < 60) return `${Math.floor(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

export function time(timestamp) {
  if (!timestamp) return '';
  return new Date(timestamp).toLocaleString(undefined, { hour12: false });
}

// Builds DOM from a tag, attributes and children; strings become text nodes (never HTML).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'style') el.style.cssText = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
