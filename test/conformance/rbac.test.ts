/**
 * Authorization by RBAC evaluated from stored Roles, ClusterRoles and bindings: 403 Forbidden with
 * Kubernetes' message text (error-403-*.json), resourceNames (get/update yes, list/create no),
 * ClusterRole bound in one namespace by a RoleBinding, subresources, non-resource URLs.
 */
import { describe, expect, it } from 'vitest';
import { type ApiClient, eventually, failure, must, rand, useCluster } from './harness.ts';

const cluster = useCluster();
const rbac = '/apis/rbac.authorization.k8s.io/v1';

async function role(ns: string, name: string, rules: unknown[]): Promise<void> {
  must(await cluster().api.post(`${rbac}/namespaces/${ns}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules }), 201);
}

async function bind(ns: string, roleKind: 'Role' | 'ClusterRole', roleName: string, saNs: string, sa: string): Promise<void> {
  const body = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `bind-${rand(4)}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: saNs }],
  };
  must(await cluster().api.post(`${rbac}/namespaces/${ns}/rolebindings`, body), 201);
}

/** RBAC changes reach a real apiserver's authorizer cache within moments: poll until allowed. */
async function allowed(client: ApiClient, method: string, path: string, body?: unknown): Promise<number> {
  return eventually(async () => {
    const res = await client.request(method, path, body === undefined ? {} : { body });
    return res.status === 403 ? undefined : res.status;
  });
}

const lease = (name: string): Record<string, unknown> => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: {} });

