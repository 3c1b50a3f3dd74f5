/**
 * The BackupSchedule reconcile: the classic level-triggered loop made production-grade
 * (docs/design.md, "The reconcile").
 *
 * `reconcile(key)` reads only from the informer caches (a schedule cached as a stub, larger than its
 * budget, with one GET: src/runtime/cache-policy.ts) and makes at most ONE write, then returns; the
 * watch event that write causes brings the key back for the next move. In order:
 *
 * 1. schedule gone (or being deleted) → nothing: the garbage collector deletes the child through its
 *    ownerReference.
 * 2. spec invalid (it slipped past admission) → `Ready=False/InvalidSpec` naming the field, a Warning
 *    Event, no child created or changed. `spec.image` outside the operator's allow-list
 *    (`--allowed-backup-images`) → `Ready=False/ImageNotAllowed` naming the flag, the same way, after
 *    suspending an existing child that runs a disallowed image.
 * 3. child missing from the cache → create it with the controller ownerReference. `AlreadyExists` means
 *    the cache is behind (kuberay#715, controller-runtime#1464) or the CronJob is outside the
 *    label-selected watch (a child whose labels were removed, an orphan, a foreign CronJob): one GET,
 *    and the live object goes on to step 4; never a second child.
 * 4. whose CronJob is it (src/pure/child-claim.ts)? Ours → step 5; an orphan carrying our labels for
 *    this schedule → adopted by step 5's heal, which adds our controller reference; anything else →
 *    `Ready=False/ChildNameConflict` (a previous incarnation of this schedule is named as such), the
 *    CronJob left alone and looked at again later (foreign CronJobs are not watched). A cached CronJob
 *    this schedule does not control is read with a GET first: the cache keeps no spec of it.
 * 5. child drifted in a field we own → a JSON merge patch from the cached child to the healed one
 *    (src/pure/child-patch.ts: server defaults and foreign metadata kept, `resourceVersion` carried: a
 *    stale cache gets 409 and a requeue). Not a PUT: the cache keeps only what reconcile reads
 *    (src/controller/backupschedule/event-mapping.ts), and a PUT of it would delete the rest.
 * 6. otherwise → write status through `/status`, and only when it changed (controller-runtime#1711).
 *    A child this reconciler has just written, and found whole in the answer, goes straight here when
 *    the cache shows that very resourceVersion for the same generation: steps 2–5 would only compute
 *    again what the write's answer showed (a note kept for one reconcile, like client-go's
 *    controller expectations).
 *
 * A child write that fails terminally (`writeErrorDisposition`: 400/403/404-on-create/422…) ends in
 * `Ready=False/ChildRejected` with the API's message and a Warning Event, and is retried after a long
 * backoff (a fixed RBAC or webhook policy heals it). A child write the server accepts without keeping
 * all of it (its response still drifts: an older server dropping `spec.timeZone`, a mutating webhook)
 * ends in `Ready=False/ChildNotPersisted` naming the fields, and is not re-sent for that generation
 * until the child changes or a backoff passes; drift that comes back after every heal (another writer)
 * ends in `Ready=False/DriftRecurring` the same way (src/pure/child-write-damping.ts). Those status
 * writes follow the failed or no-op child write in the same reconcile: no watch event would bring the
 * key back for them. `Ready=True` always means the child matches this generation.
 *
 * Result contract (controller-runtime's `Reconciler`): `{}` = done until the next event; `{ requeue: true }`
 * = try again with rate-limited backoff (409 Conflict, AlreadyExists); `{ requeueAfterMs }` = a held-back
 * or rejected write, or a name conflict, is looked at again then; a thrown error = rate-limited retry.
 */
