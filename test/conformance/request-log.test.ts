/**
 * Request log of the test server (`GET/DELETE /debug/requests`; skipped on a real cluster): every API
 * request with time, user, verb, group/version/resource, subresource, namespace, name and status code,
 * so black-box tests can count writes and verbs.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { cmPath, configMap, isRealCluster, must, useCluster } from './harness.ts';

const cluster = useCluster();

interface Entry {
  time: string;
  user: string;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  code: number;
}

async function entries(ns: string): Promise<Entry[]> {
  const res = await cluster().api.get<{ items: Entry[] }>('/debug/requests');
  expect(res.status).toBe(200);
  return res.body.items.filter((e) => e.namespace === ns);
}

describe.skipIf(isRealCluster)('request log (test server only)', () => {
  beforeEach((ctx) => {
    if (!cluster().hasDebug) ctx.skip();
  });

  it('records user, verb, resource, namespace, name and code of each request', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('log');
    const sa = await cluster().serviceAccount(ns, 'logged');
    must(await api.post(cmPath(ns), configMap('a')), 201);
    must(await api.get(cmPath(ns, 'a')), 200);
    must(await api.patch(cmPath(ns, 'a'), { data: { k: 'v2' } }), 200);
    must(await api.get(cmPath(ns)), 200);
    expect((await api.get(cmPath(ns, 'missing'))).status).toBe(404);
    expect((await sa.client.get(cmPath(ns, 'a'))).status).toBe(403);
    must(await api.delete(cmPath(ns, 'a')), 200);
    const cms = (await entries(ns)).filter((e) => e.resource === 'configmaps');
    const summary = cms.map((e) => [e.verb, e.name ?? '', e.code]);
    expect(summary).toEqual([
      ['create', expect.any(String), 201],
      ['get', 'a', 200],
      ['patch', 'a', 200],
      ['list', '', 200],
      ['get', 'missing', 404],
      ['get', 'a', 403],
      ['delete', 'a', 200],
    ]);
    for (const e of cms) expect(e).toMatchObject({ apiGroup: '', apiVersion: 'v1', resource: 'configmaps', namespace: ns });
    expect(cms[5]?.user).toBe(sa.user);
    expect(cms[0]?.user).not.toBe(sa.user);
    expect(cms[0]?.user).toEqual(expect.any(String));
    expect(Number.isNaN(Date.parse(cms[0]?.time ?? ''))).toBe(false);
  });

  it('records the subresource, the group and watch requests', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('log');
    const cj = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
    must(await api.post(`/apis/batch/v1/namespaces/${ns}/cronjobs`, cj), 201);
    must(await api.patch(`/apis/batch/v1/namespaces/${ns}/cronjobs/cj/status`, { status: {} }), 200);
    const w = api.watch(`/apis/batch/v1/namespaces/${ns}/cronjobs`, { timeoutSeconds: 1 });
    await w.drain(5_000);
    const log = await entries(ns);
    expect(log).toContainEqual(expect.objectContaining({ verb: 'patch', apiGroup: 'batch', apiVersion: 'v1', resource: 'cronjobs', subresource: 'status', name: 'cj', code: 200 }));
    expect(log).toContainEqual(expect.objectContaining({ verb: 'watch', apiGroup: 'batch', resource: 'cronjobs', code: 200 }));
  });

  it('starts empty again after DELETE /debug/requests', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('log');
    must(await api.get(cmPath(ns)), 200);
    expect((await entries(ns)).length).toBeGreaterThan(0);
    must(await api.delete('/debug/requests'), 200, 204);
    expect(await entries(ns)).toEqual([]);
  });
});
