import type { KubeObject } from '../../src/kube/object.ts';
import { identityDecoder, type StorageDecoder } from './storage-decoder.ts';
import { shareSubtrees } from './structural-sharing.ts';
import { WatchHub, type StoredEvent } from './watch-hub.ts';

/** Where an object lives. */
export interface ObjectRef {
  readonly gr: string;
  readonly namespace: string;
  readonly name: string;
}

/** Called after every committed change (garbage collector, RBAC cache). */
export type ChangeListener = (event: StoredEvent) => void;

/**
 * The etcd of the test server: objects by `group/resource`, namespace and name, one global
 * resourceVersion counter, a uid index, and the watch history. Stored objects are never mutated:
 * every write stores a new object, so readers may serialize them without copying, and a version may
 * share its unchanged subtrees with the one before. Reads (get, list, watch events, the object a write
 * returns) go through the decoder, as kube's reads go through its storage codec (storage-decoder.ts);
 * {@link listRaw} shows the bytes as stored.
 */
export class Storage {
  #rv = 1;
  readonly #tables = new Map<string, Map<string, Map<string, KubeObject>>>();
  readonly #uids = new Map<string, ObjectRef>();
  readonly #listeners: ChangeListener[] = [];
  #decode: StorageDecoder = identityDecoder;
  readonly hub: WatchHub;

  constructor(watchHistorySize: number) {
    this.hub = new WatchHub(watchHistorySize);
  }

  /** The current (newest) resourceVersion. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** Sets how stored objects are decoded for readers (custom resource defaults: storage-decoder.ts). */
  setDecoder(decode: StorageDecoder): void {
    this.#decode = decode;
  }

  onChange(listener: ChangeListener): void {
    this.#listeners.push(listener);
  }

  get(gr: string, namespace: string, name: string): KubeObject | undefined {
    const stored = this.#tables.get(gr)?.get(namespace)?.get(name);
    return stored && this.#decode(gr, stored);
  }

  /** Where the object with this uid lives, if it exists. */
  byUid(uid: string): ObjectRef | undefined {
    return this.#uids.get(uid);
  }

  /** Objects of `gr` (in `namespace`, or all when undefined), sorted by namespace then name like etcd keys. */
  list(gr: string, namespace?: string): KubeObject[] {
    return this.listRaw(gr, namespace).map((o) => this.#decode(gr, o));
  }

  /** Objects of `gr` exactly as stored, not decoded (`etcdctl get --prefix`), in {@link list}'s order. */
  listRaw(gr: string, namespace?: string): KubeObject[] {
    const table = this.#tables.get(gr);
    if (!table) return [];
    const namespaces = namespace === undefined ? [...table.keys()].sort() : [namespace];
    const out: KubeObject[] = [];
    for (const ns of namespaces) {
      const objs = table.get(ns);
      if (!objs) continue;
      for (const name of [...objs.keys()].sort()) out.push(objs.get(name) as KubeObject);
    }
    return out;
  }

  /**
   * Objects of `gr` as they were at resourceVersion `rv` (etcd's MVCC read), rebuilt by undoing the
   * retained history newer than `rv`; undefined when that history has been compacted away.
   */
  listAt(gr: string, namespace: string | undefined, rv: number): KubeObject[] | undefined {
    if (rv >= this.#rv) return this.list(gr, namespace);
    const events = this.hub.eventsAfter(rv, gr);
    if (!events) return undefined;
    if (events.length === 0) return this.list(gr, namespace);
    const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
    const state = new Map<string, KubeObject>();
    for (const o of this.list(gr, namespace)) state.set(key(o), o);
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i] as StoredEvent;
      if (namespace !== undefined && (e.object.metadata.namespace ?? '') !== namespace) continue;
      if (e.type === 'ADDED') state.delete(key(e.object));
      else if (e.prev) state.set(key(e.prev), e.prev);
    }
    return [...state.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  /** Number of objects of `gr` (in `namespace`, or all). */
  count(gr: string, namespace?: string): number {
    const table = this.#tables.get(gr);
    if (!table) return 0;
    if (namespace !== undefined) return table.get(namespace)?.size ?? 0;
    let n = 0;
    for (const objs of table.values()) n += objs.size;
    return n;
  }

  /** Total objects stored. */
  size(): number {
    let n = 0;
    for (const gr of this.#tables.keys()) n += this.count(gr);
    return n;
  }

  /** Stores a new object, stamping the next resourceVersion; returns the stored object. */
  create(gr: string, obj: KubeObject): KubeObject {
    return this.#write(gr, obj, undefined);
  }

  /** Replaces `prev` with `obj`, stamping the next resourceVersion. */
  update(gr: string, obj: KubeObject, prev: KubeObject): KubeObject {
    return this.#write(gr, obj, prev);
  }

  /** Removes the object; the DELETED event carries it with the deletion's resourceVersion (like etcd). */
  remove(gr: string, prev: KubeObject): KubeObject {
    const { namespace = '', name = '' } = prev.metadata;
    const objs = this.#tables.get(gr)?.get(namespace);
    objs?.delete(name);
    if (objs?.size === 0) this.#tables.get(gr)?.delete(namespace);
    if (prev.metadata.uid) this.#uids.delete(prev.metadata.uid);
    const rv = ++this.#rv;
    const gone = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rv) } };
    const shown = this.#decode(gr, gone);
    this.#emit({ rv, gr, type: 'DELETED', object: shown, prev });
    return shown;
  }

  #write(gr: string, obj: KubeObject, prev: KubeObject | undefined): KubeObject {
    const rv = ++this.#rv;
    // The versions the watch history retains share what they have in common (structural-sharing.ts).
    const written = prev ? shareSubtrees(obj, prev) : obj;
    const stored = { ...written, metadata: { ...written.metadata, resourceVersion: String(rv) } };
    const { namespace = '', name = '' } = stored.metadata;
    let table = this.#tables.get(gr);
    if (!table) this.#tables.set(gr, (table = new Map()));
    let objs = table.get(namespace);
    if (!objs) table.set(namespace, (objs = new Map()));
    objs.set(name, stored);
    if (stored.metadata.uid) this.#uids.set(stored.metadata.uid, { gr, namespace, name });
    // Watchers and the writer get the object as decoded from storage, like every other reader.
    const shown = this.#decode(gr, stored);
    this.#emit({ rv, gr, type: prev ? 'MODIFIED' : 'ADDED', object: shown, prev });
    return shown;
  }

  #emit(event: StoredEvent): void {
    this.hub.publish(event);
    for (const l of this.#listeners) l(event);
  }
}
