/** `--namespace` (repeatable): the controller watches and touches only the namespaces it was given. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, startCluster, type Cluster } from './harness.ts';
import { api, controllerWrites, scheduleManifest } from './scenarios.ts';

let cluster: Cluster;
let controller: ControllerProcess;

beforeAll(async () => {
  const [bundle, started] = await Promise.all([buildBundle(), startCluster()]);
  cluster = started;
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--namespace=team-a', '--namespace', 'team-b']);
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('watching chosen namespaces', () => {
  it('reconciles schedules in the given namespaces and leaves the others alone', async () => {
    const k = api(cluster.admin);
    // team-c first: by the time team-a and team-b are Ready, the controller has had every chance to touch it.
    for (const ns of ['team-c', 'team-a', 'team-b']) {
      await k.createNamespace(ns);
      await k.schedules.create(scheduleManifest(ns, 'nightly') as never);
    }
    await k.waitForReady('team-a', 'nightly');
    await k.waitForReady('team-b', 'nightly');
    expect((await k.schedules.get({ namespace: 'team-c', name: 'nightly' })).status).toBeUndefined();
    expect((await k.cronJobs.list({ namespace: 'team-c' })).items).toEqual([]);
    expect(controllerWrites(cluster.server.requestLog.entries(), { namespace: 'team-c', includeEvents: true })).toEqual([]);
    const lists = cluster.server.requestLog.entries().filter((e) => e.verb === 'list' && e.resource === 'cronjobs' && e.user.includes('backupschedule-operator'));
    expect(new Set(lists.map((e) => e.namespace))).toEqual(new Set(['team-a', 'team-b']));
  });
});
