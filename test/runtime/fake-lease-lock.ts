/**
 * An in-memory Lease "server" and per-replica locks whose network link a test controls: latency,
 * refused connections, lost responses (applied at the server, reply never arrives) and hangs.
 * Every call is logged; calls a test did not allow are recorded as unexpected and rejected.
 */
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import type { LeaderElectionRecord, LeaseLock } from '../../src/runtime/lease-lock.ts';

const leases = { group: 'coordination.k8s.io', resource: 'leases' };

/** The server side: one Lease record with a resourceVersion checked on every write. */
export class FakeLeaseServer {
  record: LeaderElectionRecord | undefined;
  resourceVersion = 1;
  readonly writes: { at: number; record: LeaderElectionRecord }[] = [];

  constructor(private readonly clock: Clock) {}

  read(): { record: LeaderElectionRecord | undefined; resourceVersion: string } {
    return { record: this.record && { ...this.record }, resourceVersion: String(this.resourceVersion) };
  }

  write(record: LeaderElectionRecord, resourceVersion: string): string {
    if (resourceVersion !== String(this.resourceVersion)) throw new ApiStatusError(statusErrors.conflict(leases, 'lease'));
    this.record = { ...record };
    this.resourceVersion++;
    this.writes.push({ at: this.clock.now(), record: { ...record } });
    return String(this.resourceVersion);
  }

  /** Another party (not an elector under test) writes the record directly. */
  externalWrite(record: LeaderElectionRecord): void {
    this.write(record, String(this.resourceVersion));
  }
}

export type LinkMode = 'up' | 'refused' | 'lost-responses' | 'hang';

export interface LockCall {
  readonly op: 'get' | 'update';
  readonly at: number;
  readonly record?: LeaderElectionRecord;
}

/** One replica's view of the server through a controllable link. */
export class FakeLeaseLock implements LeaseLock {
  mode: LinkMode = 'up';
  latencyMs = 0;
  timeoutMs = 1000;
  allow = { get: true, update: true };
  readonly calls: LockCall[] = [];
  readonly unexpected: string[] = [];
  /** Runs at the moment update() is called, before anything is sent. */
  onUpdate: ((record: LeaderElectionRecord) => void) | undefined;

  constructor(
    readonly server: FakeLeaseServer,
    private readonly clock: Clock,
  ) {}

  get(): Promise<{ record: LeaderElectionRecord | undefined; resourceVersion: string }> {
    this.calls.push({ op: 'get', at: this.clock.now() });
    if (!this.allow.get) return this.#unexpected('get');
    return this.#send(() => this.server.read());
  }

  update(record: LeaderElectionRecord, resourceVersion: string): Promise<string> {
    this.calls.push({ op: 'update', at: this.clock.now(), record: { ...record } });
    this.onUpdate?.(record);
    if (!this.allow.update) return this.#unexpected(`update ${JSON.stringify(record)}`);
    return this.#send(() => this.server.write(record, resourceVersion));
  }

  describe(): string {
    return 'test/lease';
  }

  ops(): string[] {
    return this.calls.map((c) => c.op);
  }

  #unexpected<T>(what: string): Promise<T> {
    this.unexpected.push(what);
    return Promise.reject(new Error(`unexpected call: ${what}`));
  }

  #send<T>(apply: () => T): Promise<T> {
    const mode = this.mode;
    const half = this.latencyMs / 2;
    if (mode === 'up' && this.latencyMs === 0) {
      try {
        return Promise.resolve(apply());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise<T>((resolve, reject) => {
      if (mode === 'hang') return;
      if (mode === 'refused') {
        this.clock.setTimeout(() => reject(new Error('connect ECONNREFUSED')), half);
        return;
      }
      this.clock.setTimeout(() => {
        let result: T;
        try {
          result = apply();
        } catch (err) {
          this.clock.setTimeout(() => reject(err), half);
          return;
        }
        if (mode === 'lost-responses') this.clock.setTimeout(() => reject(new Error('request timed out')), Math.max(half, this.timeoutMs - half));
        else this.clock.setTimeout(() => resolve(result), half);
      }, half);
    });
  }
}

/** Lets every settled promise run its continuations. */
export const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
