/**
 * The upgrade from release 0.2.0 (test/fixtures/release-0.2.0: v1 stored, the webhook served by its
 * replicas) to this checkout, whose v1 adds `spec.destination.type` (defaulting to
 * PersistentVolumeClaim), the object store and `spec.encryption`: every schedule 0.2.0 stored (without
 * a destination type) stays valid and its CronJob is byte-identical after the roll; afterwards an
 * object store schedule works.
 */
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { buildBundle, ControllerProcess, CONTROLLER_USER, distDocuments, kustomizationDocuments, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, listAll, readyOf, scheduleManifest } from './scenarios.ts';
import { applyRelease, quiet, readyzOk, reconciles, replicaFlags } from './upgrade.ts';

const RELEASE = fileURLToPath(new URL('../fixtures/release-0.2.0/', import.meta.url));
const BUNDLE_0_2_0 = `${RELEASE}controller/controller.mjs`;
const release020 = (): KubeObject[] => kustomizationDocuments(`${RELEASE}dist`);
const NAMESPACE = 'upgrade-020';
const N = 60;

type Schedule = KubeObject & { spec: Record<string, any>; status?: Record<string, any> };

/** v1 specs as 0.2.0 users wrote them: sources, GFS retention, a claim destination without type. */
function storedSpec(i: number): Record<string, unknown> {
  return {
    schedule: ['0 2 * * *', '@hourly', '30 4 * * 1-5'][i % 3],
    ...(i % 3 === 0 ? { source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: `data-${i % 7}` } } } : {}),
    destination: { persistentVolumeClaim: { claimName: 'backups', ...(i % 2 === 0 ? { path: `s/${i}` } : {}) } },
    retention: i % 4 === 0 ? { keepDaily: 7, keepWeekly: 4 } : { keepLast: 1 + (i % 30) },
  };
}

let cluster: Cluster;
const replicas: ControllerProcess[] = [];
let before: Map<string, string>;
let after: Map<string, string>;
let upgradeStart: number;

beforeAll(async () => {
  const bundle = await buildBundle();
  cluster = await startCluster({ documents: release020() });
  const start = (file: string, docs: readonly KubeObject[], id: string): ControllerProcess => {
    const p = ControllerProcess.start(file, replicaFlags(cluster, docs, id));
    replicas.push(p);
    return p;
  };
  const k = api(cluster.admin);
  await k.createNamespace(NAMESPACE);
  const old = start(BUNDLE_0_2_0, release020(), 'old-a');
  await cluster.routeWebhookTo(old);
  await waitFor('the 0.2.0 replica to be ready', () => readyzOk(old), 120_000, 200);
  for (let i = 0; i < N; i++) await k.schedules.create(scheduleManifest(NAMESPACE, `s-${i}`, storedSpec(i)) as never);
  await waitFor(`0.2.0 to converge ${N} schedules`, async () => {
    const [schedules, children] = await Promise.all([listAll((o) => k.schedules.list(o), NAMESPACE), listAll((o) => k.cronJobs.list(o), NAMESPACE)]);
    return children.length === N && schedules.every((s) => readyOf(s as never)?.status === 'True' && (s as Schedule).status?.['observedGeneration'] === s.metadata.generation);
  }, 120_000, 500);
  // Byte for byte, as the API server stores them.
  before = new Map((await listAll((o) => k.cronJobs.list(o), NAMESPACE)).map((c) => [c.metadata.name ?? '', JSON.stringify(c)]));

  upgradeStart = Date.now();
  await applyRelease(cluster.admin, distDocuments());
  const next = start(bundle, distDocuments(), 'new-a');
  await cluster.routeWebhookTo(next);
  await waitFor('the new replica to be ready', () => readyzOk(next), 120_000, 200);
  await old.stop();
  await waitFor('the new replica to lead', () => next.records().some((r) => r['msg'] === 'became leader; starting workers'), 60_000, 100);
  await waitFor(`the new replica to reconcile ${N} schedules`, async () => (await reconciles(next)) >= N, 120_000, 250);
  await quiet(cluster, 2_000);
  after = new Map((await listAll((o) => k.cronJobs.list(o), NAMESPACE)).map((c) => [c.metadata.name ?? '', JSON.stringify(c)]));
}, 300_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cluster?.stop();
});

describe('upgrade from 0.2.0 (v1 without destination.type) to the object store API', () => {
  it('writes no child: every CronJob 0.2.0 made is byte-identical after the roll', () => {
    const writes = cluster.server.requestLog.entries().filter((e) => Date.parse(e.time) >= upgradeStart && e.user === CONTROLLER_USER && e.resource === 'cronjobs' && !['get', 'list', 'watch'].includes(e.verb));
    expect(writes).toEqual([]);
    expect(after.size).toBe(N);
    expect([...before].filter(([name, json]) => after.get(name) !== json).map(([name]) => name)).toEqual([]);
  });

  // kube-apiserver also fills in destination.type on reading them (structural defaults apply on reads
  // from etcd); the test API server defaults on writes and conversions only, so the controller is
  // checked here to need no type: every stored schedule stays valid and Ready, at its generation.
  it('keeps every stored schedule (no destination.type) valid and Ready at its generation', async () => {
    const schedules = await listAll((o) => api(cluster.admin).schedules.list(o), NAMESPACE);
    expect(schedules).toHaveLength(N);
    expect(schedules.filter((s) => readyOf(s as never)?.status !== 'True' || (s as Schedule).status?.['observedGeneration'] !== s.metadata.generation).map((s) => s.metadata.name)).toEqual([]);
  });

  it('builds an object store schedule with encryption created afterwards', async () => {
    const k = api(cluster.admin);
    const recipient = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';
    await k.schedules.create(scheduleManifest(NAMESPACE, 'to-s3', {
      destination: { type: 'ObjectStore', objectStore: { bucket: 'acme-backups', prefix: 'etcd', credentialsSecretName: 's3-credentials' } },
      encryption: { ageRecipients: [recipient] },
    }) as never);
    await k.waitForReady(NAMESPACE, 'to-s3', undefined, 30_000);
    const child = await k.waitForCronJob(NAMESPACE, 'to-s3');
    const container = child.spec.jobTemplate.spec.template.spec.containers[0];
    expect(container.args).toEqual(expect.arrayContaining(['--destination-url=s3://acme-backups/etcd', `--age-recipient=${recipient}`]));
    expect(isDeepStrictEqual(container.env.find((e: { name: string }) => e.name === 'AWS_SECRET_ACCESS_KEY')?.valueFrom, { secretKeyRef: { name: 's3-credentials', key: 'AWS_SECRET_ACCESS_KEY' } })).toBe(true);
  });
});
