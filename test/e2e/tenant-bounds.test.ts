/**
 * One tenant cannot crash-loop the cluster-wide controller (issue 30, HIGH 2). In its own namespace, a
 * user who may create CronJobs and one BackupSchedule creates 750 CronJobs of 250 KiB spec each, every
 * one labelled `app.kubernetes.io/managed-by=backupschedule-operator` and carrying a controller
 * ownerReference to their BackupSchedule (~190 MB of JSON the controller's label-selected watch and
 * LIST see). Before the fix the CronJob cache kept the spec of each, the controller ran out of heap at
 * ~726, and every restart aborted during the start-up LIST. Now only the child the controller builds
 * for that schedule keeps its spec (src/controller/backupschedule/event-mapping.ts).
 *
 * The controller bundle runs as its own process with the image's V8 flags and dist/'s RBAC; it must
 * stay under the Deployment's memory limit (the kernel's `VmHWM`) both while the CronJobs arrive
 * through the watch and after a restart (the paged start-up LIST), never exit, and keep converging
 * every legitimate schedule, the tenant's own included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childLabels } from '../../src/pure/labels.ts';
import { buildBundle, ControllerProcess, startCluster, waitFor, type Cluster } from './harness.ts';
import { memoryLimitBytes, mib, peakRssBytes } from './process-memory.ts';
import { api, createAll, readyOf, scheduleManifest } from './scenarios.ts';

const N = 750;
const SPEC_BYTES = 250 * 1024;
/** Schedules of other tenants, which must keep converging. */
const LEGIT = 20;

const LIMIT = memoryLimitBytes();
let cluster: Cluster;
let bundle: string;
let k: ReturnType<typeof api>;
let controller: ControllerProcess | undefined;
let tenantUid = '';

/** A CronJob as the tenant writes it: our labels, a controller reference to its BackupSchedule, a 250 KiB spec nothing can share. */
function attackCronJob(i: number) {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name: `copy-${i}`,
      namespace: 'tenant',
      labels: childLabels('nightly'),
      ownerReferences: [{ apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', name: 'nightly', uid: tenantUid, controller: true }],
    },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36', env: [{ name: 'PAD', value: `${i}:`.padEnd(SPEC_BYTES, 'x') }] }] } } } },
    },
  };
}

function start(): ControllerProcess {
  const c = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info']);
  controller = c;
  return c;
}

/** Every schedule of `namespace` named `prefix-<i>` for i < count is Ready. */
async function allReady(namespace: string, count: number): Promise<boolean> {
  const list = await k.schedules.list({ namespace });
  return list.items.length === count && list.items.every((s) => readyOf(s)?.status === 'True');
}

/**
 * The tenant's real child is deleted and must come back: the DELETE reaches the controller on the
 * CronJob watch after every CronJob created before it, so its child being recreated proves the
 * controller took in all of them, and still reconciles the tenant's schedule.
 */
async function childRecreated(c: ControllerProcess): Promise<void> {
  const before = await k.cronJobs.get({ namespace: 'tenant', name: 'nightly' });
  await k.cronJobs.delete({ namespace: 'tenant', name: 'nightly' });
  await c.whileAlive('the re-creation of the tenant\'s child', () => k.waitForCronJob('tenant', 'nightly', (x) => x.metadata.uid !== before.metadata.uid, 60_000));
}

/** A schedule created now in `legit` converges. */
async function newScheduleConverges(c: ControllerProcess, name: string): Promise<void> {
  await k.schedules.create(scheduleManifest('legit', name) as never);
  await c.whileAlive(`the convergence of legit/${name}`, () => k.waitForReady('legit', name, undefined, 60_000));
}

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  k = api(cluster.admin);
  await k.createNamespace('tenant');
  await k.createNamespace('legit');
  tenantUid = (await k.schedules.create(scheduleManifest('tenant', 'nightly') as never)).metadata.uid ?? '';
  await createAll(LEGIT, (i) => k.schedules.create(scheduleManifest('legit', `s-${i}`) as never));
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe(`a tenant's ${N} CronJobs of ${SPEC_BYTES / 1024} KiB spec, labelled as ours and controlled by its BackupSchedule`, () => {
  it('arrive through the watch: the controller stays under the Deployment memory limit and keeps converging', async () => {
    const c = start();
    await c.whileAlive('the first convergence', () => waitFor('every schedule Ready', async () => (await allReady('legit', LEGIT)) && (await allReady('tenant', 1)), 30_000, 250));
    const t0 = Date.now();
    await c.whileAlive('the attack', () => createAll(N, (i) => k.cronJobs.create(attackCronJob(i) as never)));
    console.info(`created ${N} CronJobs of ${SPEC_BYTES / 1024} KiB spec in ${Date.now() - t0} ms`);
    await childRecreated(c);
    await newScheduleConverges(c, 'after-attack');
    const peak = peakRssBytes(c.child.pid ?? 0);
    console.info(`peak RSS while the attack arrived: ${mib(peak)} MiB (limit ${mib(LIMIT)} MiB)`);
    expect(peak).toBeLessThan(LIMIT);
    expect(await allReady('legit', LEGIT + 1)).toBe(true);
    expect(await c.stop()).toBe(0);
  }, 240_000);

  it('after a restart (the paged start-up LIST of all of them): no abort, under the limit, every schedule converges', async () => {
    await controller?.stop();
    const c = start();
    await c.whileAlive('the start-up LIST', () => c.waitForLog('workers to start', (r) => r['msg'] === 'starting workers', 60_000));
    await childRecreated(c);
    await newScheduleConverges(c, 'after-restart');
    expect(await allReady('legit', LEGIT + 2)).toBe(true);
    expect(await allReady('tenant', 1)).toBe(true);
    const peak = peakRssBytes(c.child.pid ?? 0);
    console.info(`peak RSS after a restart: ${mib(peak)} MiB (limit ${mib(LIMIT)} MiB)`);
    expect(peak).toBeLessThan(LIMIT);
    expect(c.child.exitCode).toBeNull();
  }, 180_000);
});
