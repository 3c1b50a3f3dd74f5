import { describe, expect, it } from 'vitest';
import { computeStatus, formatTime, statusEqual, type ScheduleStatus, type StatusSubject } from '../../src/pure/status.ts';
import type { KubeObject } from '../../src/kube/object.ts';

const T0 = Date.UTC(2026, 10, 30, 1, 0, 0, 500);
const T1 = T0 + 60_000;

function schedule(generation: number, status?: ScheduleStatus): StatusSubject {
  return { metadata: { generation }, ...(status ? { status } : {}) };
}

function child(status: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly-etcd', namespace: 'kubelings' }, status };
}

describe('computeStatus', () => {
  it('reports a freshly created child as Ready with reason Created', () => {
    expect(computeStatus(schedule(1), child(), { kind: 'InSync' }, T0)).toEqual({
      observedGeneration: 1,
      cronJobName: 'nightly-etcd',
      active: [],
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Created', message: 'CronJob "nightly-etcd" created', observedGeneration: 1, lastTransitionTime: '2026-11-30T01:00:00Z' },
      ],
    });
  });

  it('copies lastScheduleTime, lastSuccessfulTime and the number of active Jobs from the child', () => {
    const status = computeStatus(
      schedule(1),
      child({ active: [{ name: 'b' }, { name: 'a' }], lastScheduleTime: '2026-11-30T00:09:00Z', lastSuccessfulTime: '2026-11-29T02:00:10Z' }),
      { kind: 'InSync' },
      T0,
    );
    expect(status).toMatchObject({ active: ['a', 'b'], lastScheduleTime: '2026-11-30T00:09:00Z', lastSuccessfulTime: '2026-11-29T02:00:10Z' });
  });

  it('is stable: recomputing from its own output at a later time gives an equal status', () => {
    const first = computeStatus(schedule(1), child(), { kind: 'InSync' }, T0);
    const again = computeStatus(schedule(1, first), child(), { kind: 'InSync' }, T1);
    expect(statusEqual(first, again)).toBe(true);
  });

  it('says Updated for a new generation and keeps lastTransitionTime while Ready stays True', () => {
    const first = computeStatus(schedule(1), child(), { kind: 'InSync' }, T0);
    const next = computeStatus(schedule(2, first), child(), { kind: 'InSync' }, T1);
    expect(next.observedGeneration).toBe(2);
    expect(next.conditions?.[0]).toMatchObject({ status: 'True', reason: 'Updated', observedGeneration: 2, lastTransitionTime: '2026-11-30T01:00:00Z' });
  });

  it('reports an invalid spec as Ready=False naming the field, with a new transition time', () => {
    const first = computeStatus(schedule(1), child(), { kind: 'InSync' }, T0);
    const next = computeStatus(schedule(2, first), child(), { kind: 'InvalidSpec', errors: [{ field: 'spec.schedule', message: 'spec.schedule: minute 61 is out of range' }] }, T1);
    expect(next.conditions?.[0]).toEqual({
      type: 'Ready', status: 'False', reason: 'InvalidSpec', message: 'invalid spec: spec.schedule: minute 61 is out of range', observedGeneration: 2, lastTransitionTime: '2026-11-30T01:01:00Z',
    });
  });

  it('reports a foreign CronJob with the child name as ChildNameConflict and copies nothing from it', () => {
    const status = computeStatus(
      schedule(1),
      child({ active: [{ name: 'x' }], lastScheduleTime: '2026-11-30T00:09:00Z' }),
      { kind: 'ChildNameConflict', childName: 'nightly-etcd', controller: undefined, previousIncarnation: false },
      T0,
    );
    expect(status).toEqual({
      observedGeneration: 1,
      conditions: [expect.objectContaining({ status: 'False', reason: 'ChildNameConflict', message: expect.stringContaining('CronJob "nightly-etcd" already exists and is not controlled by any owner') })],
    });
  });

  it.each([
    [false, 'CronJob "nightly-etcd" already exists and is controlled by BackupSchedule "nightly-etcd" (uid uid-old)'],
    [true, 'CronJob "nightly-etcd" still belongs to a previous BackupSchedule "nightly-etcd" (uid uid-old), deleted but not yet garbage-collected'],
  ])('names the controller of a conflicting CronJob with its uid (previous incarnation: %s)', (previousIncarnation, message) => {
    const controller = { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'nightly-etcd', uid: 'uid-old', controller: true };
    const status = computeStatus(schedule(1), undefined, { kind: 'ChildNameConflict', childName: 'nightly-etcd', controller, previousIncarnation }, T0);
    expect(status.conditions?.[0]?.message).toContain(message);
  });

  it.each([
    ['after a name conflict was resolved', { kind: 'ChildNameConflict', childName: 'nightly-etcd', controller: undefined, previousIncarnation: false } as const, 1, 'Created'],
    ['after an invalid spec was fixed in a new generation', { kind: 'InvalidSpec', errors: [{ field: 'spec.schedule', message: 'spec.schedule: bad' }] } as const, 2, 'Updated'],
  ])('becomes Ready again %s', (_name, earlier, generation, reason) => {
    const before = computeStatus(schedule(1), child(), earlier, T0);
    const after = computeStatus(schedule(generation, before), child(), { kind: 'InSync' }, T1);
    expect(after.conditions?.[0]).toMatchObject({ status: 'True', reason, lastTransitionTime: '2026-11-30T01:01:00Z' });
  });

  it('keeps conditions of other types', () => {
    const other = { type: 'Backup', status: 'Unknown', reason: 'X', message: '', lastTransitionTime: formatTime(T0) } as const;
    const status = computeStatus(schedule(1, { conditions: [other] }), child(), { kind: 'InSync' }, T0);
    expect(status.conditions).toContainEqual(other);
  });
});

describe('statusEqual', () => {
  it.each([
    [{ observedGeneration: 1 }, { observedGeneration: 1, cronJobName: undefined }, true],
    [{ observedGeneration: 1 }, { observedGeneration: 2 }, false],
    [undefined, {}, true],
    [{ active: [] }, {}, false],
  ])('compares %j and %j as the server would store them: %s', (a, b, equal) => {
    expect(statusEqual(a, b)).toBe(equal);
  });
});

describe('computeStatus for child writes that do not work out', () => {
  it('reports a rejection with the API message, clipped to a bounded length', () => {
    const long = 'x'.repeat(10_000);
    const status = computeStatus(schedule(2), undefined, { kind: 'ChildRejected', verb: 'update', childName: 'nightly-etcd', code: 422, message: long }, T0);
    const ready = status.conditions?.[0];
    expect(ready).toMatchObject({ status: 'False', reason: 'ChildRejected', observedGeneration: 2 });
    expect(ready?.message.length).toBeLessThan(4_300);
    expect(ready?.message).toMatch(/^the API server rejected the update of CronJob "nightly-etcd" \(HTTP 422\): x+…; retried/);
  });

  it('lists at most five fields in ChildNotPersisted and DriftRecurring messages', () => {
    const fields = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const status = computeStatus(schedule(1), child(), { kind: 'DriftRecurring', childName: 'nightly-etcd', fields }, T0);
    expect(status.conditions?.[0]?.message).toMatch(/^a, b, c, d, e and 2 more of CronJob "nightly-etcd" keep being changed back/);
    expect(status).toMatchObject({ cronJobName: 'nightly-etcd', active: [] });
  });
});
