import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { DelayingQueue } from '../../src/runtime/delaying-queue.ts';

describe('DelayingQueue', () => {
  it('adds a key only once its delay has passed', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 50);
    clock.step(49);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
  });

  it.each([0, -5])('adds at once for a delay of %i ms', (delay) => {
    const q = new DelayingQueue({ clock: new FakeClock() });
    q.addAfter('a', delay);
    expect(q.len()).toBe(1);
  });

  it('releases delayed keys in order of due time, not of insertion', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('middle', 200);
    clock.step(300);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['early', 'middle', 'late']);
  });

  it('keeps the earlier due time when a waiting key is added again', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 500);
    expect(q.waitingLen()).toBe(1);
    clock.step(100);
    expect(q.len()).toBe(1);
    clock.step(1000);
    expect(q.len()).toBe(1);
  });

  it('moves a waiting key forward when it is added again with a shorter delay', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 500);
    q.addAfter('a', 10);
    clock.step(10);
    expect(q.len()).toBe(1);
    expect(q.waitingLen()).toBe(0);
  });

  it('deduplicates a delayed key against one already queued', () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.add('a');
    q.addAfter('a', 10);
    clock.step(10);
    expect(q.len()).toBe(1);
  });

  it('drops waiting keys and their timer on shutdown', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue({ clock });
    q.addAfter('a', 10);
    q.shutDown();
    expect(clock.pendingTimers).toBe(0);
    clock.step(100);
    expect(await q.get()).toBeUndefined();
  });

  it('rejects a delay that is not a finite number, naming the field', () => {
    const q = new DelayingQueue({ clock: new FakeClock() });
    expect(() => q.addAfter('a', Number.NaN)).toThrow(/delayMs/);
  });
});
