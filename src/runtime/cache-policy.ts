/**
 * What an informer may keep of each object it caches. Whoever may create an object the controller
 * watches chooses its size (an annotation of 256 KiB on any kind, a spec of up to ~1.5 MiB on a
 * built-in one), and a cluster-wide controller caches every one of them: issue 30's 750 CronJobs and
 * issue 41's 750 Restores each ran it out of heap. So every informer has a policy (the manager,
 * src/runtime/manager.ts, builds none without one): a transform that keeps only what its readers read,
 * and a byte budget per object, applied after the transform. An object the transform leaves larger than
 * the budget is cached as a stub of its identity ({@link isCacheStub}); a reader that meets one reads
 * the object whole with one GET ({@link readWhole}), so a large object costs a request, never memory
 * that stays.
 */
import { isNotFound } from '../kube/api-status-error.ts';
import { controllerOf, type KubeObject, type ObjectMeta } from '../kube/object.ts';
import { jsonLengthWithin } from './json-size.ts';

/** What an informer caches of each object. */
export interface CachePolicy<T extends KubeObject> {
  /** Keeps what the cache's readers read and drops the rest; may return its input changed. */
  readonly transform: (obj: T) => T;
  /**
   * The most one transformed object may hold, in JSON characters ({@link jsonLengthWithin}); a larger
   * one is cached as a stub. Between 1 KiB and {@link MAX_OBJECT_BUDGET}.
   */
  readonly maxObjectBytes: number;
}

/** The largest per-object budget a policy may ask for: beyond it, a budget bounds nothing that matters. */
export const MAX_OBJECT_BUDGET = 64 * 1024;

/** Longest string a stub keeps of a metadata field (names are at most 253, a controller reference's group/version 317). */
const MAX_STUB_FIELD = 317;

/** The stubs in caches: a stub is a plain object, marked here rather than by a field a reader could mistake for data. */
const stubs = new WeakSet<KubeObject>();

/** Whether `obj` is a stub: its identity only, its kind's data left out because it was over its budget. */
export function isCacheStub(obj: KubeObject): boolean {
  return stubs.has(obj);
}

function bounded(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_STUB_FIELD ? value : undefined;
}

/**
 * The stub of `obj`: apiVersion, kind, the metadata that identifies it and orders its versions (name,
 * namespace, uid, resourceVersion, generation, creation and deletion timestamps) and its controller
 * reference (what maps an event to its owner), each field bounded. At most ~2 KB whatever `obj` holds.
 */
export function cacheStub<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  const metadata: ObjectMeta = {};
  for (const field of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'] as const) {
    const value = bounded(meta[field]);
    if (value !== undefined) metadata[field] = value;
  }
  if (typeof meta.generation === 'number') metadata.generation = meta.generation;
  const ref = controllerOf(meta);
  const [apiVersion, kind, name, uid] = [ref?.apiVersion, ref?.kind, ref?.name, ref?.uid].map(bounded);
  if (apiVersion !== undefined && kind !== undefined && name !== undefined && uid !== undefined) metadata.ownerReferences = [{ apiVersion, kind, name, uid, controller: true }];
  const stub: KubeObject = { metadata };
  const [typeVersion, typeKind] = [bounded(obj.apiVersion), bounded(obj.kind)];
  if (typeVersion !== undefined) stub.apiVersion = typeVersion;
  if (typeKind !== undefined) stub.kind = typeKind;
  stubs.add(stub);
  return stub as T;
}

/** Whether `policy` is one a manager accepts; throws naming what is wrong. */
export function checkCachePolicy<T extends KubeObject>(policy: CachePolicy<T> | undefined, informer: string): void {
  if (typeof policy?.transform !== 'function') throw new TypeError(`informer ${informer}: a cache policy with a transform is required (src/runtime/cache-policy.ts)`);
  const budget = policy.maxObjectBytes;
  if (!Number.isInteger(budget) || budget < 1024 || budget > MAX_OBJECT_BUDGET) {
    throw new RangeError(`informer ${informer}: cache policy maxObjectBytes must be an integer from 1024 to ${MAX_OBJECT_BUDGET}, got ${String(budget)}`);
  }
}

/** The transform an informer applies: the policy's, then the budget (a stub when over it). */
export function budgetedTransform<T extends KubeObject>(policy: CachePolicy<T>): (obj: T) => T {
  const { transform, maxObjectBytes } = policy;
  return (obj) => {
    const kept = transform(obj);
    return jsonLengthWithin(kept, maxObjectBytes) <= maxObjectBytes ? kept : cacheStub(kept);
  };
}

/**
 * `cached` when the cache holds it whole; when it holds a stub, the object read with `get` (one GET),
 * or undefined when the API server says it is gone (404). Undefined when not cached.
 */
export async function readWhole<T extends KubeObject>(cached: T | undefined, get: () => Promise<T>): Promise<T | undefined> {
  if (cached === undefined || !isCacheStub(cached)) return cached;
  try {
    return await get();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
