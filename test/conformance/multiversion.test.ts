/**
 * A CRD with two served versions and `conversion.strategy: None` (runs on every cluster): objects are
 * stored in the storage version and served in any served version with only `apiVersion` changed (the
 * target version's schema prunes what it does not declare and defaults what it does); per-version
 * printer columns, discovery and OpenAPI; `status.storedVersions` and the CRD update it protects.
 */
import { describe, expect, it } from 'vitest';
import { dig, eventually, must, rand, useCluster } from './harness.ts';
import { gadgetCrd, installGadgets, type Gadgets } from './harness/gadget-crd.ts';

const cluster = useCluster();
const asTable = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

async function install(storage: 'v1alpha1' | 'v1' = 'v1alpha1'): Promise<Gadgets> {
  const group = `m${rand()}.fixtures.example.com`;
  const gadgets = await installGadgets(cluster().api, group, { storage, conversion: { strategy: 'None' } });
  cluster().cleanupLater(gadgets.crdPath);
  return gadgets;
}

describe('multi-version CRD with conversion None', () => {
  it('serves an object written in v1alpha1 as v1 with only apiVersion changed, pruned and defaulted by the v1 schema', async () => {
    const { api } = cluster();
    const g = await install();
    const ns = await cluster().namespace('mv');
    const created = must(await api.post(g.path('v1alpha1', ns), g.body('v1alpha1', 'a', 'red')), 201);
    expect(created).toMatchObject({ apiVersion: `${g.group}/v1alpha1`, spec: { color: 'red', size: 1 } });
    const asV1 = must(await api.get(g.path('v1', ns, 'a')), 200);
    expect(asV1.apiVersion).toBe(`${g.group}/v1`);
    // None does not move fields: v1 has no spec.color, so it is pruned; spec.size is in both.
    expect(asV1['spec']).toEqual({ size: 1 });
    expect(asV1.metadata).toMatchObject({ name: 'a', uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion });
    const list = must(await api.get(g.path('v1', ns)), 200);
    expect(list).toMatchObject({ kind: 'GadgetList', apiVersion: `${g.group}/v1` });
    expect((list['items'] as Array<{ apiVersion: string }>).map((i) => i.apiVersion)).toEqual([`${g.group}/v1`]);
  });

  it('stores a v1 write in the storage version v1alpha1: fields only v1 declares do not survive', async () => {
    const { api } = cluster();
    const g = await install();
    const ns = await cluster().namespace('mv');
    const created = must(await api.post(g.path('v1', ns), g.body('v1', 'b', 'blue')), 201);
    // The answer is the stored object read back in v1: spec.paint went through v1alpha1 and was pruned.
    expect(created).toMatchObject({ apiVersion: `${g.group}/v1`, spec: { size: 1 } });
    expect(dig(created, 'spec.paint')).toBeUndefined();
    expect(must(await api.get(g.path('v1alpha1', ns, 'b')), 200)['spec']).toEqual({ size: 1 });
  });

  it('prints each version with its own printer columns', async () => {
    const { api } = cluster();
    const g = await install('v1');
    const ns = await cluster().namespace('mv');
    must(await api.post(g.path('v1', ns), g.body('v1', 'c', 'green')), 201);
    const v1 = must(await api.get(g.path('v1', ns), { accept: asTable }), 200);
    const v1alpha1 = must(await api.get(g.path('v1alpha1', ns), { accept: asTable }), 200);
    const names = (t: unknown): string[] => (dig(t, 'columnDefinitions') as Array<{ name: string }>).map((c) => c.name);
    expect(names(v1)).toEqual(['Name', 'Paint', 'Age']);
    expect(names(v1alpha1)).toEqual(['Name', 'Color', 'Age']);
    expect((dig(v1, 'rows') as Array<{ cells: unknown[] }>)[0]?.cells.slice(0, 2)).toEqual(['c', 'green']);
  });

  it('lists both versions in discovery with v1 preferred, and publishes OpenAPI for each', async (ctx) => {
    const { api } = cluster();
    const g = await install();
    const group = must(await api.get(`/apis/${g.group}`), 200);
    expect(group['versions']).toEqual([
      { groupVersion: `${g.group}/v1`, version: 'v1' },
      { groupVersion: `${g.group}/v1alpha1`, version: 'v1alpha1' },
    ]);
    expect(group['preferredVersion']).toEqual({ groupVersion: `${g.group}/v1`, version: 'v1' });
    for (const v of ['v1', 'v1alpha1']) {
      const resources = must(await api.get(`/apis/${g.group}/${v}`), 200);
      expect((resources['resources'] as Array<{ name: string }>).map((r) => r.name).sort()).toEqual(['gadgets', 'gadgets/status']);
    }
    if (!(await cluster().has(ctx, 'openapi-v3'))) {
      expect((await api.get('/openapi/v3')).status).toBe(404);
      return;
    }
    const paths = dig(must(await api.get('/openapi/v3'), 200), 'paths') as Record<string, unknown>;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining([`apis/${g.group}/v1`, `apis/${g.group}/v1alpha1`]));
  });
});

