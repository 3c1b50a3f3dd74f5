/**
 * Defaulting on read from storage (apiextensions-apiserver applies the stored version's structural
 * defaults whenever it decodes an object from etcd): an object stored before its CRD gained a defaulted
 * field reads back with the default on GET, LIST and WATCH, and an update starts from the defaulted
 * object. This is how a v1 BackupSchedule stored by 0.2.0 without `spec.destination.type` reads as
 * `type: PersistentVolumeClaim` (test/apiserver/tests/storage-defaults.test.ts puts one into storage).
 */
import { describe, expect, it } from 'vitest';
import { eventually, must, rand, useCluster, type Doc } from './harness.ts';

const cluster = useCluster();

/** A one-version CRD `Lamp` whose spec has `color`, and `size` with a default once `withSize`. */
function lampCrd(group: string, withSize: boolean): Record<string, unknown> {
  const spec = { color: { type: 'string' }, ...(withSize ? { size: { type: 'integer', default: 3 } } : {}) };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `lamps.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'lamps', singular: 'lamp', kind: 'Lamp', listKind: 'LampList' },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec }, status: { type: 'object', properties: { on: { type: 'boolean' } } } } } } }],
    },
  };
}

describe('defaults on read from storage', () => {
  it('an object stored before its CRD defaulted a field reads back with the default on GET, LIST and WATCH, and keeps it through a status update', async () => {
    const { api } = cluster();
    const group = `d${rand()}.fixtures.example.com`;
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/lamps.${group}`;
    must(await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', lampCrd(group, false)), 201);
    cluster().cleanupLater(crdPath);
    const ns = await cluster().namespace('sdef');
    const path = `/apis/${group}/v1/namespaces/${ns}/lamps`;
    await eventually(async () => ((await api.get(path)).status === 200 ? true : undefined), 15_000);
    must(await api.post(path, { apiVersion: `${group}/v1`, kind: 'Lamp', metadata: { name: 'old' }, spec: { color: 'red' } }), 201);

    // The CRD gains spec.size with a default; the stored object is not rewritten.
    const crd = must(await api.get<Doc>(crdPath), 200);
    must(await api.put(crdPath, { ...lampCrd(group, true), metadata: crd.metadata }), 200);
    const read = await eventually(async () => {
      const doc = must(await api.get<Doc>(`${path}/old`), 200);
      return (doc['spec'] as { size?: number }).size === 3 ? doc : undefined;
    }, 15_000);
    expect(read['spec']).toEqual({ color: 'red', size: 3 });
    const list = must(await api.get<Doc>(path), 200);
    expect((list['items'] as Array<{ spec: unknown }>).map((i) => i.spec)).toEqual([{ color: 'red', size: 3 }]);
    const watch = api.watch(path);
    try {
      const added = await watch.next(10_000);
      expect(added).toMatchObject({ type: 'ADDED', object: { spec: { color: 'red', size: 3 } } });
    } finally {
      watch.close();
    }
    const updated = must(await api.put(`${path}/old/status`, { ...read, status: { on: true } }), 200);
    expect(updated['spec']).toEqual({ color: 'red', size: 3 });
  });
});
