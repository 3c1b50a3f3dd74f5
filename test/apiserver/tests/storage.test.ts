import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { Storage } from '../storage.ts';

const cm = (name: string, data: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { v: data } });
const names = (objs: KubeObject[] | undefined): string[] | undefined => objs?.map((o) => `${o.metadata.name}=${(o['data'] as { v: string }).v}`);

describe('storage', () => {
  it('stamps one increasing resourceVersion across resources and never mutates stored objects', () => {
    const s = new Storage(100);
    const a = s.create('/configmaps', cm('a', '1'));
    const b = s.create('/secrets', cm('b', '1'));
    expect(Number(b.metadata.resourceVersion)).toBe(Number(a.metadata.resourceVersion) + 1);
    const a2 = s.update('/configmaps', cm('a', '2'), a);
    expect(a.metadata.resourceVersion).not.toBe(a2.metadata.resourceVersion);
    expect((a['data'] as { v: string }).v).toBe('1');
  });

  it('reads a past version by undoing the history newer than it', () => {
    const s = new Storage(100);
    const a = s.create('/configmaps', cm('a', '1'));
    const b = s.create('/configmaps', cm('b', '1'));
    const at = s.resourceVersion;
    s.update('/configmaps', cm('a', '2'), a);
    s.remove('/configmaps', b);
    s.create('/configmaps', cm('c', '1'));
    expect(names(s.listAt('/configmaps', 'ns', at))).toEqual(['a=1', 'b=1']);
    expect(names(s.listAt('/configmaps', undefined, s.resourceVersion))).toEqual(['a=2', 'c=1']);
  });

  it('forgets versions older than the retained history', () => {
    const s = new Storage(2);
    const first = s.resourceVersion;
    s.create('/configmaps', cm('a', '1'));
    s.create('/configmaps', cm('b', '1'));
    s.create('/configmaps', cm('c', '1'));
    expect(s.hub.floor).toBe(first + 1);
    expect(s.listAt('/configmaps', 'ns', first)).toBeUndefined();
    expect(names(s.listAt('/configmaps', 'ns', first + 1))).toEqual(['a=1']);
    s.hub.compact(s.resourceVersion);
    expect(s.listAt('/configmaps', 'ns', s.resourceVersion - 1)).toBeUndefined();
  });
});
