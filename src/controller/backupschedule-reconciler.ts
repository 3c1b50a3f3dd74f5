/**
 * The BackupSchedule reconcile: the lesson's ~60 lines (shared/seed/operator-lesson.txt) made
 * production-grade (DESIGN.md §3).
 *
 * `reconcile(key)` reads only from the informer caches and makes at most ONE write, then returns; the
 * watch event that write causes brings the key back for the next move. In order:
 *
 * 1. schedule gone (or being deleted) → nothing: the garbage collector deletes the child through its
 *    ownerReference.
 * 2. spec invalid (it slipped past admission) → `Ready=False/InvalidSpec` naming the field, a Warning
 *    Event, no child created or changed.
 * 3. child missing → create it with the controller ownerReference. `AlreadyExists` means the cache is
 *    behind (kuberay#715, controller-runtime#1464): requeue, never a second child.
 * 4. a CronJob with the child's name that this schedule does not control → `Ready=False/ChildNameConflict`;
 *    the CronJob is left alone.
 * 5. child drifted in a field we own → PUT the observed object with our fields merged in (server defaults
 *    and foreign fields kept, `resourceVersion` carried: a stale cache gets 409 and a requeue).
 * 6. otherwise → write status through `/status`, and only when it changed (controller-runtime#1711).
 *
 * Result contract (controller-runtime's `Reconciler`): `{}` = done until the next event; `{ requeue: true }`
 * = try again with rate-limited backoff (409 Conflict, AlreadyExists); a thrown error = rate-limited retry.
 */
import { validateBackupSchedule, type FieldError } from '../api/index.ts';
import { buildCronJob, childName } from '../build/index.ts';
import { cronJobDrift, mergeDesiredIntoObserved } from '../build/cronjob-diff.ts';
import { computeStatus, READY, statusEqual, type ScheduleStatus, type StatusOutcome } from '../build/status.ts';
import { isAlreadyExists, isConflict } from '../kube/api-status-error.ts';
import { controllerOf, objectKey, type KubeObject } from '../kube/object.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import type { ReconcileResult } from '../runtime/reconciler.ts';
import type { EventRecorder } from './event-recorder.ts';
import type { BackupScheduleObject } from './resources.ts';

/** A read-only cache lookup by `namespace/name` key (src/runtime's `StoreReader.get`). */
export interface CacheReader<T> {
  get(key: string): T | undefined;
}

/** The three writes reconcile may make. Each resolves with the stored object or throws `ApiStatusError`. */
export interface ReconcilerWrites {
  /** POST a CronJob. */
  createCronJob(cronJob: KubeObject): Promise<unknown>;
  /** PUT a CronJob (carrying `metadata.resourceVersion`). */
  updateCronJob(cronJob: KubeObject): Promise<unknown>;
  /** PUT a BackupSchedule's `/status` (carrying `metadata.resourceVersion`). */
  updateScheduleStatus(schedule: BackupScheduleObject): Promise<unknown>;
}

/** Structured logging (a pino logger fits). */
export interface ReconcileLogger {
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/** Options for {@link BackupScheduleReconciler}. */
export interface BackupScheduleReconcilerOptions {
  /** The BackupSchedule informer's cache. */
  readonly schedules: CacheReader<BackupScheduleObject>;
  /** The CronJob informer's cache. */
  readonly cronJobs: CacheReader<KubeObject>;
  /** The API writes. */
  readonly writes: ReconcilerWrites;
  /** Records Kubernetes Events on the schedule. @default no Events */
  readonly events?: EventRecorder;
  /** Image of the backup container when a spec sets none (`--backup-image`). @default buildCronJob's DEFAULT_IMAGE */
  readonly backupImage?: string;
  /** Time source for condition transition times. @default realClock */
  readonly clock?: Clock;
  /** Logger. @default silent */
  readonly logger?: ReconcileLogger;
}

/** What one reconcile did: its single move, for logs and tests. */
export type ReconcileMove = 'none' | 'createCronJob' | 'updateCronJob' | 'updateStatus';

const silent: ReconcileLogger = { info: () => {}, debug: () => {} };

/** Reconciles BackupSchedules into child CronJobs. */
export class BackupScheduleReconciler {
  readonly #schedules: CacheReader<BackupScheduleObject>;
  readonly #cronJobs: CacheReader<KubeObject>;
  readonly #writes: ReconcilerWrites;
  readonly #events: EventRecorder | undefined;
  readonly #image: string | undefined;
  readonly #clock: Clock;
  readonly #logger: ReconcileLogger;

  constructor(options: BackupScheduleReconcilerOptions) {
    this.#schedules = options.schedules;
    this.#cronJobs = options.cronJobs;
    this.#writes = options.writes;
    this.#events = options.events;
    this.#image = options.backupImage;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silent;
  }

