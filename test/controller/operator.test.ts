import { describe, expect, it } from 'vitest';
import { needsReconcile } from '../../src/controller/operator.ts';
import type { KubeObject } from '../../src/kube/object.ts';

const base: KubeObject = { metadata: { name: 'n', namespace: 'ns', uid: 'u', generation: 1, resourceVersion: '1' }, status: { a: 1 } };

describe('needsReconcile', () => {
  it.each<[string, KubeObject, boolean]>([
    ['a status-only update (the controller’s own write)', { ...base, metadata: { ...base.metadata, resourceVersion: '2' }, status: { a: 2 } }, false],
    ['a label change', { ...base, metadata: { ...base.metadata, resourceVersion: '2', labels: { x: 'y' } } }, false],
    ['a spec change (new generation)', { ...base, metadata: { ...base.metadata, generation: 2 } }, true],
    ['a recreated object (new uid)', { ...base, metadata: { ...base.metadata, uid: 'v' } }, true],
    ['the start of a deletion', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-11-30T00:00:00Z' } }, true],
  ])('says %s needs reconcile: %s', (_name, updated, expected) => {
    expect(needsReconcile(base, updated)).toBe(expected);
  });

  it('passes resyncs, which deliver the same object twice', () => {
    expect(needsReconcile(base, base)).toBe(true);
  });
});
