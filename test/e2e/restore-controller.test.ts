/**
 * The Restore controller in the controller bundle, with dist/'s CRD and RBAC (jobs create, restores and
 * their status and finalizers; OwnerReferencesPermissionEnforcement on): a Restore from a BackupSchedule
 * waits for the schedule, then gets its one Job (the schedule's claim read-only, the target claim, the
 * runner's restore arguments), follows the Job (the test writes its status as the Job controller would,
 * and its Pod with the restore container terminated as the kubelet would) to Succeeded with
 * status.backup read from the runner's termination message (dist/'s `pods: list`), and gets no second
 * Job when the first is deleted; a Restore whose Job is deleted while it runs is Failed (JobDeleted),
 * never run twice. An update of the spec is refused by the CRD's transition rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Restore } from '../../imports/restore.ts';
import { formatTerminationMessage } from '../../src/backup/termination-message.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { JOBS, RESTORES } from '../../src/controller/resources.ts';
import { buildBundle, ControllerProcess, CONTROLLER_USER, sleep, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, scheduleManifest } from './scenarios.ts';
import { endRestoreJob, type RestoreJobObject } from '../controller/restore-job-run.ts';

const NS = 'restores';
let cluster: Cluster;
let controller: ControllerProcess;
type RestoreObject = Restore & KubeObject;
type JobObject = RestoreJobObject & { spec: { template: { spec: { containers: { args: string[] }[]; volumes: unknown[] } } } };
let restores: ResourceClient<RestoreObject>;
let jobs: ResourceClient<JobObject>;

beforeAll(async () => {
  let bundle: string;
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--log-level=info']);
  await api(cluster.admin).createNamespace(NS);
  restores = new ResourceClient<RestoreObject>(cluster.admin, RESTORES);
  jobs = new ResourceClient<JobObject>(cluster.admin, JOBS);
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('the Restore controller', () => {
  it('waits for the BackupSchedule, runs one Job, follows it to Succeeded with status.backup and never runs again', async () => {
    await restores.create({ apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name: 'db', namespace: NS }, spec: { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'db-data' } } } } as RestoreObject);
    const waiting = await waitFor('the Restore to wait for its schedule', async () => {
      const r = await restores.get({ namespace: NS, name: 'db' });
      return r.status?.conditions?.[0]?.reason === 'BackupScheduleNotFound' ? r : undefined;
    });
    expect(waiting.status?.phase).toBe('Pending');

    await api(cluster.admin).schedules.create(scheduleManifest(NS, 'nightly', { destination: { persistentVolumeClaim: { claimName: 'backups', path: 'db' } } }) as never);
    const job = await waitFor('the restore Job', () => jobs.get({ namespace: NS, name: 'restore-db' }).catch(() => undefined));
    expect(job.spec.template.spec.containers[0]!.args).toEqual(['backup', 'restore', '--from=/backup/from/db', '--backup=latest', '--target-dir=/backup/target', '--schedule=nightly']);
    expect(job.spec.template.spec.volumes).toContainEqual({ name: 'from', persistentVolumeClaim: { claimName: 'backups', readOnly: true } });

    await jobs.updateStatus({ ...job, status: { startTime: '2026-12-01T10:00:00Z', active: 1 } });
    await waitFor('Running', async () => (await restores.get({ namespace: NS, name: 'db' })).status?.phase === 'Running');
    const running = await jobs.get({ namespace: NS, name: 'restore-db' });
    const file = 'nightly-20261130T020007Z.tar.gz';
    const sha256 = '5e'.repeat(32);
    const message = formatTerminationMessage({ exitCode: 0, message: `restored ${file} into /backup/target: 2101 files, 210000000 bytes`, file, time: '2026-11-30T02:00:07.000Z', size: 210_123_456, sha256 });
    await endRestoreJob(cluster.admin, running, { exitCode: 0, message, at: '2026-12-01T10:01:00Z' });
    const done = await waitFor('Succeeded', async () => {
      const r = await restores.get({ namespace: NS, name: 'db' });
      return r.status?.phase === 'Succeeded' ? r : undefined;
    });
    expect(done.status).toMatchObject({
      jobName: 'restore-db',
      backup: { name: file, time: '2026-11-30T02:00:07Z', size: 210_123_456, sha256 },
      conditions: [{ type: 'Complete', status: 'True', reason: 'JobComplete', message: `restore Job restore-db completed: restored ${file} into /backup/target: 2101 files, 210000000 bytes` }],
    });
    // One LIST of Pods, as the controller's ServiceAccount under dist/'s RBAC, and no watch.
    const podCalls = cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && e.resource === 'pods');
    expect(podCalls.map((e) => [e.verb, e.namespace, e.code])).toEqual([['list', NS, 200]]);

    await jobs.delete({ namespace: NS, name: 'restore-db' });
    // Long enough for the controller to see the deletion and act on it, if it would.
    await sleep(1_500);
    await expect(jobs.get({ namespace: NS, name: 'restore-db' })).rejects.toThrow(/not found/);
    expect((await restores.get({ namespace: NS, name: 'db' })).status?.phase).toBe('Succeeded');
  }, 60_000);

  it('fails a Restore whose Job is deleted while it runs, and never runs it again', async () => {
    await restores.create({ apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name: 'once', namespace: NS }, spec: { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'db-data' } } } } as RestoreObject);
    const job = await waitFor('the restore Job', () => jobs.get({ namespace: NS, name: 'restore-once' }).catch(() => undefined));
    await jobs.updateStatus({ ...job, status: { startTime: '2026-12-01T11:00:00Z', active: 1 } });
    await waitFor('Running', async () => (await restores.get({ namespace: NS, name: 'once' })).status?.phase === 'Running');
    await jobs.delete({ namespace: NS, name: 'restore-once' });
    const failed = await waitFor('Failed', async () => {
      const r = await restores.get({ namespace: NS, name: 'once' });
      return r.status?.phase === 'Failed' ? r : undefined;
    });
    expect(failed.status).toMatchObject({ jobName: 'restore-once', conditions: [{ type: 'Failed', status: 'True', reason: 'JobDeleted', message: expect.stringContaining('restore Job restore-once was deleted before it ended (the Restore was Running)') }] });
    await sleep(1_500);
    await expect(jobs.get({ namespace: NS, name: 'restore-once' })).rejects.toThrow(/not found/);
  }, 60_000);

  it('refuses a change of the spec (the CRD transition rule)', async () => {
    const restore = await restores.get({ namespace: NS, name: 'db' });
    await expect(restores.update({ ...restore, spec: { ...restore.spec, backup: 'nightly-20261130T020007Z.tar.gz' } })).rejects.toThrow(/spec is immutable/);
  });
});
