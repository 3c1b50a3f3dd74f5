/**
 * Which BackupSchedule a watch event concerns (controller-runtime's `EnqueueRequestForObject` and
 * `EnqueueRequestForOwner` with `OnlyControllerOwner`), and what the caches keep of each object.
 */
import { isBackupScheduleRef } from '../pure/child-claim.ts';
import { childLabels } from '../pure/labels.ts';
import { controllerOf, objectKey, type KubeObject, type ObjectMeta } from '../kube/object.ts';
import { StringInterner } from '../runtime/string-interner.ts';

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
 * Cache transform for BackupSchedules: keeps what reconcile reads (`name`, `namespace`, `uid`,
 * `generation`, `resourceVersion`, `deletionTimestamp`, `spec`, `status`) and drops the rest of the
 * metadata: labels, annotations (a 250 KiB one is allowed), `managedFields`, owner references,
 * finalizers. So a cached schedule's size does not grow with what users put in its metadata. Safe
 * because schedules are written only through `/status`, which keeps the stored metadata and takes only
 * `status` from the request (apiextensions' `statusStrategy.PrepareForUpdate`). String values are interned.
 */
export function stripSchedule<T extends KubeObject>(obj: T): T {
  const { spec, status } = obj as KubeObject & { spec?: unknown; status?: unknown };
  const kept = withTypeMeta(obj, pickMetadata(obj.metadata));
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
 * Cache transform for CronJobs (the informer sees only the operator's children, by label): keeps the
 * metadata reconcile reads, only OUR labels, the owner references, the `spec` (only when a BackupSchedule
 * controls the CronJob: anything else is looked at with a GET when it matters, so a labelled foreign
 * CronJob costs no more than its metadata), and `status.active` (names), `lastScheduleTime`,
 * `lastSuccessfulTime`. No annotations: the children carry none of ours, and the controller writes them
 * with merge patches naming only its own fields (src/pure/child-patch.ts), so what the cache dropped is
 * never written back. String values are interned.
 */
export function stripCronJob<T extends KubeObject>(obj: T): T {
  const metadata = pickMetadata(obj.metadata);
  const labels = Object.entries(obj.metadata.labels ?? {}).filter(([key]) => OUR_LABELS.has(key));
  if (labels.length > 0) metadata.labels = Object.fromEntries(labels);
  if (obj.metadata.ownerReferences !== undefined) metadata.ownerReferences = obj.metadata.ownerReferences;
  const kept = withTypeMeta(obj, metadata);
  const controller = controllerOf(obj.metadata);
  const { spec, status } = obj as KubeObject & { spec?: unknown; status?: CronJobStatusView };
  if (spec !== undefined && controller && isBackupScheduleRef(controller)) kept['spec'] = spec;
  if (status) {
    const view: Record<string, unknown> = {};
    if (status.active) view['active'] = status.active.map((ref) => ({ name: ref.name }));
    if (status.lastScheduleTime !== undefined) view['lastScheduleTime'] = status.lastScheduleTime;
    if (status.lastSuccessfulTime !== undefined) view['lastSuccessfulTime'] = status.lastSuccessfulTime;
    kept['status'] = view;
  }
  return interner.internDeep(kept) as T;
}
