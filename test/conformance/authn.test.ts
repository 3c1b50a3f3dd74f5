/**
 * Authentication: bearer tokens for the admin and for ServiceAccounts (TokenRequest API); a bad token is
 * 401 Unauthorized (error-401-unauthorized.json); no token is 401 too, or — on a cluster that allows
 * anonymous requests — 403 for system:anonymous.
 */
import { describe, expect, it } from 'vitest';
import { failure, useCluster } from './harness.ts';

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
});
