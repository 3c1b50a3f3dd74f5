/**
 * The upgrade from the previous release (test/fixtures/release-0.1.0: v1alpha1 stored, no webhook) to
 * this checkout, as an operator of a cluster does it and as the README's "Upgrading" says:
 *
 *  1. the previous release runs, two replicas with leader election, with `schedules` v1alpha1
 *     BackupSchedules converged;
 *  2. the new dist/ is applied in its file order (what `kubectl apply -f dist/` does; objects that
 *     exist are merge-patched with the file, so the Lease's holder survives): the CRD now serves v1
 *     and stores it, converting through the webhook;
 *  3. the Deployment rolls: a new replica starts beside the two old ones (the webhook Service selects
 *     only new replicas), then an old one stops, a second new one starts, the last old one stops;
 *  4. a new replica leads and has reconciled every schedule (from v1, converted from the stored
 *     v1alpha1 by the webhook) with the writes it needed: none to children when the chart's
 *     `backupImage` is pinned to the previous runner (the test and the bench do; unpinned, every child is
 *     rewritten once for the new runner, which test/e2e/upgrade-0.2.0.test.ts checks);
 *  5. `migrate-storage` rewrites every object in v1 and leaves `status.storedVersions: [v1]`;
 *  6. a v1alpha1 manifest applied afterwards (an unchanged GitOps repo) and a v1 one both work.
 *
 * Shared by test/e2e/upgrade.test.ts (500 schedules), bench/upgrade-bench.ts (10,000), both on the test
 * API server ({@link testServerUpgradeCluster}), and test/real/upgrade.test.ts on a real kube-apiserver
 * (test/real/upgrade-cluster.ts): the steps are the same, only where writes are counted and how the
 * webhook's Service reaches a replica differ.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { isAlreadyExists } from '../../src/kube/api-status-error.ts';
import type { KubeClient } from '../../src/kube/kube-client.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { toV1 } from '../../src/conversion/index.ts';
import type { BackupSchedule } from '../../src/api/index.ts';
import { synthesize } from '../../src/manifests/synthesize.ts';
import { clientFor, ControllerProcess, CONTROLLER_USER, deploymentArgs, distDocuments, kustomizationDocuments, sleep, startCluster, waitFor, type Cluster, type ClusterOptions } from './harness.ts';
import { api, listAll, readyOf, scheduleManifest, scheduleManifestV1alpha1 } from './scenarios.ts';

const RELEASE = fileURLToPath(new URL('../fixtures/release-0.1.0/', import.meta.url));
/** The previous release's controller bundle. */
export const PREVIOUS_BUNDLE = `${RELEASE}controller/controller.mjs`;
/** The previous release's dist/, in apply order. */
export const previousReleaseDocuments = (): KubeObject[] => kustomizationDocuments(`${RELEASE}dist`);

/** The image 0.1.0 and 0.2.0 run backups with: what a user pins the chart's `backupImage` to, to write no child. */
export const PREVIOUS_BACKUP_IMAGE = 'ghcr.io/kubelings/backupschedule-operator:0.1.0';

/**
 * This checkout's dist/, synthesized as a user does with the chart's `backupImage` set (the controller's
 * `--backup-image`), in apply order: dist/ itself when `backupImage` is undefined.
 */
