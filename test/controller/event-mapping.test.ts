import { describe, expect, it } from 'vitest';
import { childLabels } from '../../src/pure/labels.ts';
import { cachedWhole, CHILD_CACHE_BUDGET, ownerScheduleKey, scheduleKey, stripCronJob, stripCustomResource } from '../../src/controller/backupschedule/event-mapping.ts';
import { childNameFor } from '../../src/pure/names.ts';
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

  it('keeps of a BackupSchedule only what reconcile reads (creationTimestamp: no run was missed before it): no labels, annotations, managedFields, owners or finalizers', () => {
    const s = { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { ...metadata, creationTimestamp: '2026-11-29T00:00:00Z', labels: { team: 'a' }, ownerReferences: [ref({})] }, spec: { a: 1 }, status: { b: 2 } };
    expect(stripCustomResource(structuredClone(s))).toEqual({
      apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule',
      metadata: { name: 'x', namespace: 'n', uid: 'u', resourceVersion: '7', generation: 3, deletionTimestamp: '2026-11-30T00:00:00Z', creationTimestamp: '2026-11-29T00:00:00Z' },
      spec: { a: 1 }, status: { b: 2 },
    });
  });

  it('keeps of a child CronJob only our labels, its owners, spec and the status fields reconcile reads; no annotations', () => {
    const labels = { ...childLabels('nightly'), 'someone.else/team': 'a' };
    const status = { active: [{ kind: 'Job', name: 'j', uid: 'ju', apiVersion: 'batch/v1' }], lastScheduleTime: 't1', lastSuccessfulTime: 't2' };
    const c = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { ...metadata, name: 'nightly', labels, ownerReferences: [ref({})] }, spec: { schedule: '0 2 * * *' }, status };
    const stripped = stripCronJob(structuredClone(c));
    expect(stripped).toEqual({
      apiVersion: 'batch/v1', kind: 'CronJob',
      metadata: { name: 'nightly', namespace: 'n', uid: 'u', resourceVersion: '7', generation: 3, deletionTimestamp: '2026-11-30T00:00:00Z', labels: childLabels('nightly'), ownerReferences: [ref({})] },
      spec: { schedule: '0 2 * * *' },
      status: { active: [{ name: 'j' }], lastScheduleTime: 't1', lastSuccessfulTime: 't2' },
    });
    expect(cachedWhole(stripped)).toBe(true);
  });

  it('keeps no spec of a CronJob no BackupSchedule controls (reconcile GETs it when it matters)', () => {
    const c = { metadata: { name: 'x', namespace: 'n', labels: childLabels('nightly'), ownerReferences: [ref({ kind: 'Deployment', apiVersion: 'apps/v1' })] }, spec: { big: blob } };
    expect(stripCronJob(structuredClone(c))).not.toHaveProperty('spec');
    expect(stripCronJob({ metadata: { name: 'x' }, spec: { big: blob } })).not.toHaveProperty('spec');
  });

  it('caches the same size whatever the size of the annotations and foreign labels', () => {
    const size = (o: unknown) => JSON.stringify(o).length;
    for (const strip of [stripCustomResource, stripCronJob]) {
      const small = { metadata: { name: 'x', namespace: 'n', ownerReferences: [ref({})] }, spec: { a: 1 } };
      const big = { metadata: { ...small.metadata, annotations: { blob }, labels: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`l${i}`, 'v'])) }, spec: { a: 1 } };
      expect(size(strip(big))).toBe(size(strip(small)));
    }
  });
});

