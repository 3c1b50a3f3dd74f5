/**
 * The reconciler when a child write does not work out: rejected for good (ChildRejected), accepted but
 * not kept (ChildNotPersisted), undone again and again by another writer (DriftRecurring).
 */
import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { asStored, schedule } from './fixtures.ts';
import { converged, desiredOf, dropTimeZone, harness, KEY, type Answer, type CronJob } from './reconciler-harness.ts';

const CRONJOBS = { group: 'batch', resource: 'cronjobs' };

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

  it('heals at the retry once the cause is fixed (RBAC granted): the child is created and Ready turns True', async () => {
    let granted = false;
    const h = harness({ schedule: schedule() }, {
      create: (obj) => {
        if (!granted) throw new ApiStatusError(statusErrors.forbidden('system:serviceaccount:op:op', 'create', CRONJOBS, 'kubelings'));
        return asStored(obj, '201');
      },
    });
    await h.reconciler.reconcile(KEY);
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ChildRejected' });
    granted = true;
    h.clock.step(30_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'createCronJob', result: {} });
    h.cronJobs.set(KEY, asStored(desiredOf(schedule()), '201'));
    await h.reconciler.reconcile(KEY);
    expect(h.ready()).toMatchObject({ status: 'True', observedGeneration: 1 });
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
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: { requeueAfterMs: 10_000 } });
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
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: { requeueAfterMs: 5_000 } });
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
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });
    h.cronJobs.set(KEY, dropTimeZone('202')(desiredOf(zoned())));
    const next = { ...structuredClone(h.schedules.get(KEY)!), metadata: { ...h.schedules.get(KEY)!.metadata, generation: 2 } };
    h.schedules.set(KEY, next);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });
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
      await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });
      h.cronJobs.set(KEY, other()); // the other controller undoes it at once
      h.clock.step(10);
    }
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'updateStatus', result: { requeueAfterMs: 4_990 } });
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'DriftRecurring' });
    expect(h.ready()?.message).toContain('spec.jobTemplate.spec.template.spec.containers[0].image of CronJob "nightly-etcd" keep being changed back');
    expect(h.events.filter((e) => e.type === 'Warning')).toEqual([expect.objectContaining({ reason: 'DriftRecurring' })]);

    h.clock.step(5_000);
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toMatchObject({ move: 'patchCronJob' });
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
      await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
      h.clock.step(11 * 60_000);
    }
    expect(h.events.filter((e) => e.type === 'Warning')).toEqual([]);
  });
});
