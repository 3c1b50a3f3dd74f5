/**
 * The upgrade from release 0.2.0 (test/fixtures/release-0.2.0: v1 stored, the webhook served by its
 * replicas) to this checkout, whose v1 adds `spec.destination.type` (defaulting to
 * PersistentVolumeClaim), the object store and `spec.encryption`: every schedule 0.2.0 stored (without
 * a destination type) stays valid; afterwards an object store schedule works.
 *
 * The default backup image moved with the runner (0.1.0 → 0.3.0, see src/pure/image.ts), so the
 * upgrade is rolled in the README's two steps, each measured:
 *  (a) the new release with the chart's `backupImage` pinned to the old runner: no child may be written;
 *  (b) then the default `backupImage`: every child written exactly once, its spec changed in the
 *      container image only. Step (a) wrote nothing, so the children and schedules (b) starts from are
 *      0.2.0's own: (b) is also what the one-step upgrade from 0.2.0 does.
 *
 * Shared by test/e2e/upgrade-0.2.0.test.ts (the test API server) and test/real/upgrade.test.ts (a real
 * kube-apiserver); the cluster is an {@link UpgradeCluster}.
 */
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../../src/kube/object.ts';
import { ControllerProcess, kustomizationDocuments, waitFor } from './harness.ts';
import { api, listAll, readyOf, scheduleManifest } from './scenarios.ts';
import { applyAfterwards, childContent, onUpgradeCluster, PREVIOUS_BACKUP_IMAGE, readyzOk, reconciles, releaseDocuments, type SpanWrites, type UpgradeCluster, type UpgradeClusterFactory } from './upgrade.ts';

const RELEASE = fileURLToPath(new URL('../fixtures/release-0.2.0/', import.meta.url));
const BUNDLE_0_2_0 = `${RELEASE}controller/controller.mjs`;
const release020 = (): KubeObject[] => kustomizationDocuments(`${RELEASE}dist`);
const NAMESPACE = 'upgrade-020';

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

/** Options of {@link runUpgradeFrom020}. */
export interface Upgrade020Options {
  /** This checkout's controller bundle (buildBundle()). */
  readonly bundle: string;
  readonly schedules: number;
  /** @default a fresh test API server */
  readonly cluster?: UpgradeClusterFactory;
  readonly log?: (line: string) => void;
}

/** What the two steps did. Children are {@link childContent}s by name. */
export interface Upgrade020Result {
  readonly schedules: number;
  /** 0.2.0's children, (a)'s after the pinned roll, (b)'s after the default one. */
  readonly before: ReadonlyMap<string, string>;
  readonly pinned: ReadonlyMap<string, string>;
  readonly after: ReadonlyMap<string, string>;
  readonly pinnedWrites: SpanWrites;
  readonly defaultWrites: SpanWrites;
  /** Schedules not Ready at their generation at the end. */
  readonly notReady: readonly string[];
  /** Problems of an object store schedule with encryption created afterwards (none when it worked). */
  readonly objectStore: readonly string[];
  /**
   * Problems of kube-apiserver calling the new replicas' webhook (none when it worked): a stored schedule
   * read in v1alpha1, then a v1alpha1 and a v1 manifest applied afterwards. 0.2.0's CA, kept, made every
   * such call fail on a real kube-apiserver (a name Go's x509 refuses).
   */
  readonly webhook: readonly string[];
}

const RECIPIENT = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';

/** The object store schedule with encryption, created after the upgrade: its problems (none when its child is right). */
async function objectStoreProblems(cluster: UpgradeCluster): Promise<string[]> {
  const k = api(cluster.admin);
  await k.schedules.create(scheduleManifest(NAMESPACE, 'to-s3', {
    destination: { type: 'ObjectStore', objectStore: { bucket: 'acme-backups', prefix: 'etcd', credentialsSecretName: 's3-credentials' } },
    encryption: { ageRecipients: [RECIPIENT] },
  }) as never);
  try {
    await k.waitForReady(NAMESPACE, 'to-s3', undefined, 30_000);
    const child = await k.waitForCronJob(NAMESPACE, 'to-s3');
    const container = child.spec.jobTemplate.spec.template.spec.containers[0] as { args: string[]; env: { name: string; valueFrom?: unknown }[] };
    const problems = ['--destination-url=s3://acme-backups/etcd', `--age-recipient=${RECIPIENT}`].filter((a) => !container.args.includes(a)).map((a) => `child args lack ${a}`);
    const secret = JSON.stringify(container.env.find((e) => e.name === 'AWS_SECRET_ACCESS_KEY')?.valueFrom);
    if (secret !== JSON.stringify({ secretKeyRef: { name: 's3-credentials', key: 'AWS_SECRET_ACCESS_KEY' } })) problems.push(`AWS_SECRET_ACCESS_KEY from ${secret}`);
    return problems;
  } catch (err) {
    return [(err as Error).message.split('\n')[0] ?? ''];
  }
}

