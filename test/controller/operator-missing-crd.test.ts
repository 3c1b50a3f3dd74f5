/**
 * One kind's missing CRD does not stop the other's controller (issue 41, LOW 9). The operator runs
 * in-process against the test API server with dist/ applied but for the Restore CRD, on a fake clock
 * stepped past the 120 s cache-sync timeout that used to end the process (the Restore informers' LIST
 * answered 404 until then). BackupSchedules converge meanwhile, `/readyz` names the Restore controller
 * and why, `/healthz` stays ok (kubelet restarts nothing); once the CRD is applied the Restore
 * controller starts within the discovery backoff and a Restore gets its Job.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Restore } from '../../imports/restore.ts';
import { parseCommandLine } from '../../src/controller/cli-options.ts';
import { startOperator, type RunningOperator } from '../../src/controller/operator.ts';
import { JOBS, RESTORES } from '../../src/controller/resources.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { createLogger } from '../../src/runtime/logger.ts';
import { startCluster, type Cluster } from '../e2e/harness.ts';
import { api, readyOf, scheduleManifest } from '../e2e/scenarios.ts';

const RESTORE_CRD = 'dist/02-customresourcedefinition-restores.kubelings.dev.yaml';
type RestoreObject = Restore & KubeObject;

let cluster: Cluster;
let operator: RunningOperator;
let exitCode: number | undefined;
const clock = new FakeClock(Date.now());
const lines: Record<string, unknown>[] = [];

/** Lets real I/O run (the test API server, the health server) between steps of the fake clock. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

/** Steps the fake clock by `ms` in 500 ms steps, letting I/O run after each. */
async function advance(ms: number): Promise<void> {
  for (let stepped = 0; stepped < ms; stepped += 500) {
    clock.step(500);
    await settle();
  }
}

/** Steps the fake clock until `probe` answers, at most `maxMs` of fake time. */
async function advanceUntil<T>(what: string, probe: () => Promise<T | undefined>, maxMs = 60_000): Promise<T> {
  for (let stepped = 0; stepped <= maxMs; stepped += 500) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await advance(500);
  }
  throw new Error(`no ${what} within ${maxMs} ms of fake time`);
}

async function probe(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${operator.healthUrl}${path}`);
  return { status: res.status, body: await res.text() };
}

beforeAll(async () => {
  cluster = await startCluster({ filter: (doc) => !(doc.kind === 'CustomResourceDefinition' && doc.metadata.name === 'restores.kubelings.dev') });
  await api(cluster.admin).createNamespace('team');
  const command = parseCommandLine(['--kubeconfig', cluster.controllerKubeconfig, '--health-probe-bind-address=127.0.0.1:0', '--metrics-bind-address=0']);
  if (command.kind !== 'run') throw new Error('not a run command');
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  operator = await startOperator(command.options, { config: KubeConfig.fromKubeconfigFile(cluster.controllerKubeconfig), inCluster: false, logger, clock });
  void operator.failed.then((code) => (exitCode = code));
}, 60_000);

afterAll(async () => {
  await operator?.shutdown();
  await cluster?.stop();
});

describe('the operator without the Restore CRD', () => {
  it('keeps reconciling BackupSchedules past the cache-sync timeout, and /readyz names the Restore controller', async () => {
    const k = api(cluster.admin);
    await k.schedules.create(scheduleManifest('team', 'nightly') as never);
    await advanceUntil('Ready nightly', async () => (readyOf(await k.schedules.get({ namespace: 'team', name: 'nightly' }))?.status === 'True' ? true : undefined));
    // Past controller-runtime's (and our) 120 s cache-sync timeout, and past /healthz's 5 minutes for stuck watches.
    await advance(330_000);
    expect(exitCode).toBeUndefined();
    await k.schedules.create(scheduleManifest('team', 'later') as never);
    await advanceUntil('Ready later', async () => (readyOf(await k.schedules.get({ namespace: 'team', name: 'later' }))?.status === 'True' ? true : undefined));

    const ready = await probe('/readyz?verbose');
    expect(ready.status).toBe(500);
    expect(ready.body).toContain('[-]restore-controller failed: the API server does not serve restores.kubelings.dev/v1 (discovery of /apis/kubelings.dev/v1 does not list restores); BackupSchedules are reconciled meanwhile');
    expect(await probe('/healthz')).toEqual({ status: 200, body: 'ok' });
    const told = lines.filter((l) => l['level'] === 'error' && String(l['msg']).includes('restores.kubelings.dev/v1'));
    expect(told.map((l) => l['msg'])).toEqual(['the API server does not serve restores.kubelings.dev/v1 (discovery of /apis/kubelings.dev/v1 does not list restores): the Restore controller waits for it (apply the Restore CRD: dist/02-customresourcedefinition-restores.kubelings.dev.yaml); BackupSchedules are reconciled meanwhile']);
    // Discovery only: no LIST of Restores while they are not served.
    expect(cluster.server.requestLog.entries().filter((e) => e.resource === 'restores')).toEqual([]);
  }, 120_000);

  it('starts the Restore controller once the CRD is applied: a Restore gets its Job, /readyz is ok', async () => {
    await cluster.admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: parse(readFileSync(RESTORE_CRD, 'utf8')) as object });
    const restores = new ResourceClient<RestoreObject>(cluster.admin, RESTORES);
    await advanceUntil('the Restore CRD served', () => restores.list({ namespace: 'team' }));
    await restores.create({ apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name: 'db', namespace: 'team' }, spec: { from: { backupScheduleName: 'nightly' }, backup: 'latest', target: { persistentVolumeClaim: { claimName: 'data' } } } } as RestoreObject);
    // Within the discovery backoff (at most 30 s), then the caches sync and the workers start.
    const jobs = new ResourceClient<KubeObject>(cluster.admin, JOBS);
    await advanceUntil('the restore Job', () => jobs.get({ namespace: 'team', name: 'restore-db' }));
    expect(await probe('/readyz')).toEqual({ status: 200, body: 'ok' });
    expect(lines.some((l) => l['msg'] === 'the API server serves restores.kubelings.dev/v1 now')).toBe(true);
    expect(exitCode).toBeUndefined();
  }, 120_000);
});
