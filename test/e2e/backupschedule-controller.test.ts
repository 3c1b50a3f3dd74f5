/**
 * The controller end to end: the bundle the image runs, as its own process, authenticated as its
 * ServiceAccount against the test API server with dist/'s RBAC enforced. One server and one controller
 * serve every scenario here; each scenario works in its own namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, CONTROLLER_USER, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, controllerWrites, readyOf, scheduleManifest } from './scenarios.ts';

let cluster: Cluster;
let controller: ControllerProcess;
let k: ReturnType<typeof api>;

beforeAll(async () => {
  const [bundle, started] = await Promise.all([buildBundle(), startCluster()]);
  cluster = started;
  k = api(cluster.admin);
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4']);
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
});

afterAll(async () => {
  const code = await controller?.stop();
  await cluster?.stop();
  expect(code).toBe(0);
});

describe('the BackupSchedule controller', () => {
  it('creates the child CronJob with a controller ownerReference and reports Ready', async () => {
    await k.createNamespace('create');
    const created = await k.schedules.create(scheduleManifest('create', 'nightly') as never);
    const child = await k.waitForCronJob('create', 'nightly');
    expect(child.metadata.ownerReferences).toEqual([
      { apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', name: 'nightly', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(child.spec.schedule).toBe('0 2 * * *');
    expect(child.spec.concurrencyPolicy).toBe('Forbid');
    const s = await k.waitForReady('create', 'nightly');
    expect(s.status).toMatchObject({ observedGeneration: 1, cronJobName: 'nightly', active: [] });
    expect(readyOf(s)).toMatchObject({ status: 'True', reason: 'Created', observedGeneration: 1 });
    await waitFor('a Created event', async () => (await k.events('create', 'nightly')).find((e) => e.reason === 'Created' && e.type === 'Normal'));
  });

  it('updates the child when the spec changes and reports the new observedGeneration', async () => {
    await k.createNamespace('spec-change');
    await k.schedules.create(scheduleManifest('spec-change', 'nightly') as never);
    await k.waitForReady('spec-change', 'nightly');
    const childBefore = await k.cronJobs.get({ namespace: 'spec-change', name: 'nightly' });
    await k.schedules.patch({ namespace: 'spec-change', name: 'nightly' }, { spec: { schedule: '30 3 * * *', suspend: true } });
    const child = await k.waitForCronJob('spec-change', 'nightly', (c) => c.spec.schedule === '30 3 * * *');
    expect(child.spec.suspend).toBe(true);
    expect(child.metadata.uid).toBe(childBefore.metadata.uid);
    // Server defaults survive the update (the merge keeps them).
    expect(child.spec.jobTemplate.spec.template.spec.dnsPolicy).toBe('ClusterFirst');
    const s = await k.waitForReady('spec-change', 'nightly', (x) => x.status?.observedGeneration === 2 && readyOf(x)?.status === 'True');
    expect(readyOf(s)).toMatchObject({ reason: 'Updated', observedGeneration: 2 });
  });

  it('heals a child someone edited, and recreates one someone deleted', async () => {
    await k.createNamespace('heal');
    await k.schedules.create(scheduleManifest('heal', 'nightly') as never);
    await k.waitForReady('heal', 'nightly');
    const original = await k.cronJobs.get({ namespace: 'heal', name: 'nightly' });
    const image = original.spec.jobTemplate.spec.template.spec.containers[0].image;

    await k.cronJobs.patch({ namespace: 'heal', name: 'nightly' }, { metadata: { labels: { team: 'sre' } }, spec: { schedule: '* * * * *' } });
    const healed = await k.waitForCronJob('heal', 'nightly', (c) => c.spec.schedule === '0 2 * * *');
    expect(healed.metadata.labels?.['team']).toBe('sre');
    expect(healed.spec.jobTemplate.spec.template.spec.containers[0].image).toBe(image);
    await waitFor('an Updated event', async () => (await k.events('heal', 'nightly')).find((e) => e.reason === 'Updated' && e.message.includes('spec.schedule')));

    await k.cronJobs.delete({ namespace: 'heal', name: 'nightly' });
    const recreated = await k.waitForCronJob('heal', 'nightly', (c) => c.metadata.uid !== original.metadata.uid);
    expect(recreated.spec.schedule).toBe('0 2 * * *');
  });

  it('leaves the child to the garbage collector when the BackupSchedule is deleted', async () => {
    await k.createNamespace('gc');
    await k.schedules.create(scheduleManifest('gc', 'nightly') as never);
    await k.waitForReady('gc', 'nightly');
    await k.schedules.delete({ namespace: 'gc', name: 'nightly' });
    await k.waitForCronJobGone('gc', 'nightly');
    const writesAfter = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'gc' }).filter((e) => e.verb === 'delete');
    expect(writesAfter).toEqual([]);
  });

  it('copies the child status (running Jobs, last schedule, last success) into the BackupSchedule', async () => {
    await k.createNamespace('child-status');
    await k.schedules.create(scheduleManifest('child-status', 'nightly') as never);
    await k.waitForReady('child-status', 'nightly');
    const child = await k.cronJobs.get({ namespace: 'child-status', name: 'nightly' });
    child.status = {
      active: [{ kind: 'Job', apiVersion: 'batch/v1', namespace: 'child-status', name: 'nightly-29400120', uid: '5a75868e-4457-481a-bae2-1b025eeb2e5f' }],
      lastScheduleTime: '2026-11-30T02:00:00Z',
      lastSuccessfulTime: '2026-11-29T02:00:42Z',
    };
    await k.cronJobs.updateStatus(child);
    const s = await k.waitForReady('child-status', 'nightly', (x) => (x.status?.active ?? []).length === 1);
    expect(s.status).toMatchObject({ active: ['nightly-29400120'], lastScheduleTime: '2026-11-30T02:00:00Z', lastSuccessfulTime: '2026-11-29T02:00:42Z' });
  });

  it('reports an invalid spec that slipped past admission, naming the field, and creates no child', async () => {
    await k.createNamespace('invalid');
    // "61 * * * *" has the five fields the CRD's pattern checks, but minute 61 does not exist: only the
    // controller's validation (robfig/cron's rules, as the CronJob API applies them) can tell.
    await k.schedules.create(scheduleManifest('invalid', 'broken', { schedule: '61 * * * *' }) as never);
    const s = await k.waitForReady('invalid', 'broken', (x) => readyOf(x) !== undefined);
    expect(readyOf(s)).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(readyOf(s)?.message).toContain('spec.schedule');
    await waitFor('an InvalidSpec warning', async () => (await k.events('invalid', 'broken')).find((e) => e.reason === 'InvalidSpec' && e.type === 'Warning'));
    expect((await k.cronJobs.list({ namespace: 'invalid' })).items).toEqual([]);
  });

  it.each([60, 253])('handles a %i-character name: child name within 52 characters, Ready', async (length) => {
    const ns = `names-${length}`;
    await k.createNamespace(ns);
    const name = `n${'x'.repeat(length - 2)}0`;
    await k.schedules.create(scheduleManifest(ns, name) as never);
    const s = await k.waitForReady(ns, name);
    const childName = s.status?.cronJobName ?? '';
    expect(childName.length).toBeLessThanOrEqual(52);
    const child = await k.cronJobs.get({ namespace: ns, name: childName });
    expect(child.metadata.ownerReferences?.[0]?.name).toBe(name);
  });

  it('leaves a foreign CronJob with the child name alone, says so, and takes over the name once it is gone', async () => {
    await k.createNamespace('foreign');
    const foreign = await k.cronJobs.create({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'taken', namespace: 'foreign', labels: { owner: 'someone-else' } },
      spec: { schedule: '5 5 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } } },
    });
    await k.schedules.create(scheduleManifest('foreign', 'taken') as never);
    const s = await k.waitForReady('foreign', 'taken', (x) => readyOf(x) !== undefined);
    expect(readyOf(s)).toMatchObject({ status: 'False', reason: 'ChildNameConflict' });
    expect(readyOf(s)?.message).toContain('CronJob "taken" already exists');
    const after = await k.cronJobs.get({ namespace: 'foreign', name: 'taken' });
    expect(after.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
    expect(controllerWrites(cluster.server.requestLog.entries(), { namespace: 'foreign' }).filter((e) => e.resource === 'cronjobs' && e.verb !== 'create')).toEqual([]);

    await k.cronJobs.delete({ namespace: 'foreign', name: 'taken' });
    const ours = await k.waitForCronJob('foreign', 'taken', (c) => c.metadata.ownerReferences?.[0]?.kind === 'BackupSchedule');
    expect(ours.spec.schedule).toBe('0 2 * * *');
    await k.waitForReady('foreign', 'taken');
  });

  it('keeps converging after the API server drops every watch and compacts its history (410 on re-watch)', async () => {
    await k.createNamespace('rewatch');
    cluster.server.compactHistory();
    cluster.server.closeWatches();
    await k.schedules.create(scheduleManifest('rewatch', 'nightly') as never);
    await k.waitForReady('rewatch', 'nightly', undefined, 30_000);
    await k.cronJobs.patch({ namespace: 'rewatch', name: 'nightly' }, { spec: { schedule: '* * * * *' } });
    await k.waitForCronJob('rewatch', 'nightly', (c) => c.spec.schedule === '0 2 * * *', 30_000);
  }, 40_000);

  it('converges when 30 % of its writes are answered 409 Conflict', async () => {
    await k.createNamespace('conflicts');
    // Not half: a key's retries back off 5 ms × 2^failures (client-go's default), so at 50 % one of the
    // ~40 keyed writes failing 13 times in a row (about 1 run in 200) waits 20 s and more, past this
    // test's window; at 30 % that takes 0.3^13.
    const rules = ['create', 'patch', 'update'].map((verb) => cluster.server.faults.add({ verb, user: CONTROLLER_USER, namespace: 'conflicts', code: 409, fraction: 0.3 }));
    try {
      const names = Array.from({ length: 20 }, (_, i) => `s${i}`);
      await Promise.all(names.map((n) => k.schedules.create(scheduleManifest('conflicts', n) as never)));
      await waitFor('all 20 schedules Ready', async () => {
        const list = await k.schedules.list({ namespace: 'conflicts' });
        return list.items.length === 20 && list.items.every((s) => readyOf(s)?.status === 'True');
      }, 30_000);
      const children = (await k.cronJobs.list({ namespace: 'conflicts' })).items;
      expect(children.map((c) => c.metadata.name).sort()).toEqual([...names].sort());
      const conflicts = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'conflicts' }).filter((e) => e.code === 409);
      expect(conflicts.length).toBeGreaterThan(0);
    } finally {
      for (const id of rules) cluster.server.faults.remove(id);
    }
  });
});
