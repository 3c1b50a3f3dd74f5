/**
 * Leadership as the request log shows it, by identity: who held the Lease at each moment (the user of
 * the last successful Lease write), which writes came from a replica that did not hold it, and how
 * long the cluster went without a leader after each kill, and whether the dead leader's Lease expired first.
 */
import type { RequestLogEntry } from '../apiserver/index.ts';
import { isWebhookCertificateWrite, isWrite } from './invariants.ts';

const isLeaseWrite = (e: RequestLogEntry): boolean => e.resource === 'leases' && isWrite(e) && e.code >= 200 && e.code < 300;

/**
 * Writes (Events included) by any of `users` at a moment when the Lease's last successful write was
 * another user's, or nobody's yet: with fencing these must not exist. The webhook's certificate
 * writes are not fenced by the Lease (see {@link isWebhookCertificateWrite}).
 */
export function nonLeaderWrites(entries: readonly RequestLogEntry[], users: ReadonlySet<string>): RequestLogEntry[] {
  let holder: string | undefined;
  const out: RequestLogEntry[] = [];
  for (const e of entries) {
    if (!users.has(e.user)) continue;
    if (isLeaseWrite(e)) holder = e.user;
    else if (isWrite(e) && e.resource !== 'leases' && !isWebhookCertificateWrite(e) && e.user !== holder) out.push(e);
  }
  return out;
}

/** A SIGKILL of the leader: when, and the request-log user of the process killed. */
export interface LeaderKill {
  readonly atMs: number;
  readonly user: string;
}

/** How a kill's takeover went: from the kill, and from the dead leader's last renewal, to the next leader's first Lease write. */
export interface Takeover {
  /** Kill → the next successful Lease write by another user: the time without a leader. */
  readonly afterKillMs: number;
  /** The killed leader's last successful Lease write → that takeover: at least the lease duration if the Lease was left to expire. */
  readonly afterLastRenewalMs: number;
}

/**
 * For each kill, the takeover (the next successful Lease write by another of `users`; the dead leader
 * writes no more), or undefined when nobody took over.
 */
export function takeovers(entries: readonly RequestLogEntry[], users: ReadonlySet<string>, kills: readonly LeaderKill[]): (Takeover | undefined)[] {
  const leaseWrites = entries.filter((e) => users.has(e.user) && isLeaseWrite(e)).map((e) => ({ user: e.user, at: Date.parse(e.time) }));
  return kills.map((kill) => {
    const next = leaseWrites.find((w) => w.at >= kill.atMs && w.user !== kill.user);
    const renewal = leaseWrites.filter((w) => w.at <= kill.atMs && w.user === kill.user).at(-1);
    if (next === undefined || renewal === undefined) return undefined;
    return { afterKillMs: next.at - kill.atMs, afterLastRenewalMs: next.at - renewal.at };
  });
}