describe('authorization (RBAC)', () => {
  it('forbids a ServiceAccount without grants to list configmaps and create cronjobs, with the exact 403', async () => {
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'nobody');
    const list = await sa.client.get(`/api/v1/namespaces/${ns}/configmaps`);
    expect(list.status).toBe(403);
    expect(list.body).toEqual(
      failure(403, 'Forbidden', `configmaps is forbidden: User "${sa.user}" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`, { kind: 'configmaps' }),
    );
    const cj = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'x' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
    const create = await sa.client.post(`/apis/batch/v1/namespaces/${ns}/cronjobs`, cj);
    expect(create.status).toBe(403);
    expect(create.body).toEqual(
      failure(403, 'Forbidden', `cronjobs.batch is forbidden: User "${sa.user}" cannot create resource "cronjobs" in API group "batch" in the namespace "${ns}"`, { group: 'batch', kind: 'cronjobs' }),
    );
  });

  it('names the object and the cluster scope in a 403 for get and for a cluster-wide list', async () => {
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns);
    const get = await sa.client.get(`/api/v1/namespaces/${ns}/configmaps/a`);
    expect(get.body).toEqual(
      failure(403, 'Forbidden', `configmaps "a" is forbidden: User "${sa.user}" cannot get resource "configmaps" in API group "" in the namespace "${ns}"`, { name: 'a', kind: 'configmaps' }),
    );
    const all = await sa.client.get('/api/v1/configmaps');
    expect(all.body).toEqual(failure(403, 'Forbidden', `configmaps is forbidden: User "${sa.user}" cannot list resource "configmaps" in API group "" at the cluster scope`, { kind: 'configmaps' }));
  });

  it('lets a Role with resourceNames get and update that object but never list or create', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'holder');
    must(await api.post(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, lease('op-leader')), 201);
    await role(ns, 'lease-holder', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['op-leader'], verbs: ['get', 'update', 'list', 'create'] }]);
    await bind(ns, 'Role', 'lease-holder', ns, 'holder');
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    expect(await allowed(sa.client, 'GET', `${path}/op-leader`)).toBe(200);
    const current = must(await sa.client.get(`${path}/op-leader`), 200);
    const updated = await sa.client.put(`${path}/op-leader`, { ...current, spec: { holderIdentity: 'pod-a_1234', leaseDurationSeconds: 15 } });
    expect(updated.status).toBe(200);
    const other = await sa.client.get(`${path}/other`);
    expect(other.status).toBe(403);
    const list = await sa.client.get(path);
    expect(list.body).toEqual(
      failure(403, 'Forbidden', `leases.coordination.k8s.io is forbidden: User "${sa.user}" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "${ns}"`, {
        group: 'coordination.k8s.io',
        kind: 'leases',
      }),
    );
    const create = await sa.client.post(path, lease('op-leader-2'));
    expect(create.body).toEqual(
      failure(403, 'Forbidden', `leases.coordination.k8s.io is forbidden: User "${sa.user}" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "${ns}"`, {
        group: 'coordination.k8s.io',
        kind: 'leases',
      }),
    );
  });

  it('refuses a PUT or an apply that would recreate a deleted Lease to a user with only update permission (create-on-update needs create)', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'updater');
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    must(await api.post(path, lease('op-leader')), 201);
    await role(ns, 'lease-updater', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update', 'patch'] }]);
    await bind(ns, 'Role', 'lease-updater', ns, 'updater');
    expect(await allowed(sa.client, 'GET', `${path}/op-leader`)).toBe(200);
    must(await api.delete(`${path}/op-leader`), 200);
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'op-leader' }, spec: { holderIdentity: 'pod-a_1234', leaseDurationSeconds: 15 } };
    const put = await sa.client.put(`${path}/op-leader`, body);
    expect(put.status).toBe(403);
    // The message ends with the authorizer's reason, which RBAC leaves empty unless a binding is broken.
    expect(put.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403, details: { name: 'op-leader', group: 'coordination.k8s.io', kind: 'leases' } });
    expect(put.body.message).toMatch(/^leases\.coordination\.k8s\.io "op-leader" is forbidden: /);
    const apply = await sa.client.request('PATCH', `${path}/op-leader?fieldManager=conformance`, { body, contentType: 'application/apply-patch+yaml' });
    expect(apply.status).toBe(403);
    expect((await api.get(`${path}/op-leader`)).status).toBe(404);
    // An update of the existing object needs no create, and create is enough to recreate. A Lease takes
    // no unconditional update (leaseStrategy.AllowUnconditionalUpdate is false): name the version replaced.
    const recreated = must(await api.post(path, lease('op-leader')), 201);
    expect((await sa.client.put(`${path}/op-leader`, { ...body, metadata: { name: 'op-leader', resourceVersion: recreated.metadata.resourceVersion } })).status).toBe(200);
    await role(ns, 'lease-creator', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] }]);
    await bind(ns, 'Role', 'lease-creator', ns, 'updater');
    must(await api.delete(`${path}/op-leader`), 200);
    expect(await allowed(sa.client, 'PUT', `${path}/op-leader`, body)).toBe(201);
  });

  it('scopes a ClusterRole bound by a RoleBinding to the binding namespace', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const other = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'reader');
    const crName = `conformance-cm-reader-${rand()}`;
    must(await api.post(`${rbac}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: crName }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] }), 201);
    cluster().cleanupLater(`${rbac}/clusterroles/${crName}`);
    await bind(ns, 'ClusterRole', crName, ns, 'reader');
    expect(await allowed(sa.client, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).toBe(200);
    expect((await sa.client.get(`/api/v1/namespaces/${other}/configmaps`)).status).toBe(403);
    expect((await sa.client.get('/api/v1/configmaps')).status).toBe(403);
    expect((await sa.client.post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } })).status).toBe(403);
  });

  it('treats a subresource as its own resource in rules (cronjobs/status vs cronjobs)', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'status-writer');
    const cj = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
    must(await api.post(`/apis/batch/v1/namespaces/${ns}/cronjobs`, cj), 201);
    await role(ns, 'status-only', [{ apiGroups: ['batch'], resources: ['cronjobs/status'], verbs: ['get', 'patch', 'update'] }]);
    await bind(ns, 'Role', 'status-only', ns, 'status-writer');
    const path = `/apis/batch/v1/namespaces/${ns}/cronjobs/cj`;
    expect(await allowed(sa.client, 'GET', `${path}/status`)).toBe(200);
    const patched = await sa.client.patch(`${path}/status`, { status: { lastScheduleTime: '2026-11-30T00:09:00Z' } });
    expect(patched.status).toBe(200);
    const main = await sa.client.get(path);
    expect(main.body).toEqual(
      failure(403, 'Forbidden', `cronjobs.batch "cj" is forbidden: User "${sa.user}" cannot get resource "cronjobs" in API group "batch" in the namespace "${ns}"`, { name: 'cj', group: 'batch', kind: 'cronjobs' }),
    );
  });

  it('forbids a subresource the role does not name, with the subresource in the message', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'main-only');
    const cj = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } };
    must(await api.post(`/apis/batch/v1/namespaces/${ns}/cronjobs`, cj), 201);
    await role(ns, 'main-only', [{ apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'patch'] }]);
    await bind(ns, 'Role', 'main-only', ns, 'main-only');
    const path = `/apis/batch/v1/namespaces/${ns}/cronjobs/cj`;
    expect(await allowed(sa.client, 'GET', path)).toBe(200);
    const status = await sa.client.patch(`${path}/status`, { status: {} });
    expect(status.body).toEqual(
      failure(403, 'Forbidden', `cronjobs.batch "cj" is forbidden: User "${sa.user}" cannot patch resource "cronjobs/status" in API group "batch" in the namespace "${ns}"`, {
        name: 'cj',
        group: 'batch',
        kind: 'cronjobs',
      }),
    );
  });

  it('lists the requester\'s rules in a namespace with a SelfSubjectRulesReview (kubectl auth can-i --list)', async () => {
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'lister');
    await role(ns, 'cm-reader', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['x'], verbs: ['get', 'list'] }]);
    await bind(ns, 'Role', 'cm-reader', ns, 'lister');
    type Review = { status?: { resourceRules: unknown[]; nonResourceRules: unknown[] } };
    const review = (namespace: string) => sa.client.post<Review>('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } });
    const granted = { verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['x'] };
    const res = await eventually(async () => {
      const r = await review(ns);
      return JSON.stringify(r.body?.status?.resourceRules ?? []).includes(JSON.stringify(granted)) ? r : undefined;
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'SelfSubjectRulesReview', apiVersion: 'authorization.k8s.io/v1', status: { incomplete: false } });
    // Every authenticated user may review itself (system:basic-user) and read discovery (system:discovery).
    expect(res.body.status?.resourceRules).toContainEqual({ verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] });
    expect(res.body.status?.nonResourceRules).toContainEqual(expect.objectContaining({ verbs: ['get'], nonResourceURLs: expect.arrayContaining(['/api', '/apis']) }));
    // The Role counts only in its namespace.
    const elsewhere = must(await review('default'), 201);
    expect(JSON.stringify(elsewhere.status?.resourceRules)).not.toContain('configmaps');
    const missing = await review('');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message: 'no namespace on request' });
  });

  it('matches wildcard verbs and resources within the rule\'s API group only', async () => {
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'batch-admin');
    await role(ns, 'batch-all', [{ apiGroups: ['batch'], resources: ['*'], verbs: ['*'] }]);
    await bind(ns, 'Role', 'batch-all', ns, 'batch-admin');
    expect(await allowed(sa.client, 'GET', `/apis/batch/v1/namespaces/${ns}/jobs`)).toBe(200);
    expect((await sa.client.get(`/apis/batch/v1/namespaces/${ns}/cronjobs`)).status).toBe(200);
    expect((await sa.client.get(`/api/v1/namespaces/${ns}/configmaps`)).status).toBe(403);
    expect((await sa.client.get(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`)).status).toBe(403);
  });

  it('grants through a Group subject (all ServiceAccounts of a namespace)', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'member');
    await role(ns, 'lease-reader', [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list'] }]);
    const body = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'all-sas' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lease-reader' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `system:serviceaccounts:${ns}` }],
    };
    must(await api.post(`${rbac}/namespaces/${ns}/rolebindings`, body), 201);
    expect(await allowed(sa.client, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`)).toBe(200);
  });

  it('authorizes non-resource URLs from ClusterRole nonResourceURLs', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('rbac');
    const sa = await cluster().serviceAccount(ns, 'scraper');
    const denied = await sa.client.get('/metrics', { accept: '*/*' });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, message: `forbidden: User "${sa.user}" cannot get path "/metrics"` });
    const crName = `conformance-metrics-${rand()}`;
    must(await api.post(`${rbac}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: crName }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] }), 201);
    cluster().cleanupLater(`${rbac}/clusterroles/${crName}`);
    const crbName = `conformance-metrics-${rand()}`;
    must(
      await api.post(`${rbac}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: crbName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: crName },
        subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
      }),
      201,
    );
    cluster().cleanupLater(`${rbac}/clusterrolebindings/${crbName}`);
    // Any answer but 403: the test server need not serve /metrics, a real one answers 200.
    expect(await allowed(sa.client, 'GET', '/metrics')).not.toBe(403);
  });
});
