/**
 * A status someone else writes is corrected (issue 30, MEDIUM 4): a PUT to `/status` setting Ready=True
 * on an InvalidSpec schedule used to stand until the next resync (10 h), because status-only updates
 * were not reconciled. Now a status-only update whose resourceVersion is not one the controller's own
 * status write returned is reconciled at once, while the controller's own writes still bring no extra
 * reconcile and no write; and `--sync-period` reconciles every schedule again with no event at all.
 * `status.lastSuccessfulTime` is derived from the child's Jobs and the CronJob's own status every time
 * (issue 41, LOW 8): a forged one is corrected, and with it the metric the staleness alert reads.
 * The controller bundle runs as its own process with dist/'s RBAC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';
import { buildBundle, ControllerProcess, sleep, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, controllerWrites, failedJobStatus, readyOf, runJob, scheduleManifest, type ChildCronJob } from './scenarios.ts';

/** A foreign status write must be corrected within this (it is one watch event and one reconcile away). */
const CORRECTED_WITHIN_MS = 5_000;

let cluster: Cluster;
let bundle: string;
let k: ReturnType<typeof api>;
let controller: ControllerProcess | undefined;

function start(extra: readonly string[] = []): ControllerProcess {
  const c = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info', ...extra]);
  controller = c;
  return c;
}

