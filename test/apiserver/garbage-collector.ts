import type { KubeObject, OwnerReference } from '../../src/kube/object.ts';
import type { Clock, TimerHandle } from '../../src/runtime/clock.ts';
import { ApiStatusError, isNotFound } from '../../src/kube/api-status-error.ts';
import { cloneJson } from './json-equal.ts';
import type { RegistryStore } from './registry-store.ts';
import type { ResourceRegistry } from './resource-registry.ts';
import { apiVersionOf, type ResourceType } from './resource-type.ts';
import type { Storage } from './storage.ts';

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
 */
export class GarbageCollector {
  readonly #storage: Storage;
  readonly #store: RegistryStore;
  readonly #registry: ResourceRegistry;
  readonly #clock: Clock;
  readonly #delayMs: number;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(storage: Storage, store: RegistryStore, registry: ResourceRegistry, options: GarbageCollectorOptions) {
    this.#storage = storage;
    this.#store = store;
    this.#registry = registry;
    this.#clock = options.clock;
    this.#delayMs = options.delayMs ?? 20;
    storage.onChange((e) => {
      // Only changes that can concern the collector schedule a pass, so bulk writes of plain objects cost nothing.
      const meta = e.object.metadata;
      const hasOwners = (meta.ownerReferences?.length ?? 0) > 0;
      const inTerminatingNamespace = meta.namespace !== undefined && storage.get('/namespaces', '', meta.namespace)?.metadata.deletionTimestamp !== undefined;
      const relevant =
        e.type === 'DELETED'
          ? // an owner's dependents, a foreground owner waiting for this dependent, a terminating namespace emptied
            this.#owners.has(meta.uid ?? '') || hasOwners || e.gr === '/namespaces' || inTerminatingNamespace
          : meta.deletionTimestamp !== undefined || (hasOwners && (inTerminatingNamespace || this.#ownerAbsentOrDeleting(meta.ownerReferences ?? [])));
      if (relevant) this.kick();
      this.#index(e.prev, -1);
      if (e.type !== 'DELETED') this.#index(e.object, 1);
    });
  }

  /**
   * Whether a dependent written with these owners gives a pass anything to do: an owner absent (its uid
   * stored nowhere) or being deleted. A dependent whose owners all exist and live is left alone, as
   * kube's graph builder does (it queues a dependent for `attemptToDelete` only when an owner is missing
   * from its graph or being deleted): a full pass after every such write cost this server time growing
   * with the number of stored objects, for every child a controller creates.
   */
  #ownerAbsentOrDeleting(refs: readonly OwnerReference[]): boolean {
    return refs.some((ref) => {
      const at = this.#storage.byUid(ref.uid);
      return at === undefined || this.#storage.get(at.gr, at.namespace, at.name)?.metadata.deletionTimestamp !== undefined;
    });
  }

  /** Number of dependents referencing each owner uid. */
  readonly #owners = new Map<string, number>();

  #index(obj: KubeObject | undefined, delta: number): void {
    for (const ref of obj?.metadata.ownerReferences ?? []) {
      const n = (this.#owners.get(ref.uid) ?? 0) + delta;
      if (n <= 0) this.#owners.delete(ref.uid);
      else this.#owners.set(ref.uid, n);
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

  #allObjects(): { gr: string; type: ResourceType; obj: KubeObject }[] {
    const out: { gr: string; type: ResourceType; obj: KubeObject }[] = [];
    const seen = new Set<string>();
    const types = this.#registry.all();
    for (const type of types) {
      const gr = `${type.group}/${type.resource}`;
      if (seen.has(gr)) continue;
      seen.add(gr);
      // Written back in the version it is stored in (a multi-version CRD's other versions would need its webhook).
      const versions = types.filter((t) => t.group === type.group && t.resource === type.resource);
      for (const obj of this.#storage.list(gr)) out.push({ gr, type: versions.find((t) => apiVersionOf(t) === obj.apiVersion) ?? type, obj });
    }
    return out;
  }

  /**
   * Runs one GC write. An API error (gone, conflict, or an object that no longer validates) is
   * retried by the next pass, as kube's GC requeues; it must never crash the server from a timer.
   */
  #tolerate(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (!(err instanceof ApiStatusError)) throw err;
      if (!isNotFound(err)) this.#retry = true;
    }
  }

  #retry = false;

