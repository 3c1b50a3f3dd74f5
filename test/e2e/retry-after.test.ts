/**
 * A reconcile's child and status writes honour the API server's `Retry-After` (issue 30, LOW): a 429
 * asking for 2 s used to be retried after the rate limiter's 5–10 ms. The controller bundle runs as its
 * own process with dist/'s RBAC; the test API server answers its first create of the child and its
 * first status write with 429 and `Retry-After: 2`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../apiserver/request-log.ts';
import { buildBundle, ControllerProcess, CONTROLLER_USER, startCluster, type Cluster } from './harness.ts';
import { api, controllerWrites, scheduleManifest } from './scenarios.ts';

const RETRY_AFTER_SECONDS = 2;

let cluster: Cluster;
let controller: ControllerProcess;

beforeAll(async () => {
  const [bundle, started] = await Promise.all([buildBundle(), startCluster()]);
  cluster = started;
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info']);
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

/** Milliseconds from each 429 among `writes` to the write after it. */
function waitsAfter429(writes: readonly RequestLogEntry[]): number[] {
  return writes.flatMap((w, i) => (w.code === 429 && writes[i + 1] ? [Date.parse(writes[i + 1]!.time) - Date.parse(w.time)] : []));
}

describe('Retry-After', () => {
  it(`retries a child create and a status write answered 429 no sooner than the server's Retry-After (${RETRY_AFTER_SECONDS} s)`, async () => {
    const k = api(cluster.admin);
    await k.createNamespace('throttled');
    const common = { user: CONTROLLER_USER, namespace: 'throttled', code: 429, count: 1, retryAfterSeconds: RETRY_AFTER_SECONDS };
    cluster.server.faults.add({ ...common, verb: 'create', resource: 'cronjobs' });
    cluster.server.faults.add({ ...common, verb: 'update', resource: 'backupschedules', subresource: 'status' });
    await k.schedules.create(scheduleManifest('throttled', 'nightly') as never);
    await k.waitForReady('throttled', 'nightly', undefined, 20_000);
    const writes = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'throttled' });
    const creates = writes.filter((w) => w.resource === 'cronjobs' && w.verb === 'create');
    const statuses = writes.filter((w) => w.resource === 'backupschedules' && w.subresource === 'status');
    expect(creates.map((w) => w.code)).toEqual([429, 201]);
    expect(statuses.map((w) => w.code)).toEqual([429, 200]);
    const waits = [...waitsAfter429(creates), ...waitsAfter429(statuses)];
    console.info(`retried after ${waits.join(' and ')} ms`);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(RETRY_AFTER_SECONDS * 1000);
  }, 60_000);
});
