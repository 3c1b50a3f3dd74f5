import { describe, expect, it } from 'vitest';
import { HeapCompactor } from '../../src/controller/heap-compactor.ts';
import { FakeClock } from '../../src/runtime/clock.ts';

function setup(idle = true) {
  const clock = new FakeClock();
  const runs: number[] = [];
  const state = { idle };
  const compactor = new HeapCompactor({
    idle: () => state.idle,
    checkIntervalMs: 1_000,
    minReconciles: 3,
    compact: () => {},
    onCompacted: (reconciles) => runs.push(reconciles),
    clock,
  });
  return { clock, runs, state, compactor };
}

describe('HeapCompactor', () => {
  it('compacts after a burst once a whole interval passed without reconciles and the queue is idle', () => {
    const { clock, runs, compactor } = setup();
    compactor.start();
    for (let i = 0; i < 5; i++) compactor.reconciled();
    clock.step(1_000); // reconciles happened during this interval: the burst may go on
    expect(runs).toEqual([]);
    clock.step(1_000); // a quiet interval
    expect(runs).toEqual([5]);
    clock.step(5_000); // nothing new to give back
    expect(runs).toEqual([5]);
    for (let i = 0; i < 4; i++) compactor.reconciled();
    clock.step(2_000);
    expect(runs).toEqual([5, 4]);
  });

  it('waits for the queue to become idle', () => {
    const { clock, runs, state, compactor } = setup(false);
    compactor.start();
    for (let i = 0; i < 5; i++) compactor.reconciled();
    clock.step(10_000);
    expect(runs).toEqual([]);
    state.idle = true;
    clock.step(1_000);
    expect(runs).toEqual([5]);
  });

  it.each([
    ['before it was started', false, 5],
    ['after fewer reconciles than minReconciles', true, 2],
  ])('does not compact %s', (_name, started, reconciles) => {
    const { clock, runs, compactor } = setup();
    if (started) compactor.start();
    for (let i = 0; i < reconciles; i++) compactor.reconciled();
    clock.step(10_000);
    expect(runs).toEqual([]);
  });

  it('stops looking for bursts when stopped', () => {
    const { clock, runs, compactor } = setup();
    compactor.start();
    for (let i = 0; i < 5; i++) compactor.reconciled();
    compactor.stop();
    clock.step(10_000);
    expect(runs).toEqual([]);
  });

  it.each([
    [{ checkIntervalMs: 0 }, /checkIntervalMs must be > 0/],
    [{ minReconciles: 0 }, /minReconciles must be >= 1/],
  ])('rejects %o', (options, message) => {
    expect(() => new HeapCompactor({ idle: () => true, ...options })).toThrow(message);
  });
});
