/**
 * One tenant cannot crash-loop the controller through the Restore kind (issue 41, HIGH 1): issue 30's
 * attack again, through what the Restore controller watches. In its own namespace, a user with the
 * editor role creates 750 Restores with a 250 KiB annotation each, then 750 Jobs of 250 KiB spec
 * labelled `kubelings.dev/restore` (and as the operator's), each controlled by one of those Restores:
 * ~375 MB of JSON the controller's LISTs and watches see. Before the fix both caches kept them whole
 * and the controller ran out of heap; now every informer keeps only what its readers need, within a
 * per-object budget (src/runtime/cache-policy.ts).
 *
 * The controller bundle runs as its own process with the image's V8 flags and dist/'s RBAC; it must
 * stay under the Deployment's memory limit (the kernel's `VmHWM`) while the objects arrive through the
 * watches and after a restart (the paged start-up LISTs), never exit, and keep serving the other
 * tenants: their schedules converge, and their Restore runs to its end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Restore } from '../../imports/restore.ts';
import { formatTerminationMessage } from '../../src/backup/termination-message.ts';
import { JOBS, RESTORES } from '../../src/controller/resources.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { restoreLabels } from '../../src/pure/restore-job.ts';
import { endRestoreJob, type RestoreJobObject } from '../controller/restore-job-run.ts';
import { buildBundle, ControllerProcess, startCluster, waitFor, type Cluster } from './harness.ts';
import { memoryLimitBytes, mib, peakRssBytes } from './process-memory.ts';
import { api, createAll, readyOf, scheduleManifest } from './scenarios.ts';

const N = 750;
const BYTES = 250 * 1024;
/** Schedules of other tenants, which must keep converging. */
const LEGIT = 20;

type RestoreObject = Restore & KubeObject;
const LIMIT = memoryLimitBytes();
let cluster: Cluster;
let bundle: string;
let k: ReturnType<typeof api>;
let restores: ResourceClient<RestoreObject>;
let jobs: ResourceClient<RestoreJobObject>;
let controller: ControllerProcess | undefined;
const tenantUids: string[] = [];

/** A Restore as the tenant writes it: valid, waiting for a BackupSchedule that does not exist, a 250 KiB annotation nothing can share. */
function attackRestore(i: number): RestoreObject {
  return {
    apiVersion: 'kubelings.dev/v1',
    kind: 'Restore',
    metadata: { name: `r-${i}`, namespace: 'tenant', annotations: { 'example.com/blob': `${i}:`.padEnd(BYTES, 'x') } },
    spec: { from: { backupScheduleName: 'missing' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'data' } } },
  } as RestoreObject;
}

/** A Job as the tenant writes it: the restore Jobs' labels, controlled by one of its Restores, a 250 KiB spec. */
function attackJob(i: number) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `j-${i}`,
      namespace: 'tenant',
      labels: restoreLabels(`r-${i}`),
      ownerReferences: [{ apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: `r-${i}`, uid: tenantUids[i] ?? '', controller: true }],
    },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36', env: [{ name: 'PAD', value: `${i}:`.padEnd(BYTES, 'x') }] }] } } },
  };
}

function start(): ControllerProcess {
  const c = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info']);
  controller = c;
  return c;
}

async function allReady(count: number): Promise<boolean> {
  const list = await k.schedules.list({ namespace: 'legit' });
  return list.items.length === count && list.items.every((s) => readyOf(s)?.status === 'True');
}

/** Another tenant's Restore `name` reaches `phase` (its Job made and followed). */
async function legitRestore(c: ControllerProcess, name: string, phase: string): Promise<RestoreObject> {
  return c.whileAlive(`legit/${name} to be ${phase}`, () =>
    waitFor(`legit/${name} ${phase}`, async () => {
      const r = await restores.get({ namespace: 'legit', name });
      return r.status?.phase === phase ? r : undefined;
    }, 90_000, 250),
  );
}

