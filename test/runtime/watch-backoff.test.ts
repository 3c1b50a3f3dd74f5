import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { WatchBackoff, type WatchBackoffOptions } from '../../src/runtime/watch-backoff.ts';

function delays(random: number, count: number, options: WatchBackoffOptions = {}): number[] {
  const backoff = new WatchBackoff(new FakeClock(), { random: () => random, ...options });
  return Array.from({ length: count }, () => backoff.next());
}

describe('WatchBackoff', () => {
  it.each([
    ['without jitter drawn', 0, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]],
    ['with the largest jitter', 0.999, [1599.2, 3198.4, 6396.8, 12793.6, 25587.2, 30000, 30000, 30000]],
    ['with half jitter', 0.5, [1200, 2400, 4800, 9600, 19200, 30000, 30000, 30000]],
  ])('grows from 0.8 s to a 30 s cap %s', (_name, random, expected) => {
    expect(delays(random, 8).map((d) => Math.round(d * 10) / 10)).toEqual(expected);
  });

  it('starts over when the previous failure lies longer ago than resetAfterMs (a healthy period)', () => {
    const clock = new FakeClock();
    const backoff = new WatchBackoff(clock, { random: () => 0, resetAfterMs: 120_000 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([800, 1600, 3200]);
    clock.step(119_999);
    expect(backoff.next()).toBe(6400);
    clock.step(120_000);
    expect(backoff.next()).toBe(800);
  });

  it.each<[WatchBackoffOptions, string]>([
    [{ initialMs: 0 }, 'initialMs must be > 0, got 0'],
    [{ initialMs: 1000, maxMs: 500 }, 'maxMs (500) must be >= initialMs (1000)'],
    [{ factor: 0.5 }, 'factor must be >= 1, got 0.5'],
    [{ jitter: -1 }, 'jitter must be >= 0, got -1'],
  ])('rejects %j', (options, message) => {
    expect(() => new WatchBackoff(new FakeClock(), options)).toThrow(message);
  });
});
