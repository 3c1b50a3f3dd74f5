/**
 * The Restore reconciler against in-memory caches: it waits for a missing BackupSchedule, creates the
 * one Job from the schedule's destination, follows the Job to Succeeded or Failed and then leaves the
 * Restore alone (no second Job after the first is deleted, and a Job deleted before it ended fails the
 * Restore instead of running it twice), refuses disallowed images and endpoints and
 * a foreign Job of its name without creating anything, and does not rewrite a status that only differs
 * in key order (the API server sorts keys). Once the Job has ended it reads the runner's report from the
 * Job's Pod with one LIST (fake here): status.backup, the runner's message in the condition, a bad or
 * missing report named in the condition and an Event.
 */
import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { RestoreReconciler, type RestoreObject } from '../../src/controller/restore/restore-reconciler.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import type { Job } from '../../src/pure/restore-job.ts';
import type { JobView } from '../../src/pure/restore-status.ts';
import { cacheStub } from '../../src/runtime/cache-policy.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { silentLogger } from '../../src/runtime/logger.ts';

const UID = '0f0e0d0c-0b0a-4909-8807-060504030201';
const JOB_UID = '1a2b3c4d-0000-4000-8000-00000000abcd';
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
  const pods: unknown[] = [];
  const podLists: { namespace: string; labelSelector: string; limit: number }[] = [];
  const events: string[] = [];
  let listError: unknown;
  const restores = new Map<string, RestoreObject>();
  const schedules = new Map<string, BackupScheduleObject>();
  const jobs = new Map<string, KubeObject & JobView>();
  /** The server's objects where the cache holds another view of them (a stub) or none yet; a GET reads these, then the cached ones. */
  const live = { restores: new Map<string, RestoreObject>(), schedules: new Map<string, BackupScheduleObject>(), jobs: new Map<string, KubeObject & JobView>() };
  const gets: string[] = [];
  const created: Job[] = [];
  const statuses: RestoreObject['status'][] = [];
  let createError: unknown;
  /** A GET of `key` from the server's objects `from`, 404 when absent. */
  const get = <T>(resource: string, key: string, ...from: Map<string, T>[]): Promise<T> => {
    gets.push(`${resource} ${key}`);
    const found = from.map((m) => m.get(key)).find((o) => o !== undefined);
    return found === undefined ? Promise.reject(new ApiStatusError(statusErrors.notFound({ group: 'kubelings.dev', resource }, key))) : Promise.resolve(structuredClone(found));
  };
  const reconciler = new RestoreReconciler({
    restores,
    schedules,
    jobs,
    getRestore: (ref) => get('restores', `${ref.namespace}/${ref.name}`, live.restores, restores),
    getSchedule: (ref) => get('backupschedules', `${ref.namespace}/${ref.name}`, live.schedules, schedules),
    getJob: (ref) => get('jobs', `${ref.namespace}/${ref.name}`, live.jobs, jobs),
    createJob: async (job) => {
      if (createError) throw createError;
      created.push(job);
    },
    updateStatus: async (restore) => {
      statuses.push(restore.status);
      restores.set('prod/db-restore', restore);
    },
    listPods: async (request) => {
      podLists.push(request);
      if (listError) throw listError;
      return { items: pods.slice(0, request.limit) };
    },
    events: { event: (_object, type, reason, message) => void events.push(`${type} ${reason} ${message}`) },
    backupImage: 'registry.example.com/runner:1',
    allowedImages: options.allowedImages ?? [],
    allowedEndpoints: options.allowedEndpoints ?? [],
    clock: new FakeClock(Date.parse('2026-12-01T10:00:00Z')),
    logger: silentLogger,
  });
  return { reconciler, restores, schedules, jobs, live, gets, created, statuses, pods, podLists, events, failCreate: (err: unknown) => void (createError = err), failList: (err: unknown) => void (listError = err) };
}

