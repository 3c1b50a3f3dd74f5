import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client } from './http-client.ts';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const KUBECTL_ACCEPT = `${AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;

let server: TestApiServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestApiServer();
  api = client(server);
});
afterAll(() => server.stop());

describe('discovery', () => {
  it('answers kubectl\'s Accept on /apis with aggregated discovery v2', async () => {
    const res = await api('GET', '/apis', undefined, { accept: KUBECTL_ACCEPT });
    expect(res.headers.get('content-type')).toBe(AGGREGATED);
    expect(res.body.kind).toBe('APIGroupDiscoveryList');
    const batch = res.body.items.find((g: any) => g.metadata.name === 'batch');
    const cronjobs = batch.versions[0].resources.find((r: any) => r.resource === 'cronjobs');
    expect(cronjobs).toMatchObject({ responseKind: { group: 'batch', version: 'v1', kind: 'CronJob' }, scope: 'Namespaced', singularResource: 'cronjob', shortNames: ['cj'], categories: ['all'] });
    expect(cronjobs.subresources).toEqual([{ subresource: 'status', responseKind: { group: 'batch', version: 'v1', kind: 'CronJob' }, verbs: ['get', 'patch', 'update'] }]);
  });

  it('answers plain JSON with the legacy documents', async () => {
    expect((await api('GET', '/api', undefined, { accept: 'application/json' })).body.kind).toBe('APIVersions');
    expect((await api('GET', '/apis')).body.kind).toBe('APIGroupList');
    const core = (await api('GET', '/api/v1')).body;
    expect(core.resources.find((r: any) => r.name === 'serviceaccounts/token')).toMatchObject({ group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] });
  });

  it('answers a client asking for aggregated discovery v2beta1 (kubectl 1.26-1.29) with v2beta1, as kube-apiserver 1.32 does', async () => {
    const v2beta1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
    const res = await api('GET', '/api', undefined, { accept: `${v2beta1},application/json` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(v2beta1);
    expect(res.body).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2beta1' });
    expect(res.body.items[0].versions[0].resources.map((r: any) => r.resource)).toContain('configmaps');
  });

  it('refuses with 406 a client that accepts only an aggregated version it does not serve', async () => {
    const res = await api('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList' });
    expect(res.status).toBe(406);
  });

  it('publishes a PATCH operation with x-kubernetes-group-version-kind and fieldValidation for every kind (kubectl server-side validation)', async () => {
    const root = (await api('GET', '/openapi/v3')).body;
    const url = root.paths['apis/batch/v1'].serverRelativeURL;
    const doc = (await api('GET', url)).body;
    const patch = doc.paths['/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'batch', version: 'v1', kind: 'CronJob' });
    expect(patch.parameters.map((p: any) => p.name)).toContain('fieldValidation');
  });

  it('serves /version and the health checks', async () => {
    expect((await api('GET', '/version')).body).toMatchObject({ major: '1', minor: '32' });
    for (const path of ['/healthz', '/livez', '/readyz']) expect((await api('GET', path)).body).toBe('ok');
  });
});
