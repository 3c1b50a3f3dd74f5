/**
 * Desired-versus-observed comparison of the child CronJob, limited to the fields the controller owns.
 *
 * The API server defaults many CronJob, Job and pod-template fields on create (`concurrencyPolicy`,
 * `terminationMessagePath`, `dnsPolicy`, `schedulerName`, `imagePullPolicy`, `defaultMode`…). A deep
 * equality of the whole spec against server state therefore never settles and turns into a hot loop of
 * updates (redis-operator#1773, openshift CVO#722). So the rule here is: every field present in the
 * desired object must be present in the observed one with the same value; fields only the observed object
 * has (server defaults, other writers) are not ours and are ignored — with two exceptions that make
 * removals converge:
 * - lists are compared element by element and must have the same length (an extra container, volume or
 *   environment variable changes what the backup runs);
 * - {@link OWNED_OPTIONAL_PATHS}: optional fields with no server default that we set when the spec asks
 *   for them; when the desired object omits them, the observed object must not have them either.
 *
 * Metadata is compared only where we own it: our labels and annotations (other keys are kept), and our
 * controller ownerReference.
 */
import type { KubeObject, OwnerReference } from '../kube/object.ts';

/**
 * Fields of a CronJob that have no server-side default: present in the observed object while absent from
 * the desired one means someone (or an older spec) set them, so they count as drift and are removed.
 */
export const OWNED_OPTIONAL_PATHS: readonly (readonly string[])[] = [
  ['spec', 'timeZone'],
  ['spec', 'startingDeadlineSeconds'],
  ['spec', 'jobTemplate', 'spec', 'activeDeadlineSeconds'],
  ['spec', 'jobTemplate', 'spec', 'template', 'spec', 'securityContext', 'fsGroupChangePolicy'],
  ['spec', 'jobTemplate', 'spec', 'template', 'spec', 'securityContext', 'supplementalGroups'],
];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;
const QUANTITY_FACTOR: Record<string, number> = {
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
  n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
};

/** The numeric value of a `resource.Quantity` string, or undefined when it is not one. */
export function parseQuantity(text: string): number | undefined {
  const match = QUANTITY.exec(text.trim());
  if (!match) return undefined;
  const base = Number(match[1]);
  if (match[2]) return base * 10 ** Number(match[2].slice(1));
  return base * (match[3] ? (QUANTITY_FACTOR[match[3]] ?? 1) : 1);
}

/**
 * Whether two scalars are the same value. Under `resources` the server canonicalises quantities
 * (`1000m` is stored as `1`, `1024Mi` as `1Gi`), so quantities compare by value, not by spelling.
 */
function scalarEqual(desired: unknown, observed: unknown, path: readonly string[]): boolean {
  if (desired === observed) return true;
  if (path.includes('resources') && (typeof desired === 'string' || typeof desired === 'number')) {
    const a = typeof desired === 'number' ? desired : parseQuantity(desired);
    const b = typeof observed === 'number' ? observed : typeof observed === 'string' ? parseQuantity(observed) : undefined;
    return a !== undefined && b !== undefined && Math.abs(a - b) <= Math.abs(a) * 1e-9;
  }
  return false;
}

/** The `name` of a list item such as a container, volume, mount or env var. */
function nameOf(item: unknown): string | undefined {
  return isRecord(item) && typeof item['name'] === 'string' ? item['name'] : undefined;
}

