/**
 * Two replicas with --leader-elect on the Lease from dist/: only the leader writes; a graceful stop
 * releases the Lease and the other replica takes over at once. Replica B runs as a second
 * ServiceAccount bound to the same roles, so the request log can tell the replicas apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { buildBundle, clientFor, ControllerProcess, CONTROLLER_SA, CONTROLLER_USER, LEASE, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, scheduleManifest } from './scenarios.ts';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';

const B_SA = 'backupschedule-operator-b';
const B_USER = `system:serviceaccount:${CONTROLLER_SA.namespace}:${B_SA}`;

let cluster: Cluster;
let bundle: string;
let a: ControllerProcess;
let b: ControllerProcess;

const writesBy = (user: string) =>
  cluster.server.requestLog.entries().filter((e) => e.user === user && !['get', 'list', 'watch'].includes(e.verb));

async function leaseHolder(): Promise<string | undefined> {
  const lease = await clientFor<KubeObject & { spec?: { holderIdentity?: string } }>(cluster.admin, 'Lease').get(LEASE);
  return lease.spec?.holderIdentity;
}

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  const admin = cluster.admin;
  await clientFor(admin, 'ServiceAccount').create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: B_SA, namespace: CONTROLLER_SA.namespace } });
  const subject = [{ kind: 'ServiceAccount', name: B_SA, namespace: CONTROLLER_SA.namespace }];
  await clientFor(admin, 'ClusterRoleBinding').create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'replica-b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'backupschedule-operator' }, subjects: subject });
  await clientFor(admin, 'RoleBinding').create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'replica-b', namespace: LEASE.namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'backupschedule-operator-leader-election' }, subjects: subject });
  const bKubeconfig = join(cluster.dir, 'b.kubeconfig');
  writeFileSync(bKubeconfig, cluster.server.kubeconfig({ token: await cluster.server.serviceAccountToken(CONTROLLER_SA.namespace, B_SA), user: B_SA }));

  const flags = ['--leader-elect', `--lease-name=${LEASE.name}`, `--lease-namespace=${LEASE.namespace}`];
  a = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--leader-election-id=replica-a', ...flags]);
  await a.waitForLog('replica A to lead', (r) => r['msg'] === 'became leader; starting workers');
  b = ControllerProcess.start(bundle, ['--kubeconfig', bKubeconfig, '--leader-election-id=replica-b', ...flags]);
  await b.waitForLog('replica B to see the leader', (r) => r['msg'] === 'new leader observed' && r['leader'] === 'replica-a');
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await cluster?.stop();
});

describe('leader election with two replicas', () => {
  it('lets only the leader write', async () => {
    const k = api(cluster.admin);
    await k.createNamespace('le');
    for (const n of ['one', 'two', 'three']) await k.schedules.create(scheduleManifest('le', n) as never);
    for (const n of ['one', 'two', 'three']) await k.waitForReady('le', n);
    expect(await leaseHolder()).toBe('replica-a');
    expect(writesBy(CONTROLLER_USER).filter((e) => e.resource === 'cronjobs')).toHaveLength(3);
    expect(writesBy(B_USER)).toEqual([]);
    expect(b.records().some((r) => r['msg'] === 'became leader; starting workers')).toBe(false);
  });

  it('hands over at once when the leader stops gracefully (the Lease is released)', async () => {
    expect(await a.stop()).toBe(0);
    await b.waitForLog('replica B to lead', (r) => r['msg'] === 'became leader; starting workers', 10_000);
    expect(await leaseHolder()).toBe('replica-b');
    const k = api(cluster.admin);
    await k.schedules.create(scheduleManifest('le', 'four') as never);
    await k.waitForReady('le', 'four');
    expect(writesBy(B_USER).filter((e) => e.resource === 'cronjobs')).toEqual([expect.objectContaining({ verb: 'create', namespace: 'le', code: 201 })]);
  });

  it('pauses after losing the Lease to another holder, writes nothing meanwhile, and leads again once it expires', async () => {
    // Someone else takes the Lease (as a replica on the far side of a partition would after expiry):
    // B's renewals fail and its gate closes at the renew deadline; it pauses and campaigns again.
    const leases = clientFor<KubeObject & { spec: Record<string, unknown> }>(cluster.admin, 'Lease');
    const lease = await leases.get(LEASE);
    const now = new Date().toISOString().replace('Z', '000Z');
    lease.spec = { ...lease.spec, holderIdentity: 'intruder', renewTime: now, acquireTime: now, leaseDurationSeconds: 4 };
    await leases.update(lease);
    await b.waitForLog('replica B to pause', (r) => r['msg'] === 'leader election lost; pausing workers and campaigning again', 15_000);
    const writesBefore = writesBy(B_USER).filter((e) => e.resource !== 'leases').length;
    const k = api(cluster.admin);
    await k.schedules.create(scheduleManifest('le', 'five') as never);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(writesBy(B_USER).filter((e) => e.resource !== 'leases')).toHaveLength(writesBefore);

    await waitFor('replica B to lead again', () => b.records().filter((r) => r['msg'] === 'became leader; starting workers').length === 2 || undefined, 15_000, 100);
    await k.waitForReady('le', 'five');
    expect(await leaseHolder()).toBe('replica-b');
    expect(b.child.exitCode).toBeNull();
  }, 30_000);
});
