/**
 * Field sets of server-side apply (structured-merge-diff `fieldpath.Set`): which fields of an object a
 * manager owns, as paths of `f:<field>`, `k:<keys as JSON>` (an item of a keyed list) and
 * `v:<value as JSON>` (an item of a set list), serialized in the `FieldsV1` format of `managedFields`.
 *
 * Without the OpenAPI schemas of built-ins, every JSON object is treated as a struct (only leaves,
 * list items and atomic values are members, as `ToFieldSet` makes them); list types come from the
 * built-in `patchMergeKey`s or a CRD's `x-kubernetes-list-type`.
 */
import { MERGE_KEYS, MERGE_PRIMITIVE_LISTS } from '../patch.ts';
import type { ResourceType } from '../resource-type.ts';

/** How a list is merged and owned (`x-kubernetes-list-type`). */
export type ListType = { readonly kind: 'atomic' } | { readonly kind: 'set' } | { readonly kind: 'map'; readonly keys: readonly string[] };

/** The list type of the list reached by `fieldNames` (field names from the root; list items skipped). */
export type ListTypeOf = (fieldNames: readonly string[]) => ListType;

/** One path, its elements joined by a newline (JSON in `k:`/`v:` elements never holds a raw newline). */
export type PathKey = string;

/** The members of a field set with the value found at each (a leaf value, or the list item). */
export type FieldValues = Map<PathKey, unknown>;

const SEP = '\n';
const ATOMIC: ListType = { kind: 'atomic' };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function builtinListType(name: string | undefined): ListType {
  if (name === undefined || name === 'tolerations') return ATOMIC;
  if (MERGE_PRIMITIVE_LISTS.has(name)) return { kind: 'set' };
  const key = MERGE_KEYS[name];
  return key ? { kind: 'map', keys: [key] } : ATOMIC;
}

/** List types of a served kind: CRD schemas' `x-kubernetes-list-type`, built-in merge keys elsewhere. */
export function listTypesOf(type: ResourceType): ListTypeOf {
  const schema = type.custom?.schema;
  return (fieldNames) => {
    if (!schema || fieldNames[0] === 'metadata') return builtinListType(fieldNames[fieldNames.length - 1]);
    let node: Record<string, unknown> | undefined = schema;
    for (const name of fieldNames) {
      if (node?.['type'] === 'array' && isObject(node['items'])) node = node['items'];
      const props: unknown = node?.['properties'];
      const additional: unknown = node?.['additionalProperties'];
      const next: unknown = isObject(props) && isObject(props[name]) ? props[name] : additional;
      node = isObject(next) ? next : undefined;
    }
    const listType = node?.['x-kubernetes-list-type'];
    const keys = node?.['x-kubernetes-list-map-keys'];
    if (listType === 'set') return { kind: 'set' };
    if (listType === 'map' && Array.isArray(keys) && keys.length > 0) return { kind: 'map', keys: keys.map(String) };
    return ATOMIC;
  };
}

/**
 * The path element of a list item: `v:<value>` in a set, `k:<keys>` in a keyed list (keys sorted by
 * name); undefined in an atomic list or for an item without its keys.
 */
export function itemElement(item: unknown, listType: ListType): string | undefined {
  if (listType.kind === 'set') return `v:${JSON.stringify(item)}`;
  if (listType.kind === 'atomic' || !isObject(item) || listType.keys.some((k) => item[k] === undefined)) return undefined;
  return `k:${JSON.stringify(Object.fromEntries([...listType.keys].sort().map((k) => [k, item[k]])))}`;
}

/** Finds the index of the item a `k:` or `v:` element names in `list`. */
export function findItem(list: readonly unknown[], element: string, listType: ListType): number {
  return list.findIndex((x) => itemElement(x, listType) === element);
}

