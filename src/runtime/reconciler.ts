/**
 * The reconciler contract (controller-runtime `pkg/reconcile`): what a reconcile receives and what
 * each way of finishing means to the controller loop.
 */
import type { Logger } from './logger.ts';

/** What one reconcile call receives. */
export interface ReconcileContext {
  /** The work queue key, `namespace/name` (or `name` for cluster-scoped objects). */
  readonly key: string;
  readonly namespace: string | undefined;
  readonly name: string;
  /** Unique per call; also bound into `logger` as `reconcileID` (controller-runtime's field name). */
  readonly reconcileId: string;
  /** Child logger bound to `controller`, `namespace`, `name` and `reconcileID`. */
  readonly logger: Logger;
  /** Aborted when shutdown's deadline passes: stop and return promptly. */
  readonly signal: AbortSignal;
}

/**
 * How a reconcile asks to be called again.
 * - `undefined` / `{}`: done; the key's backoff history is forgotten.
 * - `{ requeue: true }`: call again after the rate limiter's per-key backoff.
 * - `{ requeueAfterMs }`: call again after that delay (backoff forgotten), e.g. for time-based work.
 */
export interface ReconcileResult {
  readonly requeue?: boolean;
  readonly requeueAfterMs?: number;
}

/**
 * Brings the world in line with the object named by `ctx.key`. Read from caches; make one move.
 *
 * Contract, as in controller-runtime:
 * - resolve with `undefined` or `{}` → done (`result="success"`);
 * - resolve with `{ requeue: true }` → rate-limited requeue (`result="requeue"`);
 * - resolve with `{ requeueAfterMs: n }` (n > 0) → requeued after n ms (`result="requeue_after"`);
 * - throw {@link TerminalError} → logged and counted in `controller_runtime_terminal_reconcile_errors_total`
 *   (and the errors total); not retried until the object changes and is queued again;
 * - throw anything else → counted in `controller_runtime_reconcile_errors_total`, logged, and retried
 *   with the rate limiter's per-key exponential backoff.
 *
 * The controller never runs two reconciles of one key at once.
 */
export interface Reconciler {
  reconcile(ctx: ReconcileContext): Promise<ReconcileResult | undefined | void>;
}

/** An error retrying cannot fix (invalid spec, a name owned by someone else): do not requeue. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** True for {@link TerminalError}, also when wrapped as the `cause` of another error. */
export function isTerminalError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}
