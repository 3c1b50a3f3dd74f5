/**
 * Leader election on a Lease, after client-go's `tools/leaderelection/leaderelection.go`, plus fencing.
 *
 * **Clock skew.** As in client-go, a candidate never compares the holder's `renewTime` with its own
 * clock: it notes *when it saw the record change* (`observedAt`, local clock) and treats the lease as
 * expired only once `observedAt + leaseDurationSeconds` has passed without a further change. Clocks
 * may differ arbitrarily between replicas; only their *rates* must roughly agree.
 *
 * **Fencing.** client-go does not fence: a leader whose renewals stall keeps acting until it notices.
 * Here the elector's {@link LeaderElector.gate} is open only while we lead AND
 * `now < renewStartedAt + renewDeadline`, where `renewStartedAt` is when the last *successful* renew
 * (or acquire) request was SENT. Another candidate can observe that write no earlier than the server
 * applied it, which is after we sent it, so it may take the lease no earlier than
 * `renewStartedAt + leaseDuration`. Since `renewDeadline < leaseDuration`, our gate has closed
 * strictly before. The gate reads the clock on every call, so it closes on time even if no timer
 * runs; a timer also ends leadership at the deadline so {@link LeaderElector.run} returns.
 *
 * **Optimistic concurrency.** Every write carries the resourceVersion last read; a `409 Conflict`
 * only means someone wrote in between, and the next tick reads again.
 */
import { realClock, type Clock, type TimerHandle } from './clock.ts';
import { jitter } from './jitter.ts';
import { ApiStatusError } from '../kube/api-status-error.ts';
import { formatMicroTime, LeaseNotFoundError, type LeaderElectionRecord, type LeaseLock } from './lease-lock.ts';
import { resolveTiming, type LeaderElectorOptions } from './leader-elector-options.ts';
import { WriteGateClosedError, type WriteGate } from './write-gate.ts';

export type { LeaderElectorOptions } from './leader-elector-options.ts';

/** The elector's life cycle. */
type ElectorState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'candidate' }
  | { readonly kind: 'leading'; readonly renewStartedAt: number }
  | { readonly kind: 'releasing' }
  | { readonly kind: 'stopped'; readonly reason: 'lost' | 'released' | 'aborted' };

type Attempt = { readonly ok: true; readonly sentAt: number } | { readonly ok: false };

interface Observed {
  readonly record: LeaderElectionRecord | undefined;
  readonly resourceVersion: string;
  readonly key: string;
}

const silentLogger = { info: (): void => {}, warn: (): void => {} };

/** Elects one leader among the replicas sharing a Lease, and fences the leader's writes. */
export class LeaderElector {
  readonly #lock: LeaseLock;
  readonly #identity: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #jitterFactor: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #options: LeaderElectorOptions;
  readonly #logger: NonNullable<LeaderElectorOptions['logger']>;
  #state: ElectorState = { kind: 'idle' };
  #observed: Observed | undefined;
  #observedAt = 0;
  #leaseProblem: string | undefined;
  #reportedLeader = '';
  #deadlineTimer: TimerHandle | undefined;
  #wake: (() => void) | undefined;
  #ledOnce = false;
  #stopping: Promise<void> | undefined;

  /** Open only while this replica leads and its last successful renew started less than renewDeadline ago. */
  readonly gate: WriteGate;

  constructor(options: LeaderElectorOptions) {
    this.#options = options;
    this.#lock = options.lock;
    this.#identity = options.identity;
    const timing = resolveTiming(options);
    this.#leaseDurationMs = timing.leaseDurationMs;
    this.#renewDeadlineMs = timing.renewDeadlineMs;
    this.#retryPeriodMs = timing.retryPeriodMs;
    this.#jitterFactor = timing.jitterFactor;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger ?? silentLogger;
    this.gate = {
      isOpen: () => this.#gateOpen(),
      check: (description) => {
        if (!this.#gateOpen()) {
          throw new WriteGateClosedError(`refusing to ${description}: ${this.#identity} does not hold Lease ${this.#lock.describe()} (or cannot prove it still does)`);
        }
      },
    };
  }

  /** Whether this replica currently leads (its gate may still be closed while a renewal is overdue). */
  isLeader(): boolean {
    return this.#state.kind === 'leading';
  }

  /** Why the last attempt could not read the Lease (missing, forbidden, unreachable) or got no answer to its renewal, if so. */
  leaseProblem(): string | undefined {
    return this.#leaseProblem;
  }

  /** For /healthz: false once renewals have failed past the renew deadline, or leadership was lost. */
  healthy(): boolean {
    const state = this.#state;
    if (state.kind === 'leading') return this.#clock.now() < state.renewStartedAt + this.#renewDeadlineMs;
    return !(state.kind === 'stopped' && state.reason === 'lost');
  }

