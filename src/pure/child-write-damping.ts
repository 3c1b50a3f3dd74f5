/**
 * When to stop re-sending a child write that does not stick: pure decisions over what the controller
 * remembers of its last successful child write ({@link ChildWrite}).
 *
 * Two ways a write does not stick, both silent write loops without this:
 * - **not persisted**: the server accepts the create or update but its answer still differs from what
 *   we sent in some fields. An older API server drops fields it does not know or whose feature gate is
 *   off (`spec.timeZone` before Kubernetes 1.25), a mutating admission webhook (Kyverno, Gatekeeper,
 *   platform defaults) rewrites them. The next reconcile finds the same drift, and re-sending it changes
 *   nothing. Seen in the write's response, so it is known at once.
 * - **recurring**: the write was kept, but the same fields drift again right after, from another writer
 *   (a second controller with another `--backup-image`: ~190 updates/s between two of them, undamped).
 *   Counted over successive writes of the same fields for the same generation.
 *
 * Either way the controller holds the write back (exponential backoff per repeat), reports it in the
 * Ready condition, and writes again once the backoff has passed or — for a not-persisted write — as soon
 * as the schedule's generation or the child (its resourceVersion) changes. The memory is one small
 * record per schedule, keyed by the schedule's uid, generation and the child's resourceVersion, so a
 * restart forgets it at the cost of one write.
 */

/** The last successful write of a schedule's child, as the controller remembers it. */
export interface ChildWrite {
  /** The schedule's uid (a recreated schedule with the same name starts afresh). */
  readonly uid: string;
  /** The schedule's generation the write was made for. */
  readonly generation: number;
  /** The drifted fields the write was sent to fix (empty for a create), sorted. */
  readonly fields: readonly string[];
  /** The child's resourceVersion in the write's response. */
  readonly resourceVersion: string | undefined;
  /** Fields where the response still differed from the desired child: the server did not keep them. */
  readonly notPersisted: readonly string[];
  /** Successive writes of the same fields for this generation, this one included (1 = the first). */
  readonly repeats: number;
  /** When the write was made, ms since the epoch. */
  readonly at: number;
}

/** Tuning of the damping; every field has a default. */
export interface DampingPolicy {
  /** Hold time after the first write that did not stick; doubles with every repeat. @default 5_000 */
  readonly baseMs?: number;
  /** Longest hold. @default 600_000 (10 minutes) */
  readonly maxMs?: number;
  /**
   * Writes of the same fields, each kept by the server and each undone by someone else, before the
   * controller holds back: one or two are a user's edit being healed, more are a fight. @default 3
   */
  readonly recurThreshold?: number;
  /** A write older than this does not count towards a repeat. @default 600_000 */
  readonly windowMs?: number;
}

/** The child as the reconcile sees it now. */
export interface ChildDriftNow {
  readonly uid: string;
  readonly generation: number;
  /** The child's resourceVersion in the cache. */
  readonly resourceVersion: string | undefined;
  /** Drifted fields (from cronJobDrift), in any order; empty for a create. */
  readonly drift: readonly string[];
}

/** What to do about drift: write, or hold and report why. */
export type DampingDecision =
  | { readonly kind: 'write' }
  | { readonly kind: 'hold'; readonly why: 'ChildNotPersisted' | 'DriftRecurring'; readonly fields: readonly string[]; readonly retryInMs: number };

const DEFAULTS = { baseMs: 5_000, maxMs: 600_000, recurThreshold: 3, windowMs: 600_000 } as const;

function sorted(fields: readonly string[]): string[] {
  return [...fields].sort();
}

function sameFields(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((f, i) => f === b[i]);
}

/** Hold time after the `step`-th write that did not stick (1-based): base · 2^(step−1), capped. */
export function holdMs(step: number, policy: DampingPolicy = {}): number {
  const base = policy.baseMs ?? DEFAULTS.baseMs;
  const max = policy.maxMs ?? DEFAULTS.maxMs;
  return Math.min(max, base * 2 ** Math.max(0, Math.min(step - 1, 30)));
}

/** How long a record counts: the window, or longer while its own hold lasts (so a long hold is not reset). */
function lifetimeMs(last: ChildWrite, policy: DampingPolicy): number {
  return Math.max(policy.windowMs ?? DEFAULTS.windowMs, 2 * holdMs(last.repeats, policy));
}

