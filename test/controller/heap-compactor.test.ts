import { describe, expect, it } from 'vitest';
import { HeapCompactor } from '../../src/controller/heap-compactor.ts';
import { FakeClock } from '../../src/runtime/clock.ts';

function setup(idle = true) {
  const clock = new FakeClock();
  const runs: string[] = [];
  const state = { idle };
  const compactor = new HeapCompactor({
    idle: () => state.idle,
    checkIntervalMs: 1_000,
    minReconciles: 3,
    compact: () => {},
    onCompacted: (reason) => runs.push(reason),
    clock,
  });
  return { clock, runs, state, compactor };
}

describe('HeapCompactor', () => {
  it('compacts once as soon as the caches synced', () => {
    const { runs, compactor } = setup();
    compactor.synced();
    expect(runs).toEqual(['sync']);
  });

  it('compacts after a burst once a whole interval passed without reconciles and the queue is idle', () => {
    const { clock, runs, compactor } = setup();
    compactor.synced();
    for (let i = 0; i < 5; i++) compactor.reconciled();
    clock.step(1_000); // reconciles happened during this interval: the burst may go on
    expect(runs).toEqual(['sync']);
    clock.step(1_000); // a quiet interval
    expect(runs).toEqual(['sync', 'burst']);
    clock.step(5_000); // nothing new to give back
    expect(runs).toEqual(['sync', 'burst']);
  });

  it.each([
    ['fewer reconciles than minReconciles', 2, true],
    ['a queue that is not idle', 5, false],
  ])('does not compact after %s', (_name, reconciles, idle) => {
    const { clock, runs, compactor } = setup(idle);
    compactor.synced();
    for (let i = 0; i < reconciles; i++) compactor.reconciled();
    clock.step(10_000);
    expect(runs).toEqual(['sync']);
  });

  it('stops looking for bursts when stopped', () => {
    const { clock, runs, compactor } = setup();
    compactor.synced();
    for (let i = 0; i < 5; i++) compactor.reconciled();
    compactor.stop();
    clock.step(10_000);
    expect(runs).toEqual(['sync']);
  });

  it.each([
    [{ checkIntervalMs: 0 }, /checkIntervalMs must be > 0/],
    [{ minReconciles: 0 }, /minReconciles must be >= 1/],
  ])('rejects %o', (options, message) => {
    expect(() => new HeapCompactor({ idle: () => true, ...options })).toThrow(message);
  });
});
