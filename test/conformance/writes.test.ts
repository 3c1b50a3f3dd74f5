/**
 * Writes: create/get/update/patch/delete with Kubernetes' exact error Status bodies (recorded in
 * error-409-*.json, error-404-notfound.json, cr-update-without-resourceversion.json,
 * error-jsonpatch-test-failed.json), dryRun=All on every write, and the status subresource rules.
 */
import { describe, expect, it } from 'vitest';
import { cmPath, configMap, eventually, failure, must, useCluster, useWidgets } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

describe('writes', () => {
  it('answers a second create of the same name with 409 AlreadyExists', async () => {
    const ns = await cluster().namespace('writes');
    must(await cluster().api.post(cmPath(ns), configMap('a')), 201);
    const res = await cluster().api.post(cmPath(ns), configMap('a'));
    expect(res.status).toBe(409);
    expect(res.body).toEqual(failure(409, 'AlreadyExists', 'configmaps "a" already exists', { name: 'a', kind: 'configmaps' }));
  });

  it('answers a get of a missing object with 404 NotFound', async () => {
    const ns = await cluster().namespace('writes');
    const res = await cluster().api.get(cmPath(ns, 'missing'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual(failure(404, 'NotFound', 'configmaps "missing" not found', { name: 'missing', kind: 'configmaps' }));
  });

  it('names the group of a custom resource in 404 and 409 bodies', async () => {
    const w = widgets();
    const ns = await cluster().namespace('writes');
    const missing = await cluster().api.get(w.path(ns, 'nope'));
    expect(missing.body).toEqual(failure(404, 'NotFound', `widgets.${w.group} "nope" not found`, { name: 'nope', group: w.group, kind: 'widgets' }));
    must(await cluster().api.post(w.path(ns), w.body('w1')), 201);
    const dup = await cluster().api.post(w.path(ns), w.body('w1'));
    expect(dup.body).toEqual(failure(409, 'AlreadyExists', `widgets.${w.group} "w1" already exists`, { name: 'w1', group: w.group, kind: 'widgets' }));
  });

  it('answers an update with a stale resourceVersion with 409 Conflict', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('writes');
    const v1 = must(await api.post(cmPath(ns), configMap('a')), 201);
    must(await api.put(cmPath(ns, 'a'), { ...v1, data: { k: 'newer' } }), 200);
    const res = await api.put(cmPath(ns, 'a'), { ...v1, data: { k: 'stale' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(
      failure(409, 'Conflict', 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again', {
        name: 'a',
        kind: 'configmaps',
      }),
    );
    expect(must(await api.get(cmPath(ns, 'a')), 200)).toMatchObject({ data: { k: 'newer' } });
  });

  it('allows an unconditional update of a ConfigMap but refuses one of a custom resource with 422', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('writes');
    must(await api.post(cmPath(ns), configMap('a')), 201);
    expect((await api.put(cmPath(ns, 'a'), configMap('a', { data: { k: 'unconditional' } }))).status).toBe(200);
    must(await api.post(w.path(ns), w.body('w1')), 201);
    const res = await api.put(w.path(ns, 'w1'), w.body('w1', { schedule: '@hourly' }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      details: { name: 'w1', group: w.group, kind: 'widgets', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.resourceVersion' }] },
    });
    expect(res.body.message).toMatch(new RegExp(`^widgets\\.${w.group.replace(/\./g, '\\.')} "w1" is invalid: metadata\\.resourceVersion: Invalid value: .*must be specified for an update$`));
  });

  it('refuses an unconditional update of a Lease with 422 (leaseStrategy.AllowUnconditionalUpdate is false)', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('writes');
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
    const created = must(await api.post(path, { ...body, spec: {} }), 201);
    const res = await api.put(`${path}/l1`, body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(
      failure(422, 'Invalid', 'leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update', {
        name: 'l1',
        group: 'coordination.k8s.io',
        kind: 'leases',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }],
      }),
    );
    expect((await api.put(`${path}/l1`, { ...body, metadata: { name: 'l1', resourceVersion: created.metadata.resourceVersion } })).status).toBe(200);
  });

  it('applies a JSON merge patch, where null removes a key', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('writes');
    must(await api.post(cmPath(ns), configMap('a', { data: { keep: '1', drop: '2' } })), 201);
    const res = await api.patch(cmPath(ns, 'a'), { data: { drop: null, add: '3' }, metadata: { labels: { x: 'y' } } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ keep: '1', add: '3' });
    expect(res.body.metadata.labels).toEqual({ x: 'y' });
  });

  it('applies a JSON patch (RFC 6902) with add, replace, remove and a passing test', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('writes');
    must(await api.post(cmPath(ns), configMap('a', { data: { a: '1', b: '2' } })), 201);
    const ops = [
      { op: 'test', path: '/data/a', value: '1' },
      { op: 'replace', path: '/data/a', value: '10' },
      { op: 'remove', path: '/data/b' },
      { op: 'add', path: '/data/c', value: '3' },
    ];
    const res = await api.patch(cmPath(ns, 'a'), ops, { contentType: 'application/json-patch+json' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ a: '10', c: '3' });
  });

  it('rejects a JSON patch whose test operation fails with 422 and changes nothing', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('writes');
    const created = must(await api.post(cmPath(ns), configMap('a', { data: { a: '1' } })), 201);
    const ops = [
      { op: 'test', path: '/data/a', value: 'other' },
      { op: 'replace', path: '/data/a', value: '2' },
    ];
    const res = await api.patch(cmPath(ns, 'a'), ops, { contentType: 'application/json-patch+json' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, message: 'the server rejected our request due to an error in our request' });
    const after = must(await api.get(cmPath(ns, 'a')), 200);
    expect(after.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(after.data).toEqual({ a: '1' });
  });

  it.each(['Background', 'Foreground', 'Orphan'])('deletes with propagationPolicy %s', async (propagationPolicy) => {
    const { api } = cluster();
    const ns = await cluster().namespace('writes');
    const created = must(await api.post(cmPath(ns), configMap('a')), 201);
    const res = await api.delete(cmPath(ns, 'a'), { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy } });
    expect(res.status).toBe(200);
    if (propagationPolicy === 'Background') {
      expect(res.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'a', kind: 'configmaps', uid: created.metadata.uid } });
    }
    // Foreground and Orphan add a finalizer that the garbage collector removes right away (no dependents).
    await eventually(async () => ((await api.get(cmPath(ns, 'a'))).status === 404 ? true : undefined), 10_000);
  });

  it('answers a custom resource delete with a Success Status naming group, plural and uid', async () => {
    const w = widgets();
    const ns = await cluster().namespace('writes');
    const created = must(await cluster().api.post(w.path(ns), w.body('gone')), 201);
    const res = await cluster().api.delete(w.path(ns, 'gone'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'gone', group: w.group, kind: 'widgets', uid: created.metadata.uid } });
  });
});

