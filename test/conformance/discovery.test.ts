/**
 * Discovery: what kubectl and client libraries read before anything else (`/api`, `/apis`, group
 * versions, `/version`, `/healthz`, `/openapi/v3`). Shapes follow the recorded `discovery-*.json`.
 */
import { describe, expect, it } from 'vitest';
import { eventually, useCluster, useWidgets } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface ApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

describe('discovery', () => {
  it('lists v1 under /api as APIVersions', async () => {
    const res = await cluster().api.get('/api');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
  });

  it.each([
    ['batch', 'batch/v1'],
    ['coordination.k8s.io', 'coordination.k8s.io/v1'],
    ['rbac.authorization.k8s.io', 'rbac.authorization.k8s.io/v1'],
    ['apiextensions.k8s.io', 'apiextensions.k8s.io/v1'],
    ['events.k8s.io', 'events.k8s.io/v1'],
  ])('lists the %s group with %s as an APIGroupList entry', async (group, groupVersion) => {
    const res = await cluster().api.get('/apis');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'APIGroupList', apiVersion: 'v1' });
    const entry = (res.body.groups as Array<{ name: string; versions: Array<{ groupVersion: string }> }>).find((g) => g.name === group);
    expect(entry?.versions.map((v) => v.groupVersion)).toContain(groupVersion);
    expect(entry).toHaveProperty('preferredVersion.groupVersion');
  });

  it('lists a CRD group once the CRD is established, with its preferred version', async () => {
    const { group } = widgets();
    const entry = await eventually(async () => {
      const res = await cluster().api.get('/apis');
      return (res.body.groups as Array<{ name: string }>).find((g) => g.name === group);
    });
    expect(entry).toEqual({ name: group, versions: [{ groupVersion: `${group}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${group}/v1`, version: 'v1' } });
  });

  it('describes the CRD resource and its status subresource in the group version', async () => {
    const { group } = widgets();
    const res = await cluster().api.get(`/apis/${group}/v1`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1` });
    const resources = res.body.resources as ApiResource[];
    const main = resources.find((r) => r.name === 'widgets');
    expect(main).toMatchObject({ singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'], categories: ['all'] });
    expect([...(main?.verbs ?? [])].sort()).toEqual(allVerbs);
    const status = resources.find((r) => r.name === 'widgets/status');
    expect(status).toMatchObject({ namespaced: true, kind: 'Widget' });
    expect([...(status?.verbs ?? [])].sort()).toEqual(['get', 'patch', 'update']);
  });

  it.each([
    ['/api/v1', 'namespaces', 'Namespace', false],
    ['/api/v1', 'serviceaccounts', 'ServiceAccount', true],
    ['/api/v1', 'configmaps', 'ConfigMap', true],
    ['/api/v1', 'events', 'Event', true],
    ['/apis/events.k8s.io/v1', 'events', 'Event', true],
    ['/apis/batch/v1', 'cronjobs', 'CronJob', true],
    ['/apis/batch/v1', 'jobs', 'Job', true],
    ['/apis/coordination.k8s.io/v1', 'leases', 'Lease', true],
    ['/apis/rbac.authorization.k8s.io/v1', 'roles', 'Role', true],
    ['/apis/rbac.authorization.k8s.io/v1', 'rolebindings', 'RoleBinding', true],
    ['/apis/rbac.authorization.k8s.io/v1', 'clusterroles', 'ClusterRole', false],
    ['/apis/rbac.authorization.k8s.io/v1', 'clusterrolebindings', 'ClusterRoleBinding', false],
    ['/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions', 'CustomResourceDefinition', false],
  ])('%s lists %s (kind %s, namespaced %s) with the verbs kubectl needs', async (gvPath, name, kind, namespaced) => {
    const res = await cluster().api.get(gvPath);
    expect(res.status).toBe(200);
    const r = (res.body.resources as ApiResource[]).find((x) => x.name === name);
    expect(r).toMatchObject({ kind, namespaced });
    for (const verb of ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']) expect(r?.verbs).toContain(verb);
  });

  it.each([
    ['/apis/batch/v1', 'cronjobs/status'],
    ['/apis/batch/v1', 'jobs/status'],
    ['/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions/status'],
  ])('%s lists the %s subresource with get, patch and update', async (gvPath, name) => {
    const res = await cluster().api.get(gvPath);
    const r = (res.body.resources as ApiResource[]).find((x) => x.name === name);
    expect([...(r?.verbs ?? [])].sort()).toEqual(['get', 'patch', 'update']);
  });

  it('answers /version with major, minor and gitVersion', async () => {
    const res = await cluster().api.get('/version');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ major: expect.any(String), minor: expect.any(String), gitVersion: expect.stringMatching(/^v\d+\.\d+\.\d+/) });
  });

  it('answers /healthz with 200 ok', async () => {
    const res = await cluster().api.get('/healthz', { accept: '*/*' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('ok');
  });

  it('publishes the CRD in /openapi/v3 with a PATCH operation carrying its kind and the fieldValidation parameter', async (ctx) => {
    const { group } = widgets();
    if (!(await cluster().has(ctx, 'openapi-v3'))) {
      expect((await cluster().api.get('/openapi/v3')).status).toBe(404);
      return;
    }
    const url = await eventually(async () => {
      const res = await cluster().api.get<{ paths?: Record<string, { serverRelativeURL?: string }> }>('/openapi/v3');
      expect(res.status).toBe(200);
      return res.body.paths?.[`apis/${group}/v1`]?.serverRelativeURL;
    }, 10_000);
    const doc = await cluster().api.get(url);
    expect(doc.status).toBe(200);
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    const item = paths[`/apis/${group}/v1/namespaces/{namespace}/widgets/{name}`];
    const patch = item?.patch as { parameters?: Array<{ name?: string; $ref?: string }>; 'x-kubernetes-group-version-kind'?: unknown } | undefined;
    expect(patch?.['x-kubernetes-group-version-kind']).toEqual({ group, version: 'v1', kind: 'Widget' });
    const params = [...(patch?.parameters ?? []), ...((item?.parameters as Array<{ name?: string; $ref?: string }> | undefined) ?? [])];
    expect(params.some((p) => p.name === 'fieldValidation' || (p.$ref ?? '').includes('fieldValidation'))).toBe(true);
  });
});

describe('unknown paths and methods', () => {
  it('answers an unknown API group with the plain-text 404 of the last handler in the chain', async () => {
    // apiserver's notfoundhandler ends in Go's http.NotFound: no Status body (clients synthesize one).
    const res = await cluster().api.get('/apis/nope.example.com/v1/namespaces/default/foos');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('404 page not found\n');
  });

  it('answers an unknown resource or version of a served group with a 404 Status', async () => {
    for (const path of ['/apis/batch/v1/namespaces/default/foos', '/apis/batch/v9/namespaces/default/cronjobs']) {
      const res = await cluster().api.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });
    }
  });

  it('answers a POST to an object path with 405 MethodNotAllowed', async () => {
    const ns = await cluster().namespace('disc');
    const res = await cluster().api.post(`/api/v1/namespaces/${ns}/configmaps/a`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', message: 'the server does not allow this method on the requested resource', reason: 'MethodNotAllowed', code: 405 });
  });

  it('answers a PATCH with a plain JSON content type with 415 UnsupportedMediaType', async () => {
    const ns = await cluster().namespace('disc');
    await cluster().api.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
    const res = await cluster().api.patch(`/api/v1/namespaces/${ns}/configmaps/a`, { data: {} }, { contentType: 'application/json' });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'UnsupportedMediaType', code: 415 });
  });
});
