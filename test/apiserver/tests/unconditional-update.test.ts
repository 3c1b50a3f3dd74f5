/**
 * Which built-in kinds take an update without `metadata.resourceVersion` (the strategy's
 * `AllowUnconditionalUpdate`): most do, Leases and CustomResourceDefinitions do not
 * (pkg/registry/coordination/lease and apiextensions' customresourcedefinition strategies return
 * false, found by the conformance suite against a real 1.20 kube-apiserver and unchanged since).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client, createCrdAndWait } from './http-client.ts';

let server: TestApiServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestApiServer();
  api = client(server);
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'uu' } });
});
afterAll(() => server.stop());

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/uu/leases';

describe('unconditional updates', () => {
  it('refuses a PUT of a Lease without resourceVersion with the 422 of kube, and takes one with it', async () => {
    const created = await api('POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: {} });
    expect(created.status).toBe(201);
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
    const res = await api('PUT', `${LEASES}/l1`, body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
      reason: 'Invalid',
      details: { name: 'l1', group: 'coordination.k8s.io', kind: 'leases', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }] },
      code: 422,
    });
    const ok = await api('PUT', `${LEASES}/l1`, { ...body, metadata: { name: 'l1', resourceVersion: created.body.metadata.resourceVersion } });
    expect(ok.status).toBe(200);
  });

  it('still creates a missing Lease on a PUT without resourceVersion (create on update)', async () => {
    const res = await api('PUT', `${LEASES}/fresh`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'fresh' }, spec: {} });
    expect(res.status).toBe(201);
  });

  it('refuses a PUT of a CustomResourceDefinition without resourceVersion', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.uu.example.com' },
      spec: { group: 'uu.example.com', scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
    };
    await createCrdAndWait(api, crd, '/apis/uu.example.com/v1/things');
    const res = await api('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.uu.example.com', crd);
    expect(res.status).toBe(422);
    expect(res.body.details.causes).toEqual([{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }]);
  });

  it('takes a PUT of a ConfigMap without resourceVersion', async () => {
    await api('POST', '/api/v1/namespaces/uu/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } });
    expect((await api('PUT', '/api/v1/namespaces/uu/configmaps/c', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '2' } })).status).toBe(200);
  });
});