/** A Restore of another tenant gets its Job: on the Restores watch after all of the tenant's, so the controller took them in. */
async function legitRestoreGetsItsJob(c: ControllerProcess, name: string): Promise<RestoreJobObject> {
  await restores.create({ apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name, namespace: 'legit' }, spec: { from: { backupScheduleName: 's-0' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'restored' } } } } as RestoreObject);
  await legitRestore(c, name, 'Pending');
  return c.whileAlive(`the Job of legit/${name}`, () => waitFor(`the Job of legit/${name}`, () => jobs.get({ namespace: 'legit', name: `restore-${name}` }).catch(() => undefined), 90_000, 250));
}

async function newScheduleConverges(c: ControllerProcess, name: string): Promise<void> {
  await k.schedules.create(scheduleManifest('legit', name) as never);
  await c.whileAlive(`the convergence of legit/${name}`, () => k.waitForReady('legit', name, undefined, 90_000));
}

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  k = api(cluster.admin);
  restores = new ResourceClient<RestoreObject>(cluster.admin, RESTORES);
  jobs = new ResourceClient<RestoreJobObject>(cluster.admin, JOBS);
  await k.createNamespace('tenant');
  await k.createNamespace('legit');
  await createAll(LEGIT, (i) => k.schedules.create(scheduleManifest('legit', `s-${i}`) as never));
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe(`a tenant's ${N} Restores with a ${BYTES / 1024} KiB annotation and ${N} Jobs of ${BYTES / 1024} KiB labelled as restore Jobs`, () => {
  it('arrive through the watches: the controller stays under the Deployment memory limit and serves the other tenants', async () => {
    const c = start();
    await c.whileAlive('the first convergence', () => waitFor('every schedule Ready', () => allReady(LEGIT), 30_000, 250));
    let t0 = Date.now();
    await c.whileAlive('the Restores', () => createAll(N, async (i) => (tenantUids[i] = (await restores.create(attackRestore(i))).metadata.uid ?? '')));
    console.info(`created ${N} Restores of ${BYTES / 1024} KiB in ${Date.now() - t0} ms`);
    const job = await legitRestoreGetsItsJob(c, 'first');
    const afterRestores = peakRssBytes(c.child.pid ?? 0);
    console.info(`peak RSS after the Restores arrived: ${mib(afterRestores)} MiB (limit ${mib(LIMIT)} MiB)`);
    t0 = Date.now();
    await c.whileAlive('the Jobs', () => createAll(N, (i) => jobs.create(attackJob(i) as never)));
    console.info(`created ${N} Jobs of ${BYTES / 1024} KiB in ${Date.now() - t0} ms`);
    // The Job's update reaches the controller on the Jobs watch after every Job created before it.
    await jobs.updateStatus({ ...job, status: { startTime: '2026-12-01T10:00:00Z', active: 1 } });
    await legitRestore(c, 'first', 'Running');
    await newScheduleConverges(c, 'after-attack');
    const peak = peakRssBytes(c.child.pid ?? 0);
    console.info(`peak RSS while the attack arrived: ${mib(peak)} MiB (limit ${mib(LIMIT)} MiB)`);
    expect(peak).toBeLessThan(LIMIT);
    expect(await c.stop()).toBe(0);
  }, 300_000);

  it('after a restart (the paged start-up LISTs of all of them): no abort, under the limit, the other tenants served', async () => {
    await controller?.stop();
    const c = start();
    await c.whileAlive('the start-up LISTs', () => c.waitForLog('workers to start', (r) => r['msg'] === 'starting workers' && r['controller'] === 'restore', 90_000));
    const running = await jobs.get({ namespace: 'legit', name: 'restore-first' });
    const message = formatTerminationMessage({ exitCode: 0, message: 'restored', file: 's-0-20261130T020007Z.tar.gz', size: 1, sha256: 'ab'.repeat(32) });
    await endRestoreJob(cluster.admin, running, { exitCode: 0, message });
    await legitRestore(c, 'first', 'Succeeded');
    await legitRestoreGetsItsJob(c, 'second');
    await newScheduleConverges(c, 'after-restart');
    expect(await allReady(LEGIT + 2)).toBe(true);
    const peak = peakRssBytes(c.child.pid ?? 0);
    console.info(`peak RSS after a restart: ${mib(peak)} MiB (limit ${mib(LIMIT)} MiB)`);
    expect(peak).toBeLessThan(LIMIT);
    expect(c.child.exitCode).toBeNull();
  }, 240_000);
});
