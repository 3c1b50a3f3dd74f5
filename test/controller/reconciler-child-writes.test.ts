/**
 * The reconciler when a child write does not work out: rejected for good (ChildRejected), accepted but
 * not kept (ChildNotPersisted), undone again and again by another writer (DriftRecurring), and a
 * `spec.image` outside the operator's allow-list (ImageNotAllowed).
 */
import { describe, expect, it } from 'vitest';
import { buildCronJob } from '../../src/build/index.ts';
import { BackupScheduleReconciler, type ReconcilerWrites } from '../../src/controller/backupschedule-reconciler.ts';
import type { EventRecorder, EventType } from '../../src/controller/event-recorder.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { objectKey, type KubeObject } from '../../src/kube/object.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { asStored, schedule } from './fixtures.ts';

type CronJob = KubeObject & { spec: any };
type Answer = (obj: KubeObject) => KubeObject;

const IMAGE = 'ghcr.io/kubelings/backupschedule-operator:test';
const KEY = 'kubelings/nightly-etcd';
const CRONJOBS = { group: 'batch', resource: 'cronjobs' };
const desiredOf = (s: BackupScheduleObject) => buildCronJob(s, { image: IMAGE }) as KubeObject;

/**
 * A reconciler over mutable caches, with writes answered by `answers` (any other write fails the test)
 * and a status write that also updates the schedule cache, as the watch would.
 */