describe('status.storedVersions', () => {
  it('starts with the storage version, gains a new storage version, and keeps a stored version from being removed until /status drops it', async () => {
    const { api } = cluster();
    const g = await install();
    const stored = async (): Promise<unknown> => dig(must(await api.get(g.crdPath), 200), 'status.storedVersions');
    expect(await stored()).toEqual(['v1alpha1']);

    // Switch the storage version to v1: both versions are now stored somewhere.
    const switched = gadgetCrd(g.group, { storage: 'v1', conversion: { strategy: 'None' } });
    let crd = must(await api.get(g.crdPath), 200);
    must(await api.put(g.crdPath, { ...switched, metadata: crd.metadata }), 200);
    expect(await stored()).toEqual(['v1alpha1', 'v1']);

    // Dropping v1alpha1 from spec.versions while it is still listed is refused.
    const v1Only = gadgetCrd(g.group, { storage: 'v1', versions: ['v1'], conversion: { strategy: 'None' } });
    crd = must(await api.get(g.crdPath), 200);
    const refused = await api.put(g.crdPath, { ...v1Only, metadata: crd.metadata });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ reason: 'Invalid', details: { causes: expect.arrayContaining([{ reason: 'FieldValueInvalid', field: 'status.storedVersions[0]', message: 'Invalid value: "v1alpha1": must appear in spec.versions' }]) } });
    expect(refused.body.message).toContain('status.storedVersions[0]: Invalid value: "v1alpha1": must appear in spec.versions');

    // A migration removes it through /status; then the version can go.
    must(await api.patch(`${g.crdPath}/status`, { status: { storedVersions: ['v1'] } }, { contentType: 'application/merge-patch+json' }), 200);
    expect(await stored()).toEqual(['v1']);
    crd = must(await api.get(g.crdPath), 200);
    must(await api.put(g.crdPath, { ...v1Only, metadata: crd.metadata }), 200);
    // A real apiserver stops serving the removed version shortly after the update.
    await eventually(async () => ((await api.get(`/apis/${g.group}/v1alpha1/gadgets`)).status === 404 ? true : undefined), 10_000);
  });

  it('rewrites an object stored in the old version on an unchanged update (storage migration), and skips the next one', async () => {
    const { api } = cluster();
    const g = await install('v1alpha1');
    const ns = await cluster().namespace('mv');
    must(await api.post(g.path('v1alpha1', ns), g.body('v1alpha1', 'm', 'red')), 201);
    const crd = must(await api.get(g.crdPath), 200);
    must(await api.put(g.crdPath, { ...gadgetCrd(g.group, { storage: 'v1', conversion: { strategy: 'None' } }), metadata: crd.metadata }), 200);
    const before = must(await api.get(g.path('v1', ns, 'm')), 200);
    // Same content, but the stored bytes are v1alpha1: the update writes them as v1. A real server
    // switches its storage version when its CRD informer sees the change, a moment later: until then
    // the unchanged update is a no-op, so it is retried (each try carries the current object).
    const migrated = await eventually(async () => {
      const current = must(await api.get(g.path('v1', ns, 'm')), 200);
      const written = must(await api.put(g.path('v1', ns, 'm'), current), 200);
      return written.metadata.resourceVersion !== before.metadata.resourceVersion ? written : undefined;
    }, 10_000, 200);
    expect(migrated.metadata.generation).toBe(before.metadata.generation);
    const again = must(await api.put(g.path('v1', ns, 'm'), migrated), 200);
    expect(again.metadata.resourceVersion).toBe(migrated.metadata.resourceVersion);
  });

  it('refuses a Webhook conversion whose conversionReviewVersions has no version the server speaks', async () => {
    const { api } = cluster();
    const group = `m${rand()}.fixtures.example.com`;
    const crd = gadgetCrd(group, { storage: 'v1', conversion: { strategy: 'Webhook', url: 'https://127.0.0.1:1/convert', caBundle: '' } });
    (dig(crd, 'spec.conversion.webhook') as Record<string, unknown>)['conversionReviewVersions'] = ['v9'];
    const res = await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    if (res.status === 201) cluster().cleanupLater(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`);
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('must include at least one of v1, v1beta1');
  });
});
