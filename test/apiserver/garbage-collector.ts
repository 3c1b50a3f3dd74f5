import type { KubeObject, OwnerReference } from '../../src/kube/object.ts';
import type { Clock, TimerHandle } from '../../src/runtime/clock.ts';
import { ApiStatusError, isNotFound } from '../../src/kube/api-status-error.ts';
import { cloneJson } from './json-equal.ts';
import type { RegistryStore } from './registry-store.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import { apiVersionOf, type ResourceType } from './resource-type.ts';
import type { Storage } from './storage.ts';
import type { StoredEvent } from './watch-hub.ts';

/** Options of {@link GarbageCollector}. */
export interface GarbageCollectorOptions {
  /** Delay between a change and the collector's pass (kube's GC reacts within tens of ms to ~1 s). @default 20 */
  readonly delayMs?: number;
  readonly clock: Clock;
}

/**
 * kube-controller-manager's garbage collector and namespace controller, run asynchronously after
 * changes: dependents whose owners (by uid) are all gone are deleted in the background; owners
 * being deleted in the foreground keep their `foregroundDeletion` finalizer until every dependent
 * with `blockOwnerDeletion` is gone; owners deleted with `orphan` have their references removed from
 * dependents; terminating namespaces are emptied and then removed.
 *
 * Incremental, as kube's graph builder is: an index of dependents by owner uid is kept from the
 * change stream, and a pass looks only at the objects a change concerns (the changed object, its
 * owners and its dependents), never at every stored object — a full scan per pass made each CronJob
 * write cost a walk over all objects, stalling the server's event loop under steady load.
 */
export class GarbageCollector {
  readonly #storage: Storage;
  readonly #store: RegistryStore;
  readonly #registry: ResourceRegistry;
  readonly #clock: Clock;
  readonly #delayMs: number;
  #timer: TimerHandle | undefined;
  #stopped = false;
  /** Dependent uids by owner uid (kube's GC graph, one level). */
  readonly #dependents = new Map<string, Set<string>>();
  /** Uids a pass must look at. */
  readonly #dirty = new Set<string>();
  /** Names of namespaces being deleted. */
  readonly #terminating = new Set<string>();

  constructor(storage: Storage, store: RegistryStore, registry: ResourceRegistry, options: GarbageCollectorOptions) {
    this.#storage = storage;
    this.#store = store;
    this.#registry = registry;
    this.#clock = options.clock;
    this.#delayMs = options.delayMs ?? 20;
    storage.onChange((e) => this.#observe(e));
  }

  /** Whether no stored object has `uid`, or the one that has it is being deleted. */
  #absentOrDeleting(uid: string): boolean {
    const at = this.#storage.byUid(uid);
    return at === undefined || this.#storage.get(at.gr, at.namespace, at.name)?.metadata.deletionTimestamp !== undefined;
  }

  /** Updates the graph from one change and marks what it concerns; schedules a pass when anything is. */
  #observe(e: StoredEvent): void {
    const meta = e.object.metadata;
    const uid = meta.uid ?? '';
    this.#index(e.prev, uid, false);
    if (e.type !== 'DELETED') this.#index(e.object, uid, true);
    // Owners named before or after the change that are absent or being deleted (a foreground owner may be
    // waiting for this dependent). An owner that exists and lives gives a pass nothing to do: kube's
    // graph builder queues a dependent for attemptToDelete only when an owner is missing or going.
    const owners = [...(e.prev?.metadata.ownerReferences ?? []), ...(e.type === 'DELETED' ? [] : (meta.ownerReferences ?? []))];
    let relevant = false;
    let ownerGone = false;
    for (const ref of owners) {
      if (!this.#absentOrDeleting(ref.uid)) continue;
      this.#dirty.add(ref.uid);
      relevant = ownerGone = true;
    }
    const dependents = this.#dependents.get(uid);
    if (e.type === 'DELETED' || meta.deletionTimestamp !== undefined) {
      // Gone or going: its dependents may dangle or wait, and it may hold orphan/foreground finalizers.
      if (e.type !== 'DELETED') this.#dirty.add(uid);
      for (const d of dependents ?? []) this.#dirty.add(d);
      relevant ||= e.type !== 'DELETED' || (dependents?.size ?? 0) > 0;
    } else if (ownerGone) {
      this.#dirty.add(uid);
    }
    if (e.gr === '/namespaces') {
      if (e.type === 'DELETED') this.#terminating.delete(meta.name ?? '');
      else if (meta.deletionTimestamp !== undefined) this.#terminating.add(meta.name ?? '');
    }
    if (relevant || this.#terminating.has(meta.namespace ?? '') || (e.gr === '/namespaces' && this.#terminating.size > 0)) this.kick();
  }

  #index(obj: KubeObject | undefined, uid: string, add: boolean): void {
    for (const ref of obj?.metadata.ownerReferences ?? []) {
      let set = this.#dependents.get(ref.uid);
      if (add) {
        if (!set) this.#dependents.set(ref.uid, (set = new Set()));
        set.add(uid);
      } else if (set) {
        set.delete(uid);
        if (set.size === 0) this.#dependents.delete(ref.uid);
      }
    }
  }

