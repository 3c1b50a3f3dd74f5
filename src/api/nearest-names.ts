/**
 * "Did you mean" for error messages: the known names nearest a misspelt one, by edit distance. Used for
 * unknown fields (`spec.retension` → `retention`), time zones (`Europe/Berln` → `Europe/Berlin`), long
 * enums and misspelt kinds, so a message names the likely fix instead of listing every choice (the
 * time-zone list alone is ~600 names).
 *
 * Hand-written rather than a dependency: the distance wanted is the optimal string alignment distance
 * (Damerau-Levenshtein without substring re-edits), which counts a swap of two neighbours (`retnetion`)
 * as one typo; the common npm packages (fastest-levenshtein, leven) compute plain Levenshtein, which counts
 * it as two, and each would be one more run-time dependency of the published package for ~20 lines.
 */

/**
 * The optimal string alignment distance between `a` and `b`: insertions, deletions, substitutions and
 * swaps of two adjacent characters, each costing 1. Stops early and returns `limit + 1` once the
 * distance must exceed `limit`.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  // Three rows of the dynamic-programming table: two back (for swaps), one back, and the current one.
  let twoBack: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (twoBack[j - 2] ?? 0) + 1);
      current[j] = d;
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
    twoBack = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Options of {@link nearestNames}. */
export interface NearestNamesOptions {
  /**
   * At most this many names.
   * @default 3
   */
  readonly max?: number;
  /**
   * The largest distance still worth suggesting, from the misspelt name's length.
   * @default a third of the length, at least 1 (a typo or two in a word, more in a long time-zone name)
   */
  readonly maxDistance?: (length: number) => number;
}

/**
 * The names of `candidates` nearest `name`, nearest first (ties in the candidates' order): at most
 * `max`, none further than `maxDistance`, and none more than one edit further than the nearest. Case is ignored for the distance (`utc` is next to `UTC`)
 * and then breaks ties, so the exact-case match comes first. Empty when nothing is near.
 */
export function nearestNames(name: string, candidates: Iterable<string>, options: NearestNamesOptions = {}): string[] {
  const max = options.max ?? 3;
  const limit = (options.maxDistance ?? ((length: number) => Math.max(1, Math.floor(length / 3))))(name.length);
  const lower = name.toLowerCase();
  const scored: { name: string; distance: number; exact: number; order: number }[] = [];
  let order = 0;
  for (const candidate of new Set(candidates)) {
    const distance = editDistance(lower, candidate.toLowerCase(), limit);
    if (distance <= limit && candidate !== name) scored.push({ name: candidate, distance, exact: editDistance(name, candidate), order: order++ });
  }
  scored.sort((x, y) => x.distance - y.distance || x.exact - y.exact || x.order - y.order);
  // Only names about as near as the nearest: next to "Berlin" (one typo), "Dublin" (three) is noise.
  // A match but for case is the answer alone.
  const best = scored[0]?.distance ?? 0;
  return scored.filter((s) => s.distance <= (best === 0 ? 0 : best + 1)).slice(0, max).map((s) => s.name);
}

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`: names quoted for a sentence. */
export function quotedAlternatives(names: readonly string[]): string {
  const quoted = names.map((n) => JSON.stringify(n));
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1) ?? ''}`;
}
