import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { WorkQueue, type WorkQueueMetricsProvider } from '../../src/runtime/work-queue.ts';

/** Lets resolved promises run their continuations. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function recordingMetrics() {
  const values = { depth: 0, adds: 0, latency: [] as number[], work: [] as number[], unfinished: -1, longest: -1, retries: 0 };
  const provider: WorkQueueMetricsProvider = {
    newDepthMetric: () => ({ inc: () => void values.depth++, dec: () => void values.depth-- }),
    newAddsMetric: () => ({ inc: () => void values.adds++ }),
    newLatencyMetric: () => ({ observe: (s) => void values.latency.push(s) }),
    newWorkDurationMetric: () => ({ observe: (s) => void values.work.push(s) }),
    newUnfinishedWorkSecondsMetric: () => ({ set: (v) => void (values.unfinished = v) }),
    newLongestRunningProcessorSecondsMetric: () => ({ set: (v) => void (values.longest = v) }),
    newRetriesMetric: () => ({ inc: () => void values.retries++ }),
  };
  return { values, provider };
}

describe('WorkQueue', () => {
  it('hands out keys in the order they were first added', async () => {
    const q = new WorkQueue();
    for (const k of ['a', 'b', 'c']) q.add(k);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['a', 'b', 'c']);
  });

  it('leaves no abort listener behind on the signal of a get that was answered with a key', async () => {
    const q = new WorkQueue<string>();
    const paused = new AbortController();
    for (let i = 0; i < 100; i++) {
      const got = q.get(paused.signal);
      q.add(`k${i}`);
      expect(await got).toBe(`k${i}`);
      q.done(`k${i}`);
    }
    expect(getEventListeners(paused.signal, 'abort')).toHaveLength(0);
  });

  it('skips a get whose signal aborted: the next waiter gets the key, and nothing is left processing', async () => {
    const q = new WorkQueue<string>();
    const paused = new AbortController();
    const aborted = q.get(paused.signal);
    const live = q.get();
    paused.abort();
    expect(await aborted).toBeUndefined();
    q.add('a');
    expect(await live).toBe('a');
    q.done('a');
    await expect(q.shutDownWithDrain()).resolves.toBeUndefined();
  });

  it('queues a key at most once however often it is added', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.len()).toBe(0);
  });

  it('marks a key added during processing dirty and re-queues it only when done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    q.done(first!);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('never hands a key to a second worker while the first still holds it', async () => {
    const q = new WorkQueue();
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    let second: string | undefined = 'pending';
    void q.get().then((k) => (second = k));
    await flush();
    expect(second).toBe('pending');
    q.done('a');
    await flush();
    expect(second).toBe('a');
  });

  it('wakes a waiting get() when a key arrives', async () => {
    const q = new WorkQueue();
    const pending = q.get();
    q.add('x');
    expect(await pending).toBe('x');
  });

  it('ignores adds after shutdown but still hands out keys queued before it', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.shutDown();
    q.add('b');
    expect(q.shuttingDown()).toBe(true);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBeUndefined();
  });

  it('resolves idle get() calls with undefined on shutdown', async () => {
    const q = new WorkQueue();
    const waiting = [q.get(), q.get()];
    q.shutDown();
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);
  });

  it('resolves shutDownWithDrain only once every handed-out key is done', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    const a = await q.get();
    const b = await q.get();
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    q.done(a!);
    await flush();
    expect(drained).toBe(false);
    q.done(b!);
    await drain;
    expect(drained).toBe(true);
  });

  it('resolves shutDownWithDrain at once when nothing is in flight', async () => {
    const q = new WorkQueue();
    await expect(q.shutDownWithDrain()).resolves.toBeUndefined();
  });

  it('records depth, adds, queue latency and work duration on the clock', async () => {
    const clock = new FakeClock();
    const { values, provider } = recordingMetrics();
    const q = new WorkQueue({ clock, metrics: provider, name: 'test' });
    q.add('a');
    q.add('a');
    expect(values).toMatchObject({ depth: 1, adds: 1 });
    clock.step(250);
    const key = await q.get();
    expect(values.depth).toBe(0);
    expect(values.latency).toEqual([0.25]);
    clock.step(1500);
    q.done(key!);
    expect(values.work).toEqual([1.5]);
    q.shutDown();
  });

  it('measures the queue latency of a key re-added during processing from its add, as client-go does', async () => {
    const clock = new FakeClock();
    const { values, provider } = recordingMetrics();
    const q = new WorkQueue({ clock, metrics: provider });
    q.add('a');
    await q.get();
    clock.step(100);
    q.add('a');
    expect(values.depth).toBe(1);
    clock.step(300);
    q.done('a');
    clock.step(50);
    await q.get();
    expect(values.latency).toEqual([0, 0.35]);
    expect(values.depth).toBe(0);
    q.shutDown();
  });

  it('updates the unfinished-work gauges every 500 ms while keys are in flight', async () => {
    const clock = new FakeClock();
    const { values, provider } = recordingMetrics();
    const q = new WorkQueue({ clock, metrics: provider });
    q.add('a');
    q.add('b');
    await q.get();
    clock.step(400);
    expect(values.unfinished).toBe(-1);
    await q.get();
    clock.step(100);
    expect(values).toMatchObject({ unfinished: 0.6, longest: 0.5 });
    q.shutDown();
    expect(clock.pendingTimers).toBe(0);
  });

  it('starts no timer when no metrics provider is given', () => {
    const clock = new FakeClock();
    new WorkQueue({ clock });
    expect(clock.pendingTimers).toBe(0);
  });
});
