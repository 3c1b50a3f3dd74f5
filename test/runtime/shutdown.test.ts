import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { GracefulShutdown, type ProcessLike } from '../../src/runtime/shutdown.ts';

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

class FakeProcess implements ProcessLike {
  readonly listeners = new Map<string, (() => void)[]>();
  readonly exits: number[] = [];
  once(event: string, listener: () => void): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
  }
  removeListener(event: string, listener: () => void): void {
    this.listeners.set(event, (this.listeners.get(event) ?? []).filter((l) => l !== listener));
  }
  emit(event: string): void {
    const ls = this.listeners.get(event) ?? [];
    this.listeners.set(event, []);
    for (const l of ls) l();
  }
  exit(code: number): void {
    this.exits.push(code);
  }
}

describe('GracefulShutdown', () => {
  it('on SIGTERM runs the steps in order and exits 0', async () => {
    const proc = new FakeProcess();
    const order: string[] = [];
    const shutdown = new GracefulShutdown({ process: proc, clock: new FakeClock() })
      .register('stop controller', async () => void order.push('stop controller'))
      .register('release lease', () => void order.push('release lease'))
      .register('close servers', async () => void order.push('close servers'))
      .install();
    proc.emit('SIGTERM');
    expect(shutdown.signal.aborted).toBe(true);
    await settle();
    expect(order).toEqual(['stop controller', 'release lease', 'close servers']);
    expect(proc.exits).toEqual([0]);
  });

  it('exits 1 when a step overruns the deadline, still giving later steps a short budget', async () => {
    const proc = new FakeProcess();
    const clock = new FakeClock();
    const order: string[] = [];
    let drainSignal: AbortSignal | undefined;
    const shutdown = new GracefulShutdown({ process: proc, clock, deadlineMs: 30_000, lateStepMs: 2_000 })
      .register('drain', (signal) => {
        drainSignal = signal;
        return new Promise(() => {});
      })
      .register('release lease', () => void order.push('release lease'));
    const done = shutdown.shutdown('SIGTERM');
    await settle();
    clock.step(29_999);
    await settle();
    expect(order).toEqual([]);
    clock.step(1);
    expect(await done).toBe(1);
    expect(drainSignal?.aborted).toBe(true);
    expect(order).toEqual(['release lease']);
    expect(proc.exits).toEqual([1]);
  });

  it('exits 1 when a step throws, after running the others', async () => {
    const proc = new FakeProcess();
    const order: string[] = [];
    const shutdown = new GracefulShutdown({ process: proc, clock: new FakeClock() })
      .register('a', () => { throw new Error('boom'); })
      .register('b', () => void order.push('b'));
    expect(await shutdown.shutdown('test')).toBe(1);
    expect(order).toEqual(['b']);
  });

  it('runs the steps once even when asked twice, and a second signal exits at once', async () => {
    const proc = new FakeProcess();
    let runs = 0;
    const shutdown = new GracefulShutdown({ process: proc, clock: new FakeClock() })
      .register('slow', () => new Promise<void>((resolve) => { runs++; setImmediate(resolve); }))
      .install();
    proc.emit('SIGINT');
    proc.emit('SIGINT');
    expect(proc.exits).toEqual([1]);
    await shutdown.shutdown('again');
    expect(runs).toBe(1);
  });
});
