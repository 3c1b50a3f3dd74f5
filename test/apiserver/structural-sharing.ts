/**
 * Structural sharing between the versions of a stored object. A write builds its new version from a
 * deep copy of the old one (writers work on copies), so without sharing every version the watch
 * history retains is a full copy: at 5,000 BackupSchedules and their CronJobs under 100 changes/s the
 * server's heap held ~250 MiB, and V8's full collections, which mark every retained version, paused
 * the event loop 100–250 ms. Stored objects are never mutated, so the new version may point at the old
 * version's subtrees wherever they are equal; only the changed path is new. Clients cannot tell: the
 * values, and the order of every object's keys (what serialization follows), are the same.
 */

/**
 * `next` with every subtree that equals (same values, same key order) the corresponding subtree of
 * `prev` replaced by `prev`'s; `next` itself when nothing could be shared. Neither argument is mutated:
 * containers on a changed path are copied.
 */
export function shareSubtrees<T>(next: T, prev: unknown): T {
  return share(next, prev) as T;
}

function share(next: unknown, prev: unknown): unknown {
  if (next === prev) return prev;
  if (typeof next !== 'object' || next === null || typeof prev !== 'object' || prev === null) return next;
  if (Array.isArray(next)) {
    if (!Array.isArray(prev)) return next;
    const items = next.map((item: unknown, i) => (i < prev.length ? share(item, prev[i]) : item));
    if (items.length === prev.length && items.every((item, i) => item === prev[i])) return prev;
    return items.every((item, i) => item === next[i]) ? next : items;
  }
  if (Array.isArray(prev)) return next;
  const from = next as Record<string, unknown>;
  const old = prev as Record<string, unknown>;
  const keys = Object.keys(from);
  const oldKeys = Object.keys(old);
  let equal = keys.length === oldKeys.length;
  // Made on the first shared value only: most containers on a changed path share nothing themselves.
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    // An own "__proto__" (JSON.parse makes one) would set the copy's prototype instead.
    if (key === '__proto__') return next;
    const value = Object.hasOwn(old, key) ? share(from[key], old[key]) : from[key];
    if (value !== old[key] || oldKeys[i] !== key) equal = false;
    if (value !== from[key] && out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j] as string] = from[keys[j] as string];
    }
    if (out !== undefined) out[key] = value;
  }
  if (equal) return prev;
  return out ?? next;
}
