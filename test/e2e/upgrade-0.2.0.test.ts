/**
 * The upgrade from release 0.2.0 (test/fixtures/release-0.2.0: v1 stored, the webhook served by its
 * replicas) to this checkout, whose v1 adds `spec.destination.type` (defaulting to
 * PersistentVolumeClaim), the object store and `spec.encryption`: every schedule 0.2.0 stored (without
 * a destination type) stays valid; afterwards an object store schedule works.
 *
 * The default backup image moved with the runner (0.1.0 → 0.3.0, see src/pure/image.ts), so the
 * upgrade is rolled in the README's two steps, each checked:
 *  (a) the new release with the chart's `backupImage` pinned to the old runner: no child written, every
 *      CronJob byte-identical;
 *  (b) then the default `backupImage`: every child written exactly once, its spec changed in the
 *      container image only. Step (a) wrote nothing, so the children and schedules (b) starts from are
 *      0.2.0's own: (b) is also what the one-step upgrade from 0.2.0 does.
 */
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { DEFAULT_BACKUP_IMAGE } from '../../src/pure/index.ts';
import { buildBundle, ControllerProcess, CONTROLLER_USER, kustomizationDocuments, startCluster, waitFor, type Cluster } from './harness.ts';
import { api, listAll, readyOf, scheduleManifest } from './scenarios.ts';
import { applyRelease, PREVIOUS_BACKUP_IMAGE, quiet, readyzOk, reconciles, releaseDocuments, replicaFlags } from './upgrade.ts';

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
/** After step (a), pinned, and after step (b), the default. */
let pinned: Map<string, string>;
let after: Map<string, string>;
let pinnedStart: number;
let defaultStart: number;

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
  const k8sChildren = async (): Promise<Map<string, string>> => new Map((await listAll((o) => k.cronJobs.list(o), NAMESPACE)).map((c) => [c.metadata.name ?? '', JSON.stringify(c)]));
  /** Applies `docs` and rolls from `from` to one replica of `bundle` with them. */
  const roll = async (from: ControllerProcess, docs: KubeObject[], id: string): Promise<ControllerProcess> => {
    await applyRelease(cluster.admin, docs);
    const next = start(bundle, docs, id);
    await cluster.routeWebhookTo(next);
    await waitFor(`replica ${id} to be ready`, () => readyzOk(next), 120_000, 200);
    await from.stop();
    await waitFor(`replica ${id} to lead`, () => next.records().some((r) => r['msg'] === 'became leader; starting workers'), 60_000, 100);
    await waitFor(`replica ${id} to reconcile ${N} schedules`, async () => (await reconciles(next)) >= N, 120_000, 250);
    await quiet(cluster, 2_000);
    return next;
  };
  before = await k8sChildren();

  pinnedStart = Date.now();
  const pinnedReplica = await roll(old, releaseDocuments(PREVIOUS_BACKUP_IMAGE), 'new-pinned');
  pinned = await k8sChildren();
  defaultStart = Date.now();
  await roll(pinnedReplica, releaseDocuments(), 'new-default');
  after = await k8sChildren();
}, 300_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cluster?.stop();
});

describe('upgrade from 0.2.0 (v1 without destination.type) to the object store API', () => {
  /** The controller's writes to CronJobs from `from` until `to`. */
  const childWrites = (from: number, to = Infinity) => cluster.server.requestLog.entries().filter((e) => {
    const t = Date.parse(e.time);
    return t >= from && t < to && e.user === CONTROLLER_USER && e.resource === 'cronjobs' && !['get', 'list', 'watch'].includes(e.verb);
  });

  it("(a) with the chart's backupImage pinned to the old runner, writes no child: every CronJob 0.2.0 made is byte-identical", () => {
    expect(childWrites(pinnedStart, defaultStart)).toEqual([]);
    expect(pinned.size).toBe(N);
    expect([...before].filter(([name, json]) => pinned.get(name) !== json).map(([name]) => name)).toEqual([]);
  });

  it('(b) with the default backupImage, writes each child exactly once, changing only its container image', () => {
    const writes = childWrites(defaultStart);
    expect(writes.every((e) => e.code < 300)).toBe(true);
    const perChild = new Map<string, number>();
    for (const e of writes) perChild.set(e.name ?? '', (perChild.get(e.name ?? '') ?? 0) + 1);
    expect([...perChild.keys()].sort()).toEqual([...before.keys()].sort());
    expect([...perChild].filter(([, n]) => n !== 1)).toEqual([]);
    expect(after.size).toBe(N);
    const problems: string[] = [];
    for (const [name, json] of before) {
      const old = JSON.parse(json) as Schedule;
      const now = JSON.parse(after.get(name) ?? 'null') as Schedule | null;
      const containers = now?.spec['jobTemplate']?.spec?.template?.spec?.containers as { image: string }[] | undefined;
      if (now === null || containers === undefined) {
        problems.push(`${name}: missing after the roll`);
        continue;
      }
      if (containers.some((c) => c.image !== DEFAULT_BACKUP_IMAGE)) problems.push(`${name}: image ${containers.map((c) => c.image).join(', ')}`);
      // The spec with the new image put back to the old one is the old spec, byte for byte.
      const restored = structuredClone(now.spec);
      restored['jobTemplate'].spec.template.spec.containers = containers.map((c, i) => ({ ...c, image: old.spec['jobTemplate'].spec.template.spec.containers[i].image }));
      if (JSON.stringify(restored) !== JSON.stringify(old.spec)) problems.push(`${name}: spec changed beyond the image`);
      for (const field of ['labels', 'annotations', 'ownerReferences'] as const) {
        if (!isDeepStrictEqual(now.metadata[field], old.metadata[field])) problems.push(`${name}: metadata.${field} changed`);
      }
    }
    expect(problems).toEqual([]);
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
