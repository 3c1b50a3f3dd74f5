import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from '../../src/runtime/rate-limiters.ts';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles the delay from 5 ms for each consecutive failure of a key', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    const delays = Array.from({ length: 6 }, () => limiter.when('a'));
    expect(delays).toEqual([5, 10, 20, 40, 80, 160]);
    expect(limiter.numRequeues('a')).toBe(6);
  });

  it.each([
    [0, 5],
    [10, 5 * 1024],
    [17, 5 * 2 ** 17],
    [18, 1_000_000],
    [2000, 1_000_000],
  ])('after %i failures waits %i ms (capped at 1000 s)', (failures, expected) => {
    const limiter = new ItemExponentialFailureRateLimiter<string>();
    for (let i = 0; i < failures; i++) limiter.when('k');
    expect(limiter.when('k')).toBe(expected);
  });

  it('tracks keys independently and starts over after forget', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1, maxDelayMs: 1000 });
    limiter.when('a');
    limiter.when('a');
    expect(limiter.when('b')).toBe(1);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(1);
  });

  it.each([
    [{ baseDelayMs: 0 }, /baseDelayMs/],
    [{ maxDelayMs: -1 }, /maxDelayMs/],
  ])('rejects %o naming the field', (options, message) => {
    expect(() => new ItemExponentialFailureRateLimiter(options)).toThrow(message);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst of 100 through at once, then spaces retries at 10 per second', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ clock });
    for (let i = 0; i < 100; i++) expect(limiter.when(`k${i}`)).toBe(0);
    expect(limiter.when('x')).toBeCloseTo(100);
    expect(limiter.when('y')).toBeCloseTo(200);
    expect(limiter.numRequeues('x')).toBe(0);
  });

  it('refills tokens as the clock moves, up to the burst', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>({ clock, qps: 10, burst: 2 });
    expect([limiter.when('a'), limiter.when('a')]).toEqual([0, 0]);
    expect(limiter.when('a')).toBeCloseTo(100);
    clock.step(10_000);
    expect([limiter.when('a'), limiter.when('a')]).toEqual([0, 0]);
    expect(limiter.when('a')).toBeCloseTo(100);
  });

  it.each([
    [{ qps: 0 }, /qps/],
    [{ burst: 0 }, /burst/],
    [{ burst: 1.5 }, /burst/],
  ])('rejects %o naming the field', (options, message) => {
    expect(() => new BucketRateLimiter(options)).toThrow(message);
  });
});

describe('MaxOfRateLimiter', () => {
  function fixed(delay: number, requeues: number) {
    const calls: string[] = [];
    const limiter: RateLimiter<string> = {
      when: (k) => (calls.push(`when ${k}`), delay),
      forget: (k) => void calls.push(`forget ${k}`),
      numRequeues: () => requeues,
    };
    return { limiter, calls };
  }

  it('waits the longest delay and consults every limiter', () => {
    const a = fixed(30, 1);
    const b = fixed(70, 4);
    const max = new MaxOfRateLimiter(a.limiter, b.limiter);
    expect(max.when('k')).toBe(70);
    expect(max.numRequeues('k')).toBe(4);
    max.forget('k');
    expect(a.calls).toEqual(['when k', 'forget k']);
    expect(b.calls).toEqual(['when k', 'forget k']);
  });

  it('rejects an empty list of limiters', () => {
    expect(() => new MaxOfRateLimiter()).toThrow(/at least one/);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('backs off per key from 5 ms and caps overall retries at the bucket rate', () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>(clock);
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([5, 10, 20]);
    for (let i = 0; i < 97; i++) limiter.when(`other-${i}`);
    // The bucket is empty now: a fresh key waits for a token, not just its own 5 ms.
    expect(limiter.when('fresh')).toBeCloseTo(100);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });
});
