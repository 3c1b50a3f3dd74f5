/**
 * The controller e2e's core against a REAL kube-apiserver and kube-controller-manager (the plane of
 * docs/real-cluster.md): dist/ applied as is, the controller bundle as its own process authenticated
 * as dist/'s ServiceAccount (real RBAC), two replicas on dist/'s Lease. It creates a child and reports
 * Ready, heals and recreates the child, leaves the child to the real garbage collector, hands
 * leadership over on a graceful stop, and writes nothing while idle, also right after the handover.
 *
 * Runs only with `E2E_KUBECONFIG` (an admin kubeconfig; `npm run test:real` sets it from `REALK8S`):
 * it installs dist/'s cluster-wide objects and leaves them installed. Without it the file is skipped,
 * so `npm test` never touches a cluster. Writes are counted by watching what they would change (the
 * test server's request log does not exist here): an idle controller must cause no watch event on
 * BackupSchedules, CronJobs or Events.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, dig, must, rand, type Doc, type WatchStream } from '../conformance/harness.ts';
import { endpointFromKubeconfig } from '../conformance/harness/kubeconfig.ts';
import { applyDocuments, buildBundle, clientFromKubeconfig, ControllerProcess, deploymentArgs, distDocuments, LEASE, waitFor } from '../e2e/harness.ts';
import { readyOf, scheduleManifest } from '../e2e/scenarios.ts';
import { writeControllerKubeconfig } from './controller-kubeconfig.ts';
import type { BackupScheduleObject } from '../../src/controller/resources.ts';

const kubeconfigPath = process.env['E2E_KUBECONFIG'];
const suite = kubeconfigPath ? describe : describe.skip;
const title = kubeconfigPath ? 'controller core on a real cluster' : 'controller core on a real cluster (needs E2E_KUBECONFIG: npm run test:real)';

/** The real garbage collector learns a CRD installed moments ago on its 30 s discovery resync, then retries. */
const GC_TIMEOUT_MS = 150_000;
const IDLE_MS = 10_000;

let dir: string;
let api: ApiClient;
let bundle: string;
let controllerKubeconfig: string;
let ns: string;
const replicas: ControllerProcess[] = [];

const schedules = (name?: string): string => `/apis/kubelings.dev/v1/namespaces/${ns}/backupschedules${name ? `/${name}` : ''}`;
const cronJobs = (name?: string): string => `/apis/batch/v1/namespaces/${ns}/cronjobs${name ? `/${name}` : ''}`;
const events = (): string => `/api/v1/namespaces/${ns}/events`;

/** Starts a replica as dist/'s Deployment runs it, on dist/'s Lease, named `id`. */
function startReplica(id: string): ControllerProcess {
  const replica = ControllerProcess.start(bundle, ['--kubeconfig', controllerKubeconfig, ...deploymentArgs(), `--leader-election-id=${id}`]);
  replicas.push(replica);
  return replica;
}

const leaderLog = (r: Record<string, unknown>): boolean => r['msg'] === 'became leader; starting workers';

async function waitForReady(name: string, timeoutMs = 30_000): Promise<BackupScheduleObject> {
  return waitFor(`BackupSchedule ${ns}/${name} Ready`, async () => {
    const res = await api.get<BackupScheduleObject>(schedules(name));
    return res.status === 200 && readyOf(res.body)?.status === 'True' && res.body.status?.observedGeneration === res.body.metadata.generation ? res.body : undefined;
  }, timeoutMs, 200);
}

async function child(name: string, accept: (c: Doc) => boolean = () => true, timeoutMs = 30_000): Promise<Doc> {
  return waitFor(`CronJob ${ns}/${name}`, async () => {
    const res = await api.get(cronJobs(name));
    return res.status === 200 && accept(res.body) ? res.body : undefined;
  }, timeoutMs, 200);
}

/** Watches `path` from its current resourceVersion; the caller drains it after the idle window. */
async function watchFromNow(path: string): Promise<WatchStream> {
  const list = must(await api.get(path), 200);
  return api.watch(path, { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: 'true' });
}

/** Asserts that nothing changes in the test namespace's BackupSchedules, CronJobs and Events for {@link IDLE_MS}. */
async function expectIdle(): Promise<void> {
  const streams = await Promise.all([schedules(), cronJobs(), events()].map(watchFromNow));
  try {
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const seen: string[] = [];
    for (const s of streams) {
      for (;;) {
        const ev = await s.next(1).catch(() => undefined);
        if (!ev) break;
        if (ev.type !== 'BOOKMARK') seen.push(`${ev.type} ${ev.object.kind ?? ''} ${ev.object.metadata.name ?? ''}`);
      }
    }
    expect(seen).toEqual([]);
  } finally {
    for (const s of streams) s.close();
  }
}

