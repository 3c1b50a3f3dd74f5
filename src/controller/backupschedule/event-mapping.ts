/**
 * Which BackupSchedule a watch event concerns (controller-runtime's `EnqueueRequestForObject` and
 * `EnqueueRequestForOwner` with `OnlyControllerOwner`), and what the caches keep of each object.
 */
import { isBackupScheduleRef } from '../../pure/child-claim.ts';
import { childLabels } from '../../pure/labels.ts';
import { childNameFor } from '../../pure/names.ts';
import { controllerOf, objectKey, type KubeObject, type ObjectMeta, type OwnerReference } from '../../kube/object.ts';
import type { CachePolicy } from '../../runtime/cache-policy.ts';
import { jsonLengthWithin } from '../../runtime/json-size.ts';
import { StringInterner } from '../../runtime/string-interner.ts';
import type { BackupScheduleObject } from '../resources.ts';

/** One interner for both caches: schedules and their children share most values. */
const interner = new StringInterner();

/** A BackupSchedule event enqueues the schedule itself. */
export function scheduleKey(schedule: KubeObject): string {
  return objectKey(schedule.metadata);
}

/**
 * A CronJob event enqueues the BackupSchedule that controls it, if any: a CronJob whose controller
 * ownerReference is a `BackupSchedule` of `kubelings.dev` (any version). Owner references are
 * namespace-local, so the owner lives in the CronJob's namespace. Other CronJobs map to nothing: one
 * with a child's name but another owner is found by the schedule's own reconcile, not through here.
 */
export function ownerScheduleKey(cronJob: KubeObject): string | undefined {
  const owner = controllerOf(cronJob.metadata);
  if (!owner || !isBackupScheduleRef(owner)) return undefined;
  return objectKey({ namespace: cronJob.metadata.namespace, name: owner.name });
}

/** The metadata fields reconcile reads of either kind; everything else of `metadata` is dropped. */
const KEPT_METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'deletionTimestamp'] as const;

/** The label keys the operator puts on its children: the only labels the CronJob cache keeps. */
const OUR_LABELS: ReadonlySet<string> = new Set(Object.keys(childLabels('x')));

function pickMetadata(metadata: ObjectMeta): ObjectMeta {
  const kept: ObjectMeta = {};
  for (const field of KEPT_METADATA) if (metadata[field] !== undefined) (kept as Record<string, unknown>)[field] = metadata[field];
  return kept;
}

/** A new object with `obj`'s apiVersion and kind (when set) and `metadata`. */
function withTypeMeta(obj: KubeObject, metadata: ObjectMeta): KubeObject & Record<string, unknown> {
  const kept: KubeObject & Record<string, unknown> = { metadata };
  if (obj.apiVersion !== undefined) kept.apiVersion = obj.apiVersion;
  if (obj.kind !== undefined) kept.kind = obj.kind;
  return kept;
}

/**
 * Cache transform for the custom resources (BackupSchedules, Restores): keeps what reconcile reads
 * (`name`, `namespace`, `uid`, `generation`, `resourceVersion`, `deletionTimestamp`, `creationTimestamp`,
 * `spec`, `status`) and drops the rest of the metadata: labels, annotations (a 250 KiB one is allowed),
 * `managedFields`, owner references, finalizers. So a cached object's size does not grow with what
 * users put in its metadata; its `spec` is bounded by the CRD's schema. Safe because both kinds are
 * written only through `/status`, which keeps the stored metadata and takes only `status` from the
 * request (apiextensions' `statusStrategy.PrepareForUpdate`). String values are interned.
 */
export function stripCustomResource<T extends KubeObject>(obj: T): T {
  const { spec, status } = obj as KubeObject & { spec?: unknown; status?: unknown };
  const metadata = pickMetadata(obj.metadata);
  // When nothing was due yet (src/pure/missed-runs.ts): a run due before the schedule existed is not missed.
  if (typeof obj.metadata.creationTimestamp === 'string' && obj.metadata.creationTimestamp.length <= 64) metadata.creationTimestamp = obj.metadata.creationTimestamp;
  const kept = withTypeMeta(obj, metadata);
  if (spec !== undefined) kept['spec'] = spec;
  if (status !== undefined) kept['status'] = status;
  return interner.internDeep(kept) as T;
}

interface CronJobStatusView {
  readonly active?: readonly { readonly name?: unknown }[];
  readonly lastScheduleTime?: unknown;
  readonly lastSuccessfulTime?: unknown;
}

/**
 * The most of a child's `spec`, `ownerReferences` and `status.active` (JSON characters, together) the
 * cache keeps; a larger child is cached as a stub and read with a GET when reconcile needs it. The
 * child `buildCronJob` makes, server defaults included, is ~3 KB: the budget leaves room for what
 * other writers add and bounds what one BackupSchedule makes the controller hold, whatever its child is
 * made to carry (an object may be ~1.5 MiB in etcd).
 */
export const CHILD_CACHE_BUDGET = 16 * 1024;

/** Longest owner reference field a stub keeps (a name or a `group/version`: 253 + 1 + 63). */
const MAX_REF_FIELD = 317;

