/** The chaos scenarios' seeded randomness: every random choice of a run comes from one seed, printed with its row. */
import { seededRandom } from '../apiserver/faults/index.ts';

/** A seeded PRNG (mulberry32, the fault injector's) with the draws the scenarios need. */
export class Rng {
  readonly seed: number;
  readonly #next: () => number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#next = seededRandom(this.seed);
  }

  /** A uniform number in [0, 1). */
  float(): number {
    return this.#next();
  }

  /** A uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.#next() < p;
  }

  /** A uniform element of `items` (which must not be empty). */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty list');
    return items[Math.floor(this.#next() * items.length)] as T;
  }

  /** A shuffled copy of `items` (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.#next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** A derived generator, so one part of a scenario draws the same numbers however much another part draws. */
  fork(salt: number): Rng {
    return new Rng(Math.imul(this.seed ^ 0x9e3779b9, salt | 1) ^ salt);
  }
}

/** A fresh seed from the clock, for runs that were not given one. */
export function freshSeed(): number {
  return (Date.now() ^ (process.pid << 16)) >>> 0;
}
