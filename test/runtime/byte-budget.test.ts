import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/runtime/byte-budget.ts';

describe('ByteBudget', () => {
  it('lets leases together hold at most its capacity, and takes nothing on a refusal', () => {
    const budget = new ByteBudget(100);
    const a = budget.lease();
    const b = budget.lease();
    expect(a.tryTake(60)).toBe(true);
    expect(b.tryTake(41)).toBe(false);
    expect([budget.inUse, b.bytes]).toEqual([60, 0]);
    expect(b.tryTake(40)).toBe(true);
    expect(a.tryTake(1)).toBe(false);
    expect([budget.inUse, budget.peak, a.bytes, b.bytes]).toEqual([100, 100, 60, 40]);
  });

  it('gets everything a lease held back on its release, once; a released lease takes nothing more', () => {
    const budget = new ByteBudget(100);
    const a = budget.lease();
    a.tryTake(30);
    a.tryTake(30);
    a.release();
    a.release();
    expect([budget.inUse, budget.peak, a.bytes]).toEqual([0, 60, 0]);
    expect(a.tryTake(1)).toBe(false);
    expect(budget.lease().tryTake(100)).toBe(true);
  });

  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])('refuses to take %j bytes, and holds what it held', (bytes) => {
    const budget = new ByteBudget(100);
    const lease = budget.lease();
    lease.tryTake(10);
    expect(() => lease.tryTake(bytes)).toThrow(`byte budget: bytes to take must be a non-negative integer, got ${bytes}`);
    expect([budget.inUse, lease.bytes]).toEqual([10, 10]);
    expect(lease.tryTake(91)).toBe(false);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a capacity of %j', (capacity) => {
    expect(() => new ByteBudget(capacity)).toThrow(`byte budget: capacity must be a positive integer, got ${capacity}`);
  });
});
