import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { shareSubtrees } from '../structural-sharing.ts';
import { Storage } from '../storage.ts';

const cronJob = (schedule: string, resourceVersion = '1'): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'c', namespace: 'ns', resourceVersion, labels: { app: 'a' }, managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:schedule': {} } } }] },
  spec: { schedule, jobTemplate: { spec: { template: { spec: { containers: [{ name: 'backup', args: ['--x'] }] } } } } },
});

describe('shareSubtrees', () => {
  it('points the new version at every equal subtree of the old one, and copies only the changed path', () => {
    const prev = cronJob('0 2 * * *');
    const next = cronJob('0 3 * * *', '2');
    const shared = shareSubtrees(next, prev) as KubeObject & { spec: Record<string, unknown> };
    expect(shared).toEqual(next);
    expect(JSON.stringify(shared)).toBe(JSON.stringify(next));
    expect(shared.spec['jobTemplate']).toBe((prev['spec'] as Record<string, unknown>)['jobTemplate']);
    expect(shared.metadata.labels).toBe(prev.metadata.labels);
    expect(shared.metadata.managedFields).toBe(prev.metadata.managedFields);
    expect(shared).not.toBe(next);
    expect(shared.spec).not.toBe(next['spec']);
  });

  it('mutates neither version', () => {
    const prev = cronJob('0 2 * * *');
    const next = cronJob('0 3 * * *', '2');
    const before = [JSON.stringify(prev), JSON.stringify(next)];
    shareSubtrees(next, prev);
    expect([JSON.stringify(prev), JSON.stringify(next)]).toEqual(before);
  });

  it('returns the old version when the two are equal, and the new one when nothing is shared', () => {
    const prev = cronJob('0 2 * * *');
    expect(shareSubtrees(cronJob('0 2 * * *'), prev)).toBe(prev);
    const unrelated = { a: { b: 1 } };
    expect(shareSubtrees(unrelated, { a: { b: 2 } })).toBe(unrelated);
    const array = [1, { x: 1 }];
    expect(shareSubtrees(array, 'text')).toBe(array);
  });

  it('keeps the new key order: a subtree with the same values in another order is not shared', () => {
    const prev = { spec: { a: 1, b: 2 } };
    const next = { spec: { b: 2, a: 1 } };
    const shared = shareSubtrees(next, prev);
    expect(shared.spec).toBe(next.spec);
    expect(JSON.stringify(shared)).toBe('{"spec":{"b":2,"a":1}}');
  });

  it('shares array items by position and keeps added or removed items', () => {
    const prev = { items: [{ n: 1 }, { n: 2 }] };
    const longer = shareSubtrees({ items: [{ n: 1 }, { n: 2 }, { n: 3 }] }, prev);
    expect(longer.items[0]).toBe(prev.items[0]);
    expect(longer.items).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const shorter = shareSubtrees({ items: [{ n: 1 }] }, prev);
    expect(shorter.items).toEqual([{ n: 1 }]);
    expect(shorter.items[0]).toBe(prev.items[0]);
    expect(shareSubtrees({ items: { 0: { n: 1 } } }, prev).items).toEqual({ 0: { n: 1 } });
  });

  it('leaves an object with an own "__proto__" key as it is', () => {
    const next = JSON.parse('{"spec":{"__proto__":{"x":1},"y":{"z":1}}}') as { spec: Record<string, unknown> };
    const shared = shareSubtrees(next, { spec: { y: { z: 1 } } });
    expect(shared.spec).toBe(next.spec);
    expect(Object.keys(shared.spec)).toEqual(['__proto__', 'y']);
  });

  it('is what storage does on update: versions in the watch history share their unchanged parts', () => {
    const s = new Storage(100);
    const first = s.create('/cronjobs', cronJob('0 2 * * *'));
    const second = s.update('/cronjobs', cronJob('0 3 * * *'), first);
    expect((second['spec'] as Record<string, unknown>)['jobTemplate']).toBe((first['spec'] as Record<string, unknown>)['jobTemplate']);
    expect((second['spec'] as Record<string, unknown>)['schedule']).toBe('0 3 * * *');
    expect((first['spec'] as Record<string, unknown>)['schedule']).toBe('0 2 * * *');
    expect(second.metadata.resourceVersion).not.toBe(first.metadata.resourceVersion);
  });
});
