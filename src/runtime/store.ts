/**
 * The informer's cache (client-go `cache.Indexer`): objects by `namespace/name` key, with secondary
 * indexes kept up to date on every write. It holds the transformed objects only — no copies, no
 * serialized forms — because the whole controller's memory is dominated by this map.
 */
import { controllerOf, objectKey, type KubeObject } from '../kube/object.ts';

/** Computes the index values of an object (an object may appear under several values, or none). */
export type IndexFunc<T extends KubeObject> = (obj: T) => readonly string[];

/**
 * Name of the ready-made index from a controller owner's UID to the objects it controls (opt in with
 * `store.addIndex(CONTROLLER_OWNER_UID_INDEX, controllerOwnerUidIndex)`: an index costs work on every event).
 */
export const CONTROLLER_OWNER_UID_INDEX = 'controller-owner-uid';

/** Indexes an object under the UID of its controller owner reference (if any). */
export function controllerOwnerUidIndex(obj: KubeObject): readonly string[] {
  const owner = controllerOf(obj.metadata);
  return owner ? [owner.uid] : [];
}

interface Index<T extends KubeObject> {
  readonly fn: IndexFunc<T>;
  readonly byValue: Map<string, Set<string>>;
}

/** A read-only view of a {@link Store}, what reconcilers get. */
export interface StoreReader<T extends KubeObject> {
  get(key: string): T | undefined;
  getByNamespaceName(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string): T[];
  keys(): string[];
  readonly size: number;
  byIndex(indexName: string, value: string): T[];
}

/** An indexed object cache keyed by {@link objectKey}. */
export class Store<T extends KubeObject> implements StoreReader<T> {
  readonly #items = new Map<string, T>();
  readonly #indexes = new Map<string, Index<T>>();

  /** Adds a secondary index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.#indexes.has(name)) throw new Error(`store: index "${name}" already exists`);
    const index: Index<T> = { fn, byValue: new Map() };
    this.#indexes.set(name, index);
    for (const [key, obj] of this.#items) addToIndex(index, key, obj);
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  getByNamespaceName(namespace: string | undefined, name: string): T | undefined {
    return this.#items.get(objectKey({ namespace, name }));
  }

  /** All objects, or those of one namespace. */
  list(namespace?: string): T[] {
    const out: T[] = [];
    for (const obj of this.#items.values()) {
      if (namespace === undefined || obj.metadata.namespace === namespace) out.push(obj);
    }
    return out;
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  /** Objects whose index function returned `value`. */
  byIndex(indexName: string, value: string): T[] {
    const index = this.#indexes.get(indexName);
    if (!index) throw new Error(`store: no index named "${indexName}" (known: ${[...this.#indexes.keys()].join(', ')})`);
    const keys = index.byValue.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.#items.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Inserts or replaces an object; returns the previous one. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj.metadata);
    const old = this.#items.get(key);
    this.#items.set(key, obj);
    for (const index of this.#indexes.values()) {
      if (!old) {
        addToIndex(index, key, obj);
        continue;
      }
      // Index values rarely change between versions of an object: skip the set churn then.
      const before = index.fn(old);
      const after = index.fn(obj);
      if (sameValues(before, after)) continue;
      removeValues(index, key, before);
      addValues(index, key, after);
    }
    return old;
  }

  /** Removes the object with this key; returns it. */
  delete(key: string): T | undefined {
    const old = this.#items.get(key);
    if (!old) return undefined;
    for (const index of this.#indexes.values()) removeFromIndex(index, key, old);
    this.#items.delete(key);
    return old;
  }

  /** Iterates `[key, object]` pairs without copying. */
  entries(): IterableIterator<[string, T]> {
    return this.#items.entries();
  }
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function addToIndex<T extends KubeObject>(index: Index<T>, key: string, obj: T): void {
  addValues(index, key, index.fn(obj));
}

function removeFromIndex<T extends KubeObject>(index: Index<T>, key: string, obj: T): void {
  removeValues(index, key, index.fn(obj));
}

function addValues<T extends KubeObject>(index: Index<T>, key: string, values: readonly string[]): void {
  for (const value of values) {
    let keys = index.byValue.get(value);
    if (!keys) index.byValue.set(value, (keys = new Set()));
    keys.add(key);
  }
}

function removeValues<T extends KubeObject>(index: Index<T>, key: string, values: readonly string[]): void {
  for (const value of values) {
    const keys = index.byValue.get(value);
    if (!keys) continue;
    keys.delete(key);
    if (keys.size === 0) index.byValue.delete(value);
  }
}
