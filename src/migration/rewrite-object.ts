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
  /**
   * Not rewritten because the server refuses this object as it is ({@link OBJECT_REJECTED_CODES}: it
   * fails the CRD's validation in the storage version, say): retrying cannot help, the object must be
   * edited or deleted. The run goes on without it.
   */
  | { readonly result: 'skipped'; readonly code: number; readonly message: string }
  /** Not rewritten: the server's last answer (transient errors retried to the end, or a refusal of the request itself). */
  | { readonly result: 'failed'; readonly code: number | undefined; readonly message: string; readonly attempts: number };

/**
 * Answers that judge the object, not the request or the caller: 400 Bad Request (an object the server
 * cannot decode or convert), 413 (too large to store), 422 Invalid (it fails validation: on a server
 * without CRD validation ratcheting, before Kubernetes 1.30, even the no-op PUT of an object that became
 * invalid is refused). 401, 403 and 405 are about the caller and fail the object as before: every other
 * object would get the same answer.
 */
const OBJECT_REJECTED_CODES: ReadonlySet<number> = new Set([400, 413, 422]);

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
 * retried with backoff; an object the server refuses as it is ({@link OBJECT_REJECTED_CODES}) is
 * skipped at once; anything else (401, 403: the server judged the caller) fails at once.
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
      const code = statusCode(err);
      if (code !== undefined && OBJECT_REJECTED_CODES.has(code)) return { result: 'skipped', code, message: (err as Error).message };
      const conflict = isConflict(err);
      if ((!conflict && !isTransientError(err)) || attempt >= retry.maxAttempts) {
        return { result: 'failed', code, message: (err as Error).message, attempts: attempt };
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
