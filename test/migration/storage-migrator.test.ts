/**
 * migrateStorage against the test API server: objects stored in v1alpha1 are rewritten in v1 (seen in
 * the server's storage, as `etcdctl get` would show them), `status.storedVersions` becomes [v1] only
 * when every object made it, and a stopped, failed or repeated run is safe.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { pino } from 'pino';
import { MigrationRefusedError, migrateStorage, readMigrationTarget, storageMigrationRules, type StorageMigrationOptions } from '../../src/migration/index.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { setStoredVersions } from '../../src/migration/crd-stored-versions.ts';
import { resolveRetryPolicy } from '../../src/migration/retry-policy.ts';
import { realClock } from '../../src/runtime/clock.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/index.ts';
import { startConversionWebhook } from '../conformance/harness/conversion-webhook.ts';
import { twoVersionCrd, seedGadgets } from './two-version-crd.ts';

let server: TestApiServer;
let client: KubeClient;

beforeAll(async () => {
  server = await startTestApiServer();
  client = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()) });
});

afterAll(async () => {
  client.close();
  await server.stop();
});

const newGroup = (): string => `m${randomBytes(4).toString('hex')}.migration.example.com`;

/** The stored apiVersion of every Gadget of `group`, counted. */
function storedVersions(group: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const obj of server.listStored(group, 'gadgets')) counts[obj.apiVersion ?? ''] = (counts[obj.apiVersion ?? ''] ?? 0) + 1;
  return counts;
}

/** Fast retries, so failure paths take milliseconds. */
const quick = (crdName: string, extra: Partial<StorageMigrationOptions> = {}): StorageMigrationOptions => ({
  client, crdName, pageSize: 10, concurrency: 8, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 }, ...extra,
});

