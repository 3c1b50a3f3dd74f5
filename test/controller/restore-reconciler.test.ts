/**
 * The Restore reconciler against in-memory caches: it waits for a missing BackupSchedule, creates the
 * one Job from the schedule's destination, follows the Job to Succeeded or Failed and then leaves the
 * Restore alone (no second Job after the first is deleted), refuses disallowed images and endpoints and
 * a foreign Job of its name without creating anything, and does not rewrite a status that only differs
 * in key order (the API server sorts keys).
 */
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { RestoreReconciler, type RestoreObject } from '../../src/controller/restore/restore-reconciler.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import type { Job } from '../../src/pure/restore-job.ts';
import type { JobView } from '../../src/pure/restore-status.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { silentLogger } from '../../src/runtime/logger.ts';

const UID = '0f0e0d0c-0b0a-4909-8807-060504030201';
const restoreObject = (spec: Partial<RestoreObject['spec']> = {}, status?: RestoreObject['status']): RestoreObject => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'Restore',
  metadata: { name: 'db-restore', namespace: 'prod', uid: UID, generation: 1 },
  spec: { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'db-data' } }, ...spec },
  ...(status ? { status } : {}),
});
const schedule = (endpoint?: string): BackupScheduleObject => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'BackupSchedule',
  metadata: { name: 'nightly', namespace: 'prod' },
  spec: {
    schedule: '0 2 * * *',
    source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'db-data' } },
    destination: endpoint === undefined ? { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'backups', path: 'db' } } : { type: 'ObjectStore', objectStore: { bucket: 'bkt', credentialsSecretName: 's3', endpoint } },
  },
}) as BackupScheduleObject;

function harness(options: { allowedImages?: string[]; allowedEndpoints?: string[] } = {}) {
  const restores = new Map<string, RestoreObject>();
  const schedules = new Map<string, BackupScheduleObject>();
  const jobs = new Map<string, KubeObject & JobView>();
  const created: Job[] = [];
  const statuses: RestoreObject['status'][] = [];
  let createError: unknown;
  const reconciler = new RestoreReconciler({
    restores,
    schedules,
    jobs,
    createJob: async (job) => {
      if (createError) throw createError;
      created.push(job);
    },
    updateStatus: async (restore) => {
      statuses.push(restore.status);
      restores.set('prod/db-restore', restore);
    },
    backupImage: 'registry.example.com/runner:1',
    allowedImages: options.allowedImages ?? [],
    allowedEndpoints: options.allowedEndpoints ?? [],
    clock: new FakeClock(Date.parse('2026-12-01T10:00:00Z')),
    logger: silentLogger,
  });
  return { reconciler, restores, schedules, jobs, created, statuses, failCreate: (err: unknown) => void (createError = err) };
}

const jobOf = (h: ReturnType<typeof harness>, status: JobView['status'], uid = UID): KubeObject & JobView => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'restore-db-restore', namespace: 'prod', ownerReferences: [{ apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: 'db-restore', uid, controller: true }] },
  ...(status ? { status } : {}),
});

describe('RestoreReconciler', () => {
  it('waits for the BackupSchedule, then creates the one Job from its destination and follows it to Succeeded', async () => {
    const h = harness();
    h.restores.set('prod/db-restore', restoreObject());
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Pending', conditions: [{ type: 'Ready', status: 'False', reason: 'BackupScheduleNotFound' }] });

    h.schedules.set('prod/nightly', schedule());
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toHaveLength(1);
    expect(h.created[0]!.spec!.template.spec!.containers[0]!.args).toEqual(['backup', 'restore', '--from=/backup/from/db', '--backup=latest', '--target-dir=/backup/target', '--schedule=nightly']);
    expect(h.created[0]!.spec!.template.spec!.containers[0]!.image).toBe('registry.example.com/runner:1');
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Pending', jobName: 'restore-db-restore', observedGeneration: 1 });

    h.jobs.set('prod/restore-db-restore', jobOf(h, { active: 1 }));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Running' });
    h.jobs.set('prod/restore-db-restore', jobOf(h, { conditions: [{ type: 'Complete', status: 'True' }] }));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Succeeded', conditions: [{ type: 'Complete', status: 'True', reason: 'JobComplete', lastTransitionTime: '2026-12-01T10:00:00Z' }] });

    // The Job is deleted (TTL, by hand): the Restore stays Succeeded and no second Job is made.
    h.jobs.clear();
    const writes = h.statuses.length;
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toHaveLength(1);
    expect(h.statuses).toHaveLength(writes);
  });

  it('reports a failed Job with the way to its logs', async () => {
    const h = harness();
    h.restores.set('prod/db-restore', restoreObject({ from: { persistentVolumeClaim: { claimName: 'backups' } } }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] }));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Failed', conditions: [{ type: 'Failed', reason: 'JobFailed', message: expect.stringContaining('kubectl logs job/restore-db-restore') }] });
  });

  it.each([
    ['an image outside --allowed-backup-images', { image: 'evil.example.com/x:1' }, {}, 'ImageNotAllowed'],
    ['an endpoint outside --allowed-backup-endpoints', { from: { objectStore: { bucket: 'bkt', credentialsSecretName: 's3', endpoint: 'https://minio.evil:9000' } } }, {}, 'EndpointNotAllowed'],
    ['an invalid spec', { backup: '../x' }, {}, 'InvalidSpec'],
  ])('refuses %s without creating a Job', async (_what, spec, options, reason) => {
    const h = harness(options);
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject(spec as Partial<RestoreObject['spec']>));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Failed', conditions: [{ type: 'Failed', status: 'True', reason }] });
  });

  it('checks the endpoint of the BackupSchedule it reads from', async () => {
    const h = harness({ allowedEndpoints: ['https://minio.storage:9000'] });
    h.schedules.set('prod/nightly', schedule('https://minio.other:9000'));
    h.restores.set('prod/db-restore', restoreObject());
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Failed', conditions: [{ reason: 'EndpointNotAllowed' }] });
    const ok = harness({ allowedEndpoints: ['https://minio.storage:9000'] });
    ok.schedules.set('prod/nightly', schedule('https://minio.storage:9000'));
    ok.restores.set('prod/db-restore', restoreObject());
    await ok.reconciler.reconcile('prod/db-restore');
    expect(ok.created[0]!.spec!.template.spec!.containers[0]!.args).toContain('--from=s3://bkt');
  });

  it('does not take over a Job of its name that another owner controls', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject());
    h.jobs.set('prod/restore-db-restore', jobOf(h, { active: 1 }, 'another-uid'));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Failed', conditions: [{ reason: 'JobNameConflict' }] });
  });

  it('takes AlreadyExists as the Job made by an earlier pass', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject());
    h.failCreate(new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'AlreadyExists', code: 409, message: 'jobs.batch "restore-db-restore" already exists' }));
    await expect(h.reconciler.reconcile('prod/db-restore')).resolves.toBeUndefined();
  });

  it('does not rewrite a status that differs only in key order', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.jobs.set('prod/restore-db-restore', jobOf(h, { active: 1 }));
    // As the API server returns it: keys sorted.
    const stored = { conditions: [{ lastTransitionTime: '2026-12-01T09:00:00Z', message: 'restore Job restore-db-restore is running', reason: 'JobRunning', status: 'True' as const, type: 'Ready' }], jobName: 'restore-db-restore', observedGeneration: 1, phase: 'Running' as const };
    h.restores.set('prod/db-restore', restoreObject({}, stored));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.statuses).toEqual([]);
  });
});
