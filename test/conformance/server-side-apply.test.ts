/**
 * Server-side apply (`PATCH` with `application/apply-patch+yaml`, what `kubectl apply --server-side`
 * and Argo CD's ServerSideApply send): field ownership per manager in `metadata.managedFields`
 * (FieldsV1), removal of what a manager stops applying unless another manager owns it, 409 conflicts
 * naming the other manager and the field, and `force=true` taking the field over.
 */
import { describe, expect, it } from 'vitest';
import { cmPath, dig, failure, must, useCluster, useWidgets, withQuery, type Doc } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

const APPLY = 'application/apply-patch+yaml';

/** PATCH `path` with an applied configuration as `manager`. */
function apply(path: string, config: unknown, manager: string, force = false) {
  return cluster().api.request<Doc>('PATCH', withQuery(path, { fieldManager: manager, ...(force ? { force: 'true' } : {}) }), { body: config, contentType: APPLY });
}

function cm(ns: string, name: string, data: Record<string, string>, labels?: Record<string, string>): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data };
}

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
  time?: string;
}

const entries = (obj: Doc): Entry[] => (obj.metadata.managedFields ?? []) as Entry[];
const managers = (obj: Doc): string[] => entries(obj).map((e) => `${e.manager}/${e.operation}`).sort();

