import { describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { budgetedTransform, cacheStub, isCacheStub, readWhole } from '../../src/runtime/cache-policy.ts';

const object = (data: string, over: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace: 'ns', uid: 'u', resourceVersion: '7', generation: 2, creationTimestamp: '2026-12-01T00:00:00Z', labels: { a: 'b' }, ...over },
  data: { data },
});

describe('budgetedTransform', () => {
  const policy = { transform: (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, labels: {} } }), maxObjectBytes: 1024 };

  it('keeps what the transform keeps while it fits the budget', () => {
    const kept = budgetedTransform(policy)(object('small'));
    expect(kept['data']).toEqual({ data: 'small' });
    expect(kept.metadata.labels).toEqual({});
    expect(isCacheStub(kept)).toBe(false);
  });

  it('caches an object the transform leaves over the budget as a stub of its identity and controller', () => {
    const controller = { apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: 'db', uid: 'r', controller: true };
    const kept = budgetedTransform(policy)(object('x'.repeat(2_000), { deletionTimestamp: '2026-12-02T00:00:00Z', ownerReferences: [{ apiVersion: 'v1', kind: 'Other', name: 'o', uid: 'o' }, controller] }));
    expect(kept).toEqual({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'ns', uid: 'u', resourceVersion: '7', generation: 2, creationTimestamp: '2026-12-01T00:00:00Z', deletionTimestamp: '2026-12-02T00:00:00Z', ownerReferences: [{ apiVersion: 'kubelings.dev/v1', kind: 'Restore', name: 'db', uid: 'r', controller: true }] },
    });
    expect(isCacheStub(kept)).toBe(true);
  });
});

describe('cacheStub', () => {
  it('keeps no field longer than a name or group/version can be, so a stub is small whatever the object held', () => {
    const huge = 'x'.repeat(100_000);
    const stub = cacheStub({ apiVersion: huge, kind: 'K', metadata: { name: 'n', namespace: huge, uid: 'u', ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: huge, uid: 'o', controller: true }] } });
    expect(stub).toEqual({ kind: 'K', metadata: { name: 'n', uid: 'u' } });
    expect(JSON.stringify(cacheStub(object(huge))).length).toBeLessThan(300);
  });
});

describe('readWhole', () => {
  const notFound = () => Promise.reject(new ApiStatusError(statusErrors.notFound({ group: '', resource: 'configmaps' }, 'cm')));

  it('answers from the cache without a request when it holds the object whole, or nothing', async () => {
    const cached = object('a');
    const get = () => Promise.reject(new Error('no GET expected'));
    await expect(readWhole(cached, get)).resolves.toBe(cached);
    await expect(readWhole(undefined, get)).resolves.toBeUndefined();
  });

  it('reads a stub whole with one GET; gone (404) is undefined, other errors are thrown', async () => {
    const stub = cacheStub(object('a'));
    const whole = object('whole');
    let gets = 0;
    await expect(readWhole(stub, async () => (gets++, whole))).resolves.toBe(whole);
    expect(gets).toBe(1);
    await expect(readWhole(stub, notFound)).resolves.toBeUndefined();
    await expect(readWhole(stub, () => Promise.reject(new Error('timeout')))).rejects.toThrow('timeout');
  });
});