import { validateBackupScheduleV1 } from '../../api/index.ts';
import { buildCronJob, childName } from '../../pure/index.ts';
import { claimChild } from '../../pure/child-claim.ts';
import { childMergePatch } from '../../pure/child-patch.ts';
import { childWriteExpired, decideChildWrite, holdMs, recordChildWrite, rejectedRetryMs, type ChildDriftNow, type ChildWrite, type DampingPolicy } from '../../pure/child-write-damping.ts';
import { notPersistedCause, supportsPodFailurePolicy, type KubeVersion } from '../../pure/cluster-features.ts';
import { cronJobDrift, mergeDesiredIntoObserved } from '../../pure/cronjob-diff.ts';
import { ALLOWED_ENDPOINTS_FLAG, endpointAllowed } from '../../pure/endpoint-policy.ts';
import { suspendedCopy } from '../../pure/child-suspend.ts';
import { ALLOWED_IMAGES_FLAG, imageAllowed, suspendIfDisallowed } from '../../pure/image-policy.ts';
import { DEFAULT_BACKUP_IMAGE } from '../../pure/image.ts';
import { withoutRunsBaseline, type JobView } from '../../pure/backup-runs.ts';
import { missedCheckSpreadMs, missedDueMs, nextMissedCheckMs, type ScheduleTiming } from '../../pure/missed-runs.ts';
import { computeStatus, listFields, READY, statusEqual, type ScheduleStatus, type StatusOutcome } from '../../pure/status.ts';
import { ApiStatusError, isConflict, isInvalid, writeErrorDisposition } from '../../kube/api-status-error.ts';
import { objectKey, splitObjectKey, type KubeObject } from '../../kube/object.ts';
import { readWhole } from '../../runtime/cache-policy.ts';
import { realClock, type Clock } from '../../runtime/clock.ts';
import { TerminalError, type ReconcileResult } from '../../runtime/reconciler.ts';
import type { EventRecorder } from '../event-recorder.ts';
import { childRefOf, getLiveChild, lookUpChild } from './child-lookup.ts';
import { cachedWhole } from './event-mapping.ts';
import type { BackupScheduleReconcilerOptions, CacheReader, ReconcileLogger, ReconcilerWrites, StatusObserver } from './reconciler-options.ts';
import { runEvents } from './run-events.ts';
import type { BackupScheduleObject } from '../resources.ts';

export type { BackupScheduleReconcilerOptions, CacheReader, ChildRef, ReconcileLogger, ReconcilerWrites, StatusObserver } from './reconciler-options.ts';

/** What one reconcile did: its single move, for logs and tests. */
export type ReconcileMove = 'none' | 'createCronJob' | 'patchCronJob' | 'updateStatus';

type Outcome = { move: ReconcileMove; result: ReconcileResult };

/** The child a write of ours stored (the facts damping compares, with the version the answer carried), when that answer matched the desired child. */
type VerifiedChild = Pick<ChildDriftNow, 'uid' | 'generation'> & { readonly resourceVersion: string };

/**
 * When a schedule in ChildNameConflict looks at the CronJob again (foreign CronJobs are not watched, so
 * no event says when it is gone): after as long as the conflict has lasted, within these bounds. A
 * previous incarnation's child is garbage-collected within seconds, so a schedule deleted and created
 * again gets its child quickly; a lasting conflict costs one GET a minute.
 */
export const CONFLICT_RECHECK_MS = { min: 5_000, max: 60_000 } as const;

const silent: ReconcileLogger = { info: () => {}, debug: () => {}, warn: () => {} };

/** `written` (a status write), coming back after `ms` unless the write itself asked for a rate-limited retry (409). */
function retryAfter(written: Outcome, ms: number): Outcome {
  return written.result.requeue ? written : { move: written.move, result: { requeueAfterMs: ms } };
}

/** Since when the schedule has been `Ready=False` for `reason` (its lastTransitionTime), if it is. */
function falseSince(schedule: BackupScheduleObject, reason: string): number | undefined {
  const ready = schedule.status?.conditions?.find((c) => c.type === READY);
  return ready?.status === 'False' && ready.reason === reason ? Date.parse(ready.lastTransitionTime) : undefined;
}

/** The owned fields where a write's response still differs from the desired child: what the server did not keep. */
function notKept(stored: KubeObject | undefined, desired: KubeObject): string[] {
  // A response that is not an object (a fake, a proxy's empty body) says nothing about what was kept.
  return stored?.metadata ? cronJobDrift(stored, desired) : [];
}

/** What decides whether a run of `schedule` was missed: its spec, its creation, its child's last scheduled run. */
function scheduleTiming(schedule: BackupScheduleObject, child: KubeObject | undefined): ScheduleTiming | undefined {
  const createdMs = Date.parse(schedule.metadata.creationTimestamp ?? '');
  if (!child || Number.isNaN(createdMs)) return undefined;
  const lastSchedule = (child['status'] as { lastScheduleTime?: unknown } | undefined)?.lastScheduleTime;
  const lastScheduleMs = typeof lastSchedule === 'string' ? Date.parse(lastSchedule) : Number.NaN;
  const { schedule: cron, timeZone, suspend, startingDeadlineSeconds } = schedule.spec;
  const checkSpreadMs = missedCheckSpreadMs(schedule.metadata.uid ?? objectKey(schedule.metadata));
  return { schedule: cron, timeZone, suspend, startingDeadlineSeconds, createdMs, checkSpreadMs, ...(Number.isNaN(lastScheduleMs) ? {} : { lastScheduleMs }) };
}

