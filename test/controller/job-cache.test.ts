import { describe, expect, it } from 'vitest';
import { ownerCronJobName, stripJob } from '../../src/controller/backupschedule/job-cache.ts';
import type { KubeObject } from '../../src/kube/object.ts';

const owner = { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly-backup', uid: 'cj-uid', controller: true, blockOwnerDeletion: true };

function job(status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'nightly-backup-1', namespace: 'n', uid: 'u', resourceVersion: '9', labels: { a: 'b' }, annotations: { big: 'x'.repeat(10_000) }, ownerReferences: [owner], managedFields: [{ manager: 'kube-controller-manager' }] },
    spec: { template: { spec: { containers: [{ name: 'backup', image: 'i', env: [{ name: 'E', value: 'x'.repeat(10_000) }] }] } } },
    status,
  } as KubeObject;
}

describe('stripJob', () => {
  it('keeps the name, owner, times, active Pods and terminal conditions only, the message cut just past what a run keeps', () => {
    const stripped = stripJob(job({
      startTime: '2026-12-01T01:00:00Z', active: 1, ready: 0, uncountedTerminatedPods: {},
      conditions: [
        { type: 'FailureTarget', status: 'True', reason: 'PodFailurePolicy', message: 'm', lastTransitionTime: '2026-12-01T01:05:00Z' },
        { type: 'Failed', status: 'True', reason: 'PodFailurePolicy', message: 'y'.repeat(5_000), lastTransitionTime: '2026-12-01T01:05:00Z', lastProbeTime: '2026-12-01T01:05:00Z' },
      ],
    }));
    expect(stripped).toEqual({
      apiVersion: 'batch/v1', kind: 'Job',
      metadata: { name: 'nightly-backup-1', namespace: 'n', uid: 'u', resourceVersion: '9', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly-backup', uid: 'cj-uid', controller: true }] },
      status: { startTime: '2026-12-01T01:00:00Z', active: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'PodFailurePolicy', lastTransitionTime: '2026-12-01T01:05:00Z', message: 'y'.repeat(257) }] },
    });
    expect(JSON.stringify(stripped).length).toBeLessThan(800);
    expect(ownerCronJobName(stripped)).toBe('nightly-backup');
  });

  it('keeps one true condition of each terminal type and an owner of bounded fields, whatever the Job carries', () => {
    const many = Array.from({ length: 1_000 }, (_, i) => ({ type: i % 2 ? 'Complete' : 'Failed', status: i < 2 ? 'False' : 'True', reason: `R${i}`, message: 'm'.repeat(10_000), lastTransitionTime: '2026-12-01T01:05:00Z' }));
    const stripped = stripJob(job({ conditions: [{ type: ['Complete'], status: 'True' }, ...many] }));
    expect((stripped['status'] as { conditions: { type: string; reason: string }[] }).conditions.map((c) => `${c.type} ${c.reason}`)).toEqual(['Failed R2', 'Complete R3']);
    const odd = job({});
    odd.metadata.ownerReferences = [{ ...owner, name: 'n'.repeat(100_000) }];
    expect(stripJob(odd).metadata.ownerReferences).toBeUndefined();
  });

  it('names no CronJob for a Job another kind controls', () => {
    const other = job({});
    other.metadata.ownerReferences = [{ ...owner, apiVersion: 'example.com/v1', kind: 'Workflow' }];
    expect(ownerCronJobName(stripJob(other))).toBeUndefined();
  });
});
