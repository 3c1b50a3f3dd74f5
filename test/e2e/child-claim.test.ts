/**
 * Children outside the label-selected CronJob watch: a child whose labels were removed is found through
 * AlreadyExists and one GET, and healed (labels restored, foreign metadata kept); an orphan carrying our
 * labels (its schedule was deleted with `propagationPolicy: Orphan`) is adopted by the next schedule of
 * that name. Adoption changes an existing object's owner references, which the
 * OwnerReferencesPermissionEnforcement admission plugin allows only to those who may delete the object:
 * on such a cluster the operator (no `delete` on CronJobs) reports the refusal instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, readyOf, scheduleManifest } from './scenarios.ts';

let bundle: string;
const running: { cluster: Cluster; controller: ControllerProcess }[] = [];

beforeAll(async () => {
  bundle = await buildBundle();
});

afterAll(async () => {
  for (const { cluster, controller } of running) {
    await controller.stop();
    await cluster.stop();
  }
});

/** A cluster with the controller running, and a schedule `claim/nightly` whose child was orphaned. */
async function withOrphan(enforceOwnerReferencePermissions: boolean) {
  const cluster = await startCluster({ enforceOwnerReferencePermissions });
  const controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig]);
  running.push({ cluster, controller });
  const k = api(cluster.admin);
  await k.createNamespace('claim');
  await k.schedules.create(scheduleManifest('claim', 'nightly') as never);
  const first = await k.waitForReady('claim', 'nightly');
  const original = await k.cronJobs.get({ namespace: 'claim', name: 'nightly' });

  // Without its labels the child leaves the watch; the controller's create answers AlreadyExists, a GET
  // finds the child, and the heal restores the labels without touching the rest.
  await k.cronJobs.patch({ namespace: 'claim', name: 'nightly' }, { metadata: { labels: { team: 'sre' }, annotations: { 'someone.else/note': 'keep me' } } });
  await k.cronJobs.patch({ namespace: 'claim', name: 'nightly' }, { metadata: { labels: { 'app.kubernetes.io/managed-by': null, 'kubelings.dev/backup-schedule': null } } });
  const relabelled = await k.waitForCronJob('claim', 'nightly', (c) => c.metadata.labels?.['kubelings.dev/backup-schedule'] === 'nightly');
  expect(relabelled.metadata.labels?.['team']).toBe('sre');
  expect(relabelled.metadata.annotations?.['someone.else/note']).toBe('keep me');

  await k.schedules.delete({ namespace: 'claim', name: 'nightly' }, { propagationPolicy: 'Orphan' });
  await k.waitForCronJob('claim', 'nightly', (c) => (c.metadata.ownerReferences ?? []).length === 0);
  await waitFor('the orphaning schedule to be gone', () => k.schedules.get({ namespace: 'claim', name: 'nightly' }).then(() => false, () => true));
  await k.schedules.create(scheduleManifest('claim', 'nightly', { schedule: '0 4 * * *' }) as never);
  return { k, first, original };
}

describe('children outside the watch', () => {
  it('restores the labels of a child that lost them and adopts the orphan a deleted schedule left', async () => {
    const { k, first, original } = await withOrphan(false);
    const second = await k.waitForReady('claim', 'nightly', (s) => s.metadata.uid !== first.metadata.uid && readyOf(s)?.status === 'True');
    const adopted = await k.cronJobs.get({ namespace: 'claim', name: 'nightly' });
    expect(adopted.metadata.uid).toBe(original.metadata.uid);
    expect(adopted.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'BackupSchedule', uid: second.metadata.uid, controller: true })]);
    expect(adopted.spec.schedule).toBe('0 4 * * *');
    expect(adopted.metadata.annotations?.['someone.else/note']).toBe('keep me');
    await waitFor('an Adopted event', async () => (await k.events('claim', 'nightly')).find((e) => e.reason === 'Adopted'));
  }, 30_000);

  it('reports the refused adoption where OwnerReferencesPermissionEnforcement requires delete', async () => {
    const { k, first } = await withOrphan(true);
    const refused = await k.waitForReady('claim', 'nightly', (s) => s.metadata.uid !== first.metadata.uid && readyOf(s)?.reason === 'ChildRejected');
    expect(readyOf(refused)?.message).toContain("cannot set an ownerRef on a resource you can't delete");
  }, 30_000);
});
