/**
 * A storage-version migration of one custom resource, modelled on kube-storage-version-migrator: read
 * the CRD, wait until the API server stores in the new version, rewrite every object in it (paged
 * LIST, a no-op PUT per object, bounded concurrency), and only when every object was rewritten set
 * `status.storedVersions` to the storage version alone.
 *
 * An object the server refuses to store as it is (a 422 on a server without validation ratcheting, for
 * an object written before the schema or a conversion got stricter) is skipped and reported with the
 * server's message and how to fix it; the others are still rewritten, so one tenant's object does not
 * hold up the rest, and storedVersions stays as it was until a run rewrites every object.
 *
 * Safe to run twice and resumable: storedVersions changes only at the very end, so a run that is
 * killed leaves it as it was, and the next run starts over; objects already rewritten cost one no-op
 * PUT each. A run after a completed one finds storedVersions already `[storage]` and does nothing
 * (unless forced). It knows nothing of any particular kind: everything comes from the CRD.
 */
import { isNotFound } from '../kube/api-status-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import type { KubeObject } from '../kube/object.ts';
import { ResourceClient } from '../kube/resource-client.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import { silentLogger, type Logger } from '../runtime/logger.ts';
import { CRD_RESOURCE, readCrd, setStoredVersions } from './crd-stored-versions.ts';
import { MigrationProgress, type MigrationCounts, type ObjectFailure, type ObjectSkip } from './migration-progress.ts';
import { MigrationRefusedError, planMigration, readMigrationTarget, type MigrationTarget } from './migration-target.ts';
import { resolveRetryPolicy, type RetryPolicy } from './retry-policy.ts';
import { rewriteObject } from './rewrite-object.ts';
import { awaitStorageVersion, type DiscoveryResources } from './storage-version-switch.ts';
import { storedObjects } from './stored-objects.ts';

/** Options of {@link migrateStorage}. */
export interface StorageMigrationOptions {
  /** The API client (its identity needs the RBAC the README lists). */
  readonly client: KubeClient;
  /** `metadata.name` of the CRD, e.g. `backupschedules.kubelings.dev`. */
  readonly crdName: string;
  /** Rewrites in flight at once. @default 16 */
  readonly concurrency?: number;
  /** Objects per LIST page. @default 500 */
  readonly pageSize?: number;
  /** Rewrite even when `status.storedVersions` is already the storage version alone. @default false */
  readonly force?: boolean;
  /** Retries of each request on transient errors. @default 5 attempts, 200 ms doubling, at most 10 s */
  readonly retry?: RetryPolicy;
  /** Least time between two progress lines. @default 2_000 */
  readonly progressIntervalMs?: number;
  /** How long to wait for the API server to report the new storage version in discovery. @default 60_000 */
  readonly storageVersionTimeoutMs?: number;
  /** Stops the run: no new rewrites start, storedVersions is left alone. @default none */
  readonly signal?: AbortSignal;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default realClock */
  readonly clock?: Clock;
}

/** How a run ended (a refusal throws {@link MigrationRefusedError}, any other run-level failure an Error). */
export type MigrationResult =
  /** storedVersions was already `[storage]`: nothing rewritten. */
  | { readonly outcome: 'up-to-date'; readonly target: MigrationTarget }
  /** Every object rewritten, storedVersions set. */
  | { readonly outcome: 'migrated'; readonly target: MigrationTarget; readonly counts: MigrationCounts; readonly storedVersions: readonly string[] }
  /** Every object rewritten but those the server refused as they are (listed, each with a fix): storedVersions untouched. */
  | { readonly outcome: 'incomplete'; readonly target: MigrationTarget; readonly counts: MigrationCounts; readonly skipped: readonly SkippedObject[] }
  /** Some objects could not be rewritten for another reason (and some may have been skipped): storedVersions untouched. */
  | { readonly outcome: 'failed'; readonly target: MigrationTarget; readonly counts: MigrationCounts; readonly failures: readonly ObjectFailure[]; readonly skipped: readonly SkippedObject[] }
  /** Stopped by the signal: storedVersions untouched; run again to finish. */
  | { readonly outcome: 'aborted'; readonly target: MigrationTarget; readonly counts: MigrationCounts };

/** A skipped object with what its owner can do about it. */
export interface SkippedObject extends ObjectSkip {
  /** How to fix it, with the kubectl commands for this object. */
  readonly fix: string;
}

/** What to do about an object the server refused to store in the storage version as it is. */
export function skipFix(target: MigrationTarget, ref: { readonly namespace: string | undefined; readonly name: string }): string {
  const object = `${target.plural}.${target.group} ${ref.name}${ref.namespace ? ` -n ${ref.namespace}` : ''}`;
  return (
    `make it valid for ${target.group}/${target.storageVersion} (the server's message names the fields): ` +
    `kubectl edit ${object}, fixing each field or the annotation a conversion webhook derives it from ` +
    `(a BackupSchedule's kubelings.dev/v1-retention), or kubectl delete ${object}; then run migrate-storage again`
  );
}

function positiveInteger(field: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) throw new RangeError(`${field} must be an integer from 1 to ${max}, got ${value}`);
  return value;
}

