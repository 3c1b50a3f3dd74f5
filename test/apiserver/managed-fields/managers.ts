/**
 * `metadata.managedFields` per field manager, as kube-apiserver's field manager keeps them
 * (k8s.io/apimachinery `util/managedfields` over structured-merge-diff `merge.Updater`): every write
 * records what its manager set (operation `Update`), server-side apply records the applied
 * configuration (operation `Apply`), removes what the manager stopped applying unless another manager
 * owns it, and refuses to change a field another manager owns (409) unless forced.
 */
import type { KubeObject, StatusBody } from '../../../src/kube/object.ts';
import { cloneJson, jsonEqual } from '../json-equal.ts';
import { hasStatusSubresource, type ResourceType } from '../resource-type.ts';
import { decodeFieldsV1, encodeFieldsV1, elementsOf, findItem, itemElement, listTypesOf, pathString, toFieldSet, type FieldValues, type ListTypeOf, type PathKey } from './field-set.ts';

/** One decoded `managedFields` entry. */
interface ManagedEntry {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly apiVersion: string;
  readonly time?: string;
  readonly subresource?: string;
  readonly fields: Set<PathKey>;
}

/** What the write is: the kind, the endpoint, who writes and when. */
export interface ManagedWrite {
  readonly type: ResourceType;
  /** `status` for the status endpoint. @default the main endpoint */
  readonly subresource?: string;
  /** The field manager (`fieldManager` or the User-Agent's product). */
  readonly manager: string;
  /** The request's `apiVersion`. */
  readonly apiVersion: string;
  /** RFC 3339 time of the write. */
  readonly now: string;
}