export function releaseDocuments(backupImage?: string): KubeObject[] {
  if (backupImage === undefined) return distDocuments();
  const dir = mkdtempSync(join(tmpdir(), 'pinned-dist-'));
  try {
    synthesize(dir, { includeExample: false, backupImage });
    return kustomizationDocuments(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const NAMESPACE = 'upgrade';

/** What the upgrade wrote over a span (see {@link UpgradeCluster.countWrites}). */
export interface SpanWrites {
  /** Writes to CronJobs (not their status) by `VERB code`, e.g. `{ 'PATCH 200': 60 }`. */
  readonly childWrites: Readonly<Record<string, number>>;
  /** Successful writes of BackupSchedules' status. */
  readonly statusWrites: number;
  /** Requests for BackupSchedules answered 500 (a conversion the webhook could not serve yet). */
  readonly conversionErrors: number;
}

/** How often each string occurs. */
export function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

/** The number of writes in a {@link SpanWrites.childWrites}. */
export const total = (writes: Readonly<Record<string, number>>): number => Object.values(writes).reduce((sum, n) => sum + n, 0);

/** Where the upgrade runs, with the previous release applied and the controller's credentials issued. */
export interface UpgradeCluster {
  readonly admin: KubeClient;
  /** Path of an admin kubeconfig (the storage migration runs with it, as the README says). */
  readonly adminKubeconfig: string;
  /** Path of a kubeconfig authenticating as dist/'s ServiceAccount. */
  readonly controllerKubeconfig: string;
  /**
   * Whether the server keeps CronJob `spec.timeZone` (1.25+): where it does not, a schedule with a time
   * zone is rightly never Ready (ChildNotPersisted), so the scenario's schedules leave it out.
   */
  readonly timeZones: boolean;
  /** `kubectl apply -f` of a release's documents, in order. */
  apply(docs: readonly KubeObject[]): Promise<void>;
  /** Sends the conversion webhook's traffic to `replica`, once it is ready to serve it. */
  routeWebhookTo(replica: ControllerProcess): Promise<void>;
  /** Starts counting the controller's writes; the returned function reads what was written since. */
  countWrites(): Promise<() => Promise<SpanWrites>>;
  /** Waits until the controller has written nothing (Lease renewals aside) for `ms`. */
  quiet(ms: number): Promise<void>;
  /** BackupSchedules stored in another version than v1, or undefined where the storage cannot be read. */
  notStoredInV1(): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** Starts a cluster with the `previous` release applied, for an upgrade whose schedules live in `namespace`. */
export type UpgradeClusterFactory = (previous: readonly KubeObject[], namespace: string) => Promise<UpgradeCluster>;

/** The upgrade on a fresh in-process test API server: writes counted from its request log. */
export async function testServerUpgradeCluster(previous: readonly KubeObject[], server: ClusterOptions['server'] = {}): Promise<UpgradeCluster> {
  const cluster = await startCluster({ documents: previous, server });
  return {
    admin: cluster.admin,
    adminKubeconfig: cluster.adminKubeconfig,
    controllerKubeconfig: cluster.controllerKubeconfig,
    timeZones: true,
    apply: (docs) => applyRelease(cluster.admin, docs),
    routeWebhookTo: (replica) => cluster.routeWebhookTo(replica),
    async countWrites() {
      const since = Date.now();
      return async () => {
        const span = cluster.server.requestLog.entries().filter((e) => Date.parse(e.time) >= since);
        return {
          childWrites: countBy(span.filter((e) => e.user === CONTROLLER_USER && e.resource === 'cronjobs' && !['get', 'list', 'watch'].includes(e.verb)).map((e) => `${e.verb.toUpperCase()} ${e.code}`)),
          statusWrites: span.filter((e) => e.user === CONTROLLER_USER && e.resource === 'backupschedules' && e.subresource === 'status' && e.code < 300).length,
          conversionErrors: span.filter((e) => e.resource === 'backupschedules' && e.code === 500).length,
        };
      };
    },
    quiet: (ms) => quiet(cluster, ms),
    notStoredInV1: async () => cluster.server.listStored('kubelings.dev', 'backupschedules').filter((o) => o.apiVersion !== 'kubelings.dev/v1').length,
    stop: () => cluster.stop(),
  };
}

/** Options of {@link runUpgrade}. */
export interface UpgradeOptions {
  /** The new release's controller bundle (buildBundle()). */
  readonly bundle: string;
  readonly schedules: number;
  /** How long old and new replicas run side by side before the first old one stops. @default 2_000 */
  readonly sideBySideMs?: number;
  /** Progress lines. @default none */
  readonly log?: (line: string) => void;
  /**
   * Starts the cluster with the previous release's documents applied.
   * @default a fresh test API server ({@link testServerUpgradeCluster})
   */
  readonly cluster?: UpgradeClusterFactory;
  /**
   * The chart's `backupImage` of the new release. The test and the bench are about the CRD and storage
   * upgrade, so they pin it to the previous runner ({@link PREVIOUS_BACKUP_IMAGE}): then no child needs a
   * write. @default this release's default (every child rewritten once for the new runner)
   */
  readonly backupImage?: string;
}

/** What the upgrade did; the test asserts on it and the bench prints it. */
export interface UpgradeResult {
  readonly schedules: number;
  /** Seconds the previous release took to converge the schedules. */
  readonly convergedBeforeS: number;
  /** Seconds from applying the new dist/ until a new replica led and had reconciled every schedule. */
  readonly upgradeS: number;
  /** Writes to CronJobs from the upgrade's start until the end of the migration, by `VERB code` (must be none). */
  readonly childWrites: Readonly<Record<string, number>>;
  /** Children whose metadata or spec changed over the same span (their status is the CronJob controller's). */
  readonly changedChildren: readonly string[];
  /** Successful status writes by the controller over the same span (the new release's status, if it differs). */
  readonly statusWrites: number;
  /** Requests for BackupSchedules answered 500 over the span (conversions before the webhook had a certificate). */
  readonly conversionErrors: number;
  /** Schedules whose v1alpha1 and v1 reads disagree (after the roll, before the migration). */
  readonly disagreements: readonly string[];
  readonly migration: { readonly exitCode: number | null; readonly seconds: number; readonly objectsPerSecond: number; readonly storedVersions: readonly string[]; readonly notStoredInV1: number | undefined };
  /** Problems of the v1alpha1 and v1 schedules created after the upgrade (none when both worked). */
  readonly afterwards: readonly string[];
}

type Schedule = KubeObject & { spec: Record<string, any>; status?: Record<string, any> };

/** The schedules' v1alpha1 specs: varied, as a real cluster's are (sources, retention, zones where the server keeps them, suspension). */
function legacySpec(i: number, timeZones: boolean): Record<string, unknown> {
  return {
    schedule: ['0 2 * * *', '15 3 * * *', '@hourly', '30 4 * * 1-5'][i % 4],
    ...(i % 3 === 0 ? { source: { persistentVolumeClaim: { claimName: `data-${i % 7}` } } } : {}),
    retention: { keepLast: 1 + (i % 30) },
    ...(i % 5 === 0 && timeZones ? { timeZone: 'Europe/Berlin' } : {}),
    ...(i % 11 === 0 ? { suspend: true } : {}),
  };
}

/** Runs `task` over `items` with `parallel` in flight. */
async function inParallel<T>(items: readonly T[], parallel: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < items.length) await task(items[next++] as T);
  }));
}

