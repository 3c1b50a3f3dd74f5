/**
 * Every object of a resource, page by page (kube-storage-version-migrator's `Run` loop): LIST with
 * `limit` and `continue`, the next page requested while the current one is being rewritten.
 *
 * An expired continue token (410 Gone: the snapshot the pages were read from was compacted away) is
 * not the end: kube's 410 carries an inconsistent continue token (`metadata.continue`) that goes on
 * from the same key at the newest revision, as kube-storage-version-migrator does. It misses only
 * objects created since, which are written in the storage version anyway. Without one the LIST
 * starts over, also safe: rewriting is idempotent, objects already rewritten are no-ops.
 */
import { ApiStatusError, isExpired } from '../kube/api-status-error.ts';
import type { KubeList, KubeObject } from '../kube/object.ts';
import type { ResourceClient } from '../kube/resource-client.ts';
import { isTransientError } from '../kube/kube-client.ts';
import type { Clock } from '../runtime/clock.ts';
import { retryDelayMs, type ResolvedRetryPolicy } from './retry-policy.ts';

/** Options of {@link storedObjects}. */
export interface StoredObjectsOptions {
  /** LIST of the resource in its storage version. */
  readonly client: Pick<ResourceClient<KubeObject>, 'list' | 'typeMeta'>;
  readonly clock: Clock;
  /** Objects per LIST page. */
  readonly pageSize: number;
  /** Retries of one page on transient errors. */
  readonly retry: ResolvedRetryPolicy;
  /** Expired continue tokens in a row, with no page read in between, before the LIST fails. @default 5 */
  readonly maxRestarts?: number;
  /** Told about every page read: its items and the server's count of those still to come. */
  readonly onPage?: (page: { readonly items: number; readonly remaining: number | undefined }) => void;
  /** Told when an expired continue token ends the snapshot: `resumed` from kube's inconsistent token, or started over. */
  readonly onExpired?: (err: unknown, resumed: boolean) => void;
  readonly signal?: AbortSignal;
}

/**
 * Yields every object (apiVersion and kind set from the client when a page item lacks them). Throws
 * the LIST's error when a page fails past its retries, or when the LIST keeps expiring.
 */
export async function* storedObjects(options: StoredObjectsOptions): AsyncGenerator<KubeObject> {
  const { client, clock, pageSize, retry, signal } = options;
  const maxRestarts = options.maxRestarts ?? 5;
  const typeMeta = client.typeMeta();
  const page = async (token: string | undefined): Promise<KubeList<KubeObject>> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await client.list({ limit: pageSize, ...(token ? { continue: token } : {}), ...(signal ? { signal } : {}) });
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err;
        if (!isTransientError(err) || attempt >= retry.maxAttempts) throw err;
        await clock.sleep(retryDelayMs(err, attempt, retry), signal);
      }
    }
  };
  // A prefetched page may fail before it is awaited: mark it handled, the await still throws.
  const prefetch = (token: string | undefined): Promise<KubeList<KubeObject>> => {
    const promise = page(token);
    promise.catch(() => undefined);
    return promise;
  };
  let restarts = 0;
  let token: string | undefined;
  let pending = prefetch(undefined);
  for (;;) {
    let list: KubeList<KubeObject>;
    try {
      list = await pending;
    } catch (err) {
      if (!(token && isExpired(err)) || restarts >= maxRestarts) throw err;
      restarts += 1;
      const inconsistent = inconsistentContinueToken(err);
      options.onExpired?.(err, inconsistent !== undefined);
      token = inconsistent;
      pending = prefetch(inconsistent);
      continue;
    }
    if (token) restarts = 0;
    token = list.metadata?.continue || undefined;
    if (token) pending = prefetch(token);
    const items = list.items ?? [];
    options.onPage?.({ items: items.length, remaining: list.metadata?.remainingItemCount });
    for (const item of items) {
      item.apiVersion ??= typeMeta.apiVersion;
      item.kind ??= typeMeta.kind;
      yield item;
    }
    if (!token) return;
  }
}

/** The continue token kube puts in a 410's `metadata.continue`: the rest of the LIST, read at the newest revision. */
function inconsistentContinueToken(err: unknown): string | undefined {
  const metadata = err instanceof ApiStatusError ? (err.status.metadata as { continue?: unknown }) : undefined;
  return typeof metadata?.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
}
