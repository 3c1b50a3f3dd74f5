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
 *    Event, no child created or changed. `spec.image` outside the operator's allow-list
 *    (`--allowed-backup-images`) → `Ready=False/ImageNotAllowed` naming the flag, the same way, after
 *    suspending an existing child that runs a disallowed image.
 * 3. child missing → create it with the controller ownerReference. `AlreadyExists` means the cache is
 *    behind (kuberay#715, controller-runtime#1464): requeue, never a second child.
 * 4. a CronJob with the child's name that this schedule does not control → `Ready=False/ChildNameConflict`;
 *    the CronJob is left alone.
 * 5. child drifted in a field we own → PUT the observed object with our fields merged in (server defaults
 *    and foreign fields kept, `resourceVersion` carried: a stale cache gets 409 and a requeue).
 * 6. otherwise → write status through `/status`, and only when it changed (controller-runtime#1711).
 *
 * A child write that fails terminally (`writeErrorDisposition`: 400/403/404-on-create/422…) ends in
 * `Ready=False/ChildRejected` with the API's message and a Warning Event, and is retried after a long
 * backoff (a fixed RBAC or webhook policy heals it). A child write the server accepts without keeping
 * all of it (its response still drifts: an older server dropping `spec.timeZone`, a mutating webhook)
 * ends in `Ready=False/ChildNotPersisted` naming the fields, and is not re-sent for that generation
 * until the child changes or a backoff passes; drift that comes back after every heal (another writer)
 * ends in `Ready=False/DriftRecurring` the same way (src/build/child-write-damping.ts). Those status
 * writes follow the failed or no-op child write in the same reconcile: no watch event would bring the
 * key back for them. `Ready=True` always means the child matches this generation.
 *
 * Result contract (controller-runtime's `Reconciler`): `{}` = done until the next event; `{ requeue: true }`
 * = try again with rate-limited backoff (409 Conflict, AlreadyExists); `{ requeueAfterMs }` = a held-back
 * or rejected write is tried again then; a thrown error = rate-limited retry.
 */
import { validateBackupSchedule } from '../api/index.ts';
import { buildCronJob, childName } from '../build/index.ts';
import { childWriteExpired, decideChildWrite, holdMs, recordChildWrite, rejectedRetryMs, type ChildDriftNow, type ChildWrite, type DampingPolicy } from '../build/child-write-damping.ts';
import { notPersistedCause, type KubeVersion } from '../build/cluster-features.ts';
import { cronJobDrift, mergeDesiredIntoObserved } from '../build/cronjob-diff.ts';
import { ALLOWED_IMAGES_FLAG, imageAllowed, suspendIfDisallowed } from '../build/image-policy.ts';
import { DEFAULT_IMAGE } from '../build/image.ts';
import { computeStatus, listFields, READY, statusEqual, type ScheduleStatus, type StatusOutcome } from '../build/status.ts';
import { ApiStatusError, isAlreadyExists, isConflict, isInvalid, writeErrorDisposition } from '../kube/api-status-error.ts';
import { controllerOf, objectKey, type KubeObject } from '../kube/object.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import { TerminalError, type ReconcileResult } from '../runtime/reconciler.ts';
import type { EventRecorder } from './event-recorder.ts';
import type { BackupScheduleObject } from './resources.ts';

/** A read-only cache lookup by `namespace/name` key (src/runtime's `StoreReader.get`). */
export interface CacheReader<T> {
  get(key: string): T | undefined;
}

/** The three writes reconcile may make. Each resolves with the stored object or throws `ApiStatusError`. */
export interface ReconcilerWrites {
  /** POST a CronJob; resolves with the CronJob as the server stored it. */
  createCronJob(cronJob: KubeObject): Promise<KubeObject>;
  /** PUT a CronJob (carrying `metadata.resourceVersion`); resolves with the CronJob as the server stored it. */
  updateCronJob(cronJob: KubeObject): Promise<KubeObject>;
  /** PUT a BackupSchedule's `/status` (carrying `metadata.resourceVersion`). */
  updateScheduleStatus(schedule: BackupScheduleObject): Promise<unknown>;
}

/** Structured logging (a pino logger fits). */
export interface ReconcileLogger {
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
  warn(fields: object, message: string): void;
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
  /** Image of the backup container when a spec sets none (`--backup-image`); always allowed. @default DEFAULT_IMAGE */
  readonly backupImage?: string;
  /**
   * Patterns of other images `spec.image` may name (`--allowed-backup-images`, see src/build/image-policy.ts).
   * @default [] (only `backupImage`)
   */
  readonly allowedImages?: readonly string[];
  /**
   * The API server's version, read at start-up, for the likely cause in ChildNotPersisted messages; a
   * function because it is read after the reconciler is built. @default unknown
   */
  readonly serverVersion?: () => KubeVersion | undefined;
  /** Backoff of child writes that do not stick (src/build/child-write-damping.ts). @default its defaults */
  readonly damping?: DampingPolicy;
  /** Time source for condition transition times. @default realClock */
  readonly clock?: Clock;
  /** Logger. @default silent */
  readonly logger?: ReconcileLogger;
}

/** What one reconcile did: its single move, for logs and tests. */
export type ReconcileMove = 'none' | 'createCronJob' | 'updateCronJob' | 'updateStatus';

type Outcome = { move: ReconcileMove; result: ReconcileResult };

const silent: ReconcileLogger = { info: () => {}, debug: () => {}, warn: () => {} };

/** `written` (a status write), coming back after `ms` unless the write itself asked for a rate-limited retry (409). */
function retryAfter(written: Outcome, ms: number): Outcome {
  return written.result.requeue ? written : { move: written.move, result: { requeueAfterMs: ms } };
}

/** The owned fields where a write's response still differs from the desired child: what the server did not keep. */
function notKept(stored: KubeObject | undefined, desired: KubeObject): string[] {
  // A response that is not an object (a fake, a proxy's empty body) says nothing about what was kept.
  return stored?.metadata ? cronJobDrift(stored, desired) : [];
}

/** Reconciles BackupSchedules into child CronJobs. */
export class BackupScheduleReconciler {
  readonly #schedules: CacheReader<BackupScheduleObject>;
  readonly #cronJobs: CacheReader<KubeObject>;
  readonly #writes: ReconcilerWrites;
  readonly #events: EventRecorder | undefined;
  readonly #image: string;
  readonly #allowedImages: readonly string[];
  readonly #serverVersion: () => KubeVersion | undefined;
  readonly #damping: DampingPolicy;
  readonly #clock: Clock;
  readonly #logger: ReconcileLogger;
  /** The last successful child write per schedule key: the only state kept between reconciles. */
  readonly #lastWrites = new Map<string, ChildWrite>();

  constructor(options: BackupScheduleReconcilerOptions) {
    this.#schedules = options.schedules;
    this.#cronJobs = options.cronJobs;
    this.#writes = options.writes;
    this.#events = options.events;
    this.#image = options.backupImage ?? DEFAULT_IMAGE;
    this.#allowedImages = options.allowedImages ?? [];
    this.#serverVersion = options.serverVersion ?? (() => undefined);
    this.#damping = options.damping ?? {};
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silent;
  }

  /** Reconciles the BackupSchedule `namespace/name`; see the module doc for the moves and results. */
  async reconcile(key: string): Promise<ReconcileResult> {
    return (await this.reconcileWithMove(key)).result;
  }

  /** {@link reconcile}, also saying which write (if any) it made. */
  async reconcileWithMove(key: string): Promise<Outcome> {
    const schedule = this.#schedules.get(key);
    if (!schedule || schedule.metadata.deletionTimestamp) {
      this.#lastWrites.delete(key);
      return { move: 'none', result: {} };
    }

    let desired: KubeObject;
    try {
      // buildCronJob validates the schedule itself (and throws when invalid); the field errors for the
      // condition are computed only then, so a valid schedule is validated once per reconcile.
      desired = buildCronJob(schedule, { image: this.#image }) as KubeObject;
    } catch (err) {
      const errors = validateBackupSchedule(schedule);
      if (errors.length > 0) return this.#invalid(schedule, { kind: 'InvalidSpec', errors }, 'InvalidSpec');
      throw err;
    }
    const image = schedule.spec.image;
    if (image !== undefined && !imageAllowed(image, this.#image, this.#allowedImages)) {
      const allowed = [this.#image, ...this.#allowedImages];
      return this.#invalid(schedule, { kind: 'ImageNotAllowed', image, flag: ALLOWED_IMAGES_FLAG, allowed }, 'ImageNotAllowed');
    }
    const childKey = objectKey(desired.metadata);
    const child = this.#cronJobs.get(childKey);
    const now: ChildDriftNow = { uid: schedule.metadata.uid ?? '', generation: schedule.metadata.generation ?? 0, resourceVersion: child?.metadata.resourceVersion, drift: [] };

    if (!child) {
      let stored: KubeObject;
      try {
        stored = await this.#writes.createCronJob(desired);
      } catch (err) {
        if (isAlreadyExists(err)) {
          this.#logger.debug({ key, child: childKey }, 'child already exists, cache is behind: requeue');
          return { move: 'createCronJob', result: { requeue: true } };
        }
        if (writeErrorDisposition(err, 'create') === 'terminal') return this.#rejected(schedule, undefined, desired, 'create', err);
        throw err;
      }
      this.#logger.info({ key, child: childKey }, 'created CronJob');
      this.#events?.event(schedule, 'Normal', 'Created', `Created CronJob "${desired.metadata.name}"`);
      const held = await this.#afterWrite(key, schedule, now, stored, notKept(stored, desired), desired);
      return { move: 'createCronJob', result: held?.result ?? {} };
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
      const current: ChildDriftNow = { ...now, drift };
      const decision = decideChildWrite(this.#lastWrites.get(key), current, this.#clock.now(), this.#damping);
      if (decision.kind === 'hold') {
        this.#logger.debug({ key, child: childKey, drift, why: decision.why, retryInMs: decision.retryInMs }, 'holding back a child write that did not stick');
        const outcome = this.#heldOutcome(decision.why, child, decision.fields);
        const written = await this.#writeStatus(schedule, child, outcome, (message) => this.#events?.event(schedule, 'Warning', decision.why, message));
        return retryAfter(written, decision.retryInMs);
      }
      let stored: KubeObject;
      try {
        stored = await this.#writes.updateCronJob(mergeDesiredIntoObserved(child, desired));
      } catch (err) {
        if (isConflict(err)) return { move: 'updateCronJob', result: { requeue: true } };
        if (writeErrorDisposition(err, 'update') === 'terminal') return this.#rejected(schedule, child, desired, 'update', err);
        throw err;
      }
      const responseDrift = notKept(stored, desired);
      // Only what the server kept was updated; a write that changed nothing gets no Normal Event.
      const fixed = drift.filter((f) => !responseDrift.includes(f));
      this.#logger.info({ key, child: childKey, drift, notKept: responseDrift }, 'updated drifted CronJob');
      if (fixed.length > 0) this.#events?.event(schedule, 'Normal', 'Updated', `Updated CronJob "${child.metadata.name}": ${listFields(fixed)}`);
      const held = await this.#afterWrite(key, schedule, current, stored, responseDrift, desired);
      return { move: 'updateCronJob', result: held?.result ?? {} };
    }

    const last = this.#lastWrites.get(key);
    if (last && childWriteExpired(last, this.#clock.now(), this.#damping)) this.#lastWrites.delete(key);
    return this.#writeStatus(schedule, child, { kind: 'InSync' });
  }

  /**
   * Remembers a successful child write and checks its response: when the server did not keep every
   * field, reports ChildNotPersisted right away (a no-op update brings no watch event, so no later
   * reconcile would) and says when to try again. Undefined when everything was kept.
   */
  async #afterWrite(key: string, schedule: BackupScheduleObject, now: ChildDriftNow, stored: KubeObject, responseDrift: readonly string[], desired: KubeObject): Promise<Outcome | undefined> {
    const at = this.#clock.now();
    if (now.drift.length === 0 && responseDrift.length === 0) {
      // A create the server kept whole: nothing to hold back or count, so nothing to remember (this is
      // every new schedule; the records stay few).
      this.#lastWrites.delete(key);
      return undefined;
    }
    const record = recordChildWrite(this.#lastWrites.get(key), now, { resourceVersion: stored?.metadata?.resourceVersion, drift: responseDrift }, at, this.#damping);
    this.#lastWrites.set(key, record);
    if (responseDrift.length === 0) return undefined;
    this.#logger.warn({ key, child: objectKey(desired.metadata), notPersisted: responseDrift, repeats: record.repeats }, 'the API server did not keep fields of the CronJob it accepted');
    const decision = decideChildWrite(record, { ...now, resourceVersion: record.resourceVersion, drift: responseDrift }, at, this.#damping);
    const retryInMs = decision.kind === 'hold' ? decision.retryInMs : holdMs(record.repeats, this.#damping);
    const outcome = this.#heldOutcome('ChildNotPersisted', stored, responseDrift);
    const written = await this.#writeStatus(schedule, stored, outcome, (message) => this.#events?.event(schedule, 'Warning', 'ChildNotPersisted', message));
    return retryAfter(written, retryInMs);
  }

  #heldOutcome(why: 'ChildNotPersisted' | 'DriftRecurring', child: KubeObject, fields: readonly string[]): StatusOutcome {
    const childName = child.metadata.name ?? '';
    return why === 'ChildNotPersisted'
      ? { kind: 'ChildNotPersisted', childName, fields, cause: notPersistedCause(fields, this.#serverVersion()) }
      : { kind: 'DriftRecurring', childName, fields };
  }

  /**
   * A child write the API server refused for good (see `writeErrorDisposition`): Ready=False with the
   * API's message, a Warning Event when the condition changes, and a retry after `rejectedRetryMs`.
   */
  async #rejected(schedule: BackupScheduleObject, child: KubeObject | undefined, desired: KubeObject, verb: 'create' | 'update', err: unknown): Promise<Outcome> {
    const status = err instanceof ApiStatusError ? err : undefined;
    const outcome: StatusOutcome = { kind: 'ChildRejected', verb, childName: desired.metadata.name ?? '', code: status?.code ?? 0, message: status?.message ?? String(err) };
    this.#logger.warn({ key: objectKey(schedule.metadata), verb, code: outcome.code, err: outcome.message }, 'the API server rejected the child write');
    const previous = schedule.status?.conditions?.find((c) => c.type === READY);
    const since = previous?.status === 'False' && previous.reason === 'ChildRejected' ? Date.parse(previous.lastTransitionTime) : undefined;
    const retryInMs = rejectedRetryMs(since, this.#clock.now());
    const written = await this.#writeStatus(schedule, child, outcome, (message) => this.#events?.event(schedule, 'Warning', 'ChildRejected', message));
    return retryAfter(written, retryInMs);
  }

  async #invalid(schedule: BackupScheduleObject, outcome: StatusOutcome, reason: 'InvalidSpec' | 'ImageNotAllowed'): Promise<Outcome> {
    // The child this schedule already controls is left unchanged (status keeps reporting it), except
    // that one running an image the operator does not allow (any more) is suspended first.
    const child = this.#cronJobs.get(objectKey({ namespace: schedule.metadata.namespace, name: childName(schedule) }));
    const owned = child && controllerOf(child.metadata)?.uid === schedule.metadata.uid ? child : undefined;
    const suspended = owned && reason === 'ImageNotAllowed' ? suspendIfDisallowed(owned, (i) => imageAllowed(i, this.#image, this.#allowedImages)) : undefined;
    if (suspended) {
      try {
        await this.#writes.updateCronJob(suspended);
      } catch (err) {
        if (isConflict(err)) return { move: 'updateCronJob', result: { requeue: true } };
        if (writeErrorDisposition(err, 'update') === 'terminal') return this.#rejected(schedule, owned, suspended, 'update', err);
        throw err;
      }
      this.#events?.event(schedule, 'Warning', 'Suspended', `Suspended CronJob "${suspended.metadata.name}": it runs an image ${ALLOWED_IMAGES_FLAG} does not allow`);
      return { move: 'updateCronJob', result: {} };
    }
    return this.#writeStatus(schedule, owned, outcome, (message) => this.#events?.event(schedule, 'Warning', reason, message));
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
  ): Promise<Outcome> {
    const status: ScheduleStatus = computeStatus(schedule, child, outcome, this.#clock.now());
    if (statusEqual(schedule.status, status)) return { move: 'none', result: {} };
    try {
      await this.#writes.updateScheduleStatus({ ...schedule, status });
    } catch (err) {
      if (isConflict(err)) return { move: 'updateStatus', result: { requeue: true } };
      // Without CRD validation ratcheting (before Kubernetes 1.30, or with the gate off) a status write
      // is validated with the whole object: a schedule stored invalid (a tightened schema, a restore)
      // can never get its status. Say so in a Warning Event (the API's message names the field) and
      // wait for the schedule to change instead of retrying forever.
      if (isInvalid(err)) {
        this.#events?.event(schedule, 'Warning', 'StatusRejected', (err as Error).message);
        throw new TerminalError(`status write rejected: ${(err as Error).message}`, { cause: err });
      }
      throw err;
    }
    const ready = status.conditions?.find((c) => c.type === READY);
    this.#logger.info({ key: objectKey(schedule.metadata), ready: ready?.status, reason: ready?.reason }, 'updated status');
    if (onChange && ready) onChange(ready.message);
    return { move: 'updateStatus', result: {} };
  }
}
