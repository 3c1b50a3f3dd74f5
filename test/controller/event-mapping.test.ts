import { describe, expect, it } from 'vitest';
import { childLabels } from '../../src/pure/labels.ts';
import { ownerScheduleKey, scheduleKey, stripCronJob, stripSchedule } from '../../src/controller/event-mapping.ts';
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
  const blob = 'x'.repeat(250 * 1024);
  const metadata = {
    name: 'x', namespace: 'n', uid: 'u', resourceVersion: '7', generation: 3, deletionTimestamp: '2026-11-30T00:00:00Z', creationTimestamp: '2026-11-29T00:00:00Z',
    managedFields: [{ manager: 'kubectl' }], annotations: { 'example.com/blob': blob }, finalizers: ['f'],
  };

  it('keeps of a BackupSchedule only what reconcile reads: no labels, annotations, managedFields, owners or finalizers', () => {
    const s = { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { ...metadata, labels: { team: 'a' }, ownerReferences: [ref({})] }, spec: { a: 1 }, status: { b: 2 } };
    expect(stripSchedule(structuredClone(s))).toEqual({
      apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule',
      metadata: { name: 'x', namespace: 'n', uid: 'u', resourceVersion: '7', generation: 3, deletionTimestamp: '2026-11-30T00:00:00Z' },
      spec: { a: 1 }, status: { b: 2 },
    });
  });

  it('keeps of a child CronJob only our labels, its owners, spec and the status fields reconcile reads; no annotations', () => {
    const labels = { ...childLabels('nightly'), 'someone.else/team': 'a' };
    const status = { active: [{ kind: 'Job', name: 'j', uid: 'ju', apiVersion: 'batch/v1' }], lastScheduleTime: 't1', lastSuccessfulTime: 't2' };
    const c = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { ...metadata, labels, ownerReferences: [ref({})] }, spec: { schedule: '0 2 * * *' }, status };
    expect(stripCronJob(structuredClone(c))).toEqual({
      apiVersion: 'batch/v1', kind: 'CronJob',
      metadata: { name: 'x', namespace: 'n', uid: 'u', resourceVersion: '7', generation: 3, deletionTimestamp: '2026-11-30T00:00:00Z', labels: childLabels('nightly'), ownerReferences: [ref({})] },
      spec: { schedule: '0 2 * * *' },
      status: { active: [{ name: 'j' }], lastScheduleTime: 't1', lastSuccessfulTime: 't2' },
    });
  });

  it('keeps no spec of a CronJob no BackupSchedule controls (reconcile GETs it when it matters)', () => {
    const c = { metadata: { name: 'x', namespace: 'n', labels: childLabels('nightly'), ownerReferences: [ref({ kind: 'Deployment', apiVersion: 'apps/v1' })] }, spec: { big: blob } };
    expect(stripCronJob(structuredClone(c))).not.toHaveProperty('spec');
    expect(stripCronJob({ metadata: { name: 'x' }, spec: { big: blob } })).not.toHaveProperty('spec');
  });

  it('caches the same size whatever the size of the annotations and foreign labels', () => {
    const size = (o: unknown) => JSON.stringify(o).length;
    for (const strip of [stripSchedule, stripCronJob]) {
      const small = { metadata: { name: 'x', namespace: 'n', ownerReferences: [ref({})] }, spec: { a: 1 } };
      const big = { metadata: { ...small.metadata, annotations: { blob }, labels: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`l${i}`, 'v'])) }, spec: { a: 1 } };
      expect(size(strip(big))).toBe(size(strip(small)));
    }
  });
});
