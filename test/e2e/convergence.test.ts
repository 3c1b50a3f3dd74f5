/**
 * Write economy end to end: 200 new BackupSchedules cost exactly 2 writes each (one child create, one
 * status write; Events aside), a converged controller writes nothing while idle, and a controller
 * restarted on converged state writes nothing either (status is recomputed identically from the caches).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, clientFor, ControllerProcess, sleep, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, controllerWrites, readyOf, scheduleManifest } from './scenarios.ts';

const N = 200;
let cluster: Cluster;
let bundle: string;
let controller: ControllerProcess;

/** The value of the first sample of a running controller's `/metrics` whose line starts with `prefix`. */
async function metric(process: ControllerProcess, prefix: string): Promise<number> {
  const started = process.records().find((r) => r['msg'] === 'starting');
  const text = await (await fetch(`${String(started?.['metrics'])}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return Number(line?.split(' ').pop() ?? 0);
}

/**
 * Reconciles that ended without error: `controller_runtime_reconcile_total` of results `success` and
 * `requeue_after` (a schedule in sync comes back when its next run's start grace has passed, to see a
 * missed run: src/pure/missed-runs.ts).
 */
const successfulReconciles = async (process: ControllerProcess): Promise<number> =>
  (await metric(process, 'controller_runtime_reconcile_total{controller="backupschedule",result="success"}')) +
  (await metric(process, 'controller_runtime_reconcile_total{controller="backupschedule",result="requeue_after"}'));

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4']);
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
});

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('convergence', () => {
  it(`converges ${N} new BackupSchedules with exactly 2 writes each, then stays idle for 10 s`, async () => {
    const k = api(cluster.admin);
    await k.createNamespace('bulk');
    cluster.server.requestLog.clear();
    const names = Array.from({ length: N }, (_, i) => `backup-${i}`);
    for (let i = 0; i < N; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((n) => k.schedules.create(scheduleManifest('bulk', n) as never)));
    }
    await waitFor(`${N} schedules Ready`, async () => {
      const list = await k.schedules.list({ namespace: 'bulk' });
      return list.items.length === N && list.items.every((s) => readyOf(s)?.status === 'True' && s.status?.observedGeneration === 1);
    }, 60_000, 250);

    const writes = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'bulk' });
    const byKind = (resource: string, verb: string, subresource?: string) =>
      writes.filter((w) => w.resource === resource && w.verb === verb && w.subresource === subresource);
    expect(byKind('cronjobs', 'create')).toHaveLength(N);
    expect(byKind('backupschedules', 'update', 'status')).toHaveLength(N);
    expect(writes).toHaveLength(2 * N);
    expect(writes.every((w) => w.code >= 200 && w.code < 300)).toBe(true);

    // Events trail the writes that caused them (one at a time, as client-go sends them) within a global
    // budget: each "Created" Event is either written or counted as dropped. The idle window starts once
    // every one is accounted for.
    const events = async (): Promise<number> => (await clientFor(cluster.admin, 'Event').list({ namespace: 'bulk' })).items.length;
    await waitFor(`${N} Created events written or dropped`, async () => (await events()) + (await metric(controller, 'backupschedule_events_dropped_total{reason="budget"}')) === N || undefined, 30_000, 250);
    expect(await events()).toBeGreaterThanOrEqual(50);
    cluster.server.requestLog.clear();
    await sleep(10_000);
    expect(controllerWrites(cluster.server.requestLog.entries(), { includeEvents: true })).toEqual([]);
  }, 90_000);

  it('writes nothing when restarted on converged state', async () => {
    expect(await controller.stop()).toBe(0);
    cluster.server.requestLog.clear();
    controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4']);
    await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    // Every cached schedule is reconciled once after the initial sync; wait until all were.
    await waitFor(`${N} reconciles after the restart`, async () => (await successfulReconciles(controller)) >= N, 20_000, 100);
    await sleep(1_000);
    expect(controllerWrites(cluster.server.requestLog.entries(), { includeEvents: true })).toEqual([]);
  }, 40_000);
});
