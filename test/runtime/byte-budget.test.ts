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

  it('allocates from what a lease holds first, then from the budget, and takes nothing when it cannot', () => {
    const budget = new ByteBudget(100);
    const lease = budget.lease();
    lease.tryTake(40);
    expect(lease.allocate(30)?.length).toBe(30);
    expect([budget.inUse, lease.bytes]).toEqual([40, 40]);
    expect(lease.allocate(20)?.length).toBe(20);
    expect([budget.inUse, lease.bytes]).toEqual([50, 50]);
    expect(lease.allocate(51)).toBeUndefined();
    expect([budget.inUse, lease.bytes]).toEqual([50, 50]);
    expect(() => lease.allocate(-1)).toThrow('byte budget: bytes to take must be a non-negative integer, got -1');
  });

  it('frees the buffers a lease allocated when it is released, views of them included, not at the next GC', () => {
    const budget = new ByteBudget(2 ** 30);
    const lease = budget.lease();
    const before = process.memoryUsage().arrayBuffers;
    const big = lease.allocate(64 * 2 ** 20)!.fill(1);
    const small = lease.allocate(100)!.fill(2);
    const view = big.subarray(10, 20);
    expect(process.memoryUsage().arrayBuffers - before).toBeGreaterThan(60 * 2 ** 20);
    lease.release();
    expect([big.length, small.length, view.length, budget.inUse]).toEqual([0, 0, 0, 0]);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 ** 20);
    // Small buffers are not carved from Node's shared pool, so freeing them empties no one else's.
    const pooled = Buffer.from('still here');
    expect(pooled.toString()).toBe('still here');
    expect(lease.allocate(1)).toBeUndefined();
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
