/** Options of `LeaderElector` and their validation (client-go `LeaderElectionConfig`, `NewLeaderElector`). */
import type { Clock } from './clock.ts';
import type { LeaseLock } from './lease-lock.ts';

/** Options of `LeaderElector`. Durations must satisfy leaseDuration > renewDeadline > jitterFactor·retryPeriod. */
export interface LeaderElectorOptions {
  /** Where the record lives. Its client must not pass `LeaderElector.gate`: the release is written with the gate closed. */
  readonly lock: LeaseLock;
  /** This replica's identity (the pod name), written as `holderIdentity`. */
  readonly identity: string;
  /**
   * How long a candidate waits after last seeing the record change before taking the lease.
   * Stored in whole seconds in the Lease, so it must be a multiple of 1000.
   * @default 15000
   */
  readonly leaseDurationMs?: number;
  /**
   * How long the leader keeps leading (and its gate open) after the start of its last successful renew.
   * @default 10000
   */
  readonly renewDeadlineMs?: number;
  /**
   * Time between attempts to acquire or renew.
   * @default 2000
   */
  readonly retryPeriodMs?: number;
  /**
   * Acquire attempts wait between `retryPeriod` and `retryPeriod · (1 + jitterFactor)`.
   * @default 1.2
   */
  readonly jitterFactor?: number;
  /**
   * Time source.
   * @default realClock
   */
  readonly clock?: Clock;
  /**
   * Uniform random numbers in [0, 1) for the jitter.
   * @default Math.random
   */
  readonly random?: () => number;
  /**
   * Called when this replica becomes leader.
   * @default none
   */
  readonly onStartedLeading?: () => void;
  /**
   * Called once when this replica stops leading (lost or released); the caller decides whether to exit.
   * Not called when `run` ends without ever leading.
   * @default none
   */
  readonly onStoppedLeading?: () => void;
  /**
   * Called when the observed holder changes to a non-empty identity (this replica included).
   * @default none
   */
  readonly onNewLeader?: (identity: string) => void;
  /**
   * Structured logger (pino-compatible).
   * @default silent
   */
  readonly logger?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /**
   * Receives `leader_election_master_status`.
   * @default none
   */
  readonly metrics?: { setLeader(isLeader: boolean): void };
}

/** The validated durations of an elector. */
export interface LeaderElectorTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly jitterFactor: number;
}

function validate(field: string, value: number, condition: boolean, requirement: string): void {
  if (!Number.isFinite(value) || !condition) throw new RangeError(`LeaderElector: ${field} ${requirement}, got ${value}`);
}

/**
 * Applies the defaults and checks what fencing relies on: renewDeadline < leaseDuration (the gate
 * closes before anyone may take over) and renewDeadline > jitterFactor·retryPeriod (client-go's rule:
 * a renewal gets more than one chance before the deadline).
 */
export function resolveTiming(options: Pick<LeaderElectorOptions, 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'jitterFactor'>): LeaderElectorTiming {
  if (!options.identity) throw new TypeError('LeaderElector: identity must be a non-empty string');
  const lease = options.leaseDurationMs ?? 15_000;
  const renew = options.renewDeadlineMs ?? 10_000;
  const retry = options.retryPeriodMs ?? 2_000;
  const jitterFactor = options.jitterFactor ?? 1.2;
  validate('leaseDurationMs', lease, lease >= 1000 && lease % 1000 === 0, 'must be a positive whole number of seconds in ms (the Lease stores seconds)');
  validate('renewDeadlineMs', renew, renew > 0 && renew < lease, `must be > 0 and less than leaseDurationMs (${lease})`);
  validate('retryPeriodMs', retry, retry > 0, 'must be > 0');
  validate('jitterFactor', jitterFactor, jitterFactor >= 0, 'must be ≥ 0');
  validate('renewDeadlineMs', renew, renew > jitterFactor * retry, `must be greater than jitterFactor × retryPeriodMs (${jitterFactor * retry})`);
  return { leaseDurationMs: lease, renewDeadlineMs: renew, retryPeriodMs: retry, jitterFactor };
}