/** Reconciles BackupSchedules into child CronJobs. */
export class BackupScheduleReconciler {
  readonly #schedules: CacheReader<BackupScheduleObject>;
  readonly #cronJobs: CacheReader<KubeObject>;
  readonly #writes: ReconcilerWrites;
  readonly #jobs: ((child: KubeObject) => readonly JobView[]) | undefined;
  readonly #observer: StatusObserver | undefined;
  readonly #events: EventRecorder | undefined;
  readonly #image: string;
  readonly #allowedImages: readonly string[];
  readonly #allowedEndpoints: readonly string[];
  readonly #serverVersion: () => KubeVersion | undefined;
  readonly #damping: DampingPolicy;
  readonly #clock: Clock;
  readonly #logger: ReconcileLogger;
  /** The last successful child write per schedule key: the only state kept between reconciles. */
  readonly #lastWrites = new Map<string, ChildWrite>();
  /** Per schedule key, the child our last write stored whole; read (and dropped) by the next reconcile. */
  readonly #verified = new Map<string, VerifiedChild>();

  constructor(options: BackupScheduleReconcilerOptions) {
    this.#schedules = options.schedules;
    this.#cronJobs = options.cronJobs;
    this.#writes = options.writes;
    this.#jobs = options.jobs;
    this.#observer = options.statusObserver;
    this.#events = options.events;
    this.#image = options.backupImage ?? DEFAULT_BACKUP_IMAGE;
    this.#allowedImages = options.allowedImages ?? [];
    this.#allowedEndpoints = options.allowedEndpoints ?? [];
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
    const { namespace = '', name } = splitObjectKey(key);
    const schedule = await readWhole(this.#schedules.get(key), () => this.#writes.getSchedule({ namespace, name }));
    const verified = this.#verified.get(key);
    this.#verified.delete(key);
    if (!schedule || schedule.metadata.deletionTimestamp) {
      this.#lastWrites.delete(key);
      this.#observer?.gone(key);
      return { move: 'none', result: {} };
    }
    if (verified && verified.uid === schedule.metadata.uid && verified.generation === schedule.metadata.generation) {
      const child = this.#cronJobs.get(objectKey({ namespace: schedule.metadata.namespace, name: childName(schedule) }));
      if (child && cachedWhole(child) && child.metadata.resourceVersion === verified.resourceVersion) return this.#inSync(key, schedule, child);
    }

    let desired: KubeObject;
    try {
      // buildCronJob validates the schedule itself (and throws when invalid); the field errors for the
      // condition are computed only then, so a valid schedule is validated once per reconcile.
      desired = buildCronJob(schedule, { image: this.#image, podFailurePolicy: supportsPodFailurePolicy(this.#serverVersion()) }) as KubeObject;
    } catch (err) {
      const errors = validateBackupScheduleV1(schedule);
      if (errors.length > 0) return this.#invalid(schedule, { kind: 'InvalidSpec', errors }, 'InvalidSpec');
      throw err;
    }
    const image = schedule.spec.image;
    if (image !== undefined && !imageAllowed(image, this.#image, this.#allowedImages)) {
      const allowed = [this.#image, ...this.#allowedImages];
      return this.#invalid(schedule, { kind: 'ImageNotAllowed', image, flag: ALLOWED_IMAGES_FLAG, allowed }, 'ImageNotAllowed');
    }
    const endpoint = schedule.spec.destination.objectStore?.endpoint;
    if (!endpointAllowed(endpoint, this.#allowedEndpoints)) {
      return this.#invalid(schedule, { kind: 'EndpointNotAllowed', endpoint: endpoint ?? '', flag: ALLOWED_ENDPOINTS_FLAG, allowed: this.#allowedEndpoints }, 'EndpointNotAllowed');
    }
    const childKey = objectKey(desired.metadata);
    const childRef = childRefOf(desired);
    const found = await lookUpChild(schedule, desired, this.#cronJobs, this.#writes);
    if (found.kind === 'createRejected') return this.#rejected(schedule, undefined, desired, 'create', found.err);
    // AlreadyExists, then 404: deleted meanwhile; the next create will tell.
    if (found.kind === 'gone') return { move: 'createCronJob', result: { requeue: true } };
    if (found.kind === 'created') {
      this.#logger.info({ key, child: childKey }, 'created CronJob');
      this.#events?.event(schedule, 'Normal', 'Created', `Created CronJob "${childRef.name}"`);
      const held = await this.#afterWrite(key, schedule, this.#driftNow(schedule, undefined), found.stored, notKept(found.stored, desired), desired);
      return { move: 'createCronJob', result: held?.result ?? {} };
    }
    const { child, claim } = found;
    if (claim.kind === 'conflict') {
      // Foreign CronJobs are not watched, so no event says when this one goes away: look again later.
      const outcome: StatusOutcome = { kind: 'ChildNameConflict', childName: childRef.name, controller: claim.controller, previousIncarnation: claim.previousIncarnation };
      const retryInMs = rejectedRetryMs(falseSince(schedule, 'ChildNameConflict'), this.#clock.now(), CONFLICT_RECHECK_MS.min, CONFLICT_RECHECK_MS.max);
      const written = await this.#writeStatus(schedule, undefined, outcome, (message) => this.#events?.event(schedule, 'Warning', 'ChildNameConflict', message));
      return retryAfter(written, retryInMs);
    }
    const now = this.#driftNow(schedule, child);

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
      const patch = childMergePatch(child, mergeDesiredIntoObserved(child, desired));
      let stored: KubeObject | undefined;
      try {
        // The heal adds our controller reference to an orphan we adopt (claim 'adopt'), as to any child missing it.
        if (patch) stored = await this.#writes.patchCronJob(childRef, patch);
      } catch (err) {
        if (isConflict(err)) return { move: 'patchCronJob', result: { requeue: true } };
        if (writeErrorDisposition(err, 'update') === 'terminal') return this.#rejected(schedule, child, desired, 'update', err);
        throw err;
      }
      if (stored) {
        const responseDrift = notKept(stored, desired);
        // Only what the server kept was updated; a write that changed nothing gets no Normal Event.
        const fixed = drift.filter((f) => !responseDrift.includes(f));
        this.#logger.info({ key, child: childKey, drift, notKept: responseDrift, adopted: claim.kind === 'adopt' }, claim.kind === 'adopt' ? 'adopted orphaned CronJob' : 'updated drifted CronJob');
        if (claim.kind === 'adopt') this.#events?.event(schedule, 'Normal', 'Adopted', `Adopted CronJob "${childRef.name}", which carried this schedule's labels and had no controller`);
        else if (fixed.length > 0) this.#events?.event(schedule, 'Normal', 'Updated', `Updated CronJob "${childRef.name}": ${listFields(fixed)}`);
        const held = await this.#afterWrite(key, schedule, current, stored, responseDrift, desired);
        return { move: 'patchCronJob', result: held?.result ?? {} };
      }
    }

    return this.#inSync(key, schedule, child);
  }

  /**
   * Step 6: the child matches the desired one; the status says so. With the Job cache, the schedule
   * comes back once the next run's start grace has passed, so a run never started is reported even when
   * nothing else happens (src/pure/missed-runs.ts).
   */
  async #inSync(key: string, schedule: BackupScheduleObject, child: KubeObject): Promise<Outcome> {
    const last = this.#lastWrites.get(key);
    if (last && childWriteExpired(last, this.#clock.now(), this.#damping)) this.#lastWrites.delete(key);
    const written = await this.#writeStatus(schedule, child, { kind: 'InSync' });
    const timing = this.#jobs ? scheduleTiming(schedule, child) : undefined;
    const check = timing ? nextMissedCheckMs(timing, this.#clock.now()) : undefined;
    if (check === undefined || written.result.requeue || written.result.requeueAfterMs !== undefined) return written;
    return { ...written, result: { requeueAfterMs: Math.max(1_000, check - this.#clock.now()) } };
  }

  /** The facts child-write damping compares (src/pure/child-write-damping.ts), before a write. */
  #driftNow(schedule: BackupScheduleObject, child: KubeObject | undefined): ChildDriftNow {
    return { uid: schedule.metadata.uid ?? '', generation: schedule.metadata.generation ?? 0, resourceVersion: child?.metadata.resourceVersion, drift: [] };
  }

  /**
   * Remembers a successful child write and checks its response: when the server did not keep every
   * field, reports ChildNotPersisted right away (a no-op update brings no watch event, so no later
   * reconcile would) and says when to try again. Undefined when everything was kept.
   */
  async #afterWrite(key: string, schedule: BackupScheduleObject, now: ChildDriftNow, stored: KubeObject, responseDrift: readonly string[], desired: KubeObject): Promise<Outcome | undefined> {
    const at = this.#clock.now();
    const storedVersion = stored?.metadata?.resourceVersion;
    if (responseDrift.length === 0 && storedVersion !== undefined) this.#verified.set(key, { uid: now.uid, generation: now.generation, resourceVersion: storedVersion });
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
    const retryInMs = rejectedRetryMs(falseSince(schedule, 'ChildRejected'), this.#clock.now());
    const written = await this.#writeStatus(schedule, child, outcome, (message) => this.#events?.event(schedule, 'Warning', 'ChildRejected', message));
    return retryAfter(written, retryInMs);
  }

  async #invalid(schedule: BackupScheduleObject, outcome: StatusOutcome, reason: 'InvalidSpec' | 'ImageNotAllowed' | 'EndpointNotAllowed'): Promise<Outcome> {
    // The child this schedule already controls is left unchanged (status keeps reporting it), except
    // that one running an image, or sending backups to an endpoint, the operator does not allow (any
    // more) is suspended first; also one outside the watch (its labels removed), so those cases cost a
    // GET when the cache has no child.
    const ref = { namespace: schedule.metadata.namespace ?? '', name: childName(schedule) };
    let child = this.#cronJobs.get(objectKey(ref));
    // Our child cached as a stub (larger than the cache keeps) is read whole: its spec and active Jobs matter here.
    const stubOfOurs = child !== undefined && !cachedWhole(child) && claimChild(schedule, child).kind === 'owned';
    if (stubOfOurs || (!child && reason !== 'InvalidSpec')) child = await getLiveChild(this.#writes, ref);
    const owned = child && claimChild(schedule, child).kind === 'owned' ? child : undefined;
    const suspended =
      !owned || reason === 'InvalidSpec'
        ? undefined
        : reason === 'ImageNotAllowed'
          ? suspendIfDisallowed(owned, (i) => imageAllowed(i, this.#image, this.#allowedImages))
          : suspendedCopy(owned);
    const patch = owned && suspended ? childMergePatch(owned, suspended) : undefined;
    if (owned && patch) {
      try {
        await this.#writes.patchCronJob(ref, patch);
      } catch (err) {
        if (isConflict(err)) return { move: 'patchCronJob', result: { requeue: true } };
        if (writeErrorDisposition(err, 'update') === 'terminal') return this.#rejected(schedule, owned, owned, 'update', err);
        throw err;
      }
      const why = reason === 'ImageNotAllowed' ? `it runs an image ${ALLOWED_IMAGES_FLAG} does not allow` : `it sends backups to an endpoint ${ALLOWED_ENDPOINTS_FLAG} does not allow`;
      this.#events?.event(schedule, 'Warning', 'Suspended', `Suspended CronJob "${owned.metadata.name}": ${why}`);
      return { move: 'patchCronJob', result: {} };
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
    const jobs = this.#jobs ? (child ? this.#jobs(child) : []) : undefined;
    const now = this.#clock.now();
    // A run due and never started, looked for only while the child is ours and in sync with the spec.
    const timing = jobs && outcome.kind === 'InSync' ? scheduleTiming(schedule, child) : undefined;
    const status: ScheduleStatus = computeStatus(schedule, child, outcome, now, jobs, timing ? missedDueMs(timing, now) : undefined);
    const key = objectKey(schedule.metadata);
    // An upgraded schedule is not rewritten only to say that no run was seen yet (withoutRunsBaseline).
    if (statusEqual(schedule.status, status) || statusEqual(schedule.status, withoutRunsBaseline(schedule.status, status))) {
      this.#observer?.observed(schedule, status, []);
      return { move: 'none', result: {} };
    }
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
    this.#logger.info({ key, ready: ready?.status, reason: ready?.reason }, 'updated status');
    if (onChange && ready) onChange(ready.message);
    const runs = runEvents(schedule.status, status);
    for (const event of runs.events) this.#events?.event(schedule, event.type, event.reason, event.message);
    this.#observer?.observed(schedule, status, runs.newRuns);
    return { move: 'updateStatus', result: {} };
  }
}