/** The controller reference of `metadata`, its six fields only, or undefined when it has none or an absurdly long field. */
export function boundedControllerRef(metadata: ObjectMeta): OwnerReference | undefined {
  const ref = controllerOf(metadata);
  if (!ref) return undefined;
  const { apiVersion, kind, name, uid, blockOwnerDeletion } = ref;
  for (const field of [apiVersion, kind, name, uid]) if (typeof field !== 'string' || field.length > MAX_REF_FIELD) return undefined;
  return { apiVersion, kind, name, uid, controller: true, ...(blockOwnerDeletion !== undefined ? { blockOwnerDeletion } : {}) };
}

/** A timestamp of the CronJob's status as the cache keeps it: a string of RFC 3339's length, or nothing. */
function timestamp(value: unknown): unknown {
  return typeof value === 'string' && value.length <= 64 ? value : undefined;
}

/**
 * Whether the cache holds `cronJob` whole enough for reconcile to heal it from the cache: its `spec`
 * and every owner reference. A stub ({@link stripCronJob}) is read with a GET instead.
 */
export function cachedWhole(cronJob: KubeObject): boolean {
  return cronJob['spec'] !== undefined;
}

/**
 * Cache transform for CronJobs (the informer sees only the operator's children, by label). What one
 * namespace can make the controller hold this way is bounded per CronJob (docs/tenant-bounds.md):
 *
 * - every cached CronJob: the metadata reconcile reads (server-set or length-validated), only OUR
 *   labels (six keys, values ≤ 63 characters), its controller reference (six fields, each ≤ 317
 *   characters, or none) and the two status timestamps;
 * - only the child this controller builds for its owner (`name` = childName(controller), the
 *   controller a BackupSchedule) keeps its `spec`, all its owner references (a merge patch of them
 *   replaces the list whole) and the names in `status.active`, and only within
 *   {@link CHILD_CACHE_BUDGET}. Any other CronJob — one with our labels and another name, or a child
 *   made larger than the budget — is a stub, read with a GET when it matters ({@link cachedWhole}).
 *
 * No annotations: the children carry none of ours, and the controller writes them with merge patches
 * naming only its own fields (src/pure/child-patch.ts), so what the cache dropped is never written
 * back. String values are interned.
 */
export function stripCronJob<T extends KubeObject>(obj: T): T {
  const metadata = pickMetadata(obj.metadata);
  const labels = Object.entries(obj.metadata.labels ?? {}).filter(([key]) => OUR_LABELS.has(key));
  if (labels.length > 0) metadata.labels = Object.fromEntries(labels);
  const controller = boundedControllerRef(obj.metadata);
  const { spec, status } = obj as KubeObject & { spec?: unknown; status?: CronJobStatusView };
  const active = Array.isArray(status?.active) ? status.active : undefined;
  const whole =
    spec !== undefined &&
    controller !== undefined &&
    isBackupScheduleRef(controller) &&
    obj.metadata.name === childNameFor(controller.name) &&
    jsonLengthWithin([spec, obj.metadata.ownerReferences, active?.map((ref) => ref?.name)], CHILD_CACHE_BUDGET) <= CHILD_CACHE_BUDGET;
  if (whole && obj.metadata.ownerReferences !== undefined) metadata.ownerReferences = obj.metadata.ownerReferences;
  else if (controller) metadata.ownerReferences = [controller];
  const kept = withTypeMeta(obj, metadata);
  if (whole) kept['spec'] = spec;
  if (status) {
    const view: Record<string, unknown> = {};
    if (whole && active) view['active'] = active.map((ref) => ({ name: ref?.name }));
    const lastScheduleTime = timestamp(status.lastScheduleTime);
    if (lastScheduleTime !== undefined) view['lastScheduleTime'] = lastScheduleTime;
    const lastSuccessfulTime = timestamp(status.lastSuccessfulTime);
    if (lastSuccessfulTime !== undefined) view['lastSuccessfulTime'] = lastSuccessfulTime;
    kept['status'] = view;
  }
  return interner.internDeep(kept) as T;
}

/**
 * What the BackupSchedule caches keep ({@link stripCustomResource}), within 64 KiB an object: the
 * largest spec the schema admits is ~9 KiB and the status the controller writes a few KiB; a status
 * someone else inflated (16 conditions of 32 KiB each are valid: ~550 KiB) is cached as a stub and
 * read with a GET by each reconcile of its schedule.
 */
export const SCHEDULE_CACHE: CachePolicy<BackupScheduleObject> = { transform: stripCustomResource, maxObjectBytes: 64 * 1024 };

/**
 * What the CronJob caches keep ({@link stripCronJob}): the child within {@link CHILD_CACHE_BUDGET} and
 * its bounded metadata and status, so the budget is never reached; every other labelled CronJob is a
 * stub of ≤ ~2.5 KB already.
 */
export const CRON_JOB_CACHE: CachePolicy<KubeObject> = { transform: stripCronJob, maxObjectBytes: CHILD_CACHE_BUDGET + 4 * 1024 };