describe('dryRun=All', () => {
  it('create returns the would-be object and stores nothing', async () => {
    const ns = await cluster().namespace('dry');
    const res = await cluster().api.post(cmPath(ns), configMap('a'), { query: { dryRun: 'All' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'a', namespace: ns }, data: { k: 'v' } });
    expect((await cluster().api.get(cmPath(ns, 'a'))).status).toBe(404);
  });

  it.each([
    ['update', 'PUT'],
    ['merge patch', 'PATCH'],
  ])('%s returns the changed object and stores nothing', async (_, method) => {
    const { api } = cluster();
    const ns = await cluster().namespace('dry');
    const created = must(await api.post(cmPath(ns), configMap('a')), 201);
    const body = method === 'PUT' ? { ...created, data: { k: 'changed' } } : { data: { k: 'changed' } };
    const res = await api.request(method, cmPath(ns, 'a'), {
      body,
      query: { dryRun: 'All' },
      ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ k: 'changed' });
    const after = must(await api.get(cmPath(ns, 'a')), 200);
    expect(after.data).toEqual({ k: 'v' });
    expect(after.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('delete answers Success and keeps the object', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('dry');
    const created = must(await api.post(cmPath(ns), configMap('a')), 201);
    const res = await api.delete(cmPath(ns, 'a'), { query: { dryRun: 'All' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'a', kind: 'configmaps', uid: created.metadata.uid } });
    expect((await api.get(cmPath(ns, 'a'))).status).toBe(200);
  });
});

describe('status subresource', () => {
  const condition = { type: 'Ready', status: 'True', reason: 'Ok', message: 'fine', lastTransitionTime: '2026-11-30T00:00:00Z' };

  it('drops status sent with a create', async () => {
    const w = widgets();
    const ns = await cluster().namespace('status');
    const res = await cluster().api.post(w.path(ns), w.body('w1', { schedule: '@daily' }, { status: { observedGeneration: 5 } }));
    expect(res.status).toBe(201);
    expect(res.body.status).toBeUndefined();
  });

  it('ignores status changes sent to the main endpoint', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('status');
    must(await api.post(w.path(ns), w.body('w1')), 201);
    const res = await api.patch(w.path(ns, 'w1'), { spec: { size: 5 }, status: { observedGeneration: 9 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ spec: { size: 5 } });
    expect(res.body.status).toBeUndefined();
  });

  it('changes only status through /status, ignoring spec and keeping generation', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('status');
    must(await api.post(w.path(ns), w.body('w1')), 201);
    const res = await api.patch(w.path(ns, 'w1') + '/status', { spec: { size: 9 }, status: { observedGeneration: 1, conditions: [condition] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ spec: { size: 3 }, status: { observedGeneration: 1, conditions: [condition] } });
    expect(res.body.metadata.generation).toBe(1);
    const got = must(await api.get(w.path(ns, 'w1') + '/status'), 200);
    expect(got).toMatchObject({ kind: 'Widget', spec: { size: 3 }, status: { observedGeneration: 1 } });
  });

  it('validates status written through /status', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('status');
    must(await api.post(w.path(ns), w.body('w1')), 201);
    const res = await api.patch(w.path(ns, 'w1') + '/status', { status: { conditions: [{ ...condition, status: 'Maybe' }] } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      reason: 'Invalid',
      details: { name: 'w1', group: w.group, kind: 'Widget' },
    });
    const causes = (res.body.details as { causes: Array<{ reason: string; field: string; message: string }> }).causes;
    // 1.20 named the field status.conditions.status; current servers add the index.
    expect(causes).toContainEqual({ reason: 'FieldValueNotSupported', field: expect.stringMatching(/^status\.conditions(\[0\])?\.status$/), message: 'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"' });
  });
});