function render(path: readonly string[]): string {
  return path.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

function diffValue(desired: unknown, observed: unknown, path: string[], out: string[]): void {
  if (Array.isArray(desired)) {
    if (!Array.isArray(observed) || observed.length !== desired.length) {
      out.push(render(path));
      return;
    }
    desired.forEach((item, i) => {
      // Named items (containers, volumes, mounts, env) are another item when the name differs.
      if (nameOf(item) !== undefined && nameOf(item) !== nameOf(observed[i])) out.push(render([...path, String(i)]));
      else diffValue(item, observed[i], [...path, String(i)], out);
    });
    return;
  }
  if (isRecord(desired)) {
    if (observed !== undefined && !isRecord(observed)) {
      out.push(render(path));
      return;
    }
    const seen = observed ?? {};
    for (const [key, value] of Object.entries(desired)) {
      if (value === undefined) continue;
      diffValue(value, seen[key], [...path, key], out);
    }
    return;
  }
  if (desired === null) {
    if (observed !== null && observed !== undefined) out.push(render(path));
    return;
  }
  if (!scalarEqual(desired, observed, path)) out.push(render(path));
}

function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const part of path) {
    if (!isRecord(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return (
    a.uid === b.uid &&
    a.apiVersion === b.apiVersion &&
    a.kind === b.kind &&
    a.name === b.name &&
    (a.controller ?? false) === (b.controller ?? false) &&
    (a.blockOwnerDeletion ?? false) === (b.blockOwnerDeletion ?? false)
  );
}

/**
 * The paths (`spec.schedule`, `spec.jobTemplate.spec.template.spec.containers[0].image`,
 * `metadata.labels.app.kubernetes.io/name`…) where the observed CronJob differs from the desired one in
 * a field we own. Empty means in sync; server-defaulted and foreign fields never appear.
 */
export function cronJobDrift(observed: KubeObject, desired: KubeObject): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(desired)) {
    if (key === 'metadata' || key === 'status' || key === 'apiVersion' || key === 'kind' || value === undefined) continue;
    diffValue(value, observed[key], [key], out);
  }
  for (const field of ['labels', 'annotations'] as const) {
    for (const [key, value] of Object.entries(desired.metadata[field] ?? {})) {
      if (observed.metadata[field]?.[key] !== value) out.push(`metadata.${field}.${key}`);
    }
  }
  const observedRefs = observed.metadata.ownerReferences ?? [];
  for (const ref of desired.metadata.ownerReferences ?? []) {
    if (!observedRefs.some((have) => sameOwner(have, ref))) out.push(`metadata.ownerReferences[${ref.uid}]`);
  }
  for (const path of OWNED_OPTIONAL_PATHS) {
    if (getPath(desired, path) === undefined && getPath(observed, path) !== undefined) out.push(render(path));
  }
  return out;
}

function mergeValue(desired: unknown, observed: unknown): unknown {
  if (Array.isArray(desired)) {
    const have = Array.isArray(observed) ? observed : [];
    // A named item merges with the observed item of the same name, never with whatever sits at its
    // index: after a volume is removed, index-wise merging would graft the old volume's source onto
    // the next one (two volume types in one volume: 422, retried forever).
    return desired.map((item, i) => {
      const name = nameOf(item);
      return mergeValue(item, name === undefined ? have[i] : have.find((h) => nameOf(h) === name));
    });
  }
  if (isRecord(desired)) {
    const merged: Record<string, unknown> = isRecord(observed) ? { ...observed } : {};
    for (const [key, value] of Object.entries(desired)) {
      if (value !== undefined) merged[key] = mergeValue(value, merged[key]);
    }
    return merged;
  }
  return desired;
}

function deleteAt(obj: Record<string, unknown>, path: readonly string[]): void {
  const parent = getPath(obj, path.slice(0, -1));
  const last = path[path.length - 1];
  if (isRecord(parent) && last !== undefined) delete parent[last];
}

/**
 * The observed CronJob with every field we own overwritten by the desired value: server-defaulted and
 * foreign fields (including other writers' labels, annotations and owner references) are kept, and so are
 * `resourceVersion`, `uid` and the rest of the server's metadata, so the update is a conditional PUT.
 * Inputs are not mutated.
 */
export function mergeDesiredIntoObserved<T extends KubeObject>(observed: T, desired: KubeObject): T {
  // A JSON round trip, not structuredClone: cached objects share equal subtrees (src/runtime/string-interner.ts)
  // and structuredClone would keep them shared in the copy, so deleteAt below could change two places at once.
  const merged = JSON.parse(JSON.stringify(observed)) as T;
  const fields: Record<string, unknown> = merged;
  for (const [key, value] of Object.entries(desired)) {
    if (key === 'metadata' || key === 'status' || value === undefined) continue;
    fields[key] = mergeValue(value, fields[key]);
  }
  const meta = merged.metadata;
  if (desired.metadata.labels) meta.labels = { ...meta.labels, ...desired.metadata.labels };
  if (desired.metadata.annotations) meta.annotations = { ...meta.annotations, ...desired.metadata.annotations };
  for (const ref of desired.metadata.ownerReferences ?? []) {
    const refs = meta.ownerReferences ?? [];
    // At most one controller reference may exist; ours replaces any stale one with the same uid.
    meta.ownerReferences = [...refs.filter((have) => have.uid !== ref.uid && !(ref.controller && have.controller)), { ...ref }];
  }
  for (const path of OWNED_OPTIONAL_PATHS) {
    if (getPath(desired, path) === undefined) deleteAt(merged, path);
  }
  return merged;
}