/** `kubectl apply -f` of each document in order: created, or merge-patched with the file when it exists. */
export async function applyRelease(admin: KubeClient, docs: readonly KubeObject[]): Promise<void> {
  for (const doc of docs) {
    const client = clientFor(admin, doc.kind ?? '', doc.apiVersion);
    try {
      await client.create(doc);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const { apiVersion: _a, kind: _k, ...patch } = doc;
      await client.patch({ namespace: doc.metadata.namespace, name: doc.metadata.name ?? '' }, patch);
    }
  }
}

/** Sum of a controller's `controller_runtime_reconcile_total` (its metrics URL is in its 'starting' line). */
export async function reconciles(process: ControllerProcess): Promise<number> {
  const url = process.records().find((r) => r['msg'] === 'starting')?.['metrics'];
  if (typeof url !== 'string') return 0;
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('controller_runtime_reconcile_total')).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

/** A replica of the release whose Deployment is in `docs`, as that Deployment runs it (its flags, `--backup-image` included). */
export const replicaFlags = (cluster: Pick<Cluster, 'controllerKubeconfig'>, docs: readonly KubeObject[], id: string): string[] => [
  '--kubeconfig', cluster.controllerKubeconfig, `--leader-election-id=${id}`, ...deploymentArgs(docs), '--log-level=info',
];

/** A child as the controller writes it: metadata and spec, not the status the CronJob controller keeps. */
export const childContent = (c: KubeObject): string => {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = c.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  return JSON.stringify({ metadata, spec: (c as KubeObject & { spec?: unknown }).spec });
};

/** Starts a replica of `bundle` as the release whose documents are `docs` run it, named `id`. */
export type StartReplica = (bundle: string, docs: readonly KubeObject[], id: string) => ControllerProcess;

/**
 * Runs `scenario` on a cluster from `factory` (a fresh test API server by default) with `previous` applied
 * and `namespace` created; stops every replica it started and the cluster afterwards.
 */
