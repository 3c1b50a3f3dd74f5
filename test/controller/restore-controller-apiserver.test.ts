/**
 * The Restore controller on a Manager against the test API server, the test playing the Job controller
 * and the kubelet (test/controller/restore-job-run.ts): a completed Job's Pod termination message,
 * written by the runner's own formatter, becomes status.backup after one LIST of Pods by the Job's uid
 * (never a watch; a newer Pod of the Job without that label is not read); a failed Job's runner message
 * goes into the Failed condition; a hostile message ends the Restore without status.backup, the
 * problem in the condition and a Warning Event.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import type { Restore } from '../../imports/restore.ts';
import { formatTerminationMessage } from '../../src/backup/termination-message.ts';
import type { EventRecorder } from '../../src/controller/event-recorder.ts';
import { JOBS, RESTORES } from '../../src/controller/resources.ts';
import { addRestoreController } from '../../src/controller/restore/controller.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { Manager } from '../../src/runtime/manager.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/index.ts';
import { endRestoreJob, type RestoreJobObject } from './restore-job-run.ts';

const NS = 'prod';
const USER = 'restore-controller';
const SHA = 'c0ffee00'.repeat(8);
const WAIT = { timeout: 15_000, interval: 25 };
type RestoreObject = Restore & KubeObject;

let server: TestApiServer;
let admin: KubeClient;
let manager: Manager;
let restores: ResourceClient<RestoreObject>;
let jobs: ResourceClient<RestoreJobObject>;
const events: string[] = [];

beforeAll(async () => {
  server = await startTestApiServer();
  admin = new KubeClient({ config: new KubeConfig({ server: server.url, auth: { type: 'token', token: server.adminToken } }) });
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  for (const file of ['01-customresourcedefinition-backupschedules.kubelings.dev.yaml', '02-customresourcedefinition-restores.kubelings.dev.yaml']) {
    const crd = parse(readFileSync(`dist/${file}`, 'utf8')) as { spec: Record<string, unknown> };
    // No conversion webhook runs here; only v1 is read.
    await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: { ...crd, spec: { ...crd.spec, conversion: { strategy: 'None' } } } });
  }
  restores = new ResourceClient<RestoreObject>(admin, RESTORES);
  jobs = new ResourceClient<RestoreJobObject>(admin, JOBS);
  await vi.waitFor(() => restores.list({ namespace: NS }), WAIT);
  manager = new Manager({ config: new KubeConfig({ server: server.url, auth: { type: 'token', token: server.userToken(USER, ['system:masters']) } }), userAgent: 'restore-test', identity: 'test', pageSize: 50, syncPeriodMs: 0, logger: silentLogger });
  const recorder: EventRecorder = { event: (object, type, reason, message) => void events.push(`${object.metadata.name} ${type} ${reason}: ${message}`) };
  addRestoreController(manager, { namespaces: [], syncPeriodMs: 0, concurrency: 2, backupImage: 'registry.example.com/runner:1', allowedBackupImages: [], allowedBackupEndpoints: [] }, recorder);
  await manager.start();
}, 60_000);

afterAll(async () => {
  await manager?.shutdown(5_000);
  admin?.close();
  await server?.stop();
});

function restore(name: string, backup = 'latest'): RestoreObject {
  return { apiVersion: 'kubelings.dev/v1', kind: 'Restore', metadata: { name, namespace: NS }, spec: { from: { persistentVolumeClaim: { claimName: 'backups', path: 'db' } }, backup, target: { persistentVolumeClaim: { claimName: `${name}-data` } } } } as RestoreObject;
}

async function jobOf(name: string): Promise<RestoreJobObject> {
  return vi.waitFor(() => jobs.get({ namespace: NS, name: `restore-${name}` }), WAIT);
}

async function ended(name: string): Promise<RestoreObject> {
  return vi.waitFor(async () => {
    const r = await restores.get({ namespace: NS, name });
    if (r.status?.phase !== 'Succeeded' && r.status?.phase !== 'Failed') throw new Error(`phase ${r.status?.phase}`);
    return r;
  }, WAIT);
}

const podRequests = (verb: string): number => server.requestLog.entries().filter((e) => e.user === USER && e.resource === 'pods' && e.verb === verb).length;

describe('the Restore controller reading the runner report from the Pod', () => {
  it('fills status.backup from the completed Job\'s Pod, with one LIST by the Job uid and no watch', async () => {
    const lists = podRequests('list');
    await restores.create(restore('db'));
    const job = await jobOf('db');
    expect(job.spec.template.metadata?.labels?.['controller-uid']).toBe(job.metadata.uid);
    const file = 'db-20261130T020007Z.tar.gz';
    await endRestoreJob(admin, job, { exitCode: 0, keepJobRunning: true, message: formatTerminationMessage({ exitCode: 0, message: `restored ${file} into /backup/target: 3 files, 12 bytes`, file, time: '2026-11-30T02:00:07.000Z', size: 4096, sha256: SHA }) });
    // A newer Pod the Job controls but without its uid label (a Pod someone else made): the selector keeps it out.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await endRestoreJob(admin, job, { exitCode: 0, suffix: 'decoy', labels: { 'job-name': 'restore-db' }, at: '2026-12-01T11:00:00Z', message: formatTerminationMessage({ exitCode: 0, message: 'decoy', file, size: 1, sha256: 'f'.repeat(64) }) });
    const done = await ended('db');
    expect(done.status).toMatchObject({
      phase: 'Succeeded',
      jobName: 'restore-db',
      backup: { name: file, time: '2026-11-30T02:00:07Z', size: 4096, sha256: SHA },
      conditions: [{ type: 'Complete', status: 'True', reason: 'JobComplete', message: `restore Job restore-db completed: restored ${file} into /backup/target: 3 files, 12 bytes` }],
    });
    expect(events).toContain(`db Normal Restored: restore Job restore-db completed: restored ${file} into /backup/target: 3 files, 12 bytes`);
    // Later passes (the Restore's own status update; a change of its Job, which requeues it) read no Pod again.
    await jobs.patch({ namespace: NS, name: 'restore-db' }, { metadata: { labels: { touched: 'yes' } } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(podRequests('list') - lists).toBe(1);
    expect(podRequests('watch')).toBe(0);
  });

  it('puts a failed run\'s runner message into the Failed condition', async () => {
    await restores.create(restore('refused', 'db-20261130T020007Z.tar.gz'));
    const job = await jobOf('refused');
    await endRestoreJob(admin, job, { exitCode: 5, message: formatTerminationMessage({ exitCode: 5, message: 'backups/db/db-20261130T020007Z.tar.gz.sha256 does not match the archive' }) });
    const done = await ended('refused');
    expect(done.status?.phase).toBe('Failed');
    expect(done.status?.backup).toBeUndefined();
    expect(done.status?.conditions?.[0]?.message).toBe('restore Job restore-refused failed (BackoffLimitExceeded): Job has reached the specified backoff limit; the runner exited 5: backups/db/db-20261130T020007Z.tar.gz.sha256 does not match the archive; kubectl logs job/restore-refused has the details (exit 5: refused before writing, 1: failed while writing)');
  });

  it.each([
    ['bad-wrong', JSON.stringify({ exitCode: 0, file: 'db-20261130T020007Z.db', size: '4096', sha256: SHA, message: 'ok' }), 'field "size": must be a non-negative integer of bytes, got "4096"'],
    ['bad-hostile', JSON.stringify({ exitCode: 0, file: '../../etc/shadow-20261130T020007Z.db', size: 1, sha256: SHA, message: 'ok' }), 'field "file": must be a backup name'],
    ['bad-nothing', undefined, 'empty: the runner wrote none'],
  ])('ends the Restore %s without status.backup, naming the problem', async (name, message, problem) => {
    await restores.create(restore(name));
    await endRestoreJob(admin, await jobOf(name), { exitCode: 0, ...(message === undefined ? {} : { message }) });
    const done = await ended(name);
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.backup).toBeUndefined();
    expect(done.status?.conditions?.[0]?.message).toContain(`completed; status.backup is unknown: the termination message of Pod restore-${name}-x7k2p is invalid: ${problem}`);
    expect(events.some((e) => e.startsWith(`${name} Warning NoRunnerReport: `) && e.includes(problem))).toBe(true);
  });
});