function harness(initial: { schedule: BackupScheduleObject; child?: KubeObject }, answers: { create?: Answer; update?: Answer }, options: { allowedImages?: string[] } = {}) {
  const schedules = new Map([[KEY, initial.schedule]]);
  const cronJobs = new Map<string, KubeObject>(initial.child ? [[KEY, initial.child]] : []);
  const calls: { name: keyof ReconcilerWrites; obj: KubeObject }[] = [];
  const events: { type: EventType; reason: string; message: string }[] = [];
  const clock = new FakeClock(Date.UTC(2026, 10, 30, 1, 0, 0));
  const call = (name: keyof ReconcilerWrites, obj: KubeObject, answer: Answer | undefined): Promise<KubeObject> => {
    calls.push({ name, obj: structuredClone(obj) });
    if (!answer) return Promise.reject(new Error(`unexpected write: ${name}`));
    try {
      return Promise.resolve(answer(structuredClone(obj)));
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const writes: ReconcilerWrites = {
    createCronJob: (obj) => call('createCronJob', obj, answers.create),
    updateCronJob: (obj) => call('updateCronJob', obj, answers.update),
    updateScheduleStatus: (obj) => {
      calls.push({ name: 'updateScheduleStatus', obj: structuredClone(obj) });
      schedules.set(KEY, structuredClone(obj));
      return Promise.resolve(obj);
    },
  };
  const recorder: EventRecorder = { event: (_o, type, reason, message) => void events.push({ type, reason, message }) };
  const reconciler = new BackupScheduleReconciler({
    schedules, cronJobs, writes, events: recorder, backupImage: IMAGE, clock,
    serverVersion: () => ({ major: 1, minor: 24, gitVersion: 'v1.24.17' }),
    ...(options.allowedImages ? { allowedImages: options.allowedImages } : {}),
  });
  const ready = () => schedules.get(KEY)?.status?.conditions?.find((c) => c.type === 'Ready');
  const childWrites = () => calls.filter((c) => c.name !== 'updateScheduleStatus').length;
  return { schedules, cronJobs, calls, events, clock, reconciler, ready, childWrites };
}

/** A schedule whose status says its child is in sync at `generation`. */
function converged(generation: number, spec: Record<string, unknown> = {}): BackupScheduleObject {
  const s = schedule({ generation, spec });
  s.status = {
    observedGeneration: generation, cronJobName: 'nightly-etcd', active: [],
    conditions: [{ type: 'Ready', status: 'True', reason: 'Created', message: 'CronJob "nightly-etcd" created', observedGeneration: generation, lastTransitionTime: '2026-11-30T00:00:00Z' }],
  };
  return s;
}

/** What an API server without CronJob time zones stores: the object without spec.timeZone, a new resourceVersion. */
function dropTimeZone(resourceVersion: string): Answer {
  return (obj) => {
    const stored = asStored(obj, resourceVersion) as CronJob;
    delete stored.spec.timeZone;
    return stored;
  };
}

describe('a child write the API server rejects (not retryable)', () => {
  it.each([
    ['422 Invalid', () => new ApiStatusError(statusErrors.invalid({ group: 'batch', kind: 'CronJob' }, 'nightly-etcd', [{ field: 'spec.jobTemplate.spec.template.spec.containers[0].image', message: 'Required value', reason: 'FieldValueRequired' }])), 422],
    ['403 Forbidden', () => new ApiStatusError(statusErrors.forbidden('system:serviceaccount:op:op', 'create', CRONJOBS, 'kubelings')), 403],
    ['404 on create (namespace gone)', () => new ApiStatusError(statusErrors.notFound({ group: '', resource: 'namespaces' }, 'kubelings')), 404],
  ])('ends a new schedule in Ready=False/ChildRejected with the API message (%s), a Warning Event, and a long requeue', async (_name, error, code) => {
    const h = harness({ schedule: schedule() }, { create: () => { throw error(); } });
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateStatus', result: { requeueAfterMs: 30_000 } });
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ChildRejected', observedGeneration: 1 });
    expect(h.ready()?.message).toContain(`the API server rejected the create of CronJob "nightly-etcd" (HTTP ${code}): ${error().message}`);
    expect(h.events).toEqual([{ type: 'Warning', reason: 'ChildRejected', message: h.ready()?.message }]);

    // Retried later with the same answer: no status write, no second Event, and a longer wait.
    h.clock.step(120_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: { requeueAfterMs: 120_000 } });
    expect(h.calls.map((c) => c.name)).toEqual(['createCronJob', 'updateScheduleStatus', 'createCronJob']);
    expect(h.events).toHaveLength(1);
  });

  it('takes Ready=True away from an edited schedule whose update is rejected, and keeps reporting the old child', async () => {
    const before = converged(1);
    const child = asStored(desiredOf(before));
    const edited = converged(1, { schedule: '30 3 * * *' });
    edited.metadata.generation = 2;
    const h = harness({ schedule: edited, child }, {
      update: () => { throw new ApiStatusError(statusErrors.invalid({ group: 'batch', kind: 'CronJob' }, 'nightly-etcd', [{ field: 'spec.schedule', message: 'Invalid value: "30 3 * * *": denied by policy', reason: 'FieldValueInvalid' }])); },
    });
    await h.reconciler.reconcile(KEY);
    expect(h.schedules.get(KEY)?.status).toMatchObject({ observedGeneration: 2, cronJobName: 'nightly-etcd' });
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ChildRejected', observedGeneration: 2 });
    expect(h.ready()?.message).toContain('the API server rejected the update of CronJob "nightly-etcd" (HTTP 422)');
    expect(h.ready()?.message).toContain('denied by policy');
  });

  it.each([
    ['500', () => new ApiStatusError(statusErrors.internalError('etcd down'))],
    ['429', () => new ApiStatusError(statusErrors.tooManyRequests(1))],
    ['504', () => new ApiStatusError(statusErrors.timeout())],
    ['a network error', () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' })],
  ])('still throws (rate-limited retry, no status) on a retryable error: %s', async (_name, error) => {
    const h = harness({ schedule: schedule() }, { create: () => { throw error(); } });
    await expect(h.reconciler.reconcile(KEY)).rejects.toThrow();
    expect(h.calls.map((c) => c.name)).toEqual(['createCronJob']);
  });

  it('retries an update answered 404 (the child just went away) instead of reporting it', async () => {
    const s = converged(1);
    const child = asStored(desiredOf(s)) as CronJob;
    child.spec.schedule = '* * * * *';
    const h = harness({ schedule: s, child }, { update: () => { throw new ApiStatusError(statusErrors.notFound(CRONJOBS, 'nightly-etcd')); } });
    await expect(h.reconciler.reconcile(KEY)).rejects.toThrow('not found');
    expect(h.events).toEqual([]);
  });
});

describe('spec.image and the operator\'s allow-list', () => {
  it('refuses an image outside the allow-list: Ready=False/ImageNotAllowed naming the flag, a Warning Event, no child', async () => {
    const h = harness({ schedule: schedule({ spec: { image: 'docker.io/evil/miner:latest' } }) }, {});
    await h.reconciler.reconcile(KEY);
    expect(h.childWrites()).toBe(0);
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ImageNotAllowed' });
    expect(h.ready()?.message).toContain('spec.image: "docker.io/evil/miner:latest" is not allowed');
    expect(h.ready()?.message).toContain('--allowed-backup-images');
    expect(h.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ImageNotAllowed' })]);
  });

  it.each([
    ['the controller\'s own --backup-image', IMAGE, []],
    ['an image matching an allowed pattern', 'registry.example.com/backup/etcd:3.5', ['registry.example.com/backup/*']],
  ])('creates the child for %s', async (_name, image, allowedImages) => {
    const h = harness({ schedule: schedule({ spec: { image } }) }, { create: (obj) => asStored(obj) }, { allowedImages });
    await h.reconciler.reconcile(KEY);
    expect((h.calls[0]?.obj as CronJob).spec.jobTemplate.spec.template.spec.containers[0].image).toBe(image);
  });

  it('leaves the existing child alone when a schedule is edited to a disallowed image', async () => {
    const s = converged(1);
    const child = asStored(desiredOf(s));
    const edited = converged(1, { image: 'evil:1' });
    edited.metadata.generation = 2;
    const h = harness({ schedule: edited, child }, {});
    await h.reconciler.reconcile(KEY);
    expect(h.childWrites()).toBe(0);
    expect(h.schedules.get(KEY)?.status).toMatchObject({ observedGeneration: 2, cronJobName: 'nightly-etcd', conditions: [{ status: 'False', reason: 'ImageNotAllowed' }] });
  });
});

describe('fields the API server does not keep (issue 11: the silent stall)', () => {
  const zoned = () => schedule({ spec: { timeZone: 'Etc/UTC' } });

  it('reports a create whose response lacks spec.timeZone at once, then holds the update back until the backoff passes', async () => {
    const h = harness({ schedule: zoned() }, { create: dropTimeZone('201'), update: dropTimeZone('201') });
    const first = await h.reconciler.reconcileWithMove(KEY);
    expect(first).toEqual({ move: 'createCronJob', result: { requeueAfterMs: 5_000 } });
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ChildNotPersisted', observedGeneration: 1 });
    expect(h.ready()?.message).toContain('did not keep spec.timeZone');
    expect(h.ready()?.message).toContain('spec.timeZone needs Kubernetes 1.25 or later (the API server reports v1.24.17)');
    expect(h.events.map((e) => `${e.type}/${e.reason}`)).toEqual(['Normal/Created', 'Warning/ChildNotPersisted']);

    // The create's watch event: the same drift on the same child → no write at all.
    h.cronJobs.set(KEY, dropTimeZone('201')(desiredOf(zoned())));
    h.clock.step(1_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: { requeueAfterMs: 4_000 } });
    expect(h.childWrites()).toBe(1);

    // Backoff passed: one update, still not kept (a no-op: same resourceVersion) → hold twice as long; no new status, no new Event.
    h.clock.step(4_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateCronJob', result: { requeueAfterMs: 10_000 } });
    h.clock.step(9_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: { requeueAfterMs: 1_000 } });
    expect(h.childWrites()).toBe(2);
    expect(h.calls.filter((c) => c.name === 'updateScheduleStatus')).toHaveLength(1);
    // The update changed nothing, so there is no Normal "Updated" Event either.
    expect(h.events).toHaveLength(2);
  });

  it('reports an update whose response still lacks the field in the same reconcile (a no-op update brings no watch event)', async () => {
    const before = converged(1);
    const child = dropTimeZone('300')(desiredOf(before));
    const edited = converged(1, { timeZone: 'Europe/Berlin' });
    edited.metadata.generation = 2;
    const h = harness({ schedule: edited, child }, { update: () => child });
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateCronJob', result: { requeueAfterMs: 5_000 } });
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ChildNotPersisted', observedGeneration: 2 });
    expect(h.events.map((e) => e.reason)).toEqual(['ChildNotPersisted']);
  });

  it('names only the fields the server kept in the Updated Event when it kept some of them', async () => {
    const before = converged(1);
    const edited = converged(1, { schedule: '30 3 * * *', timeZone: 'Europe/Berlin' });
    edited.metadata.generation = 2;
    const h = harness({ schedule: edited, child: asStored(desiredOf(before), '300') }, { update: dropTimeZone('301') });
    await h.reconciler.reconcile(KEY);
    expect(h.events).toEqual([
      { type: 'Normal', reason: 'Updated', message: 'Updated CronJob "nightly-etcd": spec.schedule' },
      expect.objectContaining({ type: 'Warning', reason: 'ChildNotPersisted', message: expect.stringContaining('did not keep spec.timeZone:') }),
    ]);
  });

  it('writes again at once when the schedule gets a new generation or the child changes', async () => {
    const h = harness({ schedule: zoned() }, { create: dropTimeZone('201'), update: dropTimeZone('202') });
    await h.reconciler.reconcile(KEY);
    h.cronJobs.set(KEY, dropTimeZone('205')(desiredOf(zoned())));
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'updateCronJob' });
    h.cronJobs.set(KEY, dropTimeZone('202')(desiredOf(zoned())));
    const next = { ...structuredClone(h.schedules.get(KEY)!), metadata: { ...h.schedules.get(KEY)!.metadata, generation: 2 } };
    h.schedules.set(KEY, next);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'updateCronJob' });
    expect(h.ready()).toMatchObject({ reason: 'ChildNotPersisted', observedGeneration: 2 });
  });

  it('names a field a mutating webhook rewrites, with the webhook as the likely cause', async () => {
    const rewrite: Answer = (obj) => {
      const stored = asStored(obj, '201') as CronJob;
      stored.spec.jobTemplate.spec.template.spec.containers[0].image = 'mirror.corp/kubelings/backupschedule-operator:test';
      return stored;
    };
    const h = harness({ schedule: schedule() }, { create: rewrite });
    await h.reconciler.reconcile(KEY);
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ChildNotPersisted' });
    expect(h.ready()?.message).toContain('did not keep spec.jobTemplate.spec.template.spec.containers[0].image');
    expect(h.ready()?.message).toContain('mutating admission webhook');
  });

  it('goes back to Ready=True once the server keeps the child', async () => {
    const h = harness({ schedule: zoned() }, { create: dropTimeZone('201'), update: (obj) => asStored(obj, '202') });
    await h.reconciler.reconcile(KEY);
    h.cronJobs.set(KEY, dropTimeZone('201')(desiredOf(zoned())));
    h.clock.step(5_000);
    await h.reconciler.reconcile(KEY);
    h.cronJobs.set(KEY, asStored(desiredOf(zoned()), '202'));
    await h.reconciler.reconcile(KEY);
    expect(h.ready()).toMatchObject({ status: 'True' });
  });
});

