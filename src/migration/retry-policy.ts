/**
 * How the migrator retries one API call: which errors are worth sending again unchanged, and how long
 * to wait first (the server's `Retry-After`, else exponential backoff). Bounded, so a run ends and
 * names what failed instead of spinning.
 */
import { ApiStatusError } from '../kube/api-status-error.ts';

/** Retry bounds of one call (a LIST page, the rewrite of one object, the CRD status update). */
export interface RetryPolicy {
  /** Attempts in all, the first included. @default 5 */
  readonly maxAttempts?: number;
  /** Wait before the second attempt; doubles each time. @default 200 */
  readonly baseDelayMs?: number;
  /** Upper bound of one wait (a `Retry-After` from the server is honoured up to it too). @default 10_000 */
  readonly maxDelayMs?: number;
}

/** A {@link RetryPolicy} with its defaults applied. */
export type ResolvedRetryPolicy = Required<RetryPolicy>;

/** Applies the defaults and checks the bounds, naming the field. */
export function resolveRetryPolicy(policy: RetryPolicy = {}): ResolvedRetryPolicy {
  const resolved = { maxAttempts: policy.maxAttempts ?? 5, baseDelayMs: policy.baseDelayMs ?? 200, maxDelayMs: policy.maxDelayMs ?? 10_000 };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) throw new RangeError(`retry.maxAttempts must be an integer >= 1, got ${resolved.maxAttempts}`);
  for (const field of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!(Number.isFinite(resolved[field]) && resolved[field] >= 0)) throw new RangeError(`retry.${field} must be a number >= 0, got ${resolved[field]}`);
  }
  return resolved;
}

/** Milliseconds to wait before attempt `attempt + 1`: the server's `Retry-After` when it gave one. */
export function retryDelayMs(err: unknown, attempt: number, policy: ResolvedRetryPolicy): number {
  const retryAfter = err instanceof ApiStatusError ? err.retryAfterSeconds : undefined;
  const wait = retryAfter !== undefined ? retryAfter * 1000 : policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.min(wait, policy.maxDelayMs);
}

/** The error's HTTP status code, when the server answered. */
export function statusCode(err: unknown): number | undefined {
  return err instanceof ApiStatusError ? err.code : undefined;
}
