/**
 * Garbage collection of ownerReferences: Background deletes dependents after the owner, Orphan keeps
 * them and strips the reference, Foreground keeps the owner (finalizer `foregroundDeletion`) until the
 * blocking dependents are gone. A real controller-manager took ≈ 0.75 s for a known type; the suite polls
 * up to 10 s, and up to 150 s on a real cluster for an owner of a type created just before (see below).
 */
import { describe, expect, it } from 'vitest';
import { cmPath, configMap, eventually, isRealCluster, must, useCluster, useWidgets } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

const gone = async (path: string): Promise<true | undefined> => ((await cluster().api.get(path)).status === 404 ? true : undefined);

async function ownerAndChild(ns: string, childFinalizers: string[] = []): Promise<{ ownerUid: string }> {
  const { api } = cluster();
  const owner = must(await api.post(cmPath(ns), configMap('owner')), 201);
  const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
  must(await api.post(cmPath(ns), configMap('child', { metadata: { ownerReferences: [ref], finalizers: childFinalizers } })), 201);
  return { ownerUid: owner.metadata.uid ?? '' };
}

const deleteWith = (ns: string, name: string, propagationPolicy: string) =>
  cluster().api.delete(cmPath(ns, name), { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy } });

/**
 * How long the dependents of a custom resource owner may take. The file's Widget CRD is new, and a real
 * garbage collector learns of a new resource type only on its discovery resync (every 30 s in
 * kube-controller-manager); until then it retries the unknown owner with exponential backoff
 * (`restMappingError` → `requeueItem`), so the deletion can land a retry after the resync, 60 s or
 * more after the owner is gone. The test server's collector knows every type at once.
 */
const newCustomTypeGcMs = isRealCluster ? 150_000 : 10_000;

describe('garbage collection', () => {
  it('deletes dependents after a Background delete of the owner', async () => {
    const ns = await cluster().namespace('gc');
    await ownerAndChild(ns);
    expect((await deleteWith(ns, 'owner', 'Background')).status).toBe(200);
    expect((await cluster().api.get(cmPath(ns, 'owner'))).status).toBe(404);
    await eventually(() => gone(cmPath(ns, 'child')), 10_000);
  });

  it('deletes dependents of a custom resource owner when the owner is deleted with the default policy', async () => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('gc');
    const owner = must(await api.post(w.path(ns), w.body('w1')), 201);
    const ref = { apiVersion: w.apiVersion, kind: 'Widget', name: 'w1', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
    // OwnerReferencesPermissionEnforcement (on in many clusters) maps the owner's kind to check delete
    // rights; a real apiserver's RESTMapper learns a CRD created moments ago on its next discovery
    // refresh, and until then refuses blockOwnerDeletion with 403 "cannot find RESTMapping".
    await eventually(async () => {
      const res = await api.post(cmPath(ns), configMap('child-of-w1', { metadata: { ownerReferences: [ref] } }));
      if (res.status === 403 && res.text.includes('cannot find RESTMapping')) return undefined;
      return must(res, 201);
    }, isRealCluster ? 60_000 : 1_000, 500);
    must(await api.delete(w.path(ns, 'w1')), 200);
    await eventually(() => gone(cmPath(ns, 'child-of-w1')), newCustomTypeGcMs, isRealCluster ? 1_000 : 50);
  }, newCustomTypeGcMs + 70_000);

  it('keeps dependents and removes their ownerReferences after an Orphan delete', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('gc');
    await ownerAndChild(ns);
    expect((await deleteWith(ns, 'owner', 'Orphan')).status).toBe(200);
    await eventually(() => gone(cmPath(ns, 'owner')), 10_000);
    const child = await eventually(async () => {
      const c = must(await api.get(cmPath(ns, 'child')), 200);
      return c.metadata.ownerReferences === undefined || c.metadata.ownerReferences.length === 0 ? c : undefined;
    }, 10_000);
    expect(child.metadata.deletionTimestamp).toBeUndefined();
  });

  it('holds the owner with the foregroundDeletion finalizer until blocking dependents are gone', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('gc');
    const { ownerUid } = await ownerAndChild(ns, ['example.com/hold']);
    const res = await deleteWith(ns, 'owner', 'Foreground');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'owner', uid: ownerUid } });
    expect(res.body.metadata.finalizers).toContain('foregroundDeletion');
    expect(res.body.metadata.deletionTimestamp).toEqual(expect.any(String));
    // The GC deletes the dependent; its own finalizer keeps it (and so the owner) around.
    const child = await eventually(async () => {
      const c = must(await api.get(cmPath(ns, 'child')), 200);
      return c.metadata.deletionTimestamp ? c : undefined;
    }, 10_000);
    expect(child.metadata.finalizers).toEqual(['example.com/hold']);
    const owner = must(await api.get(cmPath(ns, 'owner')), 200);
    expect(owner.metadata.finalizers).toContain('foregroundDeletion');
    must(await api.patch(cmPath(ns, 'child'), { metadata: { finalizers: null } }), 200);
    await eventually(() => gone(cmPath(ns, 'child')), 10_000);
    await eventually(() => gone(cmPath(ns, 'owner')), 10_000);
  });

  it('deletes the owner at once when a Foreground delete finds no dependents', async () => {
    const ns = await cluster().namespace('gc');
    must(await cluster().api.post(cmPath(ns), configMap('lonely')), 201);
    expect((await deleteWith(ns, 'lonely', 'Foreground')).status).toBe(200);
    await eventually(() => gone(cmPath(ns, 'lonely')), 10_000);
  });

  it('deletes a dependent whose owner no longer exists', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('gc');
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-4000-8000-000000000000' };
    must(await api.post(cmPath(ns), configMap('orphaned', { metadata: { ownerReferences: [ref] } })), 201);
    await eventually(() => gone(cmPath(ns, 'orphaned')), 10_000);
  });
});