/** `ToFieldSet`: every leaf, list item and atomic value of `value`, with the value at each path. */
export function toFieldSet(value: unknown, listTypeOf: ListTypeOf): FieldValues {
  const out: FieldValues = new Map();
  const walkObject = (obj: Record<string, unknown>, path: readonly string[], names: readonly string[]): void => {
    for (const [k, v] of Object.entries(obj)) {
      if (v === undefined) continue;
      const p = [...path, `f:${k}`];
      const n = [...names, k];
      if (isObject(v)) walkObject(v, p, n);
      else if (Array.isArray(v)) walkList(v, p, n);
      else out.set(p.join(SEP), v);
    }
  };
  const walkList = (list: unknown[], path: readonly string[], names: readonly string[]): void => {
    const listType = listTypeOf(names);
    const elements = list.map((item) => itemElement(item, listType));
    if (elements.some((e) => e === undefined)) {
      // Atomic, or a keyed list with an unkeyed item: owned as one value.
      out.set(path.join(SEP), list);
      return;
    }
    list.forEach((item, i) => {
      const p = [...path, elements[i] as string];
      out.set(p.join(SEP), item);
      if (isObject(item)) walkObject(item, p, names);
    });
  };
  if (isObject(value)) walkObject(value, [], []);
  return out;
}

/** The path elements of a key. */
export function elementsOf(key: PathKey): string[] {
  return key === '' ? [] : key.split(SEP);
}

/** A path as `fieldpath.Path.String()` prints it in conflict messages: `.spec.containers[name="c"].image`. */
export function pathString(key: PathKey): string {
  return elementsOf(key)
    .map((e) => {
      if (e.startsWith('f:')) return `.${e.slice(2)}`;
      if (e.startsWith('v:')) return `[=${e.slice(2)}]`;
      if (e.startsWith('k:')) {
        const keys = JSON.parse(e.slice(2)) as Record<string, unknown>;
        return `[${Object.entries(keys).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
      }
      return e;
    })
    .join('');
}

interface Node {
  member: boolean;
  readonly children: Map<string, Node>;
}

/** An encoded `FieldsV1` subtree, and the number that stands for it in its parent's intern key. */
interface Encoded {
  readonly value: Record<string, unknown>;
  readonly id: number;
}

/**
 * Encoded subtrees shared by every `managedFields` entry that has them, as kube-apiserver's FieldsV1
 * is one byte slice rather than a tree of objects. The CronJobs a controller writes all own the same
 * fields: their FieldsV1 trees, ~100 objects each, were 60 % of a stored CronJob's heap (5.9 of 9.8 KB),
 * and every version in the watch history held its own. Stored objects are never mutated, so sharing is
 * safe. A subtree's key is its children's names and numbers, never its whole text; the table is
 * emptied when it reaches the limit (subtrees already stored stay shared).
 */
const interned = new Map<string, Encoded>();
const INTERNED_LIMIT = 50_000;
let nextId = 0;

/** Serializes a set in the `FieldsV1` format: `{"f:data":{"f:a":{}},"f:list":{"k:{…}":{".":{},"f:x":{}}}}`. */
export function encodeFieldsV1(keys: Iterable<PathKey>): Record<string, unknown> {
  const root: Node = { member: false, children: new Map() };
  for (const key of keys) {
    let node = root;
    for (const e of elementsOf(key)) {
      let child = node.children.get(e);
      if (!child) node.children.set(e, (child = { member: false, children: new Map() }));
      node = child;
    }
    node.member = true;
  }
  const write = (node: Node): Encoded => {
    const dot = node.member && node.children.size > 0;
    const children = [...node.children.keys()].sort().map((e) => [e, write(node.children.get(e) as Node)] as const);
    // Path elements never hold the separator (a raw newline), so names and numbers cannot run together.
    const key = `${dot ? '.' : ''}${children.map(([e, c]) => `${SEP}${e}${SEP}${c.id}`).join('')}`;
    const known = interned.get(key);
    if (known) return known;
    const value: Record<string, unknown> = dot ? { '.': Object.freeze({}) } : {};
    for (const [e, c] of children) value[e] = c.value;
    if (interned.size >= INTERNED_LIMIT) interned.clear();
    // Frozen: shared by many stored objects, a change through one would show in all of them.
    const encoded = { value: Object.freeze(value), id: nextId++ };
    interned.set(key, encoded);
    return encoded;
  };
  return write(root).value;
}

/** Parses a `FieldsV1` object into its member paths. */
export function decodeFieldsV1(fields: unknown): Set<PathKey> {
  const out = new Set<PathKey>();
  const read = (node: unknown, path: readonly string[]): void => {
    if (!isObject(node)) return;
    const children = Object.keys(node).filter((k) => k !== '.');
    if (path.length > 0 && ('.' in node || children.length === 0)) out.add(path.join(SEP));
    for (const k of children) read(node[k], [...path, k]);
  };
  read(fields, []);
  return out;
}