const jobOf = (h: ReturnType<typeof harness>, status: JobView['status'], uid = UID): KubeObject & JobView => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'restore-db-restore', namespace: 'prod', uid: JOB_UID, ownerReferences: [{ apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: 'db-restore', uid, controller: true }] },
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

  it.each([
    ['Pending (its Pod not started)', { phase: 'Pending' as const, reason: 'JobPending' }],
    ['Running', { phase: 'Running' as const, reason: 'JobRunning' }],
    ['just created (the Job never seen in the cache)', { phase: 'Pending' as const, reason: 'JobCreating' }],
  ])('fails a Restore whose Job was deleted while %s, and never makes the Job again', async (_when, { phase, reason }) => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject({}, { phase, jobName: 'restore-db-restore', observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', reason, message: 'm', lastTransitionTime: '2026-12-01T09:00:00Z' }] }));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    // The cache does not hold it: only the API server can say it is gone rather than not seen yet.
    expect(h.gets).toEqual(['jobs prod/restore-db-restore']);
    expect(h.statuses).toEqual([{
      observedGeneration: 1, phase: 'Failed', jobName: 'restore-db-restore',
      conditions: [{ type: 'Failed', status: 'True', reason: 'JobDeleted', lastTransitionTime: '2026-12-01T10:00:00Z', message: `restore Job restore-db-restore was deleted before it ended (the Restore was ${phase}): the restore may have run, partly or whole; a Restore runs at most once, so it is not run again: check the target volume, then create a new Restore to restore again` }],
    }]);
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses).toHaveLength(1);
  });

  it('reads the Job with a GET while the cache has not caught up with it, and follows it', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject({}, { phase: 'Pending', jobName: 'restore-db-restore' }));
    h.live.jobs.set('prod/restore-db-restore', jobOf(h, { active: 1 }));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Running', jobName: 'restore-db-restore' });
  });

  it('tells a Job of its name outside the cache (AlreadyExists, another owner) by reading it, and does not take it over', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject());
    h.live.jobs.set('prod/restore-db-restore', jobOf(h, { active: 1 }, 'another-uid'));
    h.failCreate(new ApiStatusError(statusErrors.alreadyExists({ group: 'batch', resource: 'jobs' }, 'restore-db-restore')));
    await h.reconciler.reconcile('prod/db-restore');
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.created).toEqual([]);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Failed', conditions: [{ reason: 'JobNameConflict' }] });
  });

  it('reads a Restore, its BackupSchedule and its Job whole with one GET each when the caches hold stubs of them', async () => {
    const h = harness();
    const restore = restoreObject({}, { phase: 'Pending', jobName: 'restore-db-restore' });
    const job = jobOf(h, { active: 1 });
    h.live.restores.set('prod/db-restore', restore);
    h.live.jobs.set('prod/restore-db-restore', job);
    h.restores.set('prod/db-restore', cacheStub(restore));
    h.jobs.set('prod/restore-db-restore', cacheStub(job));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.gets).toEqual(['restores prod/db-restore', 'jobs prod/restore-db-restore']);
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Running' });

    const waiting = harness();
    waiting.restores.set('prod/db-restore', restoreObject());
    waiting.live.schedules.set('prod/nightly', schedule());
    waiting.schedules.set('prod/nightly', cacheStub(schedule()));
    await waiting.reconciler.reconcile('prod/db-restore');
    expect(waiting.gets).toEqual(['backupschedules prod/nightly']);
    expect(waiting.created[0]!.spec!.template.spec!.containers[0]!.args).toContain('--from=/backup/from/db');
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

const SHA = 'ab'.repeat(32);
const GOOD = JSON.stringify({ exitCode: 0, file: 'nightly-20261130T020007Z.tar.gz', time: '2026-11-30T02:00:07.000Z', size: 4096, sha256: SHA, message: 'restored nightly-20261130T020007Z.tar.gz into /backup/target: 3 files, 12 bytes' });
/** A Pod of the restore Job as the Job controller makes it and the kubelet reports it. */
const podOf = (name: string, exitCode: number, message: string | undefined, options: { created?: string; owner?: string } = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'prod', creationTimestamp: options.created ?? '2026-12-01T09:59:00Z', labels: { 'controller-uid': JOB_UID, 'job-name': 'restore-db-restore' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'restore-db-restore', uid: options.owner ?? JOB_UID, controller: true }] },
  status: { phase: exitCode === 0 ? 'Succeeded' : 'Failed', containerStatuses: [{ name: 'restore', state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: '2026-12-01T10:00:00Z', ...(message === undefined ? {} : { message }) } } }] },
});
const COMPLETE = { conditions: [{ type: 'Complete', status: 'True' }] };