/** `BuildManagerIdentifier`: appliers are one manager whatever the version; updaters are one per version. */
function identity(e: Pick<ManagedEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([e.manager, e.operation, e.operation === 'Update' ? e.apiVersion : '', e.subresource ?? '']);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decode(list: unknown): ManagedEntry[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((e) => ({
    manager: String(e['manager'] ?? ''),
    operation: e['operation'] === 'Apply' ? 'Apply' : 'Update',
    apiVersion: String(e['apiVersion'] ?? ''),
    ...(typeof e['time'] === 'string' ? { time: e['time'] } : {}),
    ...(typeof e['subresource'] === 'string' && e['subresource'] ? { subresource: e['subresource'] } : {}),
    fields: decodeFieldsV1(e['fieldsV1']),
  }));
}

/** Encodes the entries sorted as kube sorts them (operation, time, manager, apiVersion, subresource); undefined when none. */
function encode(entries: readonly ManagedEntry[]): NonNullable<KubeObject['metadata']['managedFields']> | undefined {
  const kept = entries.filter((e) => e.fields.size > 0);
  if (kept.length === 0) return undefined;
  const order = (e: ManagedEntry): string[] => [e.operation, e.time ?? '', e.manager, e.apiVersion, e.subresource ?? ''];
  kept.sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] as string) < (y[i] as string) ? -1 : 1;
    return 0;
  });
  return kept.map((e) => ({
    manager: e.manager,
    operation: e.operation,
    apiVersion: e.apiVersion,
    ...(e.time ? { time: e.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: encodeFieldsV1(e.fields),
    ...(e.subresource ? { subresource: e.subresource } : {}),
  }));
}

const SYSTEM_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds']);

/**
 * The members a write can own: never apiVersion, kind or system metadata (`stripMeta`), and only the
 * fields its endpoint may change (the strategy's reset fields: status on the main endpoint of a kind
 * with a status subresource, everything but status on the status endpoint).
 */
function trackedFieldSet(write: ManagedWrite, obj: unknown, listTypeOf: ListTypeOf): FieldValues {
  const all = toFieldSet(obj, listTypeOf);
  const statusOnly = write.subresource === 'status';
  const noStatus = !statusOnly && hasStatusSubresource(write.type);
  for (const key of [...all.keys()]) {
    const [first, second] = elementsOf(key);
    const system = first === 'f:apiVersion' || first === 'f:kind' || (first === 'f:metadata' && second !== undefined && SYSTEM_METADATA.has(second.slice(2)));
    if (system || (statusOnly && first !== 'f:status') || (noStatus && first === 'f:status')) all.delete(key);
  }
  return all;
}

/** `typed.Compare`: members added or changed in value, and members removed. */
function compare(before: FieldValues, after: FieldValues): { changed: Set<PathKey>; removed: Set<PathKey> } {
  const changed = new Set<PathKey>();
  for (const [key, value] of after) {
    if (!before.has(key)) changed.add(key);
    else if (!isObject(value) && !jsonEqual(value, before.get(key))) changed.add(key);
  }
  return { changed, removed: new Set([...before.keys()].filter((k) => !after.has(k))) };
}

const minus = (a: ReadonlySet<PathKey>, ...b: ReadonlySet<PathKey>[]): Set<PathKey> => new Set([...a].filter((k) => !b.some((s) => s.has(k))));

/**
 * The managedFields after a create, update or non-apply patch (`managedFieldsUpdater.Update`): the
 * manager gains what it added or changed, every other manager loses it, and removed fields leave every
 * set. `managedFields` sent in the body replace the stored ones (`[{}]` clears them, as kube allows);
 * a write that changes nothing keeps the entry's time.
 */
export function trackUpdate(write: ManagedWrite, old: KubeObject | undefined, next: KubeObject, sent: unknown): KubeObject['metadata']['managedFields'] {
  if (Array.isArray(sent) && sent.length > 0 && sent.every((e) => isObject(e) && Object.keys(e).length === 0)) return undefined;
  const fromBody = write.subresource === undefined && Array.isArray(sent) && sent.length > 0;
  const listTypeOf = listTypesOf(write.type);
  const { changed, removed } = compare(trackedFieldSet(write, old ?? {}, listTypeOf), trackedFieldSet(write, next, listTypeOf));
  const self = { manager: write.manager, operation: 'Update' as const, apiVersion: write.apiVersion, ...(write.subresource ? { subresource: write.subresource } : {}) };
  let entries = decode(fromBody ? sent : old?.metadata.managedFields).map((e) => ({ ...e, fields: minus(e.fields, changed, removed) }));
  if (changed.size > 0) {
    const previous = entries.find((e) => identity(e) === identity(self));
    entries = entries.filter((e) => e !== previous);
    entries.push({ ...self, time: write.now, fields: new Set([...(previous?.fields ?? []), ...changed]) });
  }
  return encode(entries);
}

/** Server-side apply merge of the configuration into the live object: keyed lists by key, sets by value, the rest replaced. */
function mergeApplied(live: unknown, config: unknown, listTypeOf: ListTypeOf, names: readonly string[]): unknown {
  if (isObject(config)) {
    const out: Record<string, unknown> = isObject(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(config)) {
      if (v === null) delete out[k];
      else out[k] = mergeApplied(out[k], v, listTypeOf, [...names, k]);
    }
    return out;
  }
  if (!Array.isArray(config) || !Array.isArray(live)) return config;
  const listType = listTypeOf(names);
  if (listType.kind === 'atomic') return config;
  const out = [...live];
  for (const item of config) {
    const element = itemElement(item, listType);
    if (element === undefined) return config;
    const idx = findItem(out, element, listType);
    if (idx < 0) out.push(item);
    else if (listType.kind === 'map') out[idx] = mergeApplied(out[idx], item, listTypeOf, names);
  }
  return out;
}

/**
 * `RemoveItems` of one member (a leaf, or a whole list item). The map or list it empties goes too (kube
 * stores it as null, which the typed object or the CR schema drops); the maps above it stay.
 * Returns true when `container` itself lost its last entry.
 */
function removeMember(container: Record<string, unknown> | unknown[], elements: readonly string[], names: readonly string[], listTypeOf: ListTypeOf): boolean {
  const [head, ...rest] = elements;
  if (head === undefined) return false;
  if (Array.isArray(container)) {
    const idx = findItem(container, head, listTypeOf(names));
    const item = container[idx];
    if (idx < 0) return false;
    if (rest.length === 0) container.splice(idx, 1);
    else if (isObject(item)) removeMember(item, rest, names, listTypeOf);
    return container.length === 0;
  }
  const field = head.slice(2);
  const child = container[field];
  if (rest.length === 0) delete container[field];
  else if ((isObject(child) || Array.isArray(child)) && removeMember(child, rest, [...names, field], listTypeOf)) delete container[field];
  return rest.length === 0 && Object.keys(container).length === 0;
}

function describeManager(e: ManagedEntry): string {
  const name = `${JSON.stringify(e.manager)}${e.subresource ? ` with subresource ${JSON.stringify(e.subresource)}` : ''}`;
  return e.operation === 'Update' ? `${name} using ${e.apiVersion}` : name;
}

/** The 409 of an apply that would change fields other managers own (`internal.NewConflictError`). */
function conflictStatus(conflicts: ReadonlyArray<{ entry: ManagedEntry; key: PathKey }>): StatusBody {
  const sorted = [...conflicts].sort((a, b) => (identity(a.entry) === identity(b.entry) ? (a.key < b.key ? -1 : 1) : identity(a.entry) < identity(b.entry) ? -1 : 1));
  let message: string;
  if (sorted.length === 1) {
    const [only] = sorted as [{ entry: ManagedEntry; key: PathKey }];
    message = `Apply failed with 1 conflict: conflict with ${describeManager(only.entry)}: ${pathString(only.key)}`;
  } else {
    const lines: string[] = [];
    let last = '';
    for (const c of sorted) {
      if (identity(c.entry) !== last) lines.push(`conflicts with ${describeManager(c.entry)}:`);
      last = identity(c.entry);
      lines.push(`- ${pathString(c.key)}`);
    }
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Conflict',
    details: { causes: sorted.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c.entry)}`, field: pathString(c.key) })) },
    code: 409,
  };
}

/** The outcome of a server-side apply: the object to store, or the 409 Conflict to answer. */
export type ApplyOutcome = { readonly ok: true; readonly object: KubeObject } | { readonly ok: false; readonly status: StatusBody };

/**
 * Server-side apply of `config` by `write.manager` (`merge.Updater.Apply`): merges it into `live`
 * (undefined when the apply creates the object), makes the applied fields the manager's `Apply` set,
 * removes the fields of its previous set that neither it nor any other manager still owns, and
 * answers a conflict when the merge changes a field another manager owns, unless `force` moves the
 * ownership to this manager.
 */
export function applyConfiguration(write: ManagedWrite, live: KubeObject | undefined, config: KubeObject, force: boolean): ApplyOutcome {
  const listTypeOf = listTypesOf(write.type);
  const base: KubeObject = live ? cloneJson(live) : { apiVersion: config.apiVersion, kind: config.kind, metadata: {} };
  const entries = decode(base.metadata.managedFields);
  const { managedFields: _sent, ...configMeta } = config.metadata ?? {};
  const merged = mergeApplied(base, { ...config, metadata: configMeta }, listTypeOf, []) as KubeObject;
  const self: ManagedEntry = { manager: write.manager, operation: 'Apply', apiVersion: write.apiVersion, ...(write.subresource ? { subresource: write.subresource } : {}), fields: new Set(trackedFieldSet(write, config, listTypeOf).keys()) };
  const previous = entries.find((e) => identity(e) === identity(self));
  const others = entries.filter((e) => e !== previous);
  if (previous) {
    // Prune what this manager applied before and no manager owns now (`Updater.prune`): a list item
    // goes as a whole unless the item itself is owned, as structured-merge-diff removes it.
    const owned = new Set([...self.fields, ...others.flatMap((e) => [...e.fields])]);
    for (const key of previous.fields) if (!owned.has(key)) removeMember(merged as unknown as Record<string, unknown>, elementsOf(key), [], listTypeOf);
  }
  const { changed, removed } = compare(trackedFieldSet(write, base, listTypeOf), trackedFieldSet(write, merged, listTypeOf));
  const conflicts = others.flatMap((entry) => [...entry.fields].filter((k) => changed.has(k)).map((key) => ({ entry, key })));
  if (conflicts.length > 0 && !force) return { ok: false, status: conflictStatus(conflicts) };
  const taken = new Set(conflicts.map((c) => c.key));
  const objectChanged = !jsonEqual({ ...merged, metadata: { ...merged.metadata, managedFields: undefined } }, { ...base, metadata: { ...base.metadata, managedFields: undefined } });
  const time = objectChanged || !previous?.time ? write.now : previous.time;
  const managedFields = encode([...others.map((e) => ({ ...e, fields: minus(e.fields, taken, removed) })), { ...self, time }]);
  merged.metadata = { ...merged.metadata, ...(managedFields ? { managedFields } : {}) };
  if (!managedFields) delete merged.metadata.managedFields;
  return { ok: true, object: merged };
}
