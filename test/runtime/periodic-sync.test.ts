import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { PeriodicSync } from '../../src/runtime/periodic-sync.ts';

/** Counts its runs; each run waits for the test to release it, then asks to run again after `delays`. */
class Counting extends PeriodicSync {
  runs = 0;
  readonly #delays: number[];
  #release: (() => void) | undefined;
  gated = false;

  constructor(clock: FakeClock, delays: number[]) {
    super(clock);
    this.#delays = delays;
  }

  release(): void {
    this.#release?.();
  }

  protected override async runOnce(): Promise<number> {
    this.runs++;
    if (this.gated) await new Promise<void>((resolve) => (this.#release = resolve));
    return this.#delays.shift() ?? 1_000;
  }
}

describe('PeriodicSync', () => {
  it('runs at once on start, then after the delay each run returns', async () => {
    const clock = new FakeClock();
    const task = new Counting(clock, [5_000, 60_000]);
    task.start();
    await vi.waitFor(() => expect(clock.pendingTimers).toBe(1));
    expect(task.runs).toBe(1);
    clock.step(4_999);
    expect(task.runs).toBe(1);
    clock.step(1);
    await vi.waitFor(() => expect(task.runs).toBe(2));
    await vi.waitFor(() => expect(clock.pendingTimers).toBe(1));
    clock.step(59_999);
    expect(task.runs).toBe(2);
    await task.stop();
    expect(clock.pendingTimers).toBe(0);
    clock.step(1);
    expect(task.runs).toBe(2);
  });

  it('never runs twice at once: syncs during a run ask for one more run after it, and resolve with it', async () => {
    const clock = new FakeClock();
    const task = new Counting(clock, []);
    task.gated = true;
    task.start();
    const second = task.sync();
    const third = task.sync();
    expect(task.runs).toBe(1);
    task.release();
    await vi.waitFor(() => expect(task.runs).toBe(2));
    task.release();
    await Promise.all([second, third]);
    expect(task.runs).toBe(2);
    expect(clock.pendingTimers).toBe(1);
    await task.stop();
  });
});
