import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';
import { API_AUDIENCE, TokenAuthenticator } from '../auth.ts';
import { loadReference } from '../../fixtures/k8s-reference.ts';

const reference = (file: string): any => loadReference(file);

let server: TestApiServer;
let admin: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestApiServer();
  admin = client(server);
  await admin('POST', '/api/v1/namespaces', { metadata: { name: 'kubelings' } });
  await admin('POST', '/api/v1/namespaces/kubelings/serviceaccounts', { metadata: { name: 'op' } });
});
afterAll(() => server.stop());

describe('authentication', () => {
  it.each([['no token', undefined], ['an unknown token', 'Bearer nope']])('answers %s with the recorded 401', async (_what, header) => {
    const res = await fetch(`${server.url}/api/v1/namespaces`, { headers: header ? { authorization: header } : {} });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(reference('error-401-unauthorized.json'));
  });

  it('issues service-account tokens through TokenRequest that authenticate as the account', async () => {
    const res = await admin('POST', '/api/v1/namespaces/kubelings/serviceaccounts/op/token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    expect(res.status).toBe(201);
    const sa = client(server, res.body.status.token);
    const denied = await sa('GET', '/api/v1/namespaces/kubelings/configmaps');
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('configmaps is forbidden: User "system:serviceaccount:kubelings:op" cannot list resource "configmaps" in API group "" in the namespace "kubelings"');
  });

  it('checks expiry and the account\'s uid on every request, also for a token whose signature it remembers', () => {
    const auth = new TokenAuthenticator();
    const now = Date.parse('2026-12-02T07:00:00Z');
    let uid: string | undefined = 'uid-1';
    const lookup = (): string | undefined => uid;
    const token = auth.issueServiceAccountToken('ns', 'op', 'uid-1', now, 600, [API_AUDIENCE]);
    expect(auth.authenticate(`Bearer ${token}`, now, lookup)?.name).toBe('system:serviceaccount:ns:op');
    expect(auth.authenticate(`Bearer ${token}`, now, lookup)?.name).toBe('system:serviceaccount:ns:op');
    const [head, body, signature] = token.split('.') as [string, string, string];
    const tampered = `${head}.${body}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BA' : 'AA'}`;
    expect(auth.authenticate(`Bearer ${tampered}`, now, lookup)).toBeUndefined();
    expect(auth.authenticate(`Bearer ${token}`, now + 600_000, lookup)).toBeUndefined();
    uid = 'uid-2';
    expect(auth.authenticate(`Bearer ${token}`, now, lookup)).toBeUndefined();
    // More tokens than it remembers: each still authenticates (the oldest are verified again).
    uid = 'uid-1';
    const many = Array.from({ length: 1_100 }, (_, i) => auth.issueServiceAccountToken('ns', 'op', 'uid-1', now + i * 1000, 3600, [API_AUDIENCE]));
    for (const t of [...many, ...many]) expect(auth.authenticate(`Bearer ${t}`, now + 1_099_000, lookup)?.name).toBe('system:serviceaccount:ns:op');
  });

  it('lets every authenticated user read discovery, version and health like the bootstrap roles do', async () => {
    const user = client(server, server.userToken('developer'));
    for (const path of ['/api', '/apis', '/api/v1', '/version', '/healthz', '/openapi/v3']) expect((await user('GET', path)).status).toBe(200);
  });

  it('grants through a RoleBinding, resourceNames included, and denies list and create as recorded', async () => {
    await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kubelings/roles', { metadata: { name: 'leader' }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['op-leader'], verbs: ['get', 'update'] }] });
    await admin('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kubelings/rolebindings', { metadata: { name: 'leader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leader' }, subjects: [{ kind: 'User', name: 'developer' }] });
    await admin('POST', '/apis/coordination.k8s.io/v1/namespaces/kubelings/leases', { metadata: { name: 'op-leader' }, spec: {} });
    const dev = client(server, server.userToken('developer'));
    expect((await dev('GET', '/apis/coordination.k8s.io/v1/namespaces/kubelings/leases/op-leader')).status).toBe(200);
    const list = await dev('GET', '/apis/coordination.k8s.io/v1/namespaces/kubelings/leases');
    expect(list.body).toEqual(reference('error-403-resourcename-list.json'));
    const create = await dev('POST', '/apis/coordination.k8s.io/v1/namespaces/kubelings/leases', { metadata: { name: 'other' } });
    expect(create.body).toEqual(reference('error-403-resourcename-create.json'));
  });
});

describe('test controls', () => {
  it('fails matching requests with 429 and Retry-After, then stops after count', async () => {
    const add = await admin('POST', '/debug/faults', { verb: 'list', resource: 'configmaps', code: 429, count: 1, retryAfterSeconds: 3 });
    expect(add.status).toBe(201);
    const failed = await admin('GET', '/api/v1/namespaces/kubelings/configmaps');
    expect(failed.status).toBe(429);
    expect(failed.headers.get('retry-after')).toBe('3');
    expect((await admin('GET', '/api/v1/namespaces/kubelings/configmaps')).status).toBe(200);
  });

  it('logs every request with user, verb, resource, name and code', async () => {
    await admin('DELETE', '/debug/requests');
    await admin('GET', '/api/v1/namespaces/kubelings/configmaps/nope');
    const { items } = (await admin('GET', '/debug/requests')).body;
    expect(items[0]).toMatchObject({ user: 'admin', verb: 'get', apiGroup: '', apiVersion: 'v1', resource: 'configmaps', namespace: 'kubelings', name: 'nope', code: 404 });
    expect(server.requestLog.entries().length).toBeGreaterThanOrEqual(1);
  });

  it('drains the request log: the entries come back once and are gone from the log', async () => {
    await admin('DELETE', '/debug/requests');
    await admin('GET', '/api/v1/namespaces/kubelings/configmaps/drained');
    const first = (await admin('POST', '/debug/requests/drain')).body.items;
    expect(first[0]).toMatchObject({ user: 'admin', verb: 'get', resource: 'configmaps', name: 'drained', code: 404 });
    // Only the drain request itself was logged since.
    const second = (await admin('POST', '/debug/requests/drain')).body.items;
    expect(second.map((e: { resource: string }) => e.resource)).toEqual(['/debug/requests/drain']);
  });

  it('reports its event-loop delay and GC pauses since a reset, and zeros before the first', async () => {
    const before = (await admin('GET', '/debug/event-loop-delay')).body;
    expect(before).toEqual({ p50Ms: 0, p99Ms: 0, maxMs: 0, samples: 0, gc: { count: 0, totalMs: 0, maxMs: 0, long: [] } });
    expect((await admin('DELETE', '/debug/event-loop-delay')).status).toBe(200);
    // Garbage enough for several scavenges (the server shares this process's heap).
    let kept = 0;
    for (let i = 0; i < 200; i++) kept += new Array(50_000).fill(i).length;
    expect(kept).toBe(10_000_000);
    await new Promise((r) => setTimeout(r, 60));
    const after = (await admin('GET', '/debug/event-loop-delay')).body;
    expect(after.samples).toBeGreaterThan(0);
    expect(after.maxMs).toBeGreaterThanOrEqual(after.p99Ms);
    expect(after.p99Ms).toBeGreaterThanOrEqual(after.p50Ms);
    expect(after.gc.count).toBeGreaterThan(0);
    expect(after.gc.totalMs).toBeGreaterThanOrEqual(after.gc.maxMs);
    expect(after.gc.maxMs).toBeGreaterThan(0);
    for (const pause of after.gc.long) expect(pause.ms).toBeGreaterThanOrEqual(10);
  });

  it('holds requests while paused and serves them on resume', async () => {
    server.pause();
    let done = false;
    const pending = admin('GET', '/api/v1/namespaces').then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(done).toBe(false);
    server.resume();
    expect((await pending).status).toBe(200);
  });

  it('refuses the debug endpoints to non-admins', async () => {
    const dev = client(server, server.userToken('someone'));
    expect((await dev('GET', '/debug/requests')).status).toBe(403);
  });
});