  /** Reconciles the BackupSchedule `namespace/name`; see the module doc for the moves and results. */
  async reconcile(key: string): Promise<ReconcileResult> {
    return (await this.reconcileWithMove(key)).result;
  }

  /** {@link reconcile}, also saying which write (if any) it made. */
  async reconcileWithMove(key: string): Promise<{ move: ReconcileMove; result: ReconcileResult }> {
    const schedule = this.#schedules.get(key);
    if (!schedule || schedule.metadata.deletionTimestamp) return { move: 'none', result: {} };

    let desired: KubeObject;
    try {
      // buildCronJob validates the schedule itself (and throws when invalid); the field errors for the
      // condition are computed only then, so a valid schedule is validated once per reconcile.
      desired = buildCronJob(schedule, this.#image === undefined ? {} : { image: this.#image }) as KubeObject;
    } catch (err) {
      const errors = validateBackupSchedule(schedule);
      if (errors.length > 0) return this.#invalid(schedule, errors);
      throw err;
    }
    const childKey = objectKey(desired.metadata);
    const child = this.#cronJobs.get(childKey);

    if (!child) {
      try {
        await this.#writes.createCronJob(desired);
      } catch (err) {
        if (isAlreadyExists(err)) {
          this.#logger.debug({ key, child: childKey }, 'child already exists, cache is behind: requeue');
          return { move: 'createCronJob', result: { requeue: true } };
        }
        throw err;
      }
      this.#logger.info({ key, child: childKey }, 'created CronJob');
      this.#events?.event(schedule, 'Normal', 'Created', `Created CronJob "${desired.metadata.name}"`);
      return { move: 'createCronJob', result: {} };
    }

    const controller = controllerOf(child.metadata);
    if (controller?.uid !== schedule.metadata.uid) {
      const outcome: StatusOutcome = { kind: 'ChildNameConflict', childName: desired.metadata.name ?? '', controller };
      return this.#writeStatus(schedule, undefined, outcome, (message) =>
        this.#events?.event(schedule, 'Warning', 'ChildNameConflict', message),
      );
    }

    const drift = cronJobDrift(child, desired);
    if (drift.length > 0) {
      try {
        await this.#writes.updateCronJob(mergeDesiredIntoObserved(child, desired));
      } catch (err) {
        if (isConflict(err)) return { move: 'updateCronJob', result: { requeue: true } };
        throw err;
      }
      const fields = drift.length > 5 ? `${drift.slice(0, 5).join(', ')} and ${drift.length - 5} more` : drift.join(', ');
      this.#logger.info({ key, child: childKey, drift }, 'updated drifted CronJob');
      this.#events?.event(schedule, 'Normal', 'Updated', `Updated CronJob "${child.metadata.name}": ${fields}`);
      return { move: 'updateCronJob', result: {} };
    }

    return this.#writeStatus(schedule, child, { kind: 'InSync' });
  }

  #invalid(schedule: BackupScheduleObject, errors: readonly FieldError[]): Promise<{ move: ReconcileMove; result: ReconcileResult }> {
    // The child this schedule already controls keeps running unchanged; status keeps reporting it.
    const child = this.#cronJobs.get(objectKey({ namespace: schedule.metadata.namespace, name: childName(schedule) }));
    const owned = child && controllerOf(child.metadata)?.uid === schedule.metadata.uid ? child : undefined;
    return this.#writeStatus(schedule, owned, { kind: 'InvalidSpec', errors }, (message) =>
      this.#events?.event(schedule, 'Warning', 'InvalidSpec', message),
    );
  }

  /**
   * Writes the computed status when it differs from the cached one. `onChange` gets the Ready message
   * when the write succeeded, so Warning Events follow condition changes rather than every resync.
   */
  async #writeStatus(
    schedule: BackupScheduleObject,
    child: KubeObject | undefined,
    outcome: StatusOutcome,
    onChange?: (message: string) => void,
  ): Promise<{ move: ReconcileMove; result: ReconcileResult }> {
    const status: ScheduleStatus = computeStatus(schedule, child, outcome, this.#clock.now());
    if (statusEqual(schedule.status, status)) return { move: 'none', result: {} };
    try {
      await this.#writes.updateScheduleStatus({ ...schedule, status });
    } catch (err) {
      if (isConflict(err)) return { move: 'updateStatus', result: { requeue: true } };
      throw err;
    }
    const ready = status.conditions?.find((c) => c.type === READY);
    this.#logger.info({ key: objectKey(schedule.metadata), ready: ready?.status, reason: ready?.reason }, 'updated status');
    if (onChange && ready) onChange(ready.message);
    return { move: 'updateStatus', result: {} };
  }
}
