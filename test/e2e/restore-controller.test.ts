/**
 * The Restore controller in the controller bundle, with dist/'s CRD and RBAC (jobs create, restores and
 * their status and finalizers; OwnerReferencesPermissionEnforcement on): a Restore from a BackupSchedule
 * waits for the schedule, then gets its one Job (the schedule's claim read-only, the target claim, the
 * runner's restore arguments), follows the Job (the test writes its status as the Job controller would)
 * to Succeeded, and gets no second Job when the first is deleted. An update of the spec is refused by
 * the CRD's transition rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Restore } from '../../imports/restore.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { JOBS, RESTORES } from '../../src/controller/resources.ts';
import { buildBundle, ControllerProcess, sleep, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, scheduleManifest } from './scenarios.ts';

const NS = 'restores';
let cluster: Cluster;
let controller: ControllerProcess;
type RestoreObject = Restore & KubeObject;
type JobObject = KubeObject & { spec: { template: { spec: { containers: { args: string[] }[]; volumes: unknown[] } } }; status?: Record<string, unknown> };
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
  it('waits for the BackupSchedule, runs one Job, follows it to Succeeded and never runs again', async () => {
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
    await jobs.updateStatus({ ...running, status: { startTime: '2026-12-01T10:00:00Z', completionTime: '2026-12-01T10:01:00Z', succeeded: 1, conditions: [{ type: 'Complete', status: 'True', lastProbeTime: '2026-12-01T10:01:00Z', lastTransitionTime: '2026-12-01T10:01:00Z' }] } });
    const done = await waitFor('Succeeded', async () => {
      const r = await restores.get({ namespace: NS, name: 'db' });
      return r.status?.phase === 'Succeeded' ? r : undefined;
    });
    expect(done.status).toMatchObject({ jobName: 'restore-db', conditions: [{ type: 'Complete', status: 'True', reason: 'JobComplete' }] });

    await jobs.delete({ namespace: NS, name: 'restore-db' });
    // Long enough for the controller to see the deletion and act on it, if it would.
    await sleep(1_500);
    await expect(jobs.get({ namespace: NS, name: 'restore-db' })).rejects.toThrow(/not found/);
    expect((await restores.get({ namespace: NS, name: 'db' })).status?.phase).toBe('Succeeded');
  }, 60_000);

  it('refuses a change of the spec (the CRD transition rule)', async () => {
    const restore = await restores.get({ namespace: NS, name: 'db' });
    await expect(restores.update({ ...restore, spec: { ...restore.spec, backup: 'nightly-20261130T020007Z.tar.gz' } })).rejects.toThrow(/spec is immutable/);
  });
});