describe('drift that comes back after every heal (two writers fighting)', () => {
  it('restores the field three times, then holds back with Ready=False/DriftRecurring and one Warning Event, with a growing backoff', async () => {
    const s = converged(1);
    let rv = 300;
    const other = (): CronJob => {
      const c = asStored(desiredOf(s), String(++rv)) as CronJob;
      c.spec.jobTemplate.spec.template.spec.containers[0].image = 'ghcr.io/kubelings/backupschedule-operator:other';
      return c;
    };
    const h = harness({ schedule: s, child: other() }, { update: (obj) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } }) });
    for (let i = 0; i < 3; i++) {
      await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'updateCronJob' });
      h.cronJobs.set(KEY, other()); // the other controller undoes it at once
      h.clock.step(10);
    }
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateStatus', result: { requeueAfterMs: 4_990 } });
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'DriftRecurring' });
    expect(h.ready()?.message).toContain('spec.jobTemplate.spec.template.spec.containers[0].image of CronJob "nightly-etcd" keep being changed back');
    expect(h.events.filter((e) => e.type === 'Warning')).toEqual([expect.objectContaining({ reason: 'DriftRecurring' })]);

    h.clock.step(5_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'updateCronJob' });
    h.cronJobs.set(KEY, other());
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'none', result: { requeueAfterMs: 10_000 } });
    expect(h.childWrites()).toBe(4);
  });

  it('heals a user\'s occasional edits (further apart than the window) without ever holding back', async () => {
    const s = converged(1);
    const edited = (rv: number): CronJob => {
      const c = asStored(desiredOf(s), String(rv)) as CronJob;
      c.spec.schedule = '* * * * *';
      return c;
    };
    const h = harness({ schedule: s, child: edited(300) }, { update: (obj) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(Number(obj.metadata.resourceVersion) + 1) } }) });
    for (let i = 0; i < 5; i++) {
      h.cronJobs.set(KEY, edited(300 + 2 * i));
      await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateCronJob', result: {} });
      h.clock.step(11 * 60_000);
    }
    expect(h.events.filter((e) => e.type === 'Warning')).toEqual([]);
  });
});
