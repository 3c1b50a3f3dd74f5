/**
 * Large objects do not crash the controller (issue 13, item 3): 750 BackupSchedules and 750 unrelated
 * CronJobs, each carrying a 250 KiB annotation (the API server's limit for all annotations together is
 * 256 KiB), are ~370 MiB of JSON. The controller bundle, started with the image's V8 flags, converges
 * every schedule and stays under the Deployment's memory limit, both while the schedules arrive through
 * the watch and after a restart (the start-up LIST of both kinds). The peak RSS is the kernel's
 * high-water mark (`VmHWM` in /proc/<pid>/status), read before the process is stopped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, ControllerProcess, startCluster, waitFor, type Cluster } from './harness.ts';
import { memoryLimitBytes, peakRssBytes } from './process-memory.ts';
import { api, controllerWrites, createAll, readyOf, scheduleManifest } from './scenarios.ts';

const N = 750;
/** 250 KiB: under the API server's 256 KiB bound on all annotations of an object. */
const ANNOTATION_BYTES = 250 * 1024;

/** A big annotation: distinct per object, so nothing can share it. */
function bigAnnotation(seed: string): Record<string, string> {
  return { 'example.com/blob': `${seed}:`.padEnd(ANNOTATION_BYTES, 'x') };
}

/** An unrelated CronJob, as any user allowed to create CronJobs in a namespace could write it. */
function foreignCronJob(namespace: string, name: string) {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace, annotations: bigAnnotation(`${namespace}/${name}`) },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } } } },
    },
  };
}

const LIMIT = memoryLimitBytes();
let cluster: Cluster;
let bundle: string;
let controller: ControllerProcess | undefined;

/**
 * How many schedules the controller has written a status for (cheap to poll: LISTing 750 × 250 KiB
 * every half second would load the test server more than the controller does).
 */
function statusWrites(): number {
  const written = controllerWrites(cluster.server.requestLog.entries(), { namespace: 'big', succeededOnly: true });
  return new Set(written.filter((w) => w.resource === 'backupschedules' && w.subresource === 'status').map((w) => w.name)).size;
}

/** Every schedule is Ready (one LIST, at the end). */
async function allReady(): Promise<boolean> {
  const list = await api(cluster.admin).schedules.list({ namespace: 'big' });
  return list.items.length === N && list.items.every((s) => readyOf(s)?.status === 'True');
}

/** Starts the controller and fails fast when it dies (an OOM aborts it) instead of waiting for a timeout. */
function start(): ControllerProcess {
  const c = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info']);
  controller = c;
  return c;
}

/** `controller_runtime_reconcile_total` of results success and requeue_after of a running controller (0 before it serves metrics). */
async function successfulReconciles(c: ControllerProcess): Promise<number> {
  const url = c.records().find((r) => r['msg'] === 'starting')?.['metrics'];
  if (typeof url !== 'string') return 0;
  const text = await (await fetch(`${url}/metrics`)).text();
  // A schedule in sync ends in requeue_after (it comes back to see a missed run: src/pure/missed-runs.ts).
  const count = (result: string): number => Number(text.split('\n').find((l) => l.startsWith(`controller_runtime_reconcile_total{controller="backupschedule",result="${result}"}`))?.split(' ').pop() ?? 0);
  return count('success') + count('requeue_after');
}

/** Waits until `done`, failing at once when the controller exits (an OOM aborts it); resolves with its peak RSS. */
async function converge(c: ControllerProcess, what: string, done: () => Promise<boolean> | boolean): Promise<number> {
  await c.whileAlive(what, () => waitFor(what, done, 45_000, 250));
  return peakRssBytes(c.child.pid ?? 0);
}

const workersStarted = (c: ControllerProcess) => (): boolean => c.records().some((r) => r['msg'] === 'starting workers');

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  const k = api(cluster.admin);
  await k.createNamespace('big');
  await k.createNamespace('noise');
  await createAll(N, (i) => k.cronJobs.create(foreignCronJob('noise', `unrelated-${i}`) as never));
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe(`${N} BackupSchedules and ${N} unrelated CronJobs with 250 KiB annotations`, () => {
  it('converge under the Deployment memory limit', async () => {
    const c = start();
    await converge(c, 'the workers to start (the start-up LIST of 750 large CronJobs)', workersStarted(c));
    const k = api(cluster.admin);
    const t0 = Date.now();
    await createAll(N, (i) => k.schedules.create({ ...scheduleManifest('big', `s-${i}`), metadata: { name: `s-${i}`, namespace: 'big', annotations: bigAnnotation(`s-${i}`) } } as never));
    const t1 = Date.now();
    const peak = await converge(c, `a status written for each of ${N} large schedules`, () => statusWrites() === N);
    console.info(`created ${N} schedules in ${t1 - t0} ms, converged ${Date.now() - t1} ms later`);
    expect(await allReady()).toBe(true);
    console.info(`peak RSS while converging: ${(peak / 2 ** 20).toFixed(0)} MiB (limit ${(LIMIT / 2 ** 20).toFixed(0)} MiB)`);
    expect(peak).toBeLessThan(LIMIT);
  }, 120_000);

  it('restart under the Deployment memory limit (the start-up LIST of both kinds)', async () => {
    expect(await controller?.stop()).toBe(0);
    const c = start();
    const peak = await converge(c, `the restarted controller to reconcile all ${N} schedules`, async () => (await successfulReconciles(c)) >= N);
    console.info(`peak RSS after a restart: ${(peak / 2 ** 20).toFixed(0)} MiB (limit ${(LIMIT / 2 ** 20).toFixed(0)} MiB)`);
    expect(peak).toBeLessThan(LIMIT);
  }, 60_000);
});
