import { describe, expect, it } from 'vitest';
import { buildCronJob, ownerReference } from '../../src/pure/index.ts';
import { CHILD_CACHE_BUDGET, stripCronJob } from '../../src/controller/backupschedule/event-mapping.ts';
import jsonMergePatch from 'json-merge-patch';
import type { ChildMergePatch } from '../../src/pure/child-patch.ts';
import { BackupScheduleReconciler, CONFLICT_RECHECK_MS, type ChildRef, type ReconcilerWrites } from '../../src/controller/backupschedule/reconciler.ts';
import type { EventRecorder, EventType } from '../../src/controller/event-recorder.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { objectKey, type KubeObject } from '../../src/kube/object.ts';
import { cacheStub } from '../../src/runtime/cache-policy.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { isTerminalError } from '../../src/runtime/reconciler.ts';
import { asStored, schedule } from './fixtures.ts';

type WriteName = keyof ReconcilerWrites;
/** A call; for a patch, `obj` is the CronJob the server would compute from it and `patch` the patch itself. */
interface Call { readonly name: WriteName; readonly obj: KubeObject; readonly patch?: ChildMergePatch }

/**
 * A client that fails the test on any call it was not told to expect, and answers expected ones. A GET
 * answers from `live` (the server's objects: by default, the cached ones), 404 when absent; a patch is
 * applied to the live object and the result handed to the answer.
 */
