import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import { statusErrorFromResponse } from '../../src/kube/kube-client.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { CacheSyncTimeoutError, Controller, type ControllerOptions } from '../../src/runtime/controller.ts';
import { RuntimeMetrics } from '../../src/runtime/metrics.ts';
import { TerminalError, type ReconcileContext, type ReconcileResult } from '../../src/runtime/reconciler.ts';

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise the test resolves by hand. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const controllers: Controller[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop(0)));
});

function setup(reconcile: (ctx: ReconcileContext) => Promise<ReconcileResult | undefined | void>, extra: Partial<ControllerOptions> = {}) {
  const clock = new FakeClock();
  const calls: string[] = [];
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const controller = new Controller({
    name: 'test',
    clock,
    metrics,
    reconciler: {
      reconcile: (ctx) => {
        calls.push(ctx.key);
        return reconcile(ctx);
      },
    },
    ...extra,
  });
  controllers.push(controller);
  return { clock, calls, controller, metrics };
}

async function metricValue(metrics: RuntimeMetrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as { value: number; labels: Record<string, string | number> }[];
  return values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value;
}

describe('Controller', () => {
  // A backlog of reconciles that need no I/O (schedules already in sync) chained through microtasks
  // and held the event loop until it was gone: 1.15 s in the soak (docs/soak-tail.md).
  it('lets the event loop turn while it works through a backlog of reconciles that need no I/O', async () => {
    const busy = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const { calls, controller } = setup(async () => busy(0.2));
    for (let i = 0; i < 1_000; i++) controller.queue.add(`ns/s-${i}`);
    let reconciledBeforeTimer: number | undefined;
    setTimeout(() => (reconciledBeforeTimer = calls.length), 0);
    void controller.start();
    while (calls.length < 1_000) await new Promise<void>((resolve) => setImmediate(resolve));
    // 1,000 × 0.2 ms = 200 ms of work: the timer ran after at most a few 5 ms turns of it, not after all.
    expect(reconciledBeforeTimer).toBeDefined();
    expect(reconciledBeforeTimer!).toBeLessThan(500);
  });

  it('starts workers only after every cache has synced', async () => {
    let synced = false;
    const { clock, calls, controller } = setup(async () => undefined, { informers: [{ name: 'cronjobs', hasSynced: () => synced }] });
    controller.queue.add('ns/a');
    const started = controller.start();
    clock.step(500);
    await settle();
    expect(calls).toEqual([]);
    synced = true;
    clock.step(100);
    await started;
    await settle();
    expect(calls).toEqual(['ns/a']);
  });

  it('fails start with an error naming the caches that did not sync in time', async () => {
    const { clock, controller } = setup(async () => undefined, {
      cacheSyncTimeoutMs: 1_000,
      informers: [{ name: 'backupschedules', hasSynced: () => true }, { name: 'cronjobs.batch', hasSynced: () => false }],
    });
    const started = controller.start();
    const outcome = started.catch((err: unknown) => err);
    for (let i = 0; i < 12; i++) {
      clock.step(100);
      await settle();
    }
    const err = await outcome;
    expect(err).toBeInstanceOf(CacheSyncTimeoutError);
    expect((err as Error).message).toBe('controller "test": timed out after 1000 ms waiting for caches to sync: cronjobs.batch');
  });

  it.each<[string, () => Promise<ReconcileResult | undefined | void>, string, number]>([
    ['resolving undefined', async () => undefined, 'success', 0],
    ['resolving {}', async () => ({}), 'success', 0],
    ['asking to requeue', async () => ({ requeue: true }), 'requeue', 1],
    ['asking to requeue after a delay', async () => ({ requeueAfterMs: 60_000 }), 'requeue_after', 0],
    ['throwing', async () => { throw new Error('conflict'); }, 'error', 1],
    ['throwing a TerminalError', async () => { throw new TerminalError('invalid spec'); }, 'error', 0],
  ])('counts %s as result=%s and leaves %i rate-limited requeues', async (_name, reconcile, result, requeues) => {
    const { controller, metrics } = setup(reconcile);
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'test', result })).toBe(1);
    expect(controller.queue.numRequeues('ns/a')).toBe(requeues);
  });

  it('retries a failing key with the rate limiter backoff and counts each error', async () => {
    let failures = 2;
    const { clock, calls, controller, metrics } = setup(async () => {
      if (failures-- > 0) throw new Error('boom');
    });
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    expect(calls).toHaveLength(1);
    clock.step(4);
    await settle();
    expect(calls).toHaveLength(1);
    clock.step(1); // 5 ms: first retry
    await settle();
    expect(calls).toHaveLength(2);
    clock.step(10); // 10 ms: second retry
    await settle();
    expect(calls).toHaveLength(3);
    expect(controller.queue.numRequeues('ns/a')).toBe(0);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_errors_total', { controller: 'test' })).toBe(2);
    expect(await metricValue(metrics, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'test' })).toBe(0);
  });

  it.each<[string, () => Error, number]>([
    ['a 429 with Retry-After: 3', () => new ApiStatusError(statusErrors.tooManyRequests(3)), 3_000],
    ['a 503 whose Retry-After came as a header', () => statusErrorFromResponse(503, 'upstream busy', '2'), 2_000],
    ['a 429 wrapped as the cause of another error', () => new Error('patch failed', { cause: new ApiStatusError(statusErrors.tooManyRequests(1)) }), 1_000],
    ['a 429 asking for an hour (capped at maxRetryAfterMs, 60 s)', () => new ApiStatusError(statusErrors.tooManyRequests(3600)), 60_000],
  ])('retries a key that failed with %s no sooner than the server asked', async (_name, error, waitMs) => {
    let failures = 1;
    const { clock, calls, controller } = setup(async () => {
      if (failures-- > 0) throw error();
    });
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    clock.step(waitMs - 1);
    await settle();
    expect(calls).toHaveLength(1);
    clock.step(1);
    await settle();
    expect(calls).toHaveLength(2);
  });

  it('does not retry a TerminalError, even one wrapped as a cause', async () => {
    const { clock, calls, controller, metrics } = setup(async () => {
      throw new Error('wrapped', { cause: new TerminalError('name taken') });
    });
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    clock.step(60_000);
    await settle();
    expect(calls).toEqual(['ns/a']);
    expect(await metricValue(metrics, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'test' })).toBe(1);
  });

  it('comes back after requeueAfterMs, not before', async () => {
    let first = true;
    const { clock, calls, controller } = setup(async () => {
      if (!first) return undefined;
      first = false;
      return { requeueAfterMs: 30_000 };
    });
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    clock.step(29_999);
    await settle();
    expect(calls).toHaveLength(1);
    clock.step(1);
    await settle();
    expect(calls).toHaveLength(2);
  });

  it('runs at most `concurrency` reconciles at once and never two of one key', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    let maxActive = 0;
    const { calls, controller } = setup(async (ctx) => {
      maxActive = Math.max(maxActive, controller.activeWorkers);
      const gate = deferred();
      gates.set(ctx.key, gate);
      await gate.promise;
    }, { concurrency: 2 });
    for (const key of ['ns/a', 'ns/b', 'ns/c']) controller.queue.add(key);
    await controller.start();
    await settle();
    expect(calls).toEqual(['ns/a', 'ns/b']);
    controller.queue.add('ns/a'); // re-added while in flight: runs again after, not alongside
    gates.get('ns/b')!.resolve();
    await settle();
    expect(calls).toEqual(['ns/a', 'ns/b', 'ns/c']);
    gates.get('ns/a')!.resolve();
    await settle();
    expect(calls).toEqual(['ns/a', 'ns/b', 'ns/c', 'ns/a']);
    expect(maxActive).toBe(2);
    for (const g of gates.values()) g.resolve();
  });

  it('gives each reconcile a logger bound to controller, namespace, name and a unique reconcileID', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb(); } });
    const ids: string[] = [];
    const { controller } = setup(async (ctx) => {
      // Either may be asked for first (both are made lazily); the ID stays the same within a reconcile.
      if (ctx.name === 'a') ids.push(ctx.reconcileId);
      ctx.logger.info('reconciling');
      if (ctx.name === 'b') ids.push(ctx.reconcileId);
    }, { logger: pino({ level: 'info' }, sink) });
    controller.queue.add('ns/a');
    controller.queue.add('ns/b');
    await controller.start();
    await settle();
    const reconciling = lines.filter((l) => l['msg'] === 'reconciling');
    expect(reconciling.map((l) => [l['controller'], l['namespace'], l['name'], l['reconcileID']])).toEqual([
      ['test', 'ns', 'a', ids[0]], ['test', 'ns', 'b', ids[1]],
    ]);
    expect(new Set(ids).size).toBe(2);
  });

  it('on stop lets an in-flight reconcile finish within the deadline', async () => {
    const gate = deferred();
    const { clock, controller } = setup(async () => gate.promise);
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    const stopped = controller.stop(30_000);
    clock.step(10_000);
    gate.resolve();
    expect(await stopped).toBe(true);
  });

  it('on stop aborts the reconcile signal and reports false when the deadline passes', async () => {
    let signal: AbortSignal | undefined;
    const { clock, controller } = setup(async (ctx) => {
      signal = ctx.signal;
      await new Promise(() => {});
    });
    controller.queue.add('ns/a');
    await controller.start();
    await settle();
    const stopped = controller.stop(30_000);
    await settle();
    clock.step(30_000);
    expect(await stopped).toBe(false);
    expect(signal?.aborted).toBe(true);
  });

  it('pauses: finishes the reconcile in flight, takes no key while paused, and resumes with what was queued meanwhile', async () => {
    const gate = deferred();
    const { calls, controller } = setup(async (ctx) => (ctx.key === 'ns/slow' ? gate.promise : undefined), { concurrency: 2 });
    controller.queue.add('ns/slow');
    await controller.start();
    await settle();
    expect(calls).toEqual(['ns/slow']);
    const paused = controller.pause();
    controller.queue.add('ns/queued-while-pausing');
    await settle();
    gate.resolve();
    await paused;
    controller.queue.add('ns/queued-while-paused');
    await settle();
    expect(calls).toEqual(['ns/slow']);
    expect(controller.queue.len()).toBe(2);
    controller.resume();
    await settle();
    expect(calls.slice(1).sort()).toEqual(['ns/queued-while-paused', 'ns/queued-while-pausing']);
  });

  it('paused while the caches sync, starts no worker until resumed', async () => {
    let synced = false;
    const { clock, calls, controller } = setup(async () => undefined, { informers: [{ name: 'cronjobs', hasSynced: () => synced }] });
    controller.queue.add('ns/a');
    const started = controller.start();
    await controller.pause();
    synced = true;
    clock.step(100);
    await started;
    await settle();
    expect(calls).toEqual([]);
    controller.resume();
    await settle();
    expect(calls).toEqual(['ns/a']);
  });

  it('paused before it was started (the Lease lost while a controller waited for its CRD), starts no worker until resumed', async () => {
    const { calls, controller } = setup(async () => undefined);
    controller.queue.add('ns/a');
    await controller.pause();
    await controller.start();
    await settle();
    expect(calls).toEqual([]);
    controller.resume();
    await settle();
    expect(calls).toEqual(['ns/a']);
  });

  it('rejects a concurrency that is not a positive integer', () => {
    expect(() => new Controller({ name: 'x', reconciler: { reconcile: async () => undefined }, concurrency: 0 })).toThrow(
      'Controller "x": concurrency must be a positive integer, got 0',
    );
  });
});