function continues(last: ChildWrite | undefined, now: ChildDriftNow, at: number, policy: DampingPolicy): last is ChildWrite {
  return last !== undefined && last.uid === now.uid && last.generation === now.generation && at - last.at < lifetimeMs(last, policy);
}

/**
 * Whether to send the write that would fix `now.drift`, given the last write. Holds when the drift is
 * exactly what the server did not keep last time and the child has not changed since (same
 * resourceVersion), or when the same fields were restored `recurThreshold` times and undone again each
 * time; in both cases only until the backoff of the last write has passed.
 */
export function decideChildWrite(last: ChildWrite | undefined, now: ChildDriftNow, at: number, policy: DampingPolicy = {}): DampingDecision {
  if (!continues(last, now, at, policy)) return { kind: 'write' };
  const drift = sorted(now.drift);
  if (last.notPersisted.length > 0) {
    // The child changed since (someone else wrote it): worth one more try at once.
    if (now.resourceVersion !== last.resourceVersion || !sameFields(drift, last.notPersisted)) return { kind: 'write' };
    const retryInMs = last.at + holdMs(last.repeats, policy) - at;
    return retryInMs > 0 ? { kind: 'hold', why: 'ChildNotPersisted', fields: drift, retryInMs } : { kind: 'write' };
  }
  const threshold = policy.recurThreshold ?? DEFAULTS.recurThreshold;
  // Our write was kept and the same fields drifted again: someone undid it. The cache still holding
  // the pre-write child cannot look like this: its resourceVersion would be older, and the merge patch
  // (resourceVersion precondition) would 409.
  if (now.resourceVersion === last.resourceVersion || !sameFields(drift, last.fields) || last.repeats < threshold) return { kind: 'write' };
  const retryInMs = last.at + holdMs(last.repeats - threshold + 1, policy) - at;
  return retryInMs > 0 ? { kind: 'hold', why: 'DriftRecurring', fields: drift, retryInMs } : { kind: 'write' };
}

/**
 * The record of a successful write made for `now`: `responseDrift` is the drift between the write's
 * response and the desired child (what the server did not keep), `resourceVersion` the response's.
 */
export function recordChildWrite(
  last: ChildWrite | undefined,
  now: ChildDriftNow,
  response: { readonly resourceVersion: string | undefined; readonly drift: readonly string[] },
  at: number,
  policy: DampingPolicy = {},
): ChildWrite {
  const fields = sorted(now.drift);
  const notPersisted = sorted(response.drift);
  // A repeat: the same generation, and the same fields sent again (or the same fields still missing).
  const repeat =
    continues(last, now, at, policy) &&
    (sameFields(fields, last.fields) || (last.notPersisted.length > 0 && sameFields(notPersisted, last.notPersisted)));
  return { uid: now.uid, generation: now.generation, fields, resourceVersion: response.resourceVersion, notPersisted, repeats: repeat ? last.repeats + 1 : 1, at };
}

/** Whether a record can be forgotten: its window has passed, so it can no longer hold anything back. */
export function childWriteExpired(last: ChildWrite, at: number, policy: DampingPolicy = {}): boolean {
  return at - last.at >= lifetimeMs(last, policy);
}

/**
 * The wait before a child write the API server rejected for good (403, 422…) is tried again (and, with
 * other bounds, before a ChildNameConflict is looked at again): as long as the rejection has lasted so far (`rejectedSinceMs`, from the Ready condition's lastTransitionTime;
 * undefined when it is new), within [minMs, maxMs]: 30 s, 30 s, 1 min, 2 min… up to 10 min. Derived
 * from the status, so nothing is remembered for it; slow, because only a change outside the object
 * (RBAC granted, a webhook's policy changed) can make the same write succeed.
 */
export function rejectedRetryMs(rejectedSinceMs: number | undefined, at: number, minMs = 30_000, maxMs = 600_000): number {
  const lasted = rejectedSinceMs === undefined || !Number.isFinite(rejectedSinceMs) ? 0 : at - rejectedSinceMs;
  return Math.min(maxMs, Math.max(minMs, lasted));
}
