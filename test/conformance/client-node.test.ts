/**
 * `@kubernetes/client-node` (the third-party client, not the project's) talks to the cluster through
 * the same kubeconfig: typed create/list/read, a 404 surfaced as an ApiException, and a Watch.
 */
import { ApiException, CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { useCluster } from './harness.ts';

const cluster = useCluster();

describe('@kubernetes/client-node', () => {
  it('creates, lists and reads a ConfigMap, and reports a 404 with its Status', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(cluster().kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await cluster().namespace('cn');
    const created = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' }, data: { k: 'v' } } });
    expect(created.metadata?.uid).toEqual(expect.any(String));
    const list = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: '' });
    expect(list.items.map((i) => i.metadata?.name)).toContain('a');
    expect((await core.readNamespacedConfigMap({ namespace: ns, name: 'a' })).data).toEqual({ k: 'v' });
    const missing = await core.readNamespacedConfigMap({ namespace: ns, name: 'missing' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(missing).toBeInstanceOf(ApiException);
    expect((missing as ApiException<string>).code).toBe(404);
    expect(JSON.parse((missing as ApiException<string>).body)).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('receives ADDED and MODIFIED through its Watch', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(cluster().kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const ns = await cluster().namespace('cn');
    const events: string[] = [];
    let notify: () => void = () => undefined;
    const twoEvents = new Promise<void>((resolve) => (notify = resolve));
    const controller = await new Watch(kc).watch(
      `/api/v1/namespaces/${ns}/configmaps`,
      { fieldSelector: 'metadata.name=w' },
      (phase, obj: { metadata?: { name?: string } }) => {
        events.push(`${phase} ${obj.metadata?.name ?? ''}`);
        if (events.length >= 2) notify();
      },
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'w' }, data: { k: '1' } } });
      await core.replaceNamespacedConfigMap({ namespace: ns, name: 'w', body: { metadata: { name: 'w' }, data: { k: '2' } } });
      await Promise.race([twoEvents, new Promise((_, reject) => setTimeout(() => reject(new Error(`events so far: ${events.join(', ')}`)), 5_000))]);
      expect(events).toEqual(['ADDED w', 'MODIFIED w']);
    } finally {
      controller.abort();
    }
  });
});
