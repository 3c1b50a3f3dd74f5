/**
 * Request consistency checks and preconditions a controller relies on: names and namespaces must match
 * the URL, the namespace must exist, a resourceVersion inside a patch or a /status update is a
 * precondition, and DeleteOptions preconditions guard deletes.
 */
import { describe, expect, it } from 'vitest';
import { cmPath, configMap, eventually, failure, must, rand, useCluster, useWidgets } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

describe('request consistency and preconditions', () => {
  it('refuses a create in a namespace that does not exist with 404 for the namespace', async () => {
    const ns = `missing-${rand()}`;
    const res = await cluster().api.post(cmPath(ns), configMap('a'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual(failure(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' }));
  });

  it('refuses an update whose body names another object with 400 BadRequest', async () => {
    const ns = await cluster().namespace('pre');
    const a = must(await cluster().api.post(cmPath(ns), configMap('a')), 201);
    const res = await cluster().api.put(cmPath(ns, 'a'), { ...a, metadata: { ...a.metadata, name: 'b' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message: 'the name of the object (b) does not match the name on the URL (a)' });
  });

  it('refuses a create whose body names another namespace with 400 BadRequest', async () => {
    const ns = await cluster().namespace('pre');
    const res = await cluster().api.post(cmPath(ns), configMap('a', { metadata: { namespace: 'elsewhere' } }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message: 'the namespace of the provided object does not match the namespace sent on the request' });
  });

  it('treats a stale resourceVersion inside a merge patch as a precondition (409 Conflict)', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('pre');
    const v1 = must(await api.post(cmPath(ns), configMap('a')), 201);
    must(await api.patch(cmPath(ns, 'a'), { data: { k: 'v2' } }), 200);
    const res = await api.patch(cmPath(ns, 'a'), { metadata: { resourceVersion: v1.metadata.resourceVersion }, data: { k: 'v3' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ reason: 'Conflict', code: 409, details: { name: 'a', kind: 'configmaps' } });
    expect(must(await api.get(cmPath(ns, 'a')), 200).data).toEqual({ k: 'v2' });
  });

  it('answers a /status update with a stale resourceVersion with 409 Conflict naming the custom resource', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('pre');
    const v1 = must(await api.post(w.path(ns), w.body('w1')), 201);
    must(await api.patch(w.path(ns, 'w1'), { spec: { size: 4 } }), 200);
    const res = await api.put(w.path(ns, 'w1') + '/status', { ...v1, status: { observedGeneration: 1 } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(
      failure(409, 'Conflict', `Operation cannot be fulfilled on widgets.${w.group} "w1": the object has been modified; please apply your changes to the latest version and try again`, {
        name: 'w1',
        group: w.group,
        kind: 'widgets',
      }),
    );
  });

  it('honours DeleteOptions preconditions on uid and resourceVersion with a 409 naming the kind, as rest.BeforeDelete builds it', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('pre');
    const a = must(await api.post(cmPath(ns), configMap('a')), 201);
    const wrongUid = '00000000-0000-4000-8000-000000000000';
    const byUid = await api.delete(cmPath(ns, 'a'), { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: wrongUid } } });
    expect(byUid.status).toBe(409);
    expect(byUid.body).toEqual(
      failure(409, 'Conflict', `Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (${wrongUid}) does not match the UID in record (${a.metadata.uid}). The object might have been deleted and then recreated`, { name: 'a', kind: 'ConfigMap' }),
    );
    const v2 = must(await api.patch(cmPath(ns, 'a'), { data: { k: 'v2' } }), 200);
    const byRv = await api.delete(cmPath(ns, 'a'), { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: a.metadata.resourceVersion } } });
    expect(byRv.status).toBe(409);
    expect(byRv.body).toEqual(
      failure(409, 'Conflict', `Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (${a.metadata.resourceVersion}) does not match the ResourceVersion in record (${v2.metadata.resourceVersion}). The object might have been modified`, { name: 'a', kind: 'ConfigMap' }),
    );
    expect((await api.get(cmPath(ns, 'a'))).status).toBe(200);
    const ok = await api.delete(cmPath(ns, 'a'), { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: a.metadata.uid } } });
    expect(ok.status).toBe(200);
  });

  it('names the group and kind of a custom resource in a failed DeleteOptions precondition', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('pre');
    const created = must(await api.post(w.path(ns), w.body('w1')), 201);
    const res = await api.delete(w.path(ns, 'w1'), { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: '1' } } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(
      failure(409, 'Conflict', `Operation cannot be fulfilled on Widget.${w.group} "w1": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`, { name: 'w1', group: w.group, kind: 'Widget' }),
    );
  });

  it('round-trips a Lease spec with microsecond timestamps, as leader election writes it', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('pre');
    const spec = { holderIdentity: 'pod-a_1234', leaseDurationSeconds: 15, acquireTime: '2026-11-30T00:10:00.123456Z', renewTime: '2026-11-30T00:10:05.000001Z', leaseTransitions: 2 };
    const created = must(await api.post(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'op-leader' }, spec }), 201);
    expect(created.spec).toEqual(spec);
    const renewed = must(await api.put(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/op-leader`, { ...created, spec: { ...spec, renewTime: '2026-11-30T00:10:07.500000Z' } }), 200);
    expect(renewed.spec).toEqual({ ...spec, renewTime: '2026-11-30T00:10:07.500000Z' });
  });

  it('deletes the objects of a deleted namespace', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('pre');
    must(await api.post(cmPath(ns), configMap('inside')), 201);
    must(await api.delete(`/api/v1/namespaces/${ns}`), 200);
    await eventually(async () => ((await api.get(`/api/v1/namespaces/${ns}`)).status === 404 ? true : undefined), 30_000, 100);
    expect((await api.get(cmPath(ns, 'inside'))).status).toBe(404);
  });
});