describe('migrateStorage', () => {
  it('rewrites every object in the storage version, keeps their content, then sets storedVersions to [v1]', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 95 });
    expect(storedVersions(group)).toEqual({ [`${group}/v1alpha1`]: 95 });
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
    const before = await seeded.v1.list();

    const result = await migrateStorage(quick(seeded.crdName));

    expect(result).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { done: 95, rewritten: 95, current: 0, gone: 0, failed: 0, known: 95 } });
    expect(storedVersions(group)).toEqual({ [`${group}/v1`]: 95 });
    expect(await seeded.storedVersions()).toEqual(['v1']);
    const after = await seeded.v1.list();
    const strip = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined } });
    expect(after.items.map(strip)).toEqual(before.items.map(strip));
    expect(after.items.map((o) => o.metadata.generation)).toEqual(before.items.map((o) => o.metadata.generation));
  });

  it('migrates through a conversion webhook: the objects are stored as the webhook converts them', async () => {
    const webhook = await startConversionWebhook();
    try {
      const group = newGroup();
      const seeded = await seedGadgets(client, { group, objects: 30, conversion: { strategy: 'Webhook', url: webhook.url, caBundle: webhook.caBundle } });
      webhook.mode = 'fail';
      // A webhook that refuses to convert fails the LIST: nothing is rewritten, nothing changes.
      await expect(migrateStorage(quick(seeded.crdName))).rejects.toThrow(`conversion webhook for ${group}/v1alpha1, Kind=Gadget failed`);
      expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
      webhook.mode = 'convert';
      expect(await migrateStorage(quick(seeded.crdName))).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { done: 30, rewritten: 30 } });
      const stored = server.listStored(group, 'gadgets');
      expect(stored.map((o) => [o.apiVersion, o['spec']])).toEqual(stored.map((o) => [`${group}/v1`, { paint: { color: 'red' }, size: Number(o.metadata.labels?.['index']) }]));
    } finally {
      await webhook.stop();
    }
  });

  it('does nothing on a second run, and with force rewrites nothing the server has to write', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 30 });
    expect((await migrateStorage(quick(seeded.crdName))).outcome).toBe('migrated');
    server.requestLog.clear();

    expect(await migrateStorage(quick(seeded.crdName))).toMatchObject({ outcome: 'up-to-date', target: { storageVersion: 'v1', storedVersions: ['v1'] } });
    expect(server.requestLog.entries().filter((e) => e.verb !== 'get')).toEqual([]);

    const forced = await migrateStorage(quick(seeded.crdName, { force: true }));
    expect(forced).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { done: 30, rewritten: 0, current: 30 } });
  });

  it('stops when aborted midway with storedVersions untouched, and a second run finishes the job', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 80 });
    const abort = new AbortController();
    let puts = 0;
    // The kube client's write hook sees every PUT before it is sent: stop after the 25th.
    const counting = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()), beforeWrite: () => void (++puts === 25 && abort.abort(new Error('SIGTERM'))) });
    try {
      const stopped = await migrateStorage(quick(seeded.crdName, { client: counting, signal: abort.signal }));
      expect(stopped.outcome).toBe('aborted');
    } finally {
      counting.close();
    }
    const partial = storedVersions(group);
    expect(partial[`${group}/v1`]).toBeGreaterThanOrEqual(15);
    expect(partial[`${group}/v1alpha1`]).toBeGreaterThanOrEqual(40);
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);

    const resumed = await migrateStorage(quick(seeded.crdName));
    expect(resumed).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { done: 80 } });
    // PUTs the client gave up on may still have reached the server after the snapshot above.
    if (resumed.outcome === 'migrated') {
      expect(resumed.counts.current).toBeGreaterThanOrEqual(partial[`${group}/v1`]!);
      expect(resumed.counts.rewritten + resumed.counts.current).toBe(80);
      expect(resumed.counts.rewritten).toBeGreaterThan(0);
    }
    expect(storedVersions(group)).toEqual({ [`${group}/v1`]: 80 });
  });

  it('leaves storedVersions alone and names the object when a write keeps failing; transient errors are retried', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 40 });
    const broken = server.faults.add({ verb: 'update', resource: 'gadgets', name: 'g-7', code: 500, message: 'etcd is down' });
    const flaky = server.faults.add({ verb: 'update', resource: 'gadgets', name: 'g-8', code: 503, count: 2, retryAfterSeconds: 0 });
    try {
      const result = await migrateStorage(quick(seeded.crdName));
      expect(result.outcome).toBe('failed');
      if (result.outcome !== 'failed') return;
      expect(result.failures).toEqual([{ namespace: 'gadgets-1', name: 'g-7', code: 500, message: 'Internal error occurred: etcd is down', attempts: 3 }]);
      expect(result.counts).toMatchObject({ done: 40, rewritten: 39, failed: 1 });
    } finally {
      server.faults.remove(broken);
      server.faults.remove(flaky);
    }
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
    expect(server.listStored(group, 'gadgets').find((o) => o.metadata.name === 'g-7')?.apiVersion).toBe(`${group}/v1alpha1`);
    expect(server.listStored(group, 'gadgets').find((o) => o.metadata.name === 'g-8')?.apiVersion).toBe(`${group}/v1`);

    expect(await migrateStorage(quick(seeded.crdName))).toMatchObject({ outcome: 'migrated', counts: { rewritten: 1, current: 39 } });
    expect(storedVersions(group)).toEqual({ [`${group}/v1`]: 40 });
  });

  it('reads an object again after a 409 and writes the newest copy: a conflict alone proves nothing was re-encoded', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 20 });
    // Conflicts the server answers without writing (as from a write that lost a race): the objects
    // stay in v1alpha1 unless the migrator writes them itself.
    const conflicts = server.faults.add({ verb: 'update', resource: 'gadgets', code: 409, count: 12 });
    server.requestLog.clear();
    try {
      expect(await migrateStorage(quick(seeded.crdName))).toMatchObject({ outcome: 'migrated', counts: { done: 20, rewritten: 20, failed: 0 } });
    } finally {
      server.faults.remove(conflicts);
    }
    expect(storedVersions(group)).toEqual({ [`${group}/v1`]: 20 });
    expect(server.requestLog.entries().filter((e) => e.verb === 'get' && e.resource === 'gadgets')).toHaveLength(12);
  });

  it('skips an object deleted after it was listed', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 12 });
    let deletion: Promise<unknown> | undefined;
    const deleting = new KubeClient({
      config: KubeConfig.fromKubeconfig(server.kubeconfig()),
      // One page holds every object; at the first PUT, g-5 (the 11th in LIST order, namespace then
      // name) is deleted, long before its own PUT goes out one at a time.
      beforeWrite: () => void (deletion ??= seeded.v1.delete({ namespace: 'gadgets-2', name: 'g-5' })),
    });
    try {
      const result = await migrateStorage(quick(seeded.crdName, { client: deleting, concurrency: 1, pageSize: 50 }));
      expect(result).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { done: 12, rewritten: 11, gone: 1 } });
    } finally {
      deleting.close();
    }
    await deletion;
    expect(storedVersions(group)).toEqual({ [`${group}/v1`]: 11 });
  });

  it('starts the LIST over when its continue token expires (410), and still rewrites everything', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 60 });
    let puts = 0;
    const compacting = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()), beforeWrite: () => void (++puts === 20 && server.compactHistory()) });
    try {
      const result = await migrateStorage(quick(seeded.crdName, { client: compacting, concurrency: 2 }));
      expect(result).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'] });
      if (result.outcome === 'migrated') expect(result.counts.relists).toBe(1);
    } finally {
      compacting.close();
    }
    expect(storedVersions(group)).toEqual({ [`${group}/v1`]: 60 });
  });

  it('retries the storedVersions update on 409 and logs progress with done, known and the rate', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 25 });
    const conflicts = server.faults.add({ verb: 'update', resource: 'customresourcedefinitions', subresource: 'status', code: 409, count: 2 });
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    try {
      expect(await migrateStorage(quick(seeded.crdName, { logger, progressIntervalMs: 0 }))).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'] });
    } finally {
      server.faults.remove(conflicts);
    }
    expect(await seeded.storedVersions()).toEqual(['v1']);
    const progress = lines.filter((l) => l['msg'] === 'progress');
    expect(progress).toHaveLength(25);
    expect(progress.at(-1)).toMatchObject({ crd: seeded.crdName, done: 25, known: 25, rewritten: 25 });
    expect(progress.every((l) => typeof l['objectsPerSecond'] === 'number')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ msg: 'migrated: every object is stored in v1', storedVersions: ['v1'], done: 25 });
  });

  it('leaves storedVersions alone when the CRD changed its storage version during the run', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 3 });
    const stale = { ...readMigrationTarget(await seeded.crds.get({ name: seeded.crdName })), storageVersion: 'v1alpha1' };
    await expect(setStoredVersions({ crds: seeded.crds, target: stale, clock: realClock, retry: resolveRetryPolicy() })).rejects.toThrow(
      new MigrationRefusedError(`CRD ${seeded.crdName}: the storage version changed from v1alpha1 to v1 during the migration; status.storedVersions left as [v1alpha1, v1]: run the migration again`),
    );
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
  });

  it('needs no more than storageMigrationRules, and fails without the storedVersions write, which it names', async () => {
    const group = newGroup();
    const seeded = await seedGadgets(client, { group, objects: 20 });
    const rbac = (plural: string) => new ResourceClient<KubeObject>(client, { group: 'rbac.authorization.k8s.io', version: 'v1', plural, kind: plural === 'clusterroles' ? 'ClusterRole' : 'ClusterRoleBinding', namespaced: false });
    const user = `migrator-${group.slice(0, 9)}`;
    const rules = storageMigrationRules({ crdName: seeded.crdName, group, plural: 'gadgets' });
    const grant = async (name: string, granted: object[]): Promise<void> => {
      await rbac('clusterroles').create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: granted });
      await rbac('clusterrolebindings').create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'User', name: user }] });
    };
    const asUser = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig({ token: server.userToken(user) })) });
    try {
      // Everything but the status write: the objects are rewritten, the last step is refused.
      await grant(`${user}-objects`, rules.slice(0, 2));
      await expect(migrateStorage(quick(seeded.crdName, { client: asUser }))).rejects.toThrow(
        `CRD ${seeded.crdName}: updating status.storedVersions to [v1] failed: customresourcedefinitions.apiextensions.k8s.io "${seeded.crdName}" is forbidden: User "${user}" cannot update resource "customresourcedefinitions/status" in API group "apiextensions.k8s.io" at the cluster scope`,
      );
      expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
      await grant(`${user}-status`, rules.slice(2));
      expect(await migrateStorage(quick(seeded.crdName, { client: asUser }))).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { current: 20 } });
    } finally {
      asUser.close();
    }
  });

  it.each([
    ['a CRD that does not exist', async () => 'gadgets.nowhere.example.com', /^CRD gadgets\.nowhere\.example\.com: not found/],
    ['a storage version that is not served', async () => {
      const group = newGroup();
      await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: twoVersionCrd(group, 'v1', false) });
      return `gadgets.${group}`;
    }, /the storage version v1 is not served/],
  ])('refuses %s', async (_, crd, message) => {
    await expect(migrateStorage(quick(await crd()))).rejects.toSatisfy((err) => err instanceof MigrationRefusedError && message.test(err.message));
  });
});
