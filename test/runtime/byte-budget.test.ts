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

  it('frees one buffer of a lease at once and gives its bytes back; a buffer it does not own is left alone', () => {
    const budget = new ByteBudget(100);
    const lease = budget.lease();
    const first = lease.allocate(40)!.fill(1);
    const second = lease.allocate(30)!.fill(2);
    lease.free(first.subarray(5, 10));
    expect([first.length, second.length, budget.inUse, lease.bytes]).toEqual([0, 30, 30, 30]);
    lease.free(first);
    const foreign = Buffer.alloc(10, 3);
    lease.free(foreign);
    expect([foreign.length, budget.inUse]).toEqual([10, 30]);
    expect(lease.allocate(70)?.length).toBe(70);
  });

  it('keeps room that only small leases take: large ones share the rest, a small one turns large past its size', () => {
    // 100 bytes; 20 of them only for leases holding at most 10.
    const budget = new ByteBudget(100, { bytes: 20, leaseBytes: 10 });
    const large = budget.lease();
    expect(large.tryTake(80)).toBe(true);
    expect(budget.lease().tryTake(11)).toBe(false);
    const small = [budget.lease(), budget.lease()];
    expect(small.map((l) => l.tryTake(10))).toEqual([true, true]);
    expect([budget.inUse, budget.largeInUse]).toEqual([100, 80]);
    // Growing past the small size moves all it holds to the large leases' part, which is full.
    small[0]!.release();
    const growing = budget.lease();
    expect(growing.tryTake(10)).toBe(true);
    expect(growing.tryTake(1)).toBe(false);
    large.release();
    expect(growing.tryTake(1)).toBe(true);
    expect([budget.inUse, budget.largeInUse]).toEqual([21, 11]);
  });

  it('counts a lease expected to grow past the small size as large from its first byte', () => {
    const budget = new ByteBudget(100, { bytes: 20, leaseBytes: 10 });
    expect(budget.lease().tryTake(80)).toBe(true);
    expect(budget.lease(1000).tryTake(1)).toBe(false);
    expect(budget.lease(10).tryTake(10)).toBe(true);
  });

  it.each([{ bytes: 100, leaseBytes: 1 }, { bytes: -1, leaseBytes: 1 }, { bytes: 1, leaseBytes: 1.5 }])('refuses a room for small leases of %j', (small) => {
    expect(() => new ByteBudget(100, small)).toThrow(/^byte budget: the room for small leases must be non-negative integers, below the capacity \(100\)/);
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