/** `controller_runtime_reconcile_total` of every result, summed. */
async function reconciles(c: ControllerProcess): Promise<number> {
  const url = (await c.waitForLog('the metrics server', (r) => r['msg'] === 'starting'))['metrics'];
  const text = await (await fetch(`${String(url)}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('controller_runtime_reconcile_total{controller="backupschedule"')).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

/** The reconcile count once it has not moved for `quietMs`. */
async function settledReconciles(c: ControllerProcess, quietMs = 1_500): Promise<number> {
  let last = await reconciles(c);
  for (;;) {
    await sleep(quietMs);
    const now = await reconciles(c);
    if (now === last) return now;
    last = now;
  }
}

/** Someone else's status: Ready=True on a schedule the controller reports InvalidSpec. */
function forgedStatus(s: BackupScheduleObject): BackupScheduleObject {
  const generation = s.metadata.generation ?? 1;
  return {
    ...s,
    status: {
      observedGeneration: generation,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Forged', message: 'all good, trust me', observedGeneration: generation, lastTransitionTime: '2026-12-01T00:00:00Z' }],
    },
  };
}

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  k = api(cluster.admin);
  await k.createNamespace('status');
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('status ownership', () => {
  it(`corrects a status someone else wrote within ${CORRECTED_WITHIN_MS} ms, and makes no write after it`, async () => {
    const c = start();
    await c.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    await k.schedules.create(scheduleManifest('status', 'broken', { schedule: '61 * * * *' }) as never);
    const invalid = await k.waitForReady('status', 'broken', (s) => readyOf(s)?.reason === 'InvalidSpec');
    await settledReconciles(c);

    const t0 = Date.now();
    await k.schedules.updateStatus(forgedStatus(invalid));
    const corrected = await k.waitForReady('status', 'broken', (s) => readyOf(s)?.reason === 'InvalidSpec', CORRECTED_WITHIN_MS);
    console.info(`a forged Ready=True was corrected after ${Date.now() - t0} ms`);
    expect(readyOf(corrected)).toMatchObject({ status: 'False', reason: 'InvalidSpec' });

    // The correction is the controller's own status write: it brings no further reconcile nor write.
    const after = await settledReconciles(c);
    const writesBefore = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'status' }).length;
    await sleep(3_000);
    expect(await reconciles(c)).toBe(after);
    expect(controllerWrites(cluster.server.requestLog.entries(), { namespace: 'status' }).length).toBe(writesBefore);
  }, 60_000);

  it('derives lastSuccessfulTime from the Jobs every time: a forged one is corrected, and so is the metric the staleness alert reads', async () => {
    const c = controller ?? start();
    const record = await c.waitForLog('the metrics server', (r) => r['msg'] === 'starting');
    const lastSuccess = async (): Promise<string | undefined> => {
      const text = await (await fetch(`${String(record['metrics'])}/metrics`)).text();
      return text.split('\n').find((l) => l.startsWith('backupschedule_last_success_timestamp_seconds{namespace="status",name="failing"}'))?.split(' ').pop();
    };
    await k.schedules.create(scheduleManifest('status', 'failing') as never);
    const ready = await k.waitForReady('status', 'failing');
    const child = await k.waitForCronJob('status', ready.status?.cronJobName ?? '');
    await runJob(cluster.admin, child as ChildCronJob, 'failing-29000000', failedJobStatus('2026-12-01T02:00:00Z', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'));
    const failing = await k.waitForReady('status', 'failing', (s) => s.status?.lastFailedTime === '2026-12-01T02:00:00Z');
    expect(failing.status?.lastSuccessfulTime).toBeUndefined();

    // Someone who may write /status says a backup succeeded in 2099: the staleness alert would never fire.
    const t0 = Date.now();
    await k.schedules.updateStatus({ ...failing, status: { ...failing.status, lastSuccessfulTime: '2099-01-01T00:00:00Z' } });
    const corrected = await k.waitForReady('status', 'failing', (s) => s.status?.lastSuccessfulTime === undefined && s.metadata.resourceVersion !== failing.metadata.resourceVersion, CORRECTED_WITHIN_MS);
    console.info(`a forged lastSuccessfulTime was corrected after ${Date.now() - t0} ms`);
    expect(corrected.status?.lastFailedTime).toBe('2026-12-01T02:00:00Z');
    expect(await lastSuccess()).toBeUndefined();

    // A real success is what it says, and a forged later one goes back to it.
    await runJob(cluster.admin, child as ChildCronJob, 'failing-29001440', { startTime: '2026-12-02T02:00:00Z', completionTime: '2026-12-02T02:03:00Z', succeeded: 1, conditions: [{ type: 'Complete', status: 'True', lastProbeTime: '2026-12-02T02:03:00Z', lastTransitionTime: '2026-12-02T02:03:00Z' }] });
    const succeeded = await k.waitForReady('status', 'failing', (s) => s.status?.lastSuccessfulTime === '2026-12-02T02:03:00Z');
    await k.schedules.updateStatus({ ...succeeded, status: { ...succeeded.status, lastSuccessfulTime: '2099-01-01T00:00:00Z' } });
    await waitFor('the forged time corrected', async () => (await k.schedules.get({ namespace: 'status', name: 'failing' })).status?.lastSuccessfulTime === '2026-12-02T02:03:00Z' || undefined, CORRECTED_WITHIN_MS);
    await waitFor('the metric to say the real success', async () => (await lastSuccess()) === String(Date.parse('2026-12-02T02:03:00Z') / 1000) || undefined, CORRECTED_WITHIN_MS);
  }, 60_000);

  it('reconciles a new schedule only for its own and its child\'s events: its own status write brings no reconcile', async () => {
    const c = controller ?? start();
    await c.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    const before = await settledReconciles(c);
    await k.schedules.create(scheduleManifest('status', 'fine') as never);
    await k.waitForReady('status', 'fine');
    const after = await settledReconciles(c);
    // The schedule's ADDED (creates the child) and the child's ADDED (writes the status); its status update is its own.
    expect(after - before).toBe(2);
  }, 60_000);

  it('with --sync-period reconciles every schedule again without any event, and writes nothing when all is in sync', async () => {
    expect(await controller?.stop()).toBe(0);
    const c = start(['--sync-period=2s']);
    await c.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
    await waitFor('the start-up reconciles', async () => (await reconciles(c)) >= 2, 20_000, 100);
    const writesBefore = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'status' }).length;
    const first = await reconciles(c);
    // 2 s ± 10 %: within 5 s every schedule was reconciled at least once more, whatever the jitter.
    await sleep(5_000);
    expect(await reconciles(c)).toBeGreaterThanOrEqual(first + 2);
    expect(controllerWrites(cluster.server.requestLog.entries(), { namespace: 'status' }).length).toBe(writesBefore);
  }, 60_000);
});