class StrictWrites implements ReconcilerWrites {
  readonly calls: Call[] = [];
  constructor(private readonly allowed: Partial<Record<WriteName, (obj: KubeObject) => unknown>>, private readonly live: Map<string, KubeObject>) {}
  #call(name: WriteName, obj: KubeObject, patch?: ChildMergePatch): Promise<unknown> {
    this.calls.push({ name, obj: structuredClone(obj), ...(patch ? { patch: structuredClone(patch) } : {}) });
    const answer = this.allowed[name];
    if (!answer) return Promise.reject(new Error(`unexpected write: ${name} ${objectKey(obj.metadata)}`));
    try {
      return Promise.resolve(answer(obj));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  createCronJob(obj: KubeObject) { return this.#call('createCronJob', obj) as Promise<KubeObject>; }
  getCronJob(ref: ChildRef) {
    const live = this.live.get(objectKey(ref));
    this.calls.push({ name: 'getCronJob', obj: { metadata: { ...ref } } });
    return live ? Promise.resolve(structuredClone(live)) : Promise.reject(new ApiStatusError(statusErrors.notFound({ group: 'batch', resource: 'cronjobs' }, ref.name)));
  }
  getSchedule(ref: ChildRef) { return this.#call('getSchedule', { metadata: { ...ref } }) as Promise<BackupScheduleObject>; }
  patchCronJob(ref: ChildRef, patch: ChildMergePatch) {
    const live = this.live.get(objectKey(ref));
    if (!live) return Promise.reject(new ApiStatusError(statusErrors.notFound({ group: 'batch', resource: 'cronjobs' }, ref.name)));
    return this.#call('patchCronJob', jsonMergePatch.apply(structuredClone(live), structuredClone(patch)) as KubeObject, patch) as Promise<KubeObject>;
  }
  updateScheduleStatus(obj: BackupScheduleObject) { return this.#call('updateScheduleStatus', obj); }
}

class RecordedEvents implements EventRecorder {
  readonly events: { type: EventType; reason: string; message: string }[] = [];
  event(_object: KubeObject, type: EventType, reason: string, message: string): void {
    this.events.push({ type, reason, message });
  }
}

const IMAGE = 'ghcr.io/kubelings/backupschedule-operator:test';
const cache = <T extends KubeObject>(...objs: T[]) => new Map(objs.map((o) => [objectKey(o.metadata), o]));
const desiredOf = (s: BackupScheduleObject) => buildCronJob(s, { image: IMAGE }) as KubeObject;
const ok = (obj: KubeObject) => obj;
const alreadyExists = (): never => { throw new ApiStatusError(statusErrors.alreadyExists({ group: 'batch', resource: 'cronjobs' }, 'nightly-etcd')); };
const KEY = 'kubelings/nightly-etcd';

function setup(schedules: BackupScheduleObject[], cronJobs: KubeObject[], allowed: ConstructorParameters<typeof StrictWrites>[0], live: KubeObject[] = cronJobs) {
  const writes = new StrictWrites(allowed, cache(...live));
  const events = new RecordedEvents();
  const clock = new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0));
  const reconciler = new BackupScheduleReconciler({ schedules: cache(...schedules), cronJobs: cache(...cronJobs), writes, events, backupImage: IMAGE, clock });
  return { writes, events, reconciler };
}

/** A schedule whose status is what the controller writes once its child is in sync. */
function converged(generation = 1): BackupScheduleObject {
  const s = schedule({ generation });
  s.status = {
    observedGeneration: generation,
    cronJobName: 'nightly-etcd',
    active: [],
    conditions: [{ type: 'Ready', status: 'True', reason: 'Created', message: 'CronJob "nightly-etcd" created', observedGeneration: generation, lastTransitionTime: '2026-11-30T00:00:00Z' }],
  };
  return s;
}

describe('BackupScheduleReconciler', () => {
  it('does nothing when the schedule is gone (garbage collection removes the child)', async () => {
    const { writes, reconciler } = setup([], [asStored(desiredOf(schedule()))], {});
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: {} });
    expect(writes.calls).toEqual([]);
  });

  it('does nothing for a schedule that is being deleted', async () => {
    const s = schedule();
    s.metadata.deletionTimestamp = '2026-11-30T00:00:00Z';
    const { writes, reconciler } = setup([s], [], {});
    await reconciler.reconcile(KEY);
    expect(writes.calls).toEqual([]);
  });

  it('reads a schedule the cache holds as a stub (over its budget) with one GET, and reconciles what it read', async () => {
    const whole = schedule();
    const writes = new StrictWrites({ getSchedule: () => structuredClone(whole), createCronJob: ok }, cache());
    const reconciler = new BackupScheduleReconciler({ schedules: cache(cacheStub(whole)), cronJobs: cache(), writes, events: new RecordedEvents(), backupImage: IMAGE, clock: new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0)) });
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'createCronJob', result: {} });
    expect(writes.calls).toEqual([{ name: 'getSchedule', obj: { metadata: { namespace: 'kubelings', name: 'nightly-etcd' } } }, { name: 'createCronJob', obj: desiredOf(whole) }]);
    // Gone by the time it is read: nothing to do.
    const gone = new StrictWrites({ getSchedule: () => { throw new ApiStatusError(statusErrors.notFound({ group: 'kubelings.dev', resource: 'backupschedules' }, 'nightly-etcd')); } }, cache());
    const again = new BackupScheduleReconciler({ schedules: cache(cacheStub(whole)), cronJobs: cache(), writes: gone, backupImage: IMAGE });
    await expect(again.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: {} });
  });

  it('creates the missing child with the controller ownerReference, and nothing else', async () => {
    const { writes, events, reconciler } = setup([schedule()], [], { createCronJob: ok });
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'createCronJob', result: {} });
    expect(writes.calls).toEqual([{ name: 'createCronJob', obj: desiredOf(schedule()) }]);
    expect(writes.calls[0]?.obj.metadata.ownerReferences).toEqual([
      { apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', name: 'nightly-etcd', uid: 'uid-schedule', controller: true, blockOwnerDeletion: true },
    ]);
    expect(events.events).toEqual([{ type: 'Normal', reason: 'Created', message: 'Created CronJob "nightly-etcd"' }]);
  });

  it.each([
    [25, false],
    [26, true],
  ])('on Kubernetes 1.%i creates the child with a podFailurePolicy: %s (older servers drop the field)', async (minor, expected) => {
    const writes = new StrictWrites({ createCronJob: ok }, cache());
    const reconciler = new BackupScheduleReconciler({
      schedules: cache(schedule()), cronJobs: cache(), writes, events: new RecordedEvents(), backupImage: IMAGE, clock: new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0)),
      serverVersion: () => ({ major: 1, minor, gitVersion: `v1.${minor}.0` }),
    });
    await reconciler.reconcile(KEY);
    const created = writes.calls[0]?.obj as KubeObject & { spec: { jobTemplate: { spec: Record<string, unknown> } } };
    expect('podFailurePolicy' in created.spec.jobTemplate.spec).toBe(expected);
  });

  it('requeues when the create answers AlreadyExists and the GET finds nothing (deleted meanwhile), never creating twice', async () => {
    const { writes, events, reconciler } = setup([schedule()], [], { createCronJob: alreadyExists });
    await expect(reconciler.reconcile(KEY)).resolves.toEqual({ requeue: true });
    expect(writes.calls.map((c) => c.name)).toEqual(['createCronJob', 'getCronJob']);
    expect(events.events).toEqual([]);
  });

  it('heals its own child found through AlreadyExists (its labels were removed, so the watch dropped it), keeping foreign metadata', async () => {
    const s = converged();
    const live = asStored(desiredOf(s), '300');
    live.metadata.labels = { 'someone.else/team': 'a' };
    live.metadata.annotations = { 'someone.else/note': 'keep me' };
    const { writes, events, reconciler } = setup([s], [], { createCronJob: alreadyExists, patchCronJob: ok }, [live]);
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    expect(writes.calls.map((c) => c.name)).toEqual(['createCronJob', 'getCronJob', 'patchCronJob']);
    expect(writes.calls[2]?.patch).toEqual({ metadata: { labels: desiredOf(s).metadata.labels, resourceVersion: '300' } });
    expect(writes.calls[2]?.obj.metadata.labels).toEqual({ 'someone.else/team': 'a', ...desiredOf(s).metadata.labels });
    expect(writes.calls[2]?.obj.metadata.annotations).toEqual({ 'someone.else/note': 'keep me' });
    expect(events.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'Updated' })]);
  });

  it('adopts an orphan carrying its labels (no controller): the patch adds its controller reference and heals the spec', async () => {
    const s = converged();
    const orphan = asStored(desiredOf(s), '300') as KubeObject & { spec: any };
    orphan.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'uid-cm' }];
    orphan.spec.schedule = '* * * * *';
    for (const cached of [[], [stripCronJob(structuredClone(orphan))]]) {
      const { writes, events, reconciler } = setup([s], cached, { createCronJob: alreadyExists, patchCronJob: ok }, [orphan]);
      await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
      const patch = writes.calls.find((c) => c.name === 'patchCronJob')?.patch;
      expect(patch?.metadata.ownerReferences).toEqual([orphan.metadata.ownerReferences[0], ownerReference(s)]);
      expect(patch?.['spec']).toEqual({ schedule: '0 2 * * *' });
      expect(patch?.metadata.resourceVersion).toBe('300');
      expect(events.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'Adopted' })]);
    }
  });

  it('does not adopt a CronJob without a controller that lacks its labels: ChildNameConflict, looked at again after a fixed interval', async () => {
    const s = schedule();
    const foreign = asStored({ ...desiredOf(s), metadata: { name: 'nightly-etcd', namespace: 'kubelings', labels: { app: 'mine' } } });
    const { writes, reconciler } = setup([s], [], { createCronJob: alreadyExists, updateScheduleStatus: ok }, [foreign]);
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateStatus', result: { requeueAfterMs: CONFLICT_RECHECK_MS.min } });
    expect(writes.calls.map((c) => c.name)).toEqual(['createCronJob', 'getCronJob', 'updateScheduleStatus']);
    expect(writes.calls[2]?.obj['status']).toMatchObject({ conditions: [expect.objectContaining({ reason: 'ChildNameConflict' })] });
  });

  it('writes status once the server-defaulted child is in sync: Ready=True, Created', async () => {
    const s = schedule();
    const { writes, reconciler } = setup([s], [asStored(desiredOf(s))], { updateScheduleStatus: ok });
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateStatus', result: {} });
    expect(writes.calls).toHaveLength(1);
    const written = writes.calls[0]!.obj as BackupScheduleObject;
    expect(written.metadata.resourceVersion).toBe('100');
    expect(written.status).toEqual({
      observedGeneration: 1,
      cronJobName: 'nightly-etcd',
      active: [],
      conditions: [{ type: 'Ready', status: 'True', reason: 'Created', message: 'CronJob "nightly-etcd" created', observedGeneration: 1, lastTransitionTime: '2026-11-30T01:00:00Z' }],
    });
  });

  it('makes no write at all on a converged schedule (no hot loop against server defaults)', async () => {
    const s = converged();
    const { writes, events, reconciler } = setup([s], [asStored(desiredOf(s))], {});
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: {} });
    expect(writes.calls).toEqual([]);
    expect(events.events).toEqual([]);
  });

  it('copies the child status (running Jobs, last schedule and success) into the schedule', async () => {
    const s = converged();
    const child = asStored(desiredOf(s));
    child['status'] = { active: [{ kind: 'Job', name: 'nightly-etcd-29400000' }], lastScheduleTime: '2026-11-30T02:00:00Z', lastSuccessfulTime: '2026-11-29T02:00:31Z' };
    const { writes, reconciler } = setup([s], [child], { updateScheduleStatus: ok });
    await reconciler.reconcile(KEY);
    expect(writes.calls[0]?.obj['status']).toMatchObject({ active: ['nightly-etcd-29400000'], lastScheduleTime: '2026-11-30T02:00:00Z', lastSuccessfulTime: '2026-11-29T02:00:31Z' });
  });

  it.each<[string, (child: KubeObject & { spec: any }) => void]>([
    ['the schedule was edited', (c) => (c.spec.schedule = '* * * * *')],
    ['the image was swapped', (c) => (c.spec.jobTemplate.spec.template.spec.containers[0].image = 'evil:1')],
    ['our label was removed', (c) => delete c.metadata.labels],
    ['a time zone was added', (c) => (c.spec.timeZone = 'Asia/Tokyo')],
    ['host networking was added by hand', (c) => (c.spec.jobTemplate.spec.template.spec.hostNetwork = true)],
    ['a command was added by hand', (c) => (c.spec.jobTemplate.spec.template.spec.containers[0].command = ['sh', '-c', 'id'])],
  ])('heals a child whose owned fields drifted (%s) with one merge patch from the cache that keeps defaults, foreign metadata and resourceVersion', async (_name, edit) => {
    const s = converged();
    const child = asStored(desiredOf(s), '300') as KubeObject & { spec: any };
    child.metadata.annotations = { 'someone.else/note': 'keep me' };
    edit(child);
    child.metadata.labels = { ...child.metadata.labels, 'someone.else/team': 'a' };
    // The cache holds the stripped child (no annotations, no foreign labels); the server holds it whole.
    const { writes, events, reconciler } = setup([s], [stripCronJob(structuredClone(child))], { patchCronJob: ok }, [child]);
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    expect(writes.calls).toHaveLength(1);
    expect(writes.calls[0]?.patch?.metadata.resourceVersion).toBe('300');
    expect(writes.calls[0]?.patch?.metadata).not.toHaveProperty('annotations');
    const sent = writes.calls[0]!.obj as KubeObject & { spec: any };
    expect(sent.spec.jobTemplate.spec.template.spec.dnsPolicy).toBe('ClusterFirst');
    const healed = asStored(desiredOf(s), '300');
    healed.metadata.annotations = { 'someone.else/note': 'keep me' };
    healed.metadata.labels = { ...healed.metadata.labels, 'someone.else/team': 'a' };
    expect(sent).toEqual(healed);
    expect(events.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'Updated' })]);
  });

  it('updates the child for a new generation of the spec, then reports the new generation', async () => {
    const before = converged(1);
    const after = schedule({ generation: 2, spec: { schedule: '30 3 * * *' } });
    after.status = before.status;
    const oldChild = asStored(desiredOf(before));
    const first = setup([after], [oldChild], { patchCronJob: ok });
    await first.reconciler.reconcile(KEY);
    expect((first.writes.calls[0]?.obj as KubeObject & { spec: any }).spec.schedule).toBe('30 3 * * *');

    const second = setup([after], [asStored(desiredOf(after))], { updateScheduleStatus: ok });
    await second.reconciler.reconcile(KEY);
    expect(second.writes.calls[0]?.obj['status']).toMatchObject({ observedGeneration: 2, conditions: [expect.objectContaining({ reason: 'Updated', observedGeneration: 2 })] });
  });

  it.each([
    ['patchCronJob' as const, (s: BackupScheduleObject) => ({ ...asStored(desiredOf(s)), spec: { ...(asStored(desiredOf(s)) as any).spec, schedule: '* * * * *' } })],
    ['updateScheduleStatus' as const, (s: BackupScheduleObject) => asStored(desiredOf(s))],
  ])('requeues with backoff when %s answers 409 Conflict', async (name, child) => {
    const s = schedule();
    const { writes, reconciler } = setup([s], [child(s)], {
      [name]: () => { throw new ApiStatusError(statusErrors.conflict({ group: 'batch', resource: 'cronjobs' }, 'nightly-etcd')); },
    });
    await expect(reconciler.reconcile(KEY)).resolves.toEqual({ requeue: true });
    expect(writes.calls.map((c) => c.name)).toEqual([name]);
  });

  it('gives up until the schedule changes, with a Warning Event, when its status write is refused 422 (an invalid stored schedule, no ratcheting)', async () => {
    const s = schedule({ spec: { schedule: 'every night' } });
    const refusal = 'BackupSchedule.kubelings.dev "nightly-etcd" is invalid: spec.schedule: Invalid value: "every night"';
    const { writes, events, reconciler } = setup([s], [], {
      updateScheduleStatus: () => { throw new ApiStatusError(statusErrors.invalid({ group: 'kubelings.dev', kind: 'BackupSchedule' }, 'nightly-etcd', [{ reason: 'FieldValueInvalid', field: 'spec.schedule', message: 'Invalid value: "every night"' }])); },
    });
    const outcome = reconciler.reconcile(KEY);
    await expect(outcome).rejects.toSatisfy(isTerminalError);
    await expect(outcome).rejects.toThrow(refusal);
    expect(writes.calls.map((c) => c.name)).toEqual(['updateScheduleStatus']);
    expect(events.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'StatusRejected', message: expect.stringContaining('spec.schedule') }));
  });

  it('throws (rate-limited retry) on other API errors', async () => {
    const { reconciler } = setup([schedule()], [], { createCronJob: () => { throw new ApiStatusError(statusErrors.internalError('etcd down')); } });
    await expect(reconciler.reconcile(KEY)).rejects.toThrow('etcd down');
  });

  it('leaves a CronJob it does not control alone and reports ChildNameConflict', async () => {
    const s = schedule();
    const foreign = asStored({ ...desiredOf(s), metadata: { name: 'nightly-etcd', namespace: 'kubelings', labels: { app: 'mine' } } });
    const { writes, events, reconciler } = setup([s], [foreign], { updateScheduleStatus: ok });
    await expect(reconciler.reconcile(KEY)).resolves.toEqual({ requeueAfterMs: CONFLICT_RECHECK_MS.min });
    expect(writes.calls.map((c) => c.name)).toEqual(['getCronJob', 'updateScheduleStatus']);
    expect(writes.calls[1]?.obj['status']).toEqual({
      observedGeneration: 1,
      conditions: [expect.objectContaining({ status: 'False', reason: 'ChildNameConflict', message: expect.stringContaining('CronJob "nightly-etcd" already exists and is not controlled by any owner') })],
    });
    expect(events.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ChildNameConflict' })]);

    const again = setup([{ ...s, status: writes.calls[1]!.obj['status'] } as BackupScheduleObject], [foreign], {});
    await expect(again.reconciler.reconcile(KEY)).resolves.toEqual({ requeueAfterMs: CONFLICT_RECHECK_MS.min });
    expect(again.writes.calls.map((c) => c.name)).toEqual(['getCronJob']);
    expect(again.events.events).toEqual([]);
  });

  it('looks at a lasting conflict again less often: after as long as it has lasted, at most every minute', async () => {
    const s = schedule();
    const foreign = asStored({ ...desiredOf(s), metadata: { name: 'nightly-etcd', namespace: 'kubelings' } });
    const first = setup([s], [], { createCronJob: alreadyExists, updateScheduleStatus: ok }, [foreign]);
    await first.reconciler.reconcile(KEY);
    const status = first.writes.calls[2]!.obj['status'] as NonNullable<BackupScheduleObject['status']>;
    for (const [sinceMs, wait] of [[20_000, 20_000], [3_600_000, CONFLICT_RECHECK_MS.max]] as const) {
      const conditions = status.conditions!.map((c) => ({ ...c, lastTransitionTime: new Date(Date.UTC(2026, 10, 30, 1, 0, 0) - sinceMs).toISOString() }));
      const later = setup([{ ...s, status: { ...status, conditions } } as BackupScheduleObject], [], { createCronJob: alreadyExists }, [foreign]);
      await expect(later.reconciler.reconcile(KEY)).resolves.toEqual({ requeueAfterMs: wait });
    }
  });

  it('reports a CronJob controlled by a previous incarnation (same name, other uid) as exactly that, not as controlled by itself', async () => {
    const s = schedule();
    const stale = asStored(desiredOf({ ...s, metadata: { ...s.metadata, uid: 'uid-old' } }));
    const { writes, reconciler } = setup([s], [stripCronJob(structuredClone(stale))], { updateScheduleStatus: ok }, [stale]);
    await expect(reconciler.reconcile(KEY)).resolves.toEqual({ requeueAfterMs: CONFLICT_RECHECK_MS.min });
    const message = (writes.calls[1]?.obj['status'] as { conditions: { reason: string; message: string }[] }).conditions[0]?.message;
    expect(message).toContain('still belongs to a previous BackupSchedule "nightly-etcd" (uid uid-old), deleted but not yet garbage-collected');
    expect(message).not.toContain('already exists and is controlled by BackupSchedule "nightly-etcd"');
  });

  it.each([
    ['a cron minute out of range', { schedule: '61 * * * *' }, 'spec.schedule'],
    ['an unknown time zone', { timeZone: 'Mars/Olympus_Mons' }, 'spec.timeZone'],
    ['two sources', { source: { etcd: { endpoints: ['https://e:2379'] }, persistentVolumeClaim: { claimName: 'x' } } }, 'spec.source'],
  ])('reports an invalid spec (%s) as Ready=False naming the field, with a Warning Event and no child', async (_name, spec, field) => {
    const s = schedule({ spec });
    const { writes, events, reconciler } = setup([s], [], { updateScheduleStatus: ok });
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateStatus', result: {} });
    expect(writes.calls.map((c) => c.name)).toEqual(['updateScheduleStatus']);
    const ready = (writes.calls[0]?.obj['status'] as { conditions: { reason: string; message: string; status: string }[] }).conditions[0];
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(ready?.message).toContain(field);
    expect(events.events).toEqual([{ type: 'Warning', reason: 'InvalidSpec', message: ready?.message }]);
  });

  it('keeps reporting the child it controls while a new spec is invalid, and leaves that child alone', async () => {
    const s = converged();
    const child = asStored(desiredOf(s));
    child['status'] = { lastScheduleTime: '2026-11-30T02:00:00Z' };
    const invalid = { ...s, metadata: { ...s.metadata, generation: 2 }, spec: { ...s.spec, schedule: '61 * * * *' } } as BackupScheduleObject;
    const { writes, reconciler } = setup([invalid], [child], { updateScheduleStatus: ok });
    await reconciler.reconcile(KEY);
    expect(writes.calls.map((c) => c.name)).toEqual(['updateScheduleStatus']);
    expect(writes.calls[0]?.obj['status']).toMatchObject({ observedGeneration: 2, cronJobName: 'nightly-etcd', active: [], lastScheduleTime: '2026-11-30T02:00:00Z', conditions: [{ reason: 'InvalidSpec' }] });
  });

  it('reads its child with a GET when the cache holds it as a stub (larger than the cache keeps), heals it, and keeps what others added', async () => {
    const s = converged();
    const live = asStored(desiredOf(s), '400') as KubeObject & { spec: any };
    live.spec.schedule = '* * * * *';
    // The spec is ours whole (a heal drops what others add to it); owner references are not: 300 foreign ones outgrow the budget.
    const foreign = Array.from({ length: 300 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: `keep-${i}`, uid: `cm-${i}` }));
    live.metadata.ownerReferences = [...(live.metadata.ownerReferences ?? []), ...foreign];
    const stub = stripCronJob(structuredClone(live));
    expect(JSON.stringify(foreign).length).toBeGreaterThan(CHILD_CACHE_BUDGET);
    expect(stub).not.toHaveProperty('spec');
    const { writes, reconciler } = setup([s], [stub], { patchCronJob: ok }, [live]);
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    expect(writes.calls.map((c) => c.name)).toEqual(['getCronJob', 'patchCronJob']);
    expect(writes.calls[1]?.patch).toEqual({ spec: { schedule: '0 2 * * *' }, metadata: { resourceVersion: '400' } });
    expect(writes.calls[1]?.obj.metadata.ownerReferences).toEqual(live.metadata.ownerReferences);
  });

  it('suspends a stub child running a disallowed image after reading it whole', async () => {
    const s = converged();
    const live = asStored(desiredOf(s), '401') as KubeObject & { spec: any };
    live.spec.jobTemplate.spec.template.spec.containers[0].image = 'evil.example.com/x:1';
    live.metadata.ownerReferences = [...(live.metadata.ownerReferences ?? []), ...Array.from({ length: 300 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: `keep-${i}`, uid: `cm-${i}` }))];
    const disallowed = { ...s, metadata: { ...s.metadata, generation: 2 }, spec: { ...s.spec, image: 'evil.example.com/x:1' } } as BackupScheduleObject;
    const { writes, reconciler } = setup([disallowed], [stripCronJob(structuredClone(live))], { patchCronJob: ok }, [live]);
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    expect(writes.calls.map((c) => c.name)).toEqual(['getCronJob', 'patchCronJob']);
    expect(writes.calls[1]?.patch).toMatchObject({ spec: { suspend: true } });
  });

  it('handles a 253-character name: the child name is at most 52 characters', async () => {
    const name = 'a'.repeat(253);
    const s = schedule({ name });
    const { writes, reconciler } = setup([s], [], { createCronJob: ok });
    await reconciler.reconcile(`kubelings/${name}`);
    expect(writes.calls[0]?.obj.metadata.name?.length).toBeLessThanOrEqual(52);
  });
});