describe('RestoreReconciler and the runner report', () => {
  it('fills status.backup from the Pod of a completed Job, with one LIST by the Job uid, and never lists again', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject({}, { phase: 'Running', jobName: 'restore-db-restore' }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, COMPLETE));
    h.pods.push(podOf('restore-db-restore-abcde', 0, GOOD));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.podLists).toEqual([{ namespace: 'prod', labelSelector: `controller-uid=${JOB_UID}`, limit: 5 }]);
    expect(h.statuses.at(-1)).toMatchObject({
      phase: 'Succeeded',
      backup: { name: 'nightly-20261130T020007Z.tar.gz', time: '2026-11-30T02:00:07Z', size: 4096, sha256: SHA },
      conditions: [{ type: 'Complete', reason: 'JobComplete', message: 'restore Job restore-db-restore completed: restored nightly-20261130T020007Z.tar.gz into /backup/target: 3 files, 12 bytes' }],
    });
    expect(h.events).toEqual([expect.stringMatching(/^Normal Restored restore Job restore-db-restore completed: restored/)]);
    await h.reconciler.reconcile('prod/db-restore');
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.podLists).toHaveLength(1);
    expect(h.statuses).toHaveLength(1);
  });

  it('puts the runner message of a failed Job into the Failed condition', async () => {
    const h = harness();
    h.restores.set('prod/db-restore', restoreObject({ from: { persistentVolumeClaim: { claimName: 'backups' } } }, { phase: 'Running', jobName: 'restore-db-restore' }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }] }));
    h.pods.push(podOf('restore-db-restore-abcde', 5, JSON.stringify({ exitCode: 5, message: '--target-dir /backup/target is not empty (2 entries, e.g. "a"): restore into an empty directory' })));
    await h.reconciler.reconcile('prod/db-restore');
    const status = h.statuses.at(-1);
    expect(status).toMatchObject({ phase: 'Failed', conditions: [{ type: 'Failed', reason: 'JobFailed' }] });
    expect(status?.backup).toBeUndefined();
    expect(status?.conditions?.[0]?.message).toBe('restore Job restore-db-restore failed (BackoffLimitExceeded): Job has reached the specified backoff limit; the runner exited 5: --target-dir /backup/target is not empty (2 entries, e.g. "a"): restore into an empty directory; kubectl logs job/restore-db-restore has the details (exit 5: refused before writing, 1: failed while writing)');
    expect(h.events).toEqual([expect.stringMatching(/^Warning RestoreFailed .*the runner exited 5/)]);
  });

  it('names a bad termination message in the condition and an Event, and still ends the Restore', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject({}, { phase: 'Running', jobName: 'restore-db-restore' }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, COMPLETE));
    h.pods.push(podOf('restore-db-restore-abcde', 0, GOOD.replace('4096', '"4096"')));
    await h.reconciler.reconcile('prod/db-restore');
    const status = h.statuses.at(-1);
    expect(status?.phase).toBe('Succeeded');
    expect(status?.backup).toBeUndefined();
    expect(status?.conditions?.[0]?.message).toBe('restore Job restore-db-restore completed; status.backup is unknown: the termination message of Pod restore-db-restore-abcde is invalid: field "size": must be a non-negative integer of bytes, got "4096"; the container exited 0 (Completed)');
    expect(h.events[0]).toMatch(/^Warning NoRunnerReport the termination message of Pod restore-db-restore-abcde is invalid: field "size"/);
  });

  it.each([
    ['a Pod not controlled by the Job (only its labels)', [podOf('impostor', 0, GOOD, { owner: 'someone-else' })], 'no Pod of Job restore-db-restore with a terminated restore container'],
    ['a message naming another backup than spec.backup', [podOf('p', 0, GOOD)], 'is refused: field "file": names "nightly-20261130T020007Z.tar.gz", but spec.backup is "nightly-20261201T020007Z.tar.gz"'],
    ['an exit code other than the container\'s', [podOf('p', 1, GOOD)], 'is refused: field "exitCode": says 0, but the container exited with 1'],
  ])('refuses %s', async (_what, pods, problem) => {
    const h = harness();
    h.restores.set('prod/db-restore', restoreObject({ from: { persistentVolumeClaim: { claimName: 'backups' } }, backup: 'nightly-20261201T020007Z.tar.gz' }, { phase: 'Running', jobName: 'restore-db-restore' }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, COMPLETE));
    h.pods.push(...pods);
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.statuses.at(-1)?.backup).toBeUndefined();
    expect(h.statuses.at(-1)?.conditions?.[0]?.message).toContain(problem);
  });

  it('reads the newest Pod whose restore container terminated', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject({}, { phase: 'Running', jobName: 'restore-db-restore' }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, COMPLETE));
    const evicted = podOf('old', 0, GOOD.replace(SHA, 'cd'.repeat(32)), { created: '2026-12-01T09:00:00Z' });
    const running = { ...podOf('newest-running', 0, GOOD, { created: '2026-12-01T09:59:30Z' }), status: { containerStatuses: [{ name: 'restore', state: { running: {} } }] } };
    h.pods.push(evicted, podOf('new', 0, GOOD, { created: '2026-12-01T09:30:00Z' }), running);
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.statuses.at(-1)?.backup?.sha256).toBe(SHA);
  });

  it('ends the Restore without status.backup when Pods may not be listed (403), and retries other errors', async () => {
    const h = harness();
    h.schedules.set('prod/nightly', schedule());
    h.restores.set('prod/db-restore', restoreObject({}, { phase: 'Running', jobName: 'restore-db-restore' }));
    h.jobs.set('prod/restore-db-restore', jobOf(h, COMPLETE));
    h.failList(new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'InternalError', code: 500, message: 'etcd timeout' }));
    await expect(h.reconciler.reconcile('prod/db-restore')).rejects.toThrow(/etcd timeout/);
    expect(h.statuses).toEqual([]);
    h.failList(new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Forbidden', code: 403, message: 'pods is forbidden' }));
    await h.reconciler.reconcile('prod/db-restore');
    expect(h.statuses.at(-1)).toMatchObject({ phase: 'Succeeded', conditions: [{ message: expect.stringContaining('the operator may not list Pods in prod (its ClusterRole lacks pods: list') }] });
  });
});