describe('server-side apply', () => {
  it('creates the object and records the applied fields as the manager\'s Apply entry in FieldsV1', async () => {
    const ns = await cluster().namespace('ssa');
    const res = await apply(cmPath(ns, 'c'), cm(ns, 'c', { a: '1', b: '2' }, { x: '1' }), 'ssa-a');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toEqual({ a: '1', b: '2' });
    expect(entries(res.body)).toEqual([
      { manager: 'ssa-a', operation: 'Apply', apiVersion: 'v1', time: expect.any(String), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:x': {} } } } },
    ]);
  });

  it('records a non-apply write as an Update entry of its fieldManager that owns what it changed', async () => {
    const ns = await cluster().namespace('ssa');
    must(await apply(cmPath(ns, 'c'), cm(ns, 'c', { a: '1' }), 'ssa-a'), 201);
    const patched = must(await cluster().api.patch(withQuery(cmPath(ns, 'c'), { fieldManager: 'editor' }), { data: { other: 'o' } }), 200);
    const editor = entries(patched).find((e) => e.manager === 'editor');
    expect(editor).toEqual({ manager: 'editor', operation: 'Update', apiVersion: 'v1', time: expect.any(String), fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:other': {} } } });
  });

  it('removes a field the manager stops applying unless another manager still owns it', async () => {
    const ns = await cluster().namespace('ssa');
    const path = cmPath(ns, 'c');
    must(await apply(path, cm(ns, 'c', { a: '1', b: '2', c: '3' }, { keep: 'k', drop: 'd' }), 'ssa-a'), 201);
    // ssa-b applies b with the same value: shared ownership, no conflict.
    must(await apply(path, cm(ns, 'c', { b: '2' }), 'ssa-b'), 200);
    const dropped = must(await apply(path, cm(ns, 'c', { a: '1' }, { keep: 'k' }), 'ssa-a'), 200);
    expect(dropped.data).toEqual({ a: '1', b: '2' });
    expect(dropped.metadata.labels).toEqual({ keep: 'k' });
    expect(managers(dropped)).toEqual(['ssa-a/Apply', 'ssa-b/Apply']);
    // Once ssa-b stops applying b too, nobody owns it and it goes.
    const last = must(await apply(path, cm(ns, 'c', { z: '26' }), 'ssa-b'), 200);
    expect(last.data).toEqual({ a: '1', z: '26' });
  });

  it('answers 409 naming the other manager and the field, and force=true takes the field over', async () => {
    const ns = await cluster().namespace('ssa');
    const path = cmPath(ns, 'c');
    must(await apply(path, cm(ns, 'c', { a: '1' }), 'ssa-a'), 201);
    const edited = must(await cluster().api.patch(withQuery(path, { fieldManager: 'editor' }), { data: { a: 'edited' } }), 200);
    const res = await apply(path, cm(ns, 'c', { a: '1' }), 'ssa-a');
    expect(res.status).toBe(409);
    expect(res.body).toEqual(
      failure(409, 'Conflict', 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a', {
        causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.a' }],
      }),
    );
    expect(must(await cluster().api.get(path), 200).metadata.resourceVersion).toBe(edited.metadata.resourceVersion);
    // Applying the value the other manager set is no conflict.
    must(await apply(path, cm(ns, 'c', { a: 'edited' }), 'ssa-a'), 200);
    const forced = must(await apply(path, cm(ns, 'c', { a: 'forced' }), 'ssa-a', true), 200);
    expect(forced.data).toEqual({ a: 'forced' });
    expect(managers(forced)).toEqual(['ssa-a/Apply']);
  });

  it('lists every conflict, grouped by manager, when several fields conflict', async () => {
    const ns = await cluster().namespace('ssa');
    const path = cmPath(ns, 'c');
    must(await cluster().api.post(withQuery(cmPath(ns), { fieldManager: 'creator' }), cm(ns, 'c', { a: '1', b: '2' })), 201);
    const res = await apply(path, cm(ns, 'c', { a: 'x', b: 'y' }), 'ssa-a');
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('Apply failed with 2 conflicts: conflicts with "creator" using v1:\n- .data.a\n- .data.b');
  });

  it('merges keyed lists by key and removes the item the manager dropped', async () => {
    const ns = await cluster().namespace('ssa');
    const path = `/apis/batch/v1/namespaces/${ns}/cronjobs/nightly`;
    const cronJob = (containers: Array<{ name: string; image: string }>) => ({
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly', namespace: ns },
      spec: { schedule: '@daily', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers } } } } },
    });
    must(await apply(path, cronJob([{ name: 'a', image: 'busybox:1.36' }, { name: 'b', image: 'busybox:1.36' }]), 'ssa-a'), 201);
    const res = must(await apply(path, cronJob([{ name: 'a', image: 'busybox:1.37' }]), 'ssa-a'), 200);
    const containers = dig(res, 'spec.jobTemplate.spec.template.spec.containers') as Array<{ name: string; image: string }>;
    expect(containers.map((c) => [c.name, c.image])).toEqual([['a', 'busybox:1.37']]);
    const owned = dig(entries(res).find((e) => e.operation === 'Apply')?.fieldsV1, 'f:spec.f:jobTemplate.f:spec.f:template.f:spec.f:containers');
    expect(owned).toEqual({ 'k:{"name":"a"}': { '.': {}, 'f:image': {}, 'f:name': {} } });
  });

  it('records a write of the scale subresource as the scaler\'s, so an apply of another replica count conflicts with it', async (ctx) => {
    const ns = await cluster().namespace('ssa');
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web`;
    const deployment = (replicas: number) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: ns },
      spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
    });
    must(await apply(path, deployment(1), 'ssa-a'), 201);
    const scaled = await cluster().api.patch(withQuery(`${path}/scale`, { fieldManager: 'scaler' }), { spec: { replicas: 3 } });
    expect(scaled.status, scaled.text).toBe(200);
    expect(scaled.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'web', namespace: ns }, spec: { replicas: 3 }, status: { selector: 'app=web' } });
    const live = must(await cluster().api.get(path), 200);
    expect(dig(live, 'spec.replicas')).toBe(3);
    if (!(await cluster().has(ctx, 'scale-subresource-ownership'))) {
      // No entry for the scaler: the applier still owns spec.replicas and takes it back without conflict.
      expect(entries(live).map((e) => e.manager)).not.toContain('scaler');
      const reapplied = must(await apply(path, deployment(2), 'ssa-a'), 200);
      expect(dig(reapplied, 'spec.replicas')).toBe(2);
      return;
    }
    expect(entries(live).find((e) => e.manager === 'scaler')).toMatchObject({ operation: 'Update', apiVersion: 'apps/v1', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    const res = await apply(path, deployment(2), 'ssa-a');
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using apps/v1: .spec.replicas');
  });

  it('removes a custom resource field the manager stops applying, and the schema default comes back', async () => {
    const ns = await cluster().namespace('ssa');
    const w = widgets();
    const path = w.path(ns, 'w1');
    const created = must(await apply(path, w.body('w1', { schedule: '@daily', size: 5, tags: ['a', 'b'] }, { metadata: { name: 'w1', namespace: ns } }), 'ssa-a'), 201);
    expect(created.spec).toMatchObject({ size: 5, tags: ['a', 'b'] });
    const res = must(await apply(path, w.body('w1', { schedule: '@daily' }, { metadata: { name: 'w1', namespace: ns } }), 'ssa-a'), 200);
    expect(res.spec).toMatchObject({ schedule: '@daily', size: 3 });
    expect(res.spec).not.toHaveProperty('tags');
  });

  it('keeps the resourceVersion when an apply changes nothing', async () => {
    const ns = await cluster().namespace('ssa');
    const first = must(await apply(cmPath(ns, 'c'), cm(ns, 'c', { a: '1' }), 'ssa-a'), 201);
    const again = must(await apply(cmPath(ns, 'c'), cm(ns, 'c', { a: '1' }), 'ssa-a'), 200);
    expect(again.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
  });

  it('refuses force on a non-apply patch with 422, as ValidatePatchOptions does', async () => {
    const ns = await cluster().namespace('ssa');
    must(await cluster().api.post(cmPath(ns), cm(ns, 'c', { a: '1' })), 201);
    const res = await cluster().api.patch(withQuery(cmPath(ns, 'c'), { force: 'false' }), { data: { a: '2' } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(
      failure(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch', {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [{ reason: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch', field: 'force' }],
      }),
    );
  });

  it('refuses a fieldManager longer than 128 bytes on any write with 422', async () => {
    const ns = await cluster().namespace('ssa');
    const res = await cluster().api.post(withQuery(cmPath(ns), { fieldManager: 'm'.repeat(129) }), cm(ns, 'c', { a: '1' }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { kind: 'CreateOptions', causes: [{ reason: 'FieldValueTooLong', field: 'fieldManager' }] } });
  });

  it('refuses an apply without fieldManager with 422', async () => {
    const ns = await cluster().namespace('ssa');
    const res = await cluster().api.request('PATCH', cmPath(ns, 'c'), { body: cm(ns, 'c', { a: '1' }), contentType: APPLY });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ reason: 'FieldValueRequired', field: 'fieldManager' }] } });
  });
});
