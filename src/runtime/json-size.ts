/**
 * How large a parsed JSON value is, counted only as far as a budget: a cache transform decides with it
 * whether to keep a part of an object whose size someone else chooses (a 250 KiB CronJob spec) without
 * serializing it. The walk stops as soon as the budget is exceeded, so a huge value costs no more than
 * a small one.
 */

/**
 * The length of `value`'s JSON text (string escapes aside, numbers counted as 8 characters), or
 * `Infinity` as soon as it exceeds `budget`. Values JSON cannot hold (functions, undefined) count 0.
 */
export function jsonLengthWithin(value: unknown, budget: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (typeof v === 'number') total += 8;
    else if (typeof v === 'boolean') total += 5;
    else if (v === null) total += 4;
    else if (Array.isArray(v)) {
      total += 2 + v.length;
      // Counted before the walk: an array of a million empty items exceeds the budget at once.
      if (total > budget) return Infinity;
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      total += 2;
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        total += key.length + 4;
        if (total > budget) return Infinity;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
    if (total > budget) return Infinity;
  }
  return total;
}
