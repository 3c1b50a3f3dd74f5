import { describe, expect, it } from 'vitest';
import { LAST_APPLIED_ANNOTATION, ownerScheduleKey, scheduleKey, stripCronJob, stripSchedule } from '../../src/controller/event-mapping.ts';
import type { KubeObject, OwnerReference } from '../../src/kube/object.ts';

const cronJob = (ownerReferences: OwnerReference[]): KubeObject => ({ metadata: { name: 'child', namespace: 'team-a', ownerReferences } });
const ref = (over: Partial<OwnerReference>): OwnerReference => ({ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'nightly', uid: 'u', controller: true, ...over });

describe('scheduleKey', () => {
  it('maps a BackupSchedule to its own namespace/name', () => {
    expect(scheduleKey({ metadata: { namespace: 'team-a', name: 'nightly' } })).toBe('team-a/nightly');
  });
});

describe('ownerScheduleKey', () => {
  it.each<[string, OwnerReference[], string | undefined]>([
    ['its controlling BackupSchedule', [ref({})], 'team-a/nightly'],
    ['its controlling BackupSchedule of another version', [ref({ apiVersion: 'kubelings.dev/v1beta1' })], 'team-a/nightly'],
    ['the controller among several owners', [ref({ name: 'other', controller: false }), ref({})], 'team-a/nightly'],
    ['nothing for a non-controller BackupSchedule owner', [ref({ controller: false })], undefined],
    ['nothing for another kind', [ref({ kind: 'Deployment', apiVersion: 'apps/v1' })], undefined],
    ['nothing for a BackupSchedule of another group', [ref({ apiVersion: 'backup.example.com/v1' })], undefined],
    ['nothing without owners', [], undefined],
  ])('maps a CronJob to %s', (_name, refs, key) => {
    expect(ownerScheduleKey(cronJob(refs))).toBe(key);
  });
});

describe('cache transforms', () => {
  const big = { metadata: { name: 'x', namespace: 'n', managedFields: [{ manager: 'kubectl' }], annotations: { [LAST_APPLIED_ANNOTATION]: '{"huge":true}', keep: 'me' } }, spec: { a: 1 } };

  it('strips managedFields and the last-applied annotation from BackupSchedules, keeping the rest', () => {
    expect(stripSchedule(structuredClone(big))).toEqual({ metadata: { name: 'x', namespace: 'n', annotations: { keep: 'me' } }, spec: { a: 1 } });
  });

  it('strips only managedFields from CronJobs, whose annotations a PUT must carry back', () => {
    expect(stripCronJob(structuredClone(big))).toEqual({ metadata: { name: 'x', namespace: 'n', annotations: big.metadata.annotations }, spec: { a: 1 } });
  });
});
