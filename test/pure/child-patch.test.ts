import jsonMergePatch from 'json-merge-patch';
import { describe, expect, it } from 'vitest';
import { childMergePatch } from '../../src/pure/child-patch.ts';
import type { KubeObject } from '../../src/kube/object.ts';

const ours = { apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', name: 'n', uid: 'u', controller: true, blockOwnerDeletion: true };
const foreignRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c' };

function cronJob(spec: Record<string, unknown>, metadata: KubeObject['metadata'] = {}): KubeObject {
  return { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'n', namespace: 'ns', resourceVersion: '42', labels: { mine: 'a' }, ownerReferences: [ours], ...metadata }, spec };
}

describe('childMergePatch', () => {
  it('is undefined when nothing the controller writes differs', () => {
    expect(childMergePatch(cronJob({ a: 1 }), cronJob({ a: 1 }))).toBeUndefined();
  });

  it('sets changed fields, nulls removed ones, replaces lists whole, and carries resourceVersion as a precondition', () => {
    const observed = cronJob({ schedule: '* * * * *', hostNetwork: true, containers: [{ name: 'c', image: 'a' }, { name: 'd' }], keep: { x: 1 } });
    const healed = cronJob({ schedule: '0 2 * * *', containers: [{ name: 'c', image: 'b' }], keep: { x: 1 } });
    expect(childMergePatch(observed, healed)).toEqual({
      spec: { schedule: '0 2 * * *', hostNetwork: null, containers: [{ name: 'c', image: 'b' }] },
      metadata: { resourceVersion: '42' },
    });
  });

  it('names only our labels that differ and the whole owner list, never foreign metadata (a cache without it loses nothing)', () => {
    const cached = cronJob({ a: 1 }, { labels: { mine: 'old' }, ownerReferences: [foreignRef] });
    const healed = cronJob({ a: 1 }, { labels: { mine: 'a', also: 'b' }, ownerReferences: [foreignRef, ours] });
    const patch = childMergePatch(cached, healed);
    expect(patch).toEqual({ metadata: { labels: { mine: 'a', also: 'b' }, ownerReferences: [foreignRef, ours], resourceVersion: '42' } });
    // Applied to the server's object, which has more than the cache kept:
    const server = cronJob({ a: 1 }, { labels: { mine: 'old', team: 'x' }, annotations: { note: 'keep' }, ownerReferences: [foreignRef] });
    const result = jsonMergePatch.apply(structuredClone(server), patch) as KubeObject;
    expect(result.metadata).toEqual({ ...server.metadata, labels: { mine: 'a', also: 'b', team: 'x' }, annotations: { note: 'keep' }, ownerReferences: [foreignRef, ours] });
  });

  it('does not mutate its inputs', () => {
    const observed = cronJob({ a: { b: 1 } });
    const healed = cronJob({ a: { b: 2 } });
    const copies = structuredClone([observed, healed]);
    childMergePatch(observed, healed);
    expect([observed, healed]).toEqual(copies);
  });
});