  /**
   * Campaigns until this replica leads, then renews every retryPeriod. Resolves when leadership is
   * lost, or when `signal` aborts (after releasing the lease if we held it). After a loss it may be
   * called again to campaign anew (the gate stays closed until this replica leads again).
   */
  async run(signal: AbortSignal): Promise<void> {
    const state = this.#state;
    if (state.kind !== 'idle' && !(state.kind === 'stopped' && state.reason === 'lost')) {
      throw new Error('LeaderElector.run may be called again only after leadership was lost');
    }
    this.#state = { kind: 'candidate' };
    this.#ledOnce = false;
    const stopped = new Promise<void>((resolve) => (this.#wake = resolve));
    const onAbort = (): void => void this.#stop();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal.aborted) await this.#stop();
      else await Promise.race([this.#campaign(signal), stopped]);
      // The campaign loop may return on abort while the release is still being written.
      await stopped;
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (this.#ledOnce) this.#options.onStoppedLeading?.();
    }
  }

  /** Gives up the lease if we hold it: closes the gate, then writes an empty holder so the next candidate takes over at once. */
  async release(): Promise<void> {
    await this.#stop();
  }

  #gateOpen(): boolean {
    const state = this.#state;
    return state.kind === 'leading' && this.#clock.now() < state.renewStartedAt + this.#renewDeadlineMs;
  }

  async #campaign(signal: AbortSignal): Promise<void> {
    this.#logger.info({ lease: this.#lock.describe(), identity: this.#identity }, 'attempting to acquire leader lease');
    while (this.#state.kind === 'candidate') {
      const attempt = await this.#tryAcquireOrRenew();
      if (this.#state.kind !== 'candidate') return;
      if (attempt.ok && this.#clock.now() < attempt.sentAt + this.#renewDeadlineMs) {
        this.#becomeLeader(attempt.sentAt);
        break;
      }
      try {
        await this.#clock.sleep(jitter(this.#retryPeriodMs, this.#jitterFactor, this.#random), signal);
      } catch {
        return;
      }
    }
    while (this.#state.kind === 'leading') {
      try {
        await this.#clock.sleep(this.#retryPeriodMs, signal);
      } catch {
        return;
      }
      const attempt = await this.#tryAcquireOrRenew();
      const state = this.#state;
      if (state.kind !== 'leading') return;
      const now = this.#clock.now();
      if (attempt.ok && now < attempt.sentAt + this.#renewDeadlineMs) {
        this.#state = { kind: 'leading', renewStartedAt: attempt.sentAt };
        this.#armDeadline(attempt.sentAt);
      } else if (now >= state.renewStartedAt + this.#renewDeadlineMs) {
        this.#lose('renew deadline passed');
      }
    }
  }

  /** One attempt, client-go's `tryAcquireOrRenew`: the leader first tries a blind update, then reads. */
  async #tryAcquireOrRenew(): Promise<Attempt> {
    const observed = this.#observed;
    if (this.#state.kind === 'leading' && observed?.record) {
      const record = this.#ownRecord(observed.record.acquireTime, observed.record.leaseTransitions);
      const sentAt = this.#clock.now();
      try {
        const resourceVersion = await this.#lock.update(record, observed.resourceVersion);
        this.#observe(record, resourceVersion);
        return { ok: true, sentAt };
      } catch (err) {
        // A renewal that got no answer at all (timed out, connection refused) tells as much as a failed
        // read: say so now, not only after the GET that follows has timed out as well.
        if (!(err instanceof ApiStatusError) && !(err instanceof LeaseNotFoundError)) this.#leaseProblem = `cannot renew Lease ${this.#lock.describe()}: ${(err as Error).message}`;
        this.#logger.warn({ err, lease: this.#lock.describe() }, 'failed to renew lease optimistically; reading it again');
      }
      if (!this.#campaigning()) return { ok: false };
    }
    let current: Awaited<ReturnType<LeaseLock['get']>>;
    try {
      current = await this.#lock.get();
      this.#leaseProblem = undefined;
    } catch (err) {
      this.#leaseProblem = `cannot read Lease ${this.#lock.describe()}: ${(err as Error).message}`;
      this.#logger.warn({ err, lease: this.#lock.describe() }, 'failed to read leader lease');
      return { ok: false };
    }
    if (!this.#campaigning()) return { ok: false };
    this.#observe(current.record, current.resourceVersion);
    const old = current.record;
    const heldByOther = old !== undefined && old.holderIdentity !== '' && old.holderIdentity !== this.#identity;
    if (heldByOther) {
      if (this.#state.kind === 'leading') {
        this.#lose(`lease taken over by ${old.holderIdentity}`);
        return { ok: false };
      }
      const expiresAt = this.#observedAt + old.leaseDurationSeconds * 1000;
      if (this.#clock.now() < expiresAt) return { ok: false };
    }
    const ours = old?.holderIdentity === this.#identity;
    const record = ours
      ? this.#ownRecord(old.acquireTime, old.leaseTransitions)
      : this.#ownRecord(undefined, old === undefined ? 0 : old.leaseTransitions + 1);
    const sentAt = this.#clock.now();
    try {
      const resourceVersion = await this.#lock.update(record, current.resourceVersion);
      this.#observe(record, resourceVersion);
      return { ok: true, sentAt };
    } catch (err) {
      this.#logger.warn({ err, lease: this.#lock.describe() }, 'failed to update leader lease');
      return { ok: false };
    }
  }

  /** Whether an attempt may still write: a release or a loss in the meantime ends it. */
  #campaigning(): boolean {
    return this.#state.kind === 'candidate' || this.#state.kind === 'leading';
  }

  #ownRecord(acquireTime: string | undefined, leaseTransitions: number): LeaderElectionRecord {
    const now = formatMicroTime(this.#clock.now());
    return {
      holderIdentity: this.#identity,
      leaseDurationSeconds: this.#leaseDurationMs / 1000,
      acquireTime: acquireTime || now,
      renewTime: now,
      leaseTransitions,
    };
  }

  /** Notes a record read or written; the expiry clock restarts only when it changed (client-go `observedRawRecord`). */
  #observe(record: LeaderElectionRecord | undefined, resourceVersion: string): void {
    const key = `${resourceVersion}\n${JSON.stringify(record ?? null)}`;
    if (this.#observed?.key !== key) {
      this.#observed = { record, resourceVersion, key };
      this.#observedAt = this.#clock.now();
    }
    const holder = record?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.#reportedLeader) {
      this.#reportedLeader = holder;
      this.#options.onNewLeader?.(holder);
    }
  }

  #becomeLeader(renewStartedAt: number): void {
    this.#state = { kind: 'leading', renewStartedAt };
    this.#ledOnce = true;
    this.#armDeadline(renewStartedAt);
    this.#options.metrics?.setLeader(true);
    this.#logger.info({ lease: this.#lock.describe(), identity: this.#identity }, 'successfully acquired lease');
    this.#options.onStartedLeading?.();
  }

  #armDeadline(renewStartedAt: number): void {
    if (this.#deadlineTimer) this.#clock.clearTimeout(this.#deadlineTimer);
    const at = renewStartedAt + this.#renewDeadlineMs;
    this.#deadlineTimer = this.#clock.setTimeout(() => {
      this.#deadlineTimer = undefined;
      const state = this.#state;
      if (state.kind === 'leading' && state.renewStartedAt === renewStartedAt) this.#lose('renew deadline passed');
    }, at - this.#clock.now());
  }