/** Runs both steps on a fresh cluster; stops everything it started. */
export async function runUpgradeFrom020(options: Upgrade020Options): Promise<Upgrade020Result> {
  const log = options.log ?? (() => {});
  const n = options.schedules;
  return onUpgradeCluster(options.cluster, release020(), NAMESPACE, async (cluster, start) => {
    const k = api(cluster.admin);
    const old = start(BUNDLE_0_2_0, release020(), 'old-a');
    await cluster.routeWebhookTo(old);
    await waitFor('the 0.2.0 replica to be ready', () => readyzOk(old), 120_000, 200);
    for (let i = 0; i < n; i++) await k.schedules.create(scheduleManifest(NAMESPACE, `s-${i}`, storedSpec(i)) as never);
    await waitFor(`0.2.0 to converge ${n} schedules`, async () => {
      const [schedules, children] = await Promise.all([listAll((o) => k.schedules.list(o), NAMESPACE), listAll((o) => k.cronJobs.list(o), NAMESPACE)]);
      return children.length === n && schedules.every((s) => readyOf(s as never)?.status === 'True' && (s as Schedule).status?.['observedGeneration'] === s.metadata.generation);
    }, 120_000, 500);
    log(`0.2.0 converged ${n} schedules`);
    const children = async (): Promise<Map<string, string>> => new Map((await listAll((o) => k.cronJobs.list(o), NAMESPACE)).map((c) => [c.metadata.name ?? '', childContent(c)]));
    /** Applies `docs` and rolls from `from` to one replica of this checkout with them; returns it and what it wrote. */
    const roll = async (from: ControllerProcess, docs: KubeObject[], id: string): Promise<[ControllerProcess, SpanWrites]> => {
      const writes = await cluster.countWrites();
      await cluster.apply(docs);
      const next = start(options.bundle, docs, id);
      await cluster.routeWebhookTo(next);
      await waitFor(`replica ${id} to be ready`, () => readyzOk(next), 120_000, 200);
      await from.stop();
      await waitFor(`replica ${id} to lead`, () => next.records().some((r) => r['msg'] === 'became leader; starting workers'), 60_000, 100);
      await waitFor(`replica ${id} to reconcile ${n} schedules`, async () => (await reconciles(next)) >= n, 120_000, 250);
      await cluster.quiet(2_000);
      log(`rolled to ${id}`);
      return [next, await writes()];
    };
    const before = await children();
    const [pinnedReplica, pinnedWrites] = await roll(old, releaseDocuments(PREVIOUS_BACKUP_IMAGE), 'new-pinned');
    const pinned = await children();
    const [, defaultWrites] = await roll(pinnedReplica, releaseDocuments(), 'new-default');
    const after = await children();
    // kube-apiserver also fills in destination.type on reading them (structural defaults apply on reads
    // from etcd); the test API server defaults on writes and conversions only, so the controller is
    // checked to need no type: every stored schedule stays valid and Ready, at its generation.
    const schedules = await listAll((o) => k.schedules.list(o), NAMESPACE);
    const notReady = schedules.filter((s) => readyOf(s as never)?.status !== 'True' || (s as Schedule).status?.['observedGeneration'] !== s.metadata.generation).map((s) => s.metadata.name ?? '');
    if (schedules.length !== n) notReady.push(`${schedules.length} schedules listed, ${n} created`);
    const objectStore = await objectStoreProblems(cluster);
    const read = await k.schedulesV1alpha1.get({ namespace: NAMESPACE, name: 's-1' }).then(
      (s) => (s.apiVersion === 'kubelings.dev/v1alpha1' ? [] : [`s-1 read in v1alpha1 came back as ${s.apiVersion}`]),
      (err: Error) => [`s-1 read in v1alpha1: ${err.message.split('\n')[0]}`],
    );
    return { schedules: n, before, pinned, after, pinnedWrites, defaultWrites, notReady, objectStore, webhook: [...read, ...(await applyAfterwards(cluster.admin, NAMESPACE))] };
  });
}
