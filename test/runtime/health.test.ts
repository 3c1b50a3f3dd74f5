import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { cachesSyncedCheck, leaderElectionCheck, runChecks, startHealthServer, watchesHealthyCheck, type HealthCheck } from '../../src/runtime/health.ts';
import type { ReflectorHealth } from '../../src/runtime/reflector.ts';

function health(partial: Partial<ReflectorHealth>): { health(): ReflectorHealth } {
  const h: ReflectorHealth = { name: 'cronjobs', phase: 'watching', synced: true, lastListAt: undefined, lastWatchEventAt: undefined, lastHealthyAt: undefined, consecutiveFailures: 0, lastError: undefined, ...partial };
  return { health: () => h };
}

describe('health checks', () => {
  it('reports not-synced caches by name', () => {
    const check = cachesSyncedCheck([{ name: 'a', hasSynced: () => true }, { name: 'cronjobs', hasSynced: () => false }]);
    expect(check.check()).toEqual({ ok: false, reason: 'caches not synced: cronjobs' });
  });

  it.each<[string, Partial<ReflectorHealth>, boolean]>([
    ['a quiet watch with no failures', { lastHealthyAt: 0 }, true],
    ['failures for less than the threshold', { consecutiveFailures: 3, lastHealthyAt: 1_000_000 - 200_000, lastError: 'x' }, true],
    ['failures for longer than the threshold', { consecutiveFailures: 9, lastHealthyAt: 1_000_000 - 400_000, lastError: 'connection refused' }, false],
  ])('judges %s (healthy: %s)', (_name, partial, ok) => {
    const clock = new FakeClock(1_000_000);
    const result = watchesHealthyCheck([health(partial)], { clock, stuckAfterMs: 300_000 }).check();
    expect((result as { ok: boolean }).ok).toBe(ok);
    if (!ok) expect(result).toEqual({ ok: false, reason: 'watches stuck for more than 300000 ms: cronjobs (9 failures, last: connection refused)' });
  });

  it.each([[true, { ok: true }], [false, { ok: false, reason: 'leader election: lease renewal is failing' }]])(
    'follows the leader elector health (healthy: %s)',
    (healthy, expected) => {
      expect(leaderElectionCheck({ healthy: () => healthy }).check()).toEqual(expected);
    },
  );

  it('renders failing checks in the Kubernetes probe format and treats a throwing check as failed', async () => {
    const checks: HealthCheck[] = [
      { name: 'ping', check: () => ({ ok: true }) },
      { name: 'leader-election', check: () => { throw new Error('renewal failing since 12 s'); } },
    ];
    expect(await runChecks('healthz', checks, false)).toEqual({ status: 500, body: '[+]ping ok\n[-]leader-election failed: renewal failing since 12 s\nhealthz check failed\n' });
    expect(await runChecks('healthz', checks.slice(0, 1), false)).toEqual({ status: 200, body: 'ok' });
    expect(await runChecks('healthz', checks.slice(0, 1), true)).toEqual({ status: 200, body: '[+]ping ok\nhealthz check passed\n' });
  });

  it('serves /healthz, /readyz and single checks', async () => {
    let synced = false;
    const server = await startHealthServer({
      address: { host: '127.0.0.1', port: 0 },
      healthz: [{ name: 'ping', check: () => ({ ok: true }) }],
      readyz: [cachesSyncedCheck([{ name: 'backupschedules', hasSynced: () => synced }])],
    });
    try {
      const get = async (path: string): Promise<[number, string]> => {
        const res = await fetch(`${server.url}${path}`);
        return [res.status, await res.text()];
      };
      expect(await get('/healthz')).toEqual([200, 'ok']);
      expect(await get('/readyz')).toEqual([500, '[-]informer-sync failed: caches not synced: backupschedules\nreadyz check failed\n']);
      synced = true;
      expect(await get('/readyz')).toEqual([200, 'ok']);
      expect(await get('/healthz/ping')).toEqual([200, 'ok']);
      expect((await get('/healthz/nope'))[0]).toBe(404);
    } finally {
      await server.close();
    }
  });
});
