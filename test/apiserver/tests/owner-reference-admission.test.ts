import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';

let server: TestApiServer;
let admin: ReturnType<typeof client>;
let dev: ReturnType<typeof client>;
let ownerUid = '';
const CM = '/api/v1/namespaces/ns/configmaps';
const RBAC = '/apis/rbac.authorization.k8s.io/v1/namespaces/ns';

beforeAll(async () => {
  server = await startTestApiServer({ enforceOwnerReferencePermissions: true });
  admin = client(server);
  dev = client(server, server.userToken('dev'));
  await admin('POST', '/api/v1/namespaces', { metadata: { name: 'ns' } });
  ownerUid = (await admin('POST', CM, { metadata: { name: 'owner' } })).body.metadata.uid;
  await admin('POST', `${RBAC}/roles`, { metadata: { name: 'cm' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'update'] }] });
  await admin('POST', `${RBAC}/rolebindings`, { metadata: { name: 'cm' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm' }, subjects: [{ kind: 'User', name: 'dev' }] });
});
afterAll(() => server.stop());

const child = (name: string, block: boolean) => ({ metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid, blockOwnerDeletion: block }] } });

describe('OwnerReferencesPermissionEnforcement (opt-in)', () => {
  it('lets a creator set a non-blocking owner reference', async () => {
    expect((await dev('POST', CM, child('free', false))).status).toBe(201);
  });

  it('refuses blockOwnerDeletion without update on the owner\'s finalizers', async () => {
    const res = await dev('POST', CM, child('blocked', true));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('configmaps "blocked" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , <nil>');
  });

  it('allows it once the user may update configmaps/finalizers', async () => {
    await admin('POST', `${RBAC}/roles`, { metadata: { name: 'fin' }, rules: [{ apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update'] }] });
    await admin('POST', `${RBAC}/rolebindings`, { metadata: { name: 'fin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'fin' }, subjects: [{ kind: 'User', name: 'dev' }] });
    expect((await dev('POST', CM, child('blocked', true))).status).toBe(201);
  });

  it('refuses changing the owner references of an object the user cannot delete', async () => {
    const cur = (await dev('GET', `${CM}/free`)).body;
    const res = await dev('PUT', `${CM}/free`, { ...cur, metadata: { ...cur.metadata, ownerReferences: [] } });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("cannot set an ownerRef on a resource you can't delete");
  });
});
