/**
 * Defaulting on read from storage (kube's storage codec, test/apiserver/storage-decoder.ts): a v1
 * BackupSchedule put into storage without `spec.destination.type` (stored by 0.2.0, before the field
 * existed, or by `etcdctl put`) reads back with the schema default on every read path, while storage
 * keeps its bytes; and a status write over it validates the defaulted object, so it passes even on a
 * server without validation ratcheting (Kubernetes 1.28/1.29), as on kube-apiserver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { distDocuments } from '../../e2e/harness.ts';
import { scheduleManifest } from '../../e2e/scenarios.ts';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client, createCrdAndWait, readWatch } from './http-client.ts';

const BS = '/apis/kubelings.dev/v1/namespaces/stored/backupschedules';

describe.each([true, false])('defaults on read from storage (validation ratcheting %s)', (ratcheting) => {
  let server: TestApiServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestApiServer({ validationRatcheting: ratcheting });
    api = client(server);
    expect((await api('POST', '/api/v1/namespaces', { metadata: { name: 'stored' } })).status).toBe(201);
    await createCrdAndWait(api, distDocuments().find((d) => d.kind === 'CustomResourceDefinition'), BS);
    // As 0.2.0 stored it: a claim and no type.
    server.storeUnvalidated('kubelings.dev', 'backupschedules', scheduleManifest('stored', 'old'));
  });
  afterAll(() => server.stop());

  it('GET, LIST and WATCH show spec.destination.type: PersistentVolumeClaim; storage keeps the object as written', async () => {
    const get = await api('GET', `${BS}/old`);
    expect(get.body.spec.destination).toEqual({ type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'backups' } });
    const list = await api('GET', BS);
    expect(list.body.items[0].spec.destination.type).toBe('PersistentVolumeClaim');
    const [added] = await readWatch(server, `${BS}?watch=true`, 1);
    expect(added.object.spec.destination.type).toBe('PersistentVolumeClaim');
    const stored = server.listStored('kubelings.dev', 'backupschedules')[0] as KubeObject & { spec: { destination: Record<string, unknown> } };
    expect(stored.spec.destination['type']).toBeUndefined();
  });

  it('a status write over it is validated with the default applied (no spec.destination error)', async () => {
    const current = (await api('GET', `${BS}/old`)).body;
    const conditions = [{ type: 'Ready', status: 'False', reason: 'InvalidSpec', message: 'spec.schedule: test', lastTransitionTime: '2026-12-01T00:00:00Z', observedGeneration: 1 }];
    const res = await api('PUT', `${BS}/old/status`, { ...current, status: { conditions } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status.conditions[0].reason).toBe('InvalidSpec');
  });
});
