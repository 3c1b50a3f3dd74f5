import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';
import { loadReference } from '../../fixtures/k8s-reference.ts';
import { FakeClock } from '../../../src/runtime/clock.ts';
import { GarbageCollector } from '../garbage-collector.ts';
import { RegistryStore } from '../registry-store.ts';
import { ResourceRegistry } from '../resource-registry.ts';
import { Storage } from '../storage.ts';

const reference = (file: string): any => loadReference(file);
const until = async <T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
};

let server: TestApiServer;
let api: ReturnType<typeof client>;
const W = '/apis/fixtures.example.com/v1/namespaces/kubelings/widgets';
const CM = '/api/v1/namespaces/kubelings/configmaps';

beforeAll(async () => {
  server = await startTestApiServer();
  api = client(server);
  await api('POST', '/api/v1/namespaces', { metadata: { name: 'kubelings' } });
  expect((await api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', reference('crd-widget-request.json'))).status).toBe(201);
});
afterAll(() => server.stop());

describe('custom resource definitions', () => {
  it('establishes the CRD and serves its resource in discovery with short names and categories', async () => {
    const crd = await until(() => api('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.fixtures.example.com'), (r) => r.body.status?.conditions?.length === 2);
    expect(crd.body.status.conditions.map((c: any) => [c.type, c.status, c.reason])).toEqual([['NamesAccepted', 'True', 'NoConflicts'], ['Established', 'True', 'InitialNamesAccepted']]);
    const disc = (await api('GET', '/apis/fixtures.example.com/v1')).body;
    expect(disc.resources[0]).toMatchObject({ name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'], categories: ['all'] });
    expect(disc.resources[1]).toMatchObject({ name: 'widgets/status', verbs: ['get', 'patch', 'update'] });
  });

  it('defaults, prunes and drops status on create as recorded', async () => {
    const res = await api('POST', W, { apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { schedule: '0 2 * * *', quantity: '10Gi', free: { anything: { goes: 1 } }, extra: 1 }, status: { observedGeneration: 5 } }, {});
    const expected = reference('cr-create-defaults-and-pruning.json');
    expect(res.body.spec).toEqual(expected.spec);
    expect(res.body.status).toBeUndefined();
    expect(res.headers.get('warning')).toBe('299 - "unknown field \\"spec.extra\\""');
  });

  it('rejects unknown fields with fieldValidation=Strict', async () => {
    const res = await api('POST', `${W}?fieldValidation=Strict`, { apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'strict' }, spec: { schedule: '@daily', bogus: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"');
  });

  it('refuses an update without resourceVersion as recorded', async () => {
    const cur = (await api('GET', `${W}/w1`)).body;
    delete cur.metadata.resourceVersion;
    const res = await api('PUT', `${W}/w1`, cur);
    expect(res.body).toEqual(reference('cr-update-without-resourceversion.json'));
  });

  it('takes only status from a PUT to /status, keeping the stored metadata and spec (statusStrategy.PrepareForUpdate)', async () => {
    const created = await api('POST', W, { apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'st', labels: { team: 'a' }, annotations: { note: 'keep' }, finalizers: ['example.com/f'] }, spec: { schedule: '@daily' } });
    expect(created.status).toBe(201);
    // What the controller sends: its cached copy, without labels, annotations or finalizers, and a stale spec.
    const body = { apiVersion: 'fixtures.example.com/v1', kind: 'Widget', metadata: { name: 'st', namespace: 'kubelings', resourceVersion: created.body.metadata.resourceVersion }, spec: { schedule: '@hourly' }, status: { observedGeneration: 1 } };
    const res = await api('PUT', `${W}/st/status`, body);
    expect(res.status).toBe(200);
    const stored = (await api('GET', `${W}/st`)).body;
    expect(stored.metadata).toMatchObject({ labels: { team: 'a' }, annotations: { note: 'keep' }, finalizers: ['example.com/f'], generation: 1 });
    expect(stored.spec.schedule).toBe('@daily');
    expect(stored.status).toEqual({ observedGeneration: 1 });
    expect((await api('PUT', `${W}/st`, { ...stored, metadata: { ...stored.metadata, finalizers: [] } })).status).toBe(200);
    expect((await api('DELETE', `${W}/st`)).status).toBe(200);
  });

  it('answers a Table with the printer columns', async () => {
    const res = await api('GET', W, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    const expected = reference('get-as-table-widgets.json');
    expect(res.body.columnDefinitions).toEqual(expected.columnDefinitions);
    expect(res.body.rows[0].cells.slice(0, 3)).toEqual(['w1', 3, null]);
    expect(res.body.rows[0].object.kind).toBe('PartialObjectMetadata');
  });

  it('stops serving and deletes the custom resources when the CRD is deleted', async () => {
    await api('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.fixtures.example.com');
    const gone = await until(() => api('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.fixtures.example.com'), (r) => r.status === 404);
    expect(gone.status).toBe(404);
    expect((await api('GET', W)).status).toBe(404);
    // Recreating the CRD does not bring the old objects back.
    await api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', reference('crd-widget-request.json'));
    expect((await until(() => api('GET', W), (r) => r.status === 200)).body.items).toEqual([]);
  });
});

describe('garbage collection', () => {
  async function ownerAndChild(name: string, block = false): Promise<{ owner: any; child: any }> {
    const owner = (await api('POST', CM, { metadata: { name } })).body;
    const child = (await api('POST', CM, { metadata: { name: `${name}-child`, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: block }] } })).body;
    return { owner, child };
  }

  it('deletes dependents in the background after the owner is gone', async () => {
    await ownerAndChild('bg');
    await api('DELETE', `${CM}/bg`);
    expect((await until(() => api('GET', `${CM}/bg-child`), (r) => r.status === 404)).status).toBe(404);
  });

  it('removes the owner references of dependents on Orphan', async () => {
    await ownerAndChild('orph');
    const res = await api('DELETE', `${CM}/orph`, { propagationPolicy: 'Orphan' });
    expect(res.body.metadata.finalizers).toEqual(['orphan']);
    const child = await until(() => api('GET', `${CM}/orph-child`), (r) => r.body.metadata?.ownerReferences === undefined);
    expect(child.status).toBe(200);
    expect(child.body.metadata.ownerReferences).toBeUndefined();
    expect((await until(() => api('GET', `${CM}/orph`), (r) => r.status === 404)).status).toBe(404);
  });

  it('keeps a foreground-deleted owner until its blocking dependents are gone', async () => {
    await ownerAndChild('fg', true);
    const res = await api('DELETE', `${CM}/fg`, { propagationPolicy: 'Foreground' });
    expect(res.body.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(res.body.metadata.deletionTimestamp).toBeDefined();
    expect((await until(() => api('GET', `${CM}/fg-child`), (r) => r.status === 404)).status).toBe(404);
    expect((await until(() => api('GET', `${CM}/fg`), (r) => r.status === 404)).status).toBe(404);
  });

  it('collects a dependent whose owner uid never existed', async () => {
    await api('POST', CM, { metadata: { name: 'dangling', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' }] } });
    expect((await until(() => api('GET', `${CM}/dangling`), (r) => r.status === 404)).status).toBe(404);
  });

  it('keeps spec.finalizers of a namespace unless written through /finalize', async () => {
    const ns = (await api('POST', '/api/v1/namespaces', { metadata: { name: 'fin' } })).body;
    expect(ns.spec.finalizers).toEqual(['kubernetes']);
    const main = await api('PUT', '/api/v1/namespaces/fin', { ...ns, spec: { finalizers: [] } });
    expect(main.body.spec.finalizers).toEqual(['kubernetes']);
    const fin = await api('PUT', '/api/v1/namespaces/fin/finalize', { ...main.body, spec: { finalizers: [] } });
    expect(fin.body.spec.finalizers).toEqual([]);
  });

  it('empties and removes a deleted namespace', async () => {
    await api('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await api('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'x' } });
    const res = await api('DELETE', '/api/v1/namespaces/doomed');
    expect(res.body.status.phase).toBe('Terminating');
    expect((await until(() => api('GET', '/api/v1/namespaces/doomed'), (r) => r.status === 404)).status).toBe(404);
  });
});

describe('garbage collector passes', () => {
  /** Storage watched by a collector on a fake clock: a scheduled pass is a pending timer. */
  function collected(): { storage: Storage; clock: FakeClock } {
    const clock = new FakeClock();
    const storage = new Storage(100);
    new GarbageCollector(storage, new RegistryStore(storage, clock), new ResourceRegistry(), { clock });
    return { storage, clock };
  }
  const configMap = (name: string, uid: string, ownerUid?: string, deleting = false) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name, namespace: 'ns', uid,
      ...(ownerUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid }] } : {}),
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] } : {}),
    },
  });

  it('schedules no pass for a dependent written while all its owners exist and live', () => {
    const { storage, clock } = collected();
    storage.create('/configmaps', configMap('owner', 'u-owner'));
    storage.create('/configmaps', configMap('child', 'u-child', 'u-owner'));
    expect(clock.pendingTimers).toBe(0);
  });

  it.each([
    ['whose owner uid is stored nowhere', false],
    ['whose owner is being deleted', true],
  ])('schedules a pass for a dependent %s', (_what, deleting) => {
    const { storage, clock } = collected();
    if (deleting) {
      storage.create('/configmaps', configMap('owner', 'u-owner', undefined, true));
      clock.step(1_000);
    }
    expect(clock.pendingTimers).toBe(0);
    storage.create('/configmaps', configMap('child', 'u-child', 'u-owner'));
    expect(clock.pendingTimers).toBe(1);
  });
});