  #clearDeadline(): void {
    if (this.#deadlineTimer) this.#clock.clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
  }

  #lose(why: string): void {
    if (this.#state.kind !== 'leading') return;
    this.#state = { kind: 'stopped', reason: 'lost' };
    this.#clearDeadline();
    this.#options.metrics?.setLeader(false);
    this.#logger.warn({ lease: this.#lock.describe(), identity: this.#identity, why }, 'leader election lost');
    this.#wake?.();
  }

  /** Stops campaigning; if leading, closes the gate and releases the lease. Every caller waits for the same release. */
  #stop(): Promise<void> {
    this.#stopping ??= this.#stopOnce();
    return this.#stopping;
  }

  async #stopOnce(): Promise<void> {
    const state = this.#state;
    if (state.kind === 'stopped' || state.kind === 'releasing') return;
    if (state.kind !== 'leading') {
      this.#state = { kind: 'stopped', reason: 'aborted' };
      this.#wake?.();
      return;
    }
    // The gate closes here, before the release write is even built.
    this.#state = { kind: 'releasing' };
    this.#clearDeadline();
    this.#options.metrics?.setLeader(false);
    await this.#writeRelease();
    this.#state = { kind: 'stopped', reason: 'released' };
    this.#wake?.();
  }

  /** client-go `release` with ReleaseOnCancel: empty holder, 1 s duration. Retried once after a conflict if the lease is still ours. */
  async #writeRelease(): Promise<void> {
    const describe = this.#lock.describe();
    let observed = this.#observed;
    for (let attempt = 0; attempt < 2 && observed?.record; attempt++) {
      const now = formatMicroTime(this.#clock.now());
      const record: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: observed.record.leaseTransitions,
      };
      try {
        const resourceVersion = await this.#lock.update(record, observed.resourceVersion);
        this.#observe(record, resourceVersion);
        this.#logger.info({ lease: describe, identity: this.#identity }, 'released leader lease');
        return;
      } catch (err) {
        this.#logger.warn({ err, lease: describe }, 'failed to release leader lease');
      }
      try {
        const current = await this.#lock.get();
        if (current.record?.holderIdentity !== this.#identity) return;
        observed = { record: current.record, resourceVersion: current.resourceVersion, key: '' };
      } catch (err) {
        this.#logger.warn({ err, lease: describe }, 'failed to read leader lease for release');
        return;
      }
    }
  }
}