  /** Schedules a pass soon (coalesced). */
  kick(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      try {
        this.runOnce();
      } catch (err) {
        console.error('test API server: garbage collector pass failed', err);
      }
    }, this.#delayMs);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #typeOf(gr: string): ResourceType | undefined {
    const slash = gr.indexOf('/');
    const group = gr.slice(0, slash);
    const resource = gr.slice(slash + 1);
    return this.#registry.all().find((t) => t.group === group && t.resource === resource);
  }

  /** The stored object with `uid` and the type to write it back in (its stored version), if its kind is served. */
  #lookUp(uid: string): { type: ResourceType; obj: KubeObject } | undefined {
    const ref = this.#storage.byUid(uid);
    if (!ref) return undefined;
    const obj = this.#storage.get(ref.gr, ref.namespace, ref.name);
    const slash = ref.gr.indexOf('/');
    const versions = this.#registry.all().filter((t) => t.group === ref.gr.slice(0, slash) && t.resource === ref.gr.slice(slash + 1));
    const first = versions[0];
    if (!obj || !first) return undefined;
    // Written back in the version it is stored in (a multi-version CRD's other versions would need its webhook).
    return { type: versions.find((t) => apiVersionOf(t) === obj.apiVersion) ?? first, obj };
  }

  /**
   * Runs one GC write. An API error (gone, conflict, or an object that no longer validates) is
   * retried by a later pass, as kube's GC requeues; it must never crash the server from a timer.
   */
  #tolerate(uid: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof ApiStatusError)) throw err;
      if (!isNotFound(err)) this.#retry.add(uid);
    }
  }

  readonly #retry = new Set<string>();

  #removeFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): void {
    const next = cloneJson(obj);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    this.#tolerate(obj.metadata.uid ?? '', () => this.#store.update(type, obj.metadata.namespace, obj.metadata.name ?? '', next));
  }

  #setOwnerRefs(type: ResourceType, obj: KubeObject, refs: OwnerReference[]): void {
    const next = cloneJson(obj);
    if (refs.length > 0) next.metadata.ownerReferences = refs;
    else delete next.metadata.ownerReferences;
    this.#tolerate(obj.metadata.uid ?? '', () => this.#store.update(type, obj.metadata.namespace, obj.metadata.name ?? '', next));
  }

  /** One pass over the objects changes concerned since the last; the writes it makes mark what they concern in turn. */
  runOnce(): void {
    const uids = [...this.#dirty];
    this.#dirty.clear();
    for (const uid of uids) this.#attempt(uid);
    this.#cleanNamespaces();
    if (this.#retry.size > 0) {
      const retry = [...this.#retry];
      this.#retry.clear();
      // Failed writes come back later, with a back-off instead of a hot loop.
      this.#clock.setTimeout(() => {
        for (const uid of retry) this.#dirty.add(uid);
        this.kick();
      }, 500);
    }
  }

  /** kube's attemptToDeleteItem (and the orphan/foreground finalizer handling) for one object. */
  #attempt(uid: string): void {
    const found = this.#lookUp(uid);
    if (!found) return;
    const { type, obj } = found;
    const meta = obj.metadata;
    if (meta.deletionTimestamp) {
      const deps = [...(this.#dependents.get(uid) ?? [])].flatMap((d) => {
        const dep = this.#lookUp(d);
        const ref = dep?.obj.metadata.ownerReferences?.find((r) => r.uid === uid);
        return dep && ref ? [{ ...dep, ref }] : [];
      });
      if (meta.finalizers?.includes('orphan')) {
        for (const d of deps) this.#setOwnerRefs(d.type, d.obj, (d.obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid));
        this.#removeFinalizer(type, obj, 'orphan');
        return;
      }
      if (meta.finalizers?.includes('foregroundDeletion')) {
        // Dependents are deleted by their own attempt (their owner is "waiting for dependents deletion").
        if (!deps.some((d) => d.ref.blockOwnerDeletion === true)) this.#removeFinalizer(type, obj, 'foregroundDeletion');
        return;
      }
    }
    const refs = meta.ownerReferences ?? [];
    if (refs.length === 0 || meta.deletionTimestamp) return;
    const owners = new Map(refs.map((r) => [r.uid, this.#lookUp(r.uid)?.obj]));
    const dangling = refs.filter((r) => owners.get(r.uid) === undefined);
    const waiting = refs.filter((r) => {
      const owner = owners.get(r.uid);
      return owner?.metadata.deletionTimestamp !== undefined && (owner.metadata.finalizers ?? []).includes('foregroundDeletion');
    });
    const solid = refs.length - dangling.length - waiting.length;
    if (dangling.length === 0 && waiting.length === 0) return;
    if (solid > 0) {
      // Some owner still exists: only drop the references to the absent/terminating ones (kube attemptToDeleteItem).
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      this.#setOwnerRefs(type, obj, refs.filter((r) => !drop.has(r.uid)));
    } else {
      // kube attemptToDeleteItem: foreground only when an owner waits and this item has dependents itself;
      // otherwise the item's own GC finalizers decide, defaulting to background.
      const hasDependents = (this.#dependents.get(uid)?.size ?? 0) > 0;
      const own = meta.finalizers ?? [];
      const policy = waiting.length > 0 && hasDependents ? 'Foreground' : own.includes('orphan') ? 'Orphan' : own.includes('foregroundDeletion') ? 'Foreground' : 'Background';
      this.#tolerate(uid, () => this.#store.delete(type, meta.namespace, meta.name ?? '', { propagationPolicy: policy }));
    }
  }

  /** The namespace controller: empties terminating namespaces, then drops the `kubernetes` finalizer. */
  #cleanNamespaces(): void {
    const nsType = this.#typeOf('/namespaces');
    if (!nsType) return;
    for (const name of [...this.#terminating]) {
      const ns = this.#storage.get('/namespaces', '', name);
      if (!ns?.metadata.deletionTimestamp) continue;
      let remaining = 0;
      for (const type of this.#registry.all()) {
        if (!type.namespaced) continue;
        for (const obj of this.#storage.list(`${type.group}/${type.resource}`, name)) {
          remaining++;
          if (!obj.metadata.deletionTimestamp) this.#tolerate(obj.metadata.uid ?? '', () => this.#store.delete(type, name, obj.metadata.name ?? '', { propagationPolicy: 'Background' }));
        }
      }
      const spec = (ns['spec'] as { finalizers?: string[] } | undefined) ?? {};
      if (remaining === 0 && (spec.finalizers ?? []).includes('kubernetes')) {
        const next = cloneJson(ns);
        (next['spec'] as { finalizers?: string[] }).finalizers = (spec.finalizers ?? []).filter((f) => f !== 'kubernetes');
        this.#tolerate(ns.metadata.uid ?? '', () => this.#store.update(nsType, undefined, name, next, { subresource: 'finalize' }));
      }
    }
  }
}
