import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';
import { loadReference } from '../../fixtures/k8s-reference.ts';

const reference = (file: string): any => loadReference(file);

let server: TestApiServer;
let api: ReturnType<typeof client>;
const CM = '/api/v1/namespaces/kubelings/configmaps';

beforeAll(async () => {
  server = await startTestApiServer();
  api = client(server);
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubelings' } });
});
afterAll(() => server.stop());

describe('object writes', () => {
  it('creates an object with uid, creationTimestamp and a string resourceVersion, and refuses a duplicate with AlreadyExists', async () => {
    const created = await api('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
    expect(created.status).toBe(201);
    expect(created.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(typeof created.body.metadata.resourceVersion).toBe('string');
    expect(created.body.metadata.generation).toBeUndefined();
    const dup = await api('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    const expected = reference('error-409-alreadyexists.json');
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual(expected);
  });

  it('answers a missing object with the recorded 404 body', async () => {
    const res = await api('GET', `${CM}/missing`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(reference('error-404-notfound.json'));
  });

  it('rejects a stale resourceVersion with the recorded Conflict and keeps the version of a no-op update', async () => {
    const cur = (await api('GET', `${CM}/a`)).body;
    const changed = await api('PUT', `${CM}/a`, { ...cur, data: { k: 'v2' } });
    expect(changed.status).toBe(200);
    expect(Number(changed.body.metadata.resourceVersion)).toBeGreaterThan(Number(cur.metadata.resourceVersion));
    const stale = await api('PUT', `${CM}/a`, { ...cur, data: { k: 'v3' } });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual(reference('error-409-conflict.json'));
    const same = await api('PUT', `${CM}/a`, changed.body);
    expect(same.body.metadata.resourceVersion).toBe(changed.body.metadata.resourceVersion);
  });

  it('allows an unconditional update of a built-in', async () => {
    const res = await api('PUT', `${CM}/a`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'unconditional' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ k: 'unconditional' });
  });

  it('generates a name with a 5-character suffix', async () => {
    const res = await api('POST', CM, { metadata: { generateName: 'gen-' } });
    expect(res.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('stores nothing on dryRun=All', async () => {
    const res = await api('POST', `${CM}?dryRun=All`, { metadata: { name: 'dry' } });
    expect(res.status).toBe(201);
    expect((await api('GET', `${CM}/dry`)).status).toBe(404);
  });

  it('answers a failed JSON patch test with the recorded 422', async () => {
    const res = await api('PATCH', `${CM}/a`, [{ op: 'test', path: '/data/k', value: 'nope' }], { 'content-type': 'application/json-patch+json' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(reference('error-jsonpatch-test-failed.json'));
  });

  it('merges containers by name in a strategic merge patch', async () => {
    const cj = {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'smp' },
      spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'x:1' }, { name: 'b', image: 'y:1' }] } } } } },
    };
    expect((await api('POST', '/apis/batch/v1/namespaces/kubelings/cronjobs', cj)).status).toBe(201);
    const patched = await api('PATCH', '/apis/batch/v1/namespaces/kubelings/cronjobs/smp', { spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'b', image: 'y:2' }] } } } } } }, { 'content-type': 'application/strategic-merge-patch+json' });
    expect(patched.status).toBe(200);
    expect(patched.body.spec.jobTemplate.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`)).toEqual(['a=x:1', 'b=y:2']);
    expect(patched.body.metadata.generation).toBe(2);
  });

  it('refuses objects in a namespace that does not exist', async () => {
    const res = await api('POST', '/api/v1/namespaces/nowhere/configmaps', { metadata: { name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('namespaces "nowhere" not found');
  });

  it.each([
    ['an unknown path of a served group (an unknown group is plain text: not-found.test.ts)', 'GET', '/apis/batch/v1/things', 404],
    ['a POST to an item', 'POST', `${CM}/a`, 405],
  ])('answers %s (%s %s) with %i', async (_what, method, path, code) => {
    const res = await api(method, path, method === 'POST' ? {} : undefined);
    expect(res.status).toBe(code);
    expect(res.body.kind).toBe('Status');
  });
});

describe('lists', () => {
  it('pages with limit/continue, keeps the list resourceVersion and counts what remains', async () => {
    for (const n of ['p1', 'p2', 'p3', 'p4']) await api('POST', '/api/v1/namespaces/kubelings/configmaps', { metadata: { name: n, labels: { page: 'yes' } } });
    const all = (await api('GET', CM)).body.items.length;
    const page1 = (await api('GET', `${CM}?limit=2`)).body;
    expect(page1.items).toHaveLength(2);
    expect(page1.metadata.remainingItemCount).toBe(all - 2);
    const page2 = (await api('GET', `${CM}?limit=2&continue=${page1.metadata.continue}`)).body;
    expect(page2.metadata.resourceVersion).toBe(page1.metadata.resourceVersion);
    expect(page2.items.map((i: any) => i.metadata.name)).not.toContain(page1.items[1].metadata.name);
    expect(page1.items[0].kind).toBeUndefined();
  });

  it.each([
    ['page=yes', 4],
    ['page in (yes,no)', 4],
    ['page!=yes', -1],
    ['!page', -1],
  ])('selects by label %s', async (selector, expected) => {
    const all = (await api('GET', CM)).body.items.length;
    const res = await api('GET', `${CM}?labelSelector=${encodeURIComponent(selector)}`);
    expect(res.body.items.length).toBe(expected >= 0 ? expected : all - 4);
  });

  it('selects by metadata.name field', async () => {
    const res = await api('GET', `${CM}?fieldSelector=metadata.name%3Dp3`);
    expect(res.body.items.map((i: any) => i.metadata.name)).toEqual(['p3']);
  });

  it('answers an expired continue token with 410', async () => {
    const page1 = (await api('GET', `${CM}?limit=1`)).body;
    await api('POST', CM, { metadata: { name: 'after-compact' } });
    server.compactHistory();
    const res = await api('GET', `${CM}?limit=1&continue=${page1.metadata.continue}`);
    expect(res.status).toBe(410);
    expect(res.body.reason).toBe('Expired');
  });
});