describe('what one namespace can make the CronJob cache hold (issue 30)', () => {
  const blob = 'x'.repeat(250 * 1024);
  const size = (o: unknown) => JSON.stringify(o).length;
  /** A CronJob as a tenant may write it: our labels, a controller reference to their BackupSchedule, a spec of `specBytes`. */
  const tenantCronJob = (name: string, specBytes: number, over: Partial<KubeObject['metadata']> = {}): KubeObject => ({
    apiVersion: 'batch/v1', kind: 'CronJob',
    metadata: { name, namespace: 'tenant', uid: `uid-${name}`, resourceVersion: '9', labels: childLabels('nightly'), ownerReferences: [ref({})], ...over },
    spec: { schedule: '0 2 * * *', jobTemplate: { metadata: { annotations: { pad: 'y'.repeat(specBytes) } } } },
    status: { lastScheduleTime: '2026-11-30T02:00:00Z' },
  });

  it('keeps no spec of a CronJob its BackupSchedule controls under another name than that schedule\'s child (the 750 × 250 KiB attack)', () => {
    const stripped = stripCronJob(tenantCronJob('copy-17', 250 * 1024));
    expect(stripped).not.toHaveProperty('spec');
    expect(cachedWhole(stripped)).toBe(false);
    // Still enqueues its owner and still names it as its controller: claimChild and the event mapping work on stubs.
    expect(ownerScheduleKey(stripped)).toBe('tenant/nightly');
    expect(size(stripped)).toBeLessThan(1024);
  });

  it('keeps the spec of the one child the controller builds for its owner (a long owner name: the hashed child name)', () => {
    const long = `n${'x'.repeat(70)}`;
    const child = tenantCronJob(childNameFor(long), 100, { ownerReferences: [ref({ name: long })] });
    expect(cachedWhole(stripCronJob(child))).toBe(true);
    expect(cachedWhole(stripCronJob(tenantCronJob(long, 100, { ownerReferences: [ref({ name: long })] })))).toBe(false);
  });

  it('keeps a child larger than the budget as a stub (reconcile GETs it), and one just under it whole', () => {
    expect(cachedWhole(stripCronJob(tenantCronJob('nightly', CHILD_CACHE_BUDGET - 200)))).toBe(true);
    const big = stripCronJob(tenantCronJob('nightly', CHILD_CACHE_BUDGET));
    expect(cachedWhole(big)).toBe(false);
    expect(size(big)).toBeLessThan(1024);
  });

  it('keeps only the controller reference, its six fields, of a stub however many owners it lists', () => {
    const others = Array.from({ length: 5000 }, (_, i) => ref({ name: `o${i}`, uid: `u${i}`, controller: false }));
    const controller = { ...ref({}), extra: blob } as OwnerReference;
    const stripped = stripCronJob(tenantCronJob('copy', 10, { ownerReferences: [...others, controller] }));
    expect(stripped.metadata.ownerReferences).toEqual([ref({})]);
  });

  it('keeps no controller reference with an absurdly long field (no BackupSchedule can have such a name)', () => {
    const stripped = stripCronJob(tenantCronJob('copy', 10, { ownerReferences: [ref({ name: blob })] }));
    expect(stripped.metadata.ownerReferences).toBeUndefined();
    expect(ownerScheduleKey(stripped)).toBeUndefined();
  });

  it('keeps of a stub neither the active Jobs nor a status timestamp that is not one', () => {
    const c = tenantCronJob('copy', 10);
    c['status'] = { active: Array.from({ length: 10_000 }, (_, i) => ({ name: `job-${i}` })), lastScheduleTime: blob, lastSuccessfulTime: '2026-11-30T02:00:42Z' };
    expect(stripCronJob(c)['status']).toEqual({ lastSuccessfulTime: '2026-11-30T02:00:42Z' });
  });

  it('holds the same small stub whatever a labelled CronJob without owner carries', () => {
    const small = stripCronJob(tenantCronJob('a', 10, { ownerReferences: [] }));
    const big = stripCronJob(tenantCronJob('a', 250 * 1024, { ownerReferences: [], annotations: { blob }, labels: { ...childLabels('nightly'), ...Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`l${i}`, 'v'])) } }));
    expect(size(big)).toBe(size(small));
  });
});