export async function onUpgradeCluster<T>(factory: UpgradeClusterFactory | undefined, previous: readonly KubeObject[], namespace: string, scenario: (cluster: UpgradeCluster, start: StartReplica) => Promise<T>): Promise<T> {
  const cluster = await (factory ?? ((docs) => testServerUpgradeCluster(docs)))(previous, namespace);
  const replicas: ControllerProcess[] = [];
  try {
    await api(cluster.admin).createNamespace(namespace);
    return await scenario(cluster, (bundle, docs, id) => {
      const p = ControllerProcess.start(bundle, replicaFlags(cluster, docs, id));
      replicas.push(p);
      return p;
    });
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    await cluster.stop();
  }
}

/** Runs the upgrade on a fresh cluster; see the module doc. Stops everything it started. */
export async function runUpgrade(options: UpgradeOptions): Promise<UpgradeResult> {
  const log = options.log ?? (() => {});
  const n = options.schedules;
  return onUpgradeCluster(options.cluster, previousReleaseDocuments(), NAMESPACE, async (cluster, start) => {
    const k = api(cluster.admin);
    // 1. The previous release, converged.
    const t0 = Date.now();
    const oldA = start(PREVIOUS_BUNDLE, previousReleaseDocuments(), 'old-a');
    const oldB = start(PREVIOUS_BUNDLE, previousReleaseDocuments(), 'old-b');
    const names = Array.from({ length: n }, (_, i) => `s-${String(i).padStart(5, '0')}`);
    await inParallel(names.map((name, i) => [name, i] as const), 32, async ([name, i]) => {
      await k.schedulesV1alpha1.create(scheduleManifestV1alpha1(NAMESPACE, name, legacySpec(i, cluster.timeZones)) as never);
    });
    await waitFor(`the previous release to converge ${n} schedules`, async () => {
      const [schedules, children] = await Promise.all([listAll((o) => k.schedulesV1alpha1.list(o), NAMESPACE), listAll((o) => k.cronJobs.list(o), NAMESPACE)]);
      return children.length === n && schedules.every((s) => readyOf(s as never)?.status === 'True' && (s as Schedule).status?.['observedGeneration'] === s.metadata.generation);
    }, 60_000 + n * 100, 500);
    const convergedBeforeS = (Date.now() - t0) / 1000;
    log(`previous release converged ${n} schedules in ${convergedBeforeS.toFixed(1)} s`);
    await sleep(1_000);
    const before = new Map((await listAll((o) => k.cronJobs.list(o), NAMESPACE)).map((c) => [c.metadata.name ?? '', childContent(c)]));

    // 2. The new dist/, applied in file order.
    const upgradeStart = Date.now();
    const writes = await cluster.countWrites();
    const next = releaseDocuments(options.backupImage);
    await cluster.apply(next);
    log('new dist/ applied');

    // 3. The roll: new beside old, then old out one by one.
    const newA = start(options.bundle, next, 'new-a');
    await cluster.routeWebhookTo(newA);
    await waitFor('the first new replica to be ready', () => readyzOk(newA), 120_000, 200);
    log('first new replica ready (webhook serving, caches synced)');
    await sleep(options.sideBySideMs ?? 2_000);
    await oldA.stop();
    const newB = start(options.bundle, next, 'new-b');
    await waitFor('the second new replica to be ready', () => readyzOk(newB), 120_000, 200);
    await oldB.stop();
    log('old replicas stopped');

    // 4. A new replica leads and has looked at every schedule; then nothing more is written.
    const leader = await waitFor('a new replica to lead', () => [newA, newB].find((p) => p.records().some((r) => r['msg'] === 'became leader; starting workers')), 60_000, 100);
    await waitFor(`the new leader to reconcile ${n} schedules`, async () => (await reconciles(leader)) >= n, 60_000 + n * 20, 250);
    await cluster.quiet(2_000);
    const upgradeS = (Date.now() - upgradeStart) / 1000;
    log(`upgraded in ${upgradeS.toFixed(1)} s`);
    const [alpha, v1] = await Promise.all([listAll((o) => k.schedulesV1alpha1.list(o), NAMESPACE), listAll((o) => k.schedules.list(o), NAMESPACE)]);
    const disagreements = disagreeing(alpha, v1);

    // 5. The storage migration, with the admin's credentials as the README says.
    const migration = await migrate(options.bundle, cluster, n);
    log(`migrated ${n} objects in ${migration.seconds.toFixed(2)} s (${Math.round(migration.objectsPerSecond)}/s), storedVersions ${JSON.stringify(migration.storedVersions)}`);
    await cluster.quiet(2_000);
    const span = await writes();
    const after = new Map((await listAll((o) => k.cronJobs.list(o), NAMESPACE)).map((c) => [c.metadata.name ?? '', childContent(c)]));

    // 6. Manifests written afterwards, in either version.
    const afterwards = await applyAfterwards(cluster.admin, NAMESPACE);
    return {
      schedules: n,
      convergedBeforeS,
      upgradeS,
      ...span,
      changedChildren: [...before].filter(([name, content]) => after.get(name) !== content).map(([name]) => name),
      disagreements,
      migration,
      afterwards,
    };
  });
}

