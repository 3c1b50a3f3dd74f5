/**
 * Kinds served: a create → get → list → delete round trip for every kind the test server must serve, and
 * a CRD whose resource appears on create and disappears on delete.
 */
import { describe, expect, it } from 'vitest';
import { eventually, must, rand, useCluster, widgetCrd } from './harness.ts';

const cluster = useCluster();

const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const micro = new Date().toISOString().replace(/\.(\d+)Z$/, '.$1000Z');
const podTemplate = { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } };

interface KindCase {
  readonly kind: string;
  /** Collection path; `{ns}` is replaced by the test's namespace. */
  readonly path: string;
  readonly body: (name: string, ns: string) => Record<string, unknown>;
}

const cases: KindCase[] = [
  { kind: 'Namespace', path: '/api/v1/namespaces', body: (name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) },
  { kind: 'ServiceAccount', path: '/api/v1/namespaces/{ns}/serviceaccounts', body: (name) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }) },
  { kind: 'ConfigMap', path: '/api/v1/namespaces/{ns}/configmaps', body: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } }) },
  {
    kind: 'Event (core/v1)',
    path: '/api/v1/namespaces/{ns}/events',
    body: (name, ns) => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name },
      involvedObject: { kind: 'ConfigMap', namespace: ns, name: 'x', apiVersion: 'v1' },
      reason: 'Created',
      message: 'created child',
      source: { component: 'conformance' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type: 'Normal',
    }),
  },
  {
    kind: 'Event (events.k8s.io/v1)',
    path: '/apis/events.k8s.io/v1/namespaces/{ns}/events',
    body: (name, ns) => ({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name },
      eventTime: micro,
      reportingController: 'example.com/conformance',
      reportingInstance: 'conformance-1',
      action: 'Create',
      reason: 'Created',
      regarding: { kind: 'ConfigMap', namespace: ns, name: 'x', apiVersion: 'v1' },
      note: 'created child',
      type: 'Normal',
    }),
  },
  {
    kind: 'CronJob',
    path: '/apis/batch/v1/namespaces/{ns}/cronjobs',
    body: (name) => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name }, spec: { schedule: '0 2 * * *', jobTemplate: { spec: { template: podTemplate } } } }),
  },
  { kind: 'Job', path: '/apis/batch/v1/namespaces/{ns}/jobs', body: (name) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template: podTemplate } }) },
  { kind: 'Lease', path: '/apis/coordination.k8s.io/v1/namespaces/{ns}/leases', body: (name) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: {} }) },
  {
    kind: 'Role',
    path: '/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles',
    body: (name) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }),
  },
  {
    kind: 'RoleBinding',
    path: '/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings',
    body: (name, ns) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }],
    }),
  },
  {
    kind: 'ClusterRole',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: (name) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] }),
  },
  {
    kind: 'ClusterRoleBinding',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: (name, ns) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'conformance-none' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }],
    }),
  },
];

describe('kinds served', () => {
  it.each(cases)('$kind: create 201, get 200, list includes it, delete 200, then get 404', async ({ path, body }) => {
    const { api } = cluster();
    const ns = await cluster().namespace('kinds');
    const collection = path.replace('{ns}', ns);
    const name = `conf-${rand()}`;
    const created = await api.post(collection, body(name, ns));
    expect(created.status, created.text).toBe(201);
    expect(created.body.metadata.name).toBe(name);
    const got = await api.get(`${collection}/${name}`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(created.body.metadata.uid);
    const list = await api.get<{ items: Array<{ metadata: { name: string } }> }>(collection);
    expect(list.status).toBe(200);
    expect(list.body.items.map((i) => i.metadata.name)).toContain(name);
    const deleted = await api.delete(`${collection}/${name}`);
    expect(deleted.status).toBe(200);
    // Namespaces finalize asynchronously (phase Terminating) on a real cluster.
    await eventually(async () => ((await api.get(`${collection}/${name}`)).status === 404 ? true : undefined), 30_000, 100);
  });

  it('serves a CRD resource (and its /status) after the CRD is created and stops with 404 after it is deleted', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('kinds');
    const group = `k${rand()}.fixtures.example.com`;
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
    cluster().cleanupLater(crdPath);
    const path = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    expect((await api.get(path)).status).toBe(404);
    must(await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd(group)), 201);
    await eventually(async () => ((await api.get(path)).status === 200 ? true : undefined), 10_000);
    const created = await api.post(path, { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { schedule: '@daily' } });
    expect(created.status, created.text).toBe(201);
    expect((await api.get(`${path}/w1/status`)).status).toBe(200);
    must(await api.delete(crdPath), 200);
    await eventually(async () => ((await api.get(`${path}/w1`)).status === 404 ? true : undefined), 15_000, 100);
    // A real apiserver deletes the instances first (finalizer customresourcecleanup) and serves the
    // collection until the CRD object itself is gone, a moment later.
    await eventually(async () => ((await api.get(path)).status === 404 ? true : undefined), 15_000, 100);
  });

  it('serves no /status for a CRD without the status subresource: status is written through the main endpoint and any non-metadata change bumps generation', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('kinds');
    const group = `n${rand()}.fixtures.example.com`;
    const crd = widgetCrd(group) as { spec: { versions: Array<Record<string, unknown>> } };
    delete crd.spec.versions[0]?.subresources;
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
    cluster().cleanupLater(crdPath);
    must(await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd), 201);
    const path = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    await eventually(async () => ((await api.get(path)).status === 200 ? true : undefined), 10_000);
    const created = await api.post(path, { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { schedule: '@daily' }, status: { observedGeneration: 0 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.status).toEqual({ observedGeneration: 0 });
    expect((await api.get(`${path}/w1/status`)).status).toBe(404);
    const patched = must(await api.patch(`${path}/w1`, { status: { observedGeneration: 1 } }), 200);
    expect(patched.status).toEqual({ observedGeneration: 1 });
    expect(patched.metadata.generation).toBe(2);
    const labelled = must(await api.patch(`${path}/w1`, { metadata: { labels: { a: 'b' } } }), 200);
    expect(labelled.metadata.generation).toBe(2);
  });
});
