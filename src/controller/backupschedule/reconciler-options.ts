/**
 * What the BackupSchedule reconciler is given: its caches, the API calls it may make, and its settings
 * (src/controller/backupschedule/reconciler.ts).
 */
import type { ChildMergePatch } from '../../pure/child-patch.ts';
import type { DampingPolicy } from '../../pure/child-write-damping.ts';
import type { BackupRun, JobView } from '../../pure/backup-runs.ts';
import type { KubeVersion } from '../../pure/cluster-features.ts';
import type { ScheduleStatus } from '../../pure/status.ts';
import type { KubeObject } from '../../kube/object.ts';
import type { Clock } from '../../runtime/clock.ts';
import type { EventRecorder } from '../event-recorder.ts';
import type { BackupScheduleObject } from '../resources.ts';

/** A read-only cache lookup by `namespace/name` key (src/runtime's `StoreReader.get`). */
export interface CacheReader<T> {
  get(key: string): T | undefined;
}

/** Where a child CronJob lives. */
export interface ChildRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The API calls reconcile may make beyond the caches: three writes, and two reads for what the caches
 * do not hold whole. Each resolves with the object as the server has it, or throws `ApiStatusError`.
 */
export interface ReconcilerWrites {
  /** POST a CronJob; resolves with the CronJob as the server stored it. */
  createCronJob(cronJob: KubeObject): Promise<KubeObject>;
  /** GET a CronJob (after AlreadyExists, or for one the cache shows not controlled by the schedule). */
  getCronJob(ref: ChildRef): Promise<KubeObject>;
  /** GET a BackupSchedule the cache holds only a stub of (over its budget: src/runtime/cache-policy.ts). */
  getSchedule(ref: ChildRef): Promise<BackupScheduleObject>;
  /** PATCH a CronJob with a JSON merge patch carrying `metadata.resourceVersion`; resolves with the stored CronJob. */
  patchCronJob(ref: ChildRef, patch: ChildMergePatch): Promise<KubeObject>;
  /** PUT a BackupSchedule's `/status` (carrying `metadata.resourceVersion`). */
  updateScheduleStatus(schedule: BackupScheduleObject): Promise<unknown>;
}

/** Structured logging (a pino logger fits). */
export interface ReconcileLogger {
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Watches how the backups go: the metrics of src/controller/backupschedule/outcome-metrics.ts. */
export interface StatusObserver {
  /** The status a reconcile computed for `schedule` (written or already stored); `newRuns` were just written. */
  observed(schedule: BackupScheduleObject, status: ScheduleStatus, newRuns: readonly BackupRun[]): void;
  /** The schedule `key` is gone. */
  gone(key: string): void;
}

/** Options for {@link BackupScheduleReconciler}. */
export interface BackupScheduleReconcilerOptions {
  /** The BackupSchedule informer's cache. */
  readonly schedules: CacheReader<BackupScheduleObject>;
  /** The CronJob informer's cache. */
  readonly cronJobs: CacheReader<KubeObject>;
  /** The API writes. */
  readonly writes: ReconcilerWrites;
  /**
   * The cached Jobs a child CronJob controls (found by its uid). With it the status reports the backup
   * runs (src/pure/backup-runs.ts) and Events `BackupFailed`/`BackupSucceeded` follow them. @default no runs reported
   */
  readonly jobs?: (child: KubeObject) => readonly JobView[];
  /** Told every computed status and every schedule gone. @default none */
  readonly statusObserver?: StatusObserver;
  /** Records Kubernetes Events on the schedule. @default no Events */
  readonly events?: EventRecorder;
  /** Image of the backup container when a spec sets none (`--backup-image`); always allowed. @default DEFAULT_BACKUP_IMAGE */
  readonly backupImage?: string;
  /**
   * Patterns of other images `spec.image` may name (`--allowed-backup-images`, see src/pure/image-policy.ts).
   * @default [] (only `backupImage`)
   */
  readonly allowedImages?: readonly string[];
  /**
   * Object store endpoints `spec.destination.objectStore.endpoint` may name (`--allowed-backup-endpoints`,
   * see src/pure/endpoint-policy.ts); none: only AWS S3 (no endpoint).
   */
  readonly allowedEndpoints?: readonly string[];
  /**
   * The API server's version, read at start-up, for the likely cause in ChildNotPersisted messages; a
   * function because it is read after the reconciler is built. @default unknown
   */
  readonly serverVersion?: () => KubeVersion | undefined;
  /** Backoff of child writes that do not stick (src/pure/child-write-damping.ts). @default its defaults */
  readonly damping?: DampingPolicy;
  /** Time source for condition transition times. @default realClock */
  readonly clock?: Clock;
  /** Logger. @default silent */
  readonly logger?: ReconcileLogger;
}