export async function readyzOk(process: ControllerProcess): Promise<boolean> {
  const url = process.records().find((r) => r['msg'] === 'starting')?.['health'];
  if (typeof url !== 'string') return false;
  return fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.ok, () => false);
}

/** Waits until the controller has written nothing (Lease renewals aside) for `ms`. */
async function quiet(cluster: Cluster, ms: number): Promise<void> {
  await waitFor(`${ms} ms without controller writes`, () => {
    const last = cluster.server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER && !['get', 'list', 'watch'].includes(e.verb) && e.resource !== 'leases').at(-1);
    return last === undefined || Date.now() - Date.parse(last.time) >= ms;
  }, 120_000, 200);
}

/** Names whose v1alpha1 read, converted to v1, is not exactly the v1 read (or that one version lacks). */
function disagreeing(alpha: readonly KubeObject[], v1: readonly KubeObject[]): string[] {
  const byName = new Map(v1.map((o) => [o.metadata.name ?? '', o]));
  const out = alpha.filter((o) => !isDeepStrictEqual(toV1(o as unknown as BackupSchedule), byName.get(o.metadata.name ?? ''))).map((o) => o.metadata.name ?? '');
  if (alpha.length !== v1.length) out.push(`${alpha.length} objects in v1alpha1, ${v1.length} in v1`);
  return out;
}

/** Runs the new bundle's `migrate-storage` as its own process, as an admin would. */
async function migrate(bundle: string, cluster: UpgradeCluster, n: number): Promise<UpgradeResult['migration']> {
  const started = performance.now();
  const child = spawn(process.execPath, [bundle, 'migrate-storage', '--kubeconfig', cluster.adminKubeconfig], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const seconds = (performance.now() - started) / 1000;
  if (exitCode !== 0) throw new Error(`migrate-storage exited ${exitCode}:\n${output.slice(-4_000)}`);
  const crd = await clientFor(cluster.admin, 'CustomResourceDefinition').get({ name: 'backupschedules.kubelings.dev' });
  const storedVersions = ((crd['status'] as { storedVersions?: string[] } | undefined)?.storedVersions ?? []);
  const notStoredInV1 = await cluster.notStoredInV1();
  return { exitCode, seconds, objectsPerSecond: n / seconds, storedVersions, notStoredInV1 };
}

/**
 * A v1alpha1 manifest (an unchanged GitOps repo: kube-apiserver converts it through the new replicas'
 * webhook) and a v1 one with GFS retention, created in `namespace` after the upgrade; their problems.
 */
export async function applyAfterwards(admin: KubeClient, namespace: string): Promise<string[]> {
  const k = api(admin);
  const problems: string[] = [];
  const manifests = [
    ['gitops-v1alpha1', ['--keep-last=3'], () => k.schedulesV1alpha1.create(scheduleManifestV1alpha1(namespace, 'gitops-v1alpha1', { retention: { keepLast: 3 } }) as never)],
    ['new-v1', ['--keep-daily=7', '--keep-weekly=4'], () => k.schedules.create(scheduleManifest(namespace, 'new-v1', { retention: { keepDaily: 7, keepWeekly: 4 } }) as never)],
  ] as const;
  for (const [name, args, create] of manifests) {
    try {
      await create();
      await k.waitForReady(namespace, name, undefined, 30_000);
      const child = await k.waitForCronJob(namespace, name);
      const got = (child.spec.jobTemplate.spec.template.spec.containers[0].args as string[]).filter((a) => a.startsWith('--keep-'));
      if (!isDeepStrictEqual(got, [...args])) problems.push(`${name}: child args ${got.join(' ')}, expected ${args.join(' ')}`);
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return problems;
}