describe('BackupScheduleReconciler after its own child write', () => {
  /** A reconciler whose create is stored at resourceVersion 300, over caches the test fills in as the watch would. */
  function afterCreate(s: BackupScheduleObject) {
    const schedules = cache(s);
    const cronJobs = new Map<string, KubeObject>();
    const writes = new StrictWrites({ createCronJob: (obj) => asStored(obj, '300'), patchCronJob: ok, updateScheduleStatus: ok }, cronJobs);
    const reconciler = new BackupScheduleReconciler({ schedules, cronJobs, writes, events: new RecordedEvents(), backupImage: IMAGE, clock: new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0)) });
    return { schedules, cronJobs, writes, reconciler };
  }
  /** The stored child at `resourceVersion` with another schedule than the spec's: drift a full reconcile patches. */
  const drifted = (s: BackupScheduleObject, resourceVersion: string) => {
    const child = asStored(desiredOf(s), resourceVersion) as KubeObject & { spec: { schedule: string } };
    child.spec.schedule = '5 5 * * *';
    return child;
  };

  it('takes the version its create stored (found whole in the answer) as in sync: the next reconcile only writes status', async () => {
    const s = schedule();
    const { cronJobs, writes, reconciler } = afterCreate(s);
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'createCronJob' });
    // The cache shows that version; its content is not compared again (here it would not even match).
    cronJobs.set(KEY, drifted(s, '300'));
    await expect(reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'updateStatus' });
    expect(writes.calls.map((c) => c.name)).toEqual(['createCronJob', 'updateScheduleStatus']);
  });

  it('compares the child again when the cache shows another version (someone changed it since), a new generation, or a later reconcile', async () => {
    const s = schedule();
    const changed = afterCreate(s);
    await changed.reconciler.reconcile(KEY);
    changed.cronJobs.set(KEY, drifted(s, '301'));
    await expect(changed.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });

    const newGeneration = afterCreate(s);
    await newGeneration.reconciler.reconcile(KEY);
    newGeneration.cronJobs.set(KEY, asStored(desiredOf(s), '300'));
    newGeneration.schedules.set(KEY, schedule({ generation: 2, spec: { schedule: '30 3 * * *' } }));
    await expect(newGeneration.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });

    const later = afterCreate(s);
    await later.reconciler.reconcile(KEY);
    later.cronJobs.set(KEY, asStored(desiredOf(s), '300'));
    await expect(later.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'updateStatus' });
    // The note lasts one reconcile: from now on the cached child is compared as any other.
    later.cronJobs.set(KEY, drifted(s, '300'));
    await expect(later.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });
  });
});