/** Runs one migration (see the file comment). */
export async function migrateStorage(options: StorageMigrationOptions): Promise<MigrationResult> {
  const concurrency = positiveInteger('concurrency', options.concurrency ?? 16, 256);
  const pageSize = positiveInteger('pageSize', options.pageSize ?? 500, 10_000);
  const retry = resolveRetryPolicy(options.retry);
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? silentLogger;
  const { client, signal } = options;

  const crds = new ResourceClient<KubeObject>(client, CRD_RESOURCE);
  const target = readMigrationTarget(await readCrd(crds, options.crdName, signal));
  const plan = planMigration(target, options.force ?? false);
  const about = { crd: target.crdName, storageVersion: target.storageVersion, storedVersions: target.storedVersions };
  logger.info(about, plan.reason);
  if (plan.action === 'skip') return { outcome: 'up-to-date', target };

  const discoveryPath = `/apis/${target.group}/${target.storageVersion}`;
  const hashReported = await awaitStorageVersion(target, {
    readDiscovery: () => client.request<DiscoveryResources>('GET', discoveryPath, signal ? { signal } : {}).catch((err: unknown) => {
      if (isNotFound(err)) throw new MigrationRefusedError(`CRD ${target.crdName}: ${discoveryPath} is not served (404): is the CRD established?`);
      throw err;
    }),
    clock,
    timeoutMs: options.storageVersionTimeoutMs ?? 60_000,
    onWaiting: (reported, expected) => logger.info({ ...about, reported, expected }, 'waiting for the API server to switch to the storage version (discovery storageVersionHash)'),
    ...(signal ? { signal } : {}),
  });
  if (!hashReported) logger.debug(about, 'discovery reports no storageVersionHash; taking the CRD\'s storage version as the one in use');

  const resource = new ResourceClient<KubeObject>(client, { group: target.group, version: target.storageVersion, plural: target.plural, kind: target.kind, namespaced: target.namespaced });
  const progress = new MigrationProgress(clock, options.progressIntervalMs ?? 2_000);
  const objects = storedObjects({
    client: resource, clock, pageSize, retry,
    onPage: ({ items, remaining }) => progress.page(items, remaining),
    onExpired: (err, resumed) => {
      if (resumed) {
        logger.info({ ...about, err: (err as Error).message }, 'the LIST expired (410): going on from the server\'s inconsistent continue token');
        return;
      }
      progress.relist();
      logger.warn({ ...about, err: (err as Error).message }, 'the LIST expired (410): starting it over; objects already rewritten are no-ops');
    },
    ...(signal ? { signal } : {}),
  });
  const rewriteContext = { client: resource, clock, retry, ...(signal ? { signal } : {}) };
  logger.info({ ...about, concurrency, pageSize }, `rewriting every ${target.kind} in ${target.group}/${target.storageVersion}`);
  // Workers share one iterator: an async generator serves next() calls one at a time, in order.
  const worker = async (): Promise<void> => {
    for (;;) {
      if (signal?.aborted) return;
      const next = await objects.next();
      if (next.done) return;
      const obj = next.value;
      const ref = { namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' };
      const outcome = await rewriteObject(obj, rewriteContext);
      progress.record(ref, outcome);
      if (outcome.result === 'failed') logger.warn({ ...ref, code: outcome.code, attempts: outcome.attempts, err: outcome.message }, 'not rewritten');
      if (outcome.result === 'skipped') {
        logger.warn({ ...ref, code: outcome.code, err: outcome.message, fix: skipFix(target, ref) }, `skipped: the server refuses to store it in ${target.storageVersion} as it is; the run goes on`);
      }
      if (progress.due()) logger.info({ ...about, ...progress.counts() }, 'progress');
    }
  };
  // Settled, not all(): a failed LIST ends the run only once the rewrites in flight have finished.
  const settled = await Promise.allSettled(Array.from({ length: concurrency }, worker));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed && !signal?.aborted) throw failed.reason;
  const counts = progress.counts();
  if (signal?.aborted) {
    logger.warn({ ...about, ...counts }, 'stopped before every object was rewritten; status.storedVersions left as it was: run again to finish');
    return { outcome: 'aborted', target, counts };
  }
  const skipped = progress.skips.map((skip) => ({ ...skip, fix: skipFix(target, skip) }));
  if (progress.failures.length > 0) {
    logger.error({ ...about, ...counts }, `${progress.failures.length + skipped.length} objects not rewritten; status.storedVersions left as it was`);
    return { outcome: 'failed', target, counts, failures: progress.failures, skipped };
  }
  if (skipped.length > 0) {
    logger.error({ ...about, ...counts }, `${skipped.length} objects skipped, every other one rewritten; status.storedVersions left as it was`);
    return { outcome: 'incomplete', target, counts, skipped };
  }
  const storedVersions = await setStoredVersions({ crds, target, clock, retry, ...(signal ? { signal } : {}) });
  logger.info({ ...about, ...counts, storedVersions }, `migrated: every object is stored in ${target.storageVersion}`);
  return { outcome: 'migrated', target, counts, storedVersions };
}
