import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import type { RateLimiter } from '../../src/runtime/rate-limiters.ts';
import { createRateLimitingQueue } from '../../src/runtime/rate-limiting-queue.ts';
import { noopWorkQueueMetricsProvider } from '../../src/runtime/work-queue.ts';

/** A limiter whose delays the model can predict: 7 ms × the number of earlier retries + 7. */
function linearLimiter(): RateLimiter<string> {
  const counts = new Map<string, number>();
  return {
    when: (k) => {
      const n = counts.get(k) ?? 0;
      counts.set(k, n + 1);
      return 7 * (n + 1);
    },
    forget: (k) => void counts.delete(k),
    numRequeues: (k) => counts.get(k) ?? 0,
  };
}

describe('createRateLimitingQueue', () => {
  it('delays addRateLimited by the default limiter: 5 ms, then 10 ms, until forget', async () => {
    const clock = new FakeClock();
    const q = createRateLimitingQueue({ clock });
    q.addRateLimited('a');
    clock.step(4);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    q.done((await q.get())!);
    q.addRateLimited('a');
    clock.step(9);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues('a')).toBe(2);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('counts every delayed add as a retry in the metrics', () => {
    let retries = 0;
    const q = createRateLimitingQueue({
      clock: new FakeClock(),
      metrics: { ...noopWorkQueueMetricsProvider, newRetriesMetric: () => ({ inc: () => void retries++ }) },
    });
    q.addRateLimited('a');
    q.addAfter('b', 10);
    q.add('c');
    expect(retries).toBe(2);
    q.shutDown();
  });

  it('ignores rate-limited adds after shutdown', async () => {
    const clock = new FakeClock();
    const q = createRateLimitingQueue({ clock });
    q.shutDown();
    q.addRateLimited('a');
    clock.step(1000);
    expect(await q.get()).toBeUndefined();
  });

  type Op =
    | { op: 'add' | 'addRateLimited' | 'forget'; key: string }
    | { op: 'addAfter'; key: string; delay: number }
    | { op: 'get' }
    | { op: 'done'; pick: number }
    | { op: 'step'; ms: number };

  const key = fc.constantFrom('a', 'b', 'c', 'd');
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ op: fc.constantFrom('add' as const, 'addRateLimited' as const, 'forget' as const), key }),
    fc.record({ op: fc.constant('addAfter' as const), key, delay: fc.integer({ min: 0, max: 50 }) }),
    fc.record({ op: fc.constant('get' as const) }),
    fc.record({ op: fc.constant('done' as const), pick: fc.nat() }),
    fc.record({ op: fc.constant('step' as const), ms: fc.integer({ min: 0, max: 60 }) }),
  );

  it('keeps one worker per key, processes every key after its last add and loses none (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops) => {
        const clock = new FakeClock();
        const q = createRateLimitingQueue<string>({ clock, rateLimiter: linearLimiter() });
        // The model: a logical time of the last effective add and the last handout of each key.
        let seq = 0;
        const lastAdd = new Map<string, number>();
        const lastGet = new Map<string, number>();
        const waiting = new Map<string, number>(); // key → due time of its delayed add
        const retries = new Map<string, number>();
        const inHand: string[] = [];
        const addNow = (k: string): void => void lastAdd.set(k, ++seq);
        const delay = (k: string, ms: number): void => {
          if (ms <= 0) return addNow(k);
          const due = clock.now() + ms;
          waiting.set(k, Math.min(due, waiting.get(k) ?? Infinity));
        };
        const pendingOf = (k: string): boolean => (lastAdd.get(k) ?? 0) > (lastGet.get(k) ?? 0);
        const modelLen = (): number => [...lastAdd.keys()].filter((k) => pendingOf(k) && !inHand.includes(k)).length;
        const take = async (): Promise<void> => {
          const k = await q.get();
          expect(k).toBeDefined();
          expect(inHand).not.toContain(k);
          expect(pendingOf(k!)).toBe(true);
          lastGet.set(k!, ++seq);
          inHand.push(k!);
        };
        const step = (ms: number): void => {
          const target = clock.now() + ms;
          for (const [k, due] of [...waiting].sort((x, y) => x[1] - y[1])) {
            if (due <= target) {
              waiting.delete(k);
              addNow(k);
            }
          }
          clock.step(ms);
        };

        for (const o of ops) {
          switch (o.op) {
            case 'add':
              q.add(o.key);
              addNow(o.key);
              break;
            case 'addAfter':
              q.addAfter(o.key, o.delay);
              delay(o.key, o.delay);
              break;
            case 'addRateLimited': {
              const n = retries.get(o.key) ?? 0;
              retries.set(o.key, n + 1);
              q.addRateLimited(o.key);
              delay(o.key, 7 * (n + 1));
              break;
            }
            case 'forget':
              q.forget(o.key);
              retries.delete(o.key);
              break;
            case 'get':
              if (q.len() > 0) await take();
              break;
            case 'done':
              if (inHand.length > 0) q.done(inHand.splice(o.pick % inHand.length, 1)[0]!);
              break;
            case 'step':
              step(o.ms);
              break;
          }
          expect(q.len()).toBe(modelLen());
        }

        // Finish: complete all work, let every delay pass, and drain.
        while (inHand.length > 0) q.done(inHand.pop()!);
        step(1_000_000);
        while (q.len() > 0) {
          await take();
          q.done(inHand.pop()!);
        }
        for (const k of lastAdd.keys()) expect(pendingOf(k)).toBe(false);
        q.shutDown();
        expect(await q.get()).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
