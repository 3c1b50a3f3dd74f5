/**
 * migrateStorage on a server without CRD validation ratcheting (Kubernetes 1.28/1.29), where the no-op
 * PUT of an object that is not valid in the storage version answers 422 (issue 30): such an object is
 * skipped and reported with the server's message and how to fix it, every other one is still
 * rewritten, and status.storedVersions is left as it was until a run rewrites them all. And the
 * BackupSchedule of a tenant whose v1alpha1 write carried an invalid kubelings.dev/v1-retention, through
 * this project's conversion (handleConversionReview served over HTTPS), no longer blocks the migration.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { handleConversionReview } from '../../src/conversion/index.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { ResourceClient, type ResourceType } from '../../src/kube/resource-client.ts';
import { MIGRATE_EXIT, migrateStorage, type StorageMigrationOptions } from '../../src/migration/index.ts';
import { createCertificateAuthority, issueServingCertificate } from '../../src/runtime/tls-certificates.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/index.ts';
import { limitGadgetSize, seedGadgets } from './two-version-crd.ts';

const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };
const WEBHOOK = { namespace: 'backupschedule-system', name: 'backupschedule-operator-webhook' };

let server: TestApiServer;
let client: KubeClient;
let webhook: Server;
let caPem: string;

/** An HTTPS server answering ConversionReviews with this project's handleConversionReview, as the controller does. */
async function startWebhook(): Promise<Server> {
  const now = Date.now();
  const ca = await createCertificateAuthority({ commonName: 'test-ca', notBefore: now - 60_000, notAfter: now + 3_600_000 });
  caPem = ca.certPem;
  const serving = await issueServingCertificate(ca, { commonName: 'webhook', dnsNames: [`${WEBHOOK.name}.${WEBHOOK.namespace}.svc`], notBefore: now - 60_000, notAfter: now + 3_600_000 });
  const https = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = handleConversionReview(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  return https;
}

beforeAll(async () => {
  webhook = await startWebhook();
  const { port } = webhook.address() as AddressInfo;
  server = await startTestApiServer({ validationRatcheting: false, services: { [`${WEBHOOK.namespace}/${WEBHOOK.name}:443`]: `127.0.0.1:${port}` } });
  client = new KubeClient({ config: KubeConfig.fromKubeconfig(server.kubeconfig()) });
});

afterAll(async () => {
  client.close();
  await server.stop();
  await new Promise((resolve) => webhook.close(resolve));
});

const quick = (crdName: string): StorageMigrationOptions => ({ client, crdName, pageSize: 10, concurrency: 4, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });

async function until(what: string, probe: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe().then(() => true, () => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('migrateStorage on a server without validation ratcheting', () => {
  it('skips and reports the objects the server refuses (422), rewrites the others, leaves storedVersions, and finishes once they are fixed', async () => {
    const group = `m${randomBytes(4).toString('hex')}.migration.example.com`;
    const seeded = await seedGadgets(client, { group, objects: 12, namespaces: 2 });
    // v1 gets stricter after the objects were written: spec.size at most 9, so g-10 and g-11 are invalid in v1.
    await limitGadgetSize(seeded, group, 9);

    const lines: Record<string, unknown>[] = [];
    const logger = pino({}, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
    const result = await migrateStorage({ ...quick(seeded.crdName), logger });
    expect(result.outcome).toBe('incomplete');
    if (result.outcome !== 'incomplete') return;
    expect(result.counts).toMatchObject({ done: 12, rewritten: 10, skipped: 2, failed: 0 });
    expect(result.skipped.map((s) => [`${s.namespace}/${s.name}`, s.code])).toEqual(expect.arrayContaining([['gadgets-0/g-10', 422], ['gadgets-1/g-11', 422]]));
    const g10 = result.skipped.find((s) => s.name === 'g-10')!;
    expect(g10.message).toMatch(/spec\.size/);
    expect(g10.fix).toBe(
      `make it valid for ${group}/v1 (the server's message names the fields): kubectl edit gadgets.${group} g-10 -n gadgets-0, fixing each field or the annotation a conversion webhook derives it from (a BackupSchedule's kubelings.dev/v1-retention), or kubectl delete gadgets.${group} g-10 -n gadgets-0; then run migrate-storage again`,
    );
    expect(lines.filter((l) => String(l['msg']).startsWith('skipped: ')).map((l) => l['name']).sort()).toEqual(['g-10', 'g-11']);
    expect(await seeded.storedVersions()).toEqual(['v1alpha1', 'v1']);
    const stored = server.listStored(group, 'gadgets');
    expect(stored.filter((o) => o.apiVersion === `${group}/v1alpha1`).map((o) => o.metadata.name).sort()).toEqual(['g-10', 'g-11']);

    // The owners fix their objects; the next run rewrites them and narrows storedVersions.
    for (const name of ['g-10', 'g-11']) {
      const namespace = name === 'g-10' ? 'gadgets-0' : 'gadgets-1';
      const current = await seeded.v1.get({ name, namespace });
      await seeded.v1.update({ ...current, spec: { ...(current['spec'] as object), size: 9 } });
    }
    expect(await migrateStorage(quick(seeded.crdName))).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'] });
    expect(MIGRATE_EXIT.incomplete).toBe(3);
  });

  it('migrates a BackupSchedule whose v1alpha1 write carried {"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}: conversion drops it, v1 accepts the rewrite', async () => {
    const crd = parse(readFileSync('dist/01-customresourcedefinition-backupschedules.kubelings.dev.yaml', 'utf8')) as KubeObject & { spec: { versions: { name: string; storage: boolean }[]; conversion: { webhook: { clientConfig: Record<string, unknown> } } } };
    const storeIn = (version: string): KubeObject => {
      const copy = structuredClone(crd);
      for (const v of copy.spec.versions) v.storage = v.name === version;
      copy.spec.conversion.webhook.clientConfig['caBundle'] = Buffer.from(caPem).toString('base64');
      return copy;
    };
    const crds = new ResourceClient<KubeObject>(client, CRDS);
    await crds.create(storeIn('v1alpha1'));
    const resource = (version: string): ResourceClient<KubeObject> => new ResourceClient<KubeObject>(client, { group: 'kubelings.dev', version, plural: 'backupschedules', kind: 'BackupSchedule', namespaced: true });
    await until('v1alpha1 served', () => resource('v1alpha1').list({ limit: 1 }));
    await new ResourceClient<KubeObject>(client, { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false }).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-a' } });
    const spec = (name: string) => ({ schedule: '0 2 * * *', source: { etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: `b-${name}` } }, retention: { keepLast: 1000 } });
    const attacks = { 'ranges': '{"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}', 'null': '{"keepDaily":null}' };
    for (const [name, value] of Object.entries(attacks)) {
      await resource('v1alpha1').create({ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { name, namespace: 'tenant-a', annotations: { 'kubelings.dev/v1-retention': value } }, spec: spec(name) });
    }
    await resource('v1alpha1').create({ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { name: 'fine', namespace: 'tenant-a' }, spec: spec('fine') });
    const current = await crds.get({ name: crd.metadata.name! });
    await crds.update({ ...storeIn('v1'), metadata: current.metadata });
    await until('v1 served', () => resource('v1').list({ limit: 1 }));

    const result = await migrateStorage(quick(crd.metadata.name!));
    expect(result).toMatchObject({ outcome: 'migrated', storedVersions: ['v1'], counts: { done: 3, rewritten: 3, skipped: 0 } });
    for (const name of Object.keys(attacks)) {
      const stored = server.listStored('kubelings.dev', 'backupschedules').find((o) => o.metadata.name === name)!;
      expect(stored.apiVersion).toBe('kubelings.dev/v1');
      expect(stored['spec']).toMatchObject({ retention: { keepLast: 1000 } });
      expect(stored.metadata.annotations?.['kubelings.dev/v1-retention']).toBeUndefined();
      expect(JSON.parse(stored.metadata.annotations?.['kubelings.dev/v1-retention-rejected'] ?? '{}')).toMatchObject({ rejected: attacks[name as keyof typeof attacks] });
    }
  });
});