suite(title, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bks-real-'));
    const adminText = readFileSync(kubeconfigPath!, 'utf8');
    api = new ApiClient(endpointFromKubeconfig(kubeconfigPath!));
    const admin = clientFromKubeconfig(adminText);
    try {
      bundle = await buildBundle();
      // dist/ as kubectl create would apply it; objects of an earlier run are kept (AlreadyExists).
      await applyDocuments(admin, distDocuments());
    } finally {
      admin.close();
    }
    await waitFor('the BackupSchedule CRD to be served', async () => (await api.get('/apis/kubelings.dev/v1/backupschedules?limit=1')).status === 200, 30_000, 200);
    controllerKubeconfig = await writeControllerKubeconfig(api, adminText, dir);
    ns = `real-e2e-${rand()}`;
    must(await api.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }), 201);
    await startReplica('replica-a').waitForLog('replica A to lead', leaderLog, 60_000);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    if (ns) await api.delete(`/api/v1/namespaces/${ns}`);
    api?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates the child CronJob, owned by the BackupSchedule, and reports Ready', async () => {
    must(await api.post(schedules(), scheduleManifest(ns, 'nightly')), 201);
    const s = await waitForReady('nightly');
    const c = await child(s.status?.cronJobName ?? 'nightly');
    expect(c.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'BackupSchedule', name: 'nightly', uid: s.metadata.uid, controller: true, blockOwnerDeletion: true })]);
    expect(dig(c, 'spec.schedule')).toBe('0 2 * * *');
  });

  it('heals a changed child and recreates a deleted one', async () => {
    must(await api.post(schedules(), scheduleManifest(ns, 'heal')), 201);
    await waitForReady('heal');
    const original = await child('heal');
    must(await api.patch(cronJobs('heal'), { metadata: { labels: { team: 'sre' } }, spec: { schedule: '* * * * *' } }), 200);
    const healed = await child('heal', (c) => dig(c, 'spec.schedule') === '0 2 * * *');
    expect(healed.metadata.labels?.['team']).toBe('sre');
    must(await api.delete(cronJobs('heal')), 200);
    const recreated = await child('heal', (c) => c.metadata.uid !== original.metadata.uid);
    expect(dig(recreated, 'spec.schedule')).toBe('0 2 * * *');
  });

  it('leaves the child to the real garbage collector when the BackupSchedule is deleted', async () => {
    must(await api.post(schedules(), scheduleManifest(ns, 'gc')), 201);
    await waitForReady('gc');
    await child('gc');
    must(await api.delete(schedules('gc')), 200);
    await waitFor('the child to be garbage-collected', async () => (await api.get(cronJobs('gc'))).status === 404, GC_TIMEOUT_MS, 1_000);
  }, GC_TIMEOUT_MS + 10_000);

  it('writes nothing while idle once 20 schedules are Ready', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `idle-${i}`);
    await Promise.all(names.map(async (n) => must(await api.post(schedules(), scheduleManifest(ns, n)), 201)));
    for (const n of names) await waitForReady(n);
    // Let the Events of the creations land (client-go style, one at a time) before the window opens.
    await new Promise((r) => setTimeout(r, 3_000));
    await expectIdle();
  }, 90_000);

  it('hands leadership over on a graceful stop; the new leader writes nothing for converged schedules and reconciles new ones', async () => {
    const [a] = replicas;
    const b = startReplica('replica-b');
    await b.waitForLog('replica B to see replica A lead', (r) => r['msg'] === 'new leader observed' && r['leader'] === 'replica-a', 60_000);
    expect(await a!.stop()).toBe(0);
    await b.waitForLog('replica B to lead', leaderLog, 30_000);
    const lease = must(await api.get(`/apis/coordination.k8s.io/v1/namespaces/${LEASE.namespace}/leases/${LEASE.name}`), 200);
    expect(dig(lease, 'spec.holderIdentity')).toBe('replica-b');
    await expectIdle();
    must(await api.post(schedules(), scheduleManifest(ns, 'after-handover')), 201);
    await waitForReady('after-handover');
  }, 120_000);
});