  #removeFinalizer(type: ResourceType, obj: KubeObject, finalizer: string): void {
    const next = cloneJson(obj);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    this.#tolerate(() => this.#store.update(type, obj.metadata.namespace, obj.metadata.name ?? '', next));
  }

  #setOwnerRefs(type: ResourceType, obj: KubeObject, refs: OwnerReference[]): void {
    const next = cloneJson(obj);
    if (refs.length > 0) next.metadata.ownerReferences = refs;
    else delete next.metadata.ownerReferences;
    this.#tolerate(() => this.#store.update(type, obj.metadata.namespace, obj.metadata.name ?? '', next));
  }

  /** One full pass; schedules another when it changed something. */
  runOnce(): void {
    let changed = false;
    const objects = this.#allObjects();
    const byUid = new Map<string, KubeObject>();
    for (const { obj } of objects) if (obj.metadata.uid) byUid.set(obj.metadata.uid, obj);
    const dependentsOf = new Map<string, { type: ResourceType; obj: KubeObject; ref: OwnerReference }[]>();
    for (const entry of objects) {
      for (const ref of entry.obj.metadata.ownerReferences ?? []) {
        const list = dependentsOf.get(ref.uid) ?? [];
        list.push({ type: entry.type, obj: entry.obj, ref });
        dependentsOf.set(ref.uid, list);
      }
    }
    for (const { type, obj } of objects) {
      const meta = obj.metadata;
      if (meta.deletionTimestamp && meta.uid) {
        const deps = dependentsOf.get(meta.uid) ?? [];
        if (meta.finalizers?.includes('orphan')) {
          for (const d of deps) this.#setOwnerRefs(d.type, d.obj, (d.obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== meta.uid));
          this.#removeFinalizer(type, obj, 'orphan');
          changed = true;
          continue;
        }
        if (meta.finalizers?.includes('foregroundDeletion')) {
          // Dependents are deleted by their own pass below (their owner is "waiting for dependents deletion").
          if (!deps.some((d) => d.ref.blockOwnerDeletion === true)) {
            this.#removeFinalizer(type, obj, 'foregroundDeletion');
            changed = true;
          }
          continue;
        }
      }
      const refs = meta.ownerReferences ?? [];
      if (refs.length === 0 || meta.deletionTimestamp) continue;
      const dangling = refs.filter((r) => !byUid.has(r.uid));
      const waiting = refs.filter((r) => {
        const owner = byUid.get(r.uid);
        return owner?.metadata.deletionTimestamp !== undefined && (owner.metadata.finalizers ?? []).includes('foregroundDeletion');
      });
      const solid = refs.length - dangling.length - waiting.length;
      if (dangling.length === 0 && waiting.length === 0) continue;
      changed = true;
      if (solid > 0) {
        // Some owner still exists: only drop the references to the absent/terminating ones (kube attemptToDeleteItem).
        const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
        this.#setOwnerRefs(type, obj, refs.filter((r) => !drop.has(r.uid)));
      } else {
        // kube attemptToDeleteItem: foreground only when an owner waits and this item has dependents itself;
        // otherwise the item's own GC finalizers decide, defaulting to background.
        const hasDependents = (dependentsOf.get(meta.uid ?? '')?.length ?? 0) > 0;
        const own = meta.finalizers ?? [];
        const policy = waiting.length > 0 && hasDependents ? 'Foreground' : own.includes('orphan') ? 'Orphan' : own.includes('foregroundDeletion') ? 'Foreground' : 'Background';
        this.#tolerate(() => this.#store.delete(type, meta.namespace, meta.name ?? '', { propagationPolicy: policy }));
      }
    }
    if (this.#cleanNamespaces()) changed = true;
    if (this.#retry) {
      this.#retry = false;
      // Failed writes come back later, with a back-off instead of a hot loop.
      this.#clock.setTimeout(() => this.kick(), 500);
    } else if (changed) this.kick();
  }

  /** The namespace controller: empties terminating namespaces, then drops the `kubernetes` finalizer. */
  #cleanNamespaces(): boolean {
    let changed = false;
    const nsType = this.#typeOf('/namespaces');
    if (!nsType) return false;
    for (const ns of this.#storage.list('/namespaces')) {
      if (!ns.metadata.deletionTimestamp) continue;
      const name = ns.metadata.name ?? '';
      let remaining = 0;
      for (const type of this.#registry.all()) {
        if (!type.namespaced) continue;
        for (const obj of this.#storage.list(`${type.group}/${type.resource}`, name)) {
          remaining++;
          if (!obj.metadata.deletionTimestamp) {
            this.#tolerate(() => this.#store.delete(type, name, obj.metadata.name ?? '', { propagationPolicy: 'Background' }));
            changed = true;
          }
        }
      }
      const spec = (ns['spec'] as { finalizers?: string[] } | undefined) ?? {};
      if (remaining === 0 && (spec.finalizers ?? []).includes('kubernetes')) {
        const next = cloneJson(ns);
        (next['spec'] as { finalizers?: string[] }).finalizers = (spec.finalizers ?? []).filter((f) => f !== 'kubernetes');
        this.#tolerate(() => this.#store.update(nsType, undefined, name, next, { subresource: 'finalize' }));
        changed = true;
      }
    }
    return changed;
  }
}
