/**
 * Object metadata maintained by the server: uid, creationTimestamp, resourceVersion (opaque, new on
 * every write, unchanged on a no-op write), generation for status-subresource kinds, generateName,
 * finalizers with deletionTimestamp, ownerReferences.
 */
import { describe, expect, it } from 'vitest';
import { cmPath, configMap, must, useCluster, useWidgets, type Doc } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

const rfc3339Seconds = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe('metadata', () => {
  it('sets uid, creationTimestamp (RFC 3339, seconds, UTC) and a string resourceVersion on create', async () => {
    const ns = await cluster().namespace('meta');
    const res = await cluster().api.post(cmPath(ns), configMap('a'));
    expect(res.status).toBe(201);
    const m = res.body.metadata;
    expect(m).toMatchObject({ name: 'a', namespace: ns });
    expect(m.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(m.creationTimestamp).toMatch(rfc3339Seconds);
    expect(typeof m.resourceVersion).toBe('string');
    expect(m.resourceVersion).not.toBe('');
  });

  it('gives every write a new resourceVersion and keeps uid and creationTimestamp', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    const created = must(await api.post(cmPath(ns), configMap('a')), 201);
    const seen = new Set([created.metadata.resourceVersion]);
    let current: Doc = created;
    for (const value of ['1', '2', '3']) {
      current = must(await api.put(cmPath(ns, 'a'), { ...current, data: { k: value } }), 200);
      expect(seen.has(current.metadata.resourceVersion)).toBe(false);
      seen.add(current.metadata.resourceVersion);
      expect(current.metadata.uid).toBe(created.metadata.uid);
      expect(current.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    }
    const patched = must(await api.patch(cmPath(ns, 'a'), { data: { k: 'patched' } }), 200);
    expect(seen.has(patched.metadata.resourceVersion)).toBe(false);
  });

  it('keeps the resourceVersion when an update or patch changes nothing', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    const created = must(await api.post(cmPath(ns), configMap('a')), 201);
    const updated = must(await api.put(cmPath(ns, 'a'), created), 200);
    expect(updated.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    const patched = must(await api.patch(cmPath(ns, 'a'), { data: { k: 'v' } }), 200);
    expect(patched.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('bumps generation only for spec changes on a kind with a status subresource', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('meta');
    const created = must(await api.post(w.path(ns), w.body('w1', { schedule: '0 2 * * *' })), 201);
    expect(created.metadata.generation).toBe(1);
    const labelled = must(await api.patch(w.path(ns, 'w1'), { metadata: { labels: { a: 'b' } } }), 200);
    expect(labelled.metadata.generation).toBe(1);
    const annotated = must(await api.patch(w.path(ns, 'w1'), { metadata: { annotations: { note: 'x' } } }), 200);
    expect(annotated.metadata.generation).toBe(1);
    const status = must(await api.patch(w.path(ns, 'w1') + '/status', { status: { observedGeneration: 1 } }), 200);
    expect(status.metadata.generation).toBe(1);
    const spec = must(await api.patch(w.path(ns, 'w1'), { spec: { size: 5 } }), 200);
    expect(spec.metadata.generation).toBe(2);
    const again = must(await api.patch(w.path(ns, 'w1'), { spec: { size: 6 } }), 200);
    expect(again.metadata.generation).toBe(3);
  });

  it('names an object from generateName plus five random characters', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' }, data: {} };
    const a = must(await api.post(cmPath(ns), body), 201);
    const b = must(await api.post(cmPath(ns), body), 201);
    expect(a.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(b.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(a.metadata.name).not.toBe(b.metadata.name);
    expect(a.metadata.generateName).toBe('gen-');
    expect((await api.get(cmPath(ns, a.metadata.name))).status).toBe(200);
  });

  it('keeps labels and annotations as sent', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    const metadata = { labels: { app: 'x', 'example.com/tier': 'web' }, annotations: { 'example.com/note': 'hello world' } };
    must(await api.post(cmPath(ns), configMap('a', { metadata })), 201);
    const got = must(await api.get(cmPath(ns, 'a')), 200);
    expect(got.metadata).toMatchObject(metadata);
  });

  it('keeps an object with finalizers, marked with deletionTimestamp, until the last finalizer is removed', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    must(await api.post(cmPath(ns), configMap('held', { metadata: { finalizers: ['example.com/hold'] } })), 201);
    const del = await api.delete(cmPath(ns, 'held'));
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    expect(del.body.metadata.deletionTimestamp).toMatch(rfc3339Seconds);
    const got = must(await api.get(cmPath(ns, 'held')), 200);
    expect(got.metadata.deletionTimestamp).toBe(del.body.metadata.deletionTimestamp);
    expect(got.metadata.deletionGracePeriodSeconds).toBe(0);
    const released = await api.patch(cmPath(ns, 'held'), { metadata: { finalizers: null } });
    expect(released.status).toBe(200);
    expect((await api.get(cmPath(ns, 'held'))).status).toBe(404);
  });

  it('refuses to add a finalizer to an object that is being deleted', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    must(await api.post(cmPath(ns), configMap('held', { metadata: { finalizers: ['example.com/a'] } })), 201);
    must(await api.delete(cmPath(ns, 'held')), 200);
    const res = await api.patch(cmPath(ns, 'held'), { metadata: { finalizers: ['example.com/a', 'example.com/b'] } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    // 1.20 lists the cause twice (rest.BeforeUpdate's generic ObjectMeta check, then the ConfigMap
    // strategy's): what counts is that every cause is this one.
    const causes = (res.body.details as { causes: Array<{ field: string; reason: string; message: string }> }).causes;
    expect(causes.length).toBeGreaterThanOrEqual(1);
    for (const c of causes) expect(c).toEqual({ field: 'metadata.finalizers', reason: 'FieldValueForbidden', message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}' });
    must(await api.patch(cmPath(ns, 'held'), { metadata: { finalizers: null } }), 200);
  });

  it('stores ownerReferences as sent', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('meta');
    const owner = must(await api.post(cmPath(ns), configMap('owner')), 201);
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
    const child = must(await api.post(cmPath(ns), configMap('child', { metadata: { ownerReferences: [ref] } })), 201);
    expect(child.metadata.ownerReferences).toEqual([ref]);
    expect(must(await api.get(cmPath(ns, 'child')), 200).metadata.ownerReferences).toEqual([ref]);
  });
});

describe('metadata validation', () => {
  it('rejects an invalid label value naming metadata.labels', async () => {
    const ns = await cluster().namespace('meta');
    const res = await cluster().api.post(cmPath(ns), configMap('a', { metadata: { labels: { app: 'bad value!' } } }));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { name: 'a', kind: 'ConfigMap', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.labels' }] } });
    expect(res.body.message).toContain('a valid label must be an empty string or consist of alphanumeric characters');
  });

  it('rejects a name longer than 253 characters', async () => {
    const ns = await cluster().namespace('meta');
    const res = await cluster().api.post(cmPath(ns), configMap('a'.repeat(254)));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ field: 'metadata.name' }] } });
    expect(res.body.message).toContain('must be no more than 253 characters');
  });

  it('rejects an ownerReference without uid and two controller references', async () => {
    const ns = await cluster().namespace('meta');
    const noUid = await cluster().api.post(cmPath(ns), configMap('a', { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: '' }] } }));
    expect(noUid.status).toBe(422);
    const causes = (noUid.body.details as { causes: Array<{ field: string; message: string }> }).causes;
    expect(causes.some((c) => c.field.startsWith('metadata.ownerReferences') && c.message.includes('uid must not be empty'))).toBe(true);
    const ref = (name: string, uid: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid, controller: true });
    const two = await cluster().api.post(cmPath(ns), configMap('b', { metadata: { ownerReferences: [ref('o1', '00000000-0000-4000-8000-000000000001'), ref('o2', '00000000-0000-4000-8000-000000000002')] } }));
    expect(two.status).toBe(422);
    expect(two.body.message).toContain('Only one reference can have Controller set to true');
  });
});
