/**
 * `wait.Jitter` from apimachinery: a duration stretched by a random amount so that replicas polling
 * the same object do not fall into lockstep.
 */

/**
 * Returns a duration between `durationMs` and `durationMs * (1 + maxFactor)`.
 * A `maxFactor` ≤ 0 means 1.0, as in apimachinery's `wait.Jitter`.
 *
 * @param random source of uniform numbers in [0, 1); injectable so tests are deterministic.
 */
export function jitter(durationMs: number, maxFactor: number, random: () => number = Math.random): number {
  const factor = maxFactor > 0 ? maxFactor : 1;
  return durationMs + random() * factor * durationMs;
}
