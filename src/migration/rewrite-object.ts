/**
 * The rewrite of one object (kube-storage-version-migrator's `migrateOneItem`): PUT it back as it was
 * read, in the storage version. The API server compares encodings, so the PUT re-encodes an object
 * stored in an older version (new resourceVersion, same generation) and is a no-op for one already in
 * the storage version.
 */
import { isConflict, isNotFound } from '../kube/api-status-error.ts';
import type { KubeObject } from '../kube/object.ts';
import type { ResourceClient } from '../kube/resource-client.ts';
import { isTransientError } from '../kube/kube-client.ts';
import type { Clock } from '../runtime/clock.ts';
import { retryDelayMs, statusCode, type ResolvedRetryPolicy } from './retry-policy.ts';

/** What became of one object. */
export type RewriteOutcome =
  /** Written again by this run (it was encoded in another version). */
  | { readonly result: 'rewritten' }
  /** Already in the storage version: the server kept it as it was. */
  | { readonly result: 'current' }
  /** Deleted since it was listed: nothing left to migrate. */
  | { readonly result: 'gone' }
  /** Not rewritten: the server's last answer. */
  | { readonly result: 'failed'; readonly code: number | undefined; readonly message: string; readonly attempts: number };

/** What {@link rewriteObject} needs. */
export interface RewriteContext {
  /** GET and PUT of the resource in its storage version. */
  readonly client: Pick<ResourceClient<KubeObject>, 'get' | 'update'>;
  readonly clock: Clock;
  readonly retry: ResolvedRetryPolicy;
  /** Aborts the rewrite: the abort's reason is thrown, the object counts as not done. */
  readonly signal?: AbortSignal;
}

/**
 * Rewrites `obj` (as listed in the storage version). 404 → gone. 409 → someone wrote it after it was
 * listed; their write was encoded in the storage version unless it went through an API server that
 * had not switched yet (HA, a moment after the CRD changed), so the latest copy is read and PUT again,
 * a no-op in the usual case (kube-storage-version-migrator does the same). Transient errors are
 * retried with backoff; anything else (400, 403, 422: the server judged the request) fails at once.
 */
export async function rewriteObject(obj: KubeObject, ctx: RewriteContext): Promise<RewriteOutcome> {
  const { client, clock, retry, signal } = ctx;
  const call = signal ? { signal } : {};
  const ref = { name: obj.metadata.name ?? '', ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) };
  let current = obj;
  let refresh = false;
  for (let attempt = 1; ; attempt++) {
    try {
      if (refresh) {
        current = await client.get(ref, call);
        refresh = false;
      }
      const written = await client.update(current, call);
      return { result: written.metadata.resourceVersion === current.metadata.resourceVersion ? 'current' : 'rewritten' };
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      if (isNotFound(err)) return { result: 'gone' };
      const conflict = isConflict(err);
      if ((!conflict && !isTransientError(err)) || attempt >= retry.maxAttempts) {
        return { result: 'failed', code: statusCode(err), message: (err as Error).message, attempts: attempt };
      }
      if (conflict) {
        // No wait: the next attempt reads the newest copy first.
        refresh = true;
        continue;
      }
      await clock.sleep(retryDelayMs(err, attempt, retry), signal);
    }
  }
}
