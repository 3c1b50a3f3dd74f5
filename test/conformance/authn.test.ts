/**
 * Authentication: bearer tokens for the admin and for ServiceAccounts (TokenRequest API); a bad token is
 * 401 Unauthorized (error-401-unauthorized.json); no token is 401 too, or — on a cluster that allows
 * anonymous requests — 403 for system:anonymous.
 */
import { describe, expect, it } from 'vitest';
import { dig, eventually, failure, must, useCluster } from './harness.ts';

const cluster = useCluster();

describe('authentication', () => {
  it('answers a request with an unknown bearer token with 401 Unauthorized', async () => {
    const res = await cluster().api.get('/api/v1/namespaces', { token: 'not-a-valid-token' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(failure(401, 'Unauthorized', 'Unauthorized'));
  });

  it('answers a request without credentials with 401, or 403 for system:anonymous when anonymous auth is on', async () => {
    const res = await cluster().api.as('').get('/api/v1/namespaces', { token: null });
    if (res.status === 401) {
      expect(res.body).toEqual(failure(401, 'Unauthorized', 'Unauthorized'));
    } else {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(
        failure(403, 'Forbidden', 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope', { kind: 'namespaces' }),
      );
    }
  });

  it('accepts the admin credentials of the kubeconfig', async () => {
    expect((await cluster().api.get('/api/v1/namespaces')).status).toBe(200);
  });

  it('issues a ServiceAccount token through the TokenRequest API and authenticates with it', async () => {
    const ns = await cluster().namespace('authn');
    const sa = await cluster().serviceAccount(ns, 'robot');
    expect(sa.token.length).toBeGreaterThan(10);
    // /version is readable by every authenticated user (system:public-info-viewer).
    expect((await sa.client.get('/version')).status).toBe(200);
    // The identity is the ServiceAccount's: a denied request names it.
    const denied = await sa.client.get(`/api/v1/namespaces/${ns}/configmaps`);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('User "system:serviceaccount:' + ns + ':robot"');
  });

  it('answers a TokenRequest for a missing ServiceAccount with 404', async () => {
    const ns = await cluster().namespace('authn');
    const res = await cluster().api.post(`/api/v1/namespaces/${ns}/serviceaccounts/nobody/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(failure(404, 'NotFound', 'serviceaccounts "nobody" not found', { name: 'nobody', kind: 'serviceaccounts' }));
  });

  it('binds a token to a Secret: the answer echoes the reference, and deleting the Secret revokes the token', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('authn');
    must(await api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bound' } }), 201);
    const secret = must(await api.post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anchor' } }), 201);
    const ref = { kind: 'Secret', apiVersion: 'v1', name: 'anchor', uid: secret.metadata.uid };
    const res = await api.post(`/api/v1/namespaces/${ns}/serviceaccounts/bound/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { boundObjectRef: ref } });
    expect(res.status).toBe(201);
    expect(dig(res.body, 'spec.boundObjectRef')).toEqual(ref);
    const token = dig(res.body, 'status.token') as string;
    const client = api.as(token);
    try {
      expect((await client.get('/version')).status).toBe(200);
      must(await api.delete(`/api/v1/namespaces/${ns}/secrets/anchor`), 200);
      // kube-apiserver caches a successful token review for 10 s (TokenSuccessCacheTTL): wait past it.
      await eventually(async () => ((await client.get('/version')).status === 401 ? true : undefined), 30_000, 100);
    } finally {
      client.close();
    }
  });

  it('refuses to bind a token to a missing Secret (404), a Secret of another uid (409) or an unsupported kind (400)', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('authn');
    must(await api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bound' } }), 201);
    must(await api.post(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anchor' } }), 201);
    const request = (boundObjectRef: Record<string, string>) => api.post(`/api/v1/namespaces/${ns}/serviceaccounts/bound/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { boundObjectRef } });
    const missing = await request({ kind: 'Secret', apiVersion: 'v1', name: 'gone' });
    expect(missing.body).toEqual(failure(404, 'NotFound', 'secrets "gone" not found', { name: 'gone', kind: 'secrets' }));
    const otherUid = await request({ kind: 'Secret', apiVersion: 'v1', name: 'anchor', uid: '00000000-0000-4000-8000-000000000000' });
    expect(otherUid.status).toBe(409);
    expect(otherUid.body).toMatchObject({ reason: 'Conflict', details: { name: 'anchor', kind: 'Secret' } });
    expect(otherUid.body.message).toContain('the UID in the bound object reference (00000000-0000-4000-8000-000000000000) does not match the UID in record');
    const configMap = await request({ kind: 'ConfigMap', apiVersion: 'v1', name: 'x' });
    expect(configMap.body).toMatchObject({ reason: 'BadRequest', code: 400, message: 'cannot bind token to object of type /v1, Kind=ConfigMap' });
  });

  it('refuses a ServiceAccount token that does not name this API server among its audiences with 401', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('authn');
    must(await api.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'elsewhere' } }), 201);
    const res = must(await api.post(`/api/v1/namespaces/${ns}/serviceaccounts/elsewhere/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://vault.example.com'] } }), 201);
    expect(dig(res, 'spec.audiences')).toEqual(['https://vault.example.com']);
    const client = api.as(dig(res, 'status.token') as string);
    try {
      expect((await client.get('/version')).status).toBe(401);
    } finally {
      client.close();
    }
  });
});
