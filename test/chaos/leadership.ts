/**
 * Leadership as the request log shows it, by identity: who held the Lease at each moment (the user of
 * the last successful Lease write), which writes came from a replica that did not hold it, and how
 * long the cluster went without a leader after each kill.
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

/**
 * For each kill time, the milliseconds until the next successful Lease write by anyone (the dead
 * leader writes no more, so that is the next leader taking over); undefined when nobody took over.
 */
export function takeoverGaps(entries: readonly RequestLogEntry[], users: ReadonlySet<string>, killTimes: readonly number[]): (number | undefined)[] {
  const leaseWrites = entries.filter((e) => users.has(e.user) && isLeaseWrite(e)).map((e) => Date.parse(e.time));
  return killTimes.map((t) => {
    const next = leaseWrites.find((w) => w >= t);
    return next === undefined ? undefined : next - t;
  });
}
