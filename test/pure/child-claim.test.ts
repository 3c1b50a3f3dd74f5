import { describe, expect, it } from 'vitest';
import { claimChild, type ChildClaim } from '../../src/pure/child-claim.ts';
import { childLabels } from '../../src/pure/labels.ts';
import type { ObjectMeta, OwnerReference } from '../../src/kube/object.ts';

const schedule = { metadata: { name: 'nightly', uid: 'uid-now' } };
const ref = (over: Partial<OwnerReference>): OwnerReference => ({ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'nightly', uid: 'uid-now', controller: true, blockOwnerDeletion: true, ...over });
const cronJob = (metadata: ObjectMeta) => ({ metadata: { name: 'nightly', namespace: 'n', ...metadata } });

describe('claimChild', () => {
  it.each<[string, ObjectMeta, ChildClaim]>([
    ['ours: controlled by this schedule', { ownerReferences: [ref({})] }, { kind: 'owned' }],
    ['an orphan with our labels naming this schedule: adopt', { labels: childLabels('nightly'), ownerReferences: [ref({ controller: false, uid: 'x' })] }, { kind: 'adopt' }],
    ['an orphan with our labels naming another schedule', { labels: childLabels('weekly') }, { kind: 'conflict', controller: undefined, previousIncarnation: false }],
    ['no controller and no labels', {}, { kind: 'conflict', controller: undefined, previousIncarnation: false }],
    ['only the managed-by label', { labels: { 'app.kubernetes.io/managed-by': 'backupschedule-operator' } }, { kind: 'conflict', controller: undefined, previousIncarnation: false }],
    ['controlled by a previous incarnation (same name, other uid)', { labels: childLabels('nightly'), ownerReferences: [ref({ uid: 'uid-old' })] }, { kind: 'conflict', controller: ref({ uid: 'uid-old' }), previousIncarnation: true }],
    ['controlled by another BackupSchedule', { ownerReferences: [ref({ name: 'weekly', uid: 'w' })] }, { kind: 'conflict', controller: ref({ name: 'weekly', uid: 'w' }), previousIncarnation: false }],
    ['controlled by another kind of the same name', { labels: childLabels('nightly'), ownerReferences: [ref({ apiVersion: 'apps/v1', kind: 'Deployment', uid: 'd' })] }, { kind: 'conflict', controller: ref({ apiVersion: 'apps/v1', kind: 'Deployment', uid: 'd' }), previousIncarnation: false }],
  ])('%s', (_name, metadata, claim) => {
    expect(claimChild(schedule, cronJob(metadata))).toEqual(claim);
  });

  it('never adopts while the schedule is being deleted (the garbage collector would race it)', () => {
    const deleting = { metadata: { ...schedule.metadata, deletionTimestamp: '2026-11-30T00:00:00Z' } };
    expect(claimChild(deleting, cronJob({ labels: childLabels('nightly') }))).toMatchObject({ kind: 'conflict' });
  });
});
