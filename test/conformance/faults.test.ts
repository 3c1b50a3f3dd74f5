/**
 * Fault injection of the test server (`/debug/*`; skipped on a real cluster): fail the next N requests
 * (or a fraction) matching verb/resource with 409, 429 + Retry-After, 500 or 503 as proper Status
 * bodies, add latency, close open watches, pause and resume.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cmPath, configMap, isRealCluster, must, useCluster } from './harness.ts';

const cluster = useCluster();

describe.skipIf(isRealCluster)('fault injection (test server only)', () => {
  beforeEach((ctx) => {
    if (!cluster().hasDebug) ctx.skip();
  });
  afterEach(async () => {
    if (cluster().hasDebug) {
      await cluster().api.post('/debug/resume', {});
      await cluster().api.delete('/debug/faults');
    }
  });

  const inject = async (fault: Record<string, unknown>): Promise<void> => {
    const res = await cluster().api.post('/debug/faults', fault);
    expect(res.status, res.text).toBeLessThan(300);
    expect(res.body).toHaveProperty('id');
  };

  it.each([
    [409, 'Conflict'],
    [429, 'TooManyRequests'],
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
  ])('fails the next 2 matching creates with %i %s, then lets requests through', async (code, reason) => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    await inject({ verb: 'create', resource: 'configmaps', namespace: ns, code, count: 2 });
    for (const name of ['a', 'b']) {
      const res = await api.post(cmPath(ns), configMap(name));
      expect(res.status).toBe(code);
      expect(res.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
      expect((await api.get(cmPath(ns, name))).status).toBe(404);
    }
    expect((await api.post(cmPath(ns), configMap('c'))).status).toBe(201);
  });

  it('sends Retry-After with a 429 and its seconds in the Status details', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    await inject({ verb: 'list', resource: 'configmaps', namespace: ns, code: 429, count: 1, retryAfterSeconds: 2 });
    const res = await api.get(cmPath(ns));
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.body).toMatchObject({ reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 2 } });
    expect((await api.get(cmPath(ns))).status).toBe(200);
  });

  it('matches only the given verb, resource and name', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    must(await api.post(cmPath(ns), configMap('target')), 201);
    must(await api.post(cmPath(ns), configMap('other')), 201);
    await inject({ verb: 'get', resource: 'configmaps', namespace: ns, name: 'target', code: 500, count: 1 });
    expect((await api.get(cmPath(ns, 'other'))).status).toBe(200);
    expect((await api.get(cmPath(ns))).status).toBe(200);
    expect((await api.get(cmPath(ns, 'target'))).status).toBe(500);
    expect((await api.get(cmPath(ns, 'target'))).status).toBe(200);
  });

  it('fails about the given fraction of matching requests', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    must(await api.post(cmPath(ns), configMap('a')), 201);
    await inject({ verb: 'get', resource: 'configmaps', namespace: ns, code: 503, fraction: 0.5 });
    let failed = 0;
    // Binomial(100, 0.5): outside 25..75 with probability < 1e-6.
    for (let i = 0; i < 100; i++) if ((await api.get(cmPath(ns, 'a'))).status === 503) failed++;
    expect(failed).toBeGreaterThan(25);
    expect(failed).toBeLessThan(75);
  });

  it('adds latency to matching requests', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    await inject({ verb: 'list', resource: 'configmaps', namespace: ns, latencyMs: 400, count: 1 });
    const slow = await api.get(cmPath(ns));
    expect(slow.status).toBe(200);
    expect(slow.elapsedMs).toBeGreaterThanOrEqual(380);
    // Relative, so a loaded machine does not make it flaky: the next request carries no added delay.
    const fast = await api.get(cmPath(ns));
    expect(fast.elapsedMs).toBeLessThan(slow.elapsedMs - 150);
  });

  it('ends open watch streams on close-watches', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    const list = must(await api.get(cmPath(ns)), 200);
    const w = api.watch(cmPath(ns), { resourceVersion: list.metadata.resourceVersion });
    try {
      expect((await w.response).statusCode).toBe(200);
      must(await api.post('/debug/close-watches', {}), 200, 201, 204);
      await w.drain(3_000);
      expect(w.ended).toBe(true);
      // A new watch works again.
      const again = api.watch(cmPath(ns), { resourceVersion: list.metadata.resourceVersion });
      must(await api.post(cmPath(ns), configMap('after')), 201);
      expect(await again.nextChange()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'after' } } });
      again.close();
    } finally {
      w.close();
    }
  });

  it('holds requests while paused and answers them on resume', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    must(await api.post('/debug/pause', {}), 200, 201, 204);
    let answered = false;
    const pending = api.get(cmPath(ns)).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(answered).toBe(false);
    must(await api.post('/debug/resume', {}), 200, 201, 204);
    expect((await pending).status).toBe(200);
  });

  it('clears all faults with DELETE /debug/faults', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('faults');
    await inject({ verb: 'list', resource: 'configmaps', namespace: ns, code: 500, count: 5 });
    must(await api.delete('/debug/faults'), 200, 204);
    expect((await api.get(cmPath(ns))).status).toBe(200);
  });
});
