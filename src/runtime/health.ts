/**
 * Liveness and readiness probes in the Kubernetes style (`/healthz`, `/readyz`, each check also at
 * `/healthz/<name>`; `?verbose` lists every check): `[+]name ok` / `[-]name failed: reason`.
 *
 * - `/healthz` should fail only when a restart would help: watches stuck (errors for minutes without
 *   a successful list or watch event), leader election renewals failing.
 * - `/readyz` is ready once every cache has synced.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realClock, type Clock } from './clock.ts';
import { startHttpServer, type BindAddress, type RunningServer, type ServerLimits } from './http-server.ts';
import type { SyncSource } from './informer.ts';
import type { ReflectorHealth } from './reflector.ts';

/** The answer of one check. */
export type HealthResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** A named probe check. */
export interface HealthCheck {
  readonly name: string;
  check(): HealthResult | Promise<HealthResult>;
}

/** Ready once every source has synced; the failure names the ones that have not. */
export function cachesSyncedCheck(sources: readonly SyncSource[]): HealthCheck {
  return {
    name: 'informer-sync',
    check: () => {
      const pending = sources.filter((s) => !s.hasSynced()).map((s) => s.name);
      return pending.length === 0 ? { ok: true } : { ok: false, reason: `caches not synced: ${pending.join(', ')}` };
    },
  };
}

/**
 * Fails while the leader elector reports its renewals failing (its `healthy()`; the LeaderElector of
 * this folder fits), like controller-runtime's leader election healthz adaptor.
 */
export function leaderElectionCheck(elector: { healthy(): boolean }): HealthCheck {
  return {
    name: 'leader-election',
    check: () => (elector.healthy() ? { ok: true } : { ok: false, reason: 'leader election: lease renewal is failing' }),
  };
}

/**
 * For /readyz: fails while the elector cannot read its Lease at all (missing, forbidden, unreachable).
 * A replica waiting for another leader is ready; one that can never lead because of its configuration
 * is not, and the reason says why.
 */
export function leaseReachableCheck(elector: { leaseProblem(): string | undefined }): HealthCheck {
  return {
    name: 'leader-election-lease',
    check: () => {
      const problem = elector.leaseProblem();
      return problem === undefined ? { ok: true } : { ok: false, reason: problem };
    },
  };
}

/** Options for {@link watchesHealthyCheck}. */
export interface WatchesHealthyOptions {
  /** A reflector failing for longer than this since its last healthy moment is stuck. @default 300_000 */
  readonly stuckAfterMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
}

/**
 * Fails when a reflector keeps failing and has not had a successful list, watch event or clean
 * stream end for `stuckAfterMs` (a quiet but connected watch is healthy: it has no failures).
 */
export function watchesHealthyCheck(reflectors: readonly { health(): ReflectorHealth }[], options: WatchesHealthyOptions = {}): HealthCheck {
  const clock = options.clock ?? realClock;
  const stuckAfterMs = options.stuckAfterMs ?? 300_000;
  const createdAt = clock.now();
  return {
    name: 'watches',
    check: () => {
      const now = clock.now();
      const stuck = reflectors
        .map((r) => r.health())
        .filter((h) => h.consecutiveFailures > 0 && now - (h.lastHealthyAt ?? createdAt) > stuckAfterMs)
        .map((h) => `${h.name} (${h.consecutiveFailures} failures, last: ${h.lastError ?? 'unknown'})`);
      return stuck.length === 0 ? { ok: true } : { ok: false, reason: `watches stuck for more than ${stuckAfterMs} ms: ${stuck.join('; ')}` };
    },
  };
}

/** Runs checks and renders the Kubernetes probe body; returns the HTTP status. */
export async function runChecks(endpoint: string, checks: readonly HealthCheck[], verbose: boolean): Promise<{ status: number; body: string }> {
  const results = await Promise.all(checks.map(async (c) => {
    try {
      return { name: c.name, result: await c.check() };
    } catch (err) {
      return { name: c.name, result: { ok: false, reason: (err as Error).message } as HealthResult };
    }
  }));
  const failed = results.some((r) => !r.result.ok);
  if (!failed && !verbose) return { status: 200, body: 'ok' };
  const lines = results.map(({ name, result }) => (result.ok ? `[+]${name} ok` : `[-]${name} failed: ${result.reason}`));
  lines.push(failed ? `${endpoint} check failed` : `${endpoint} check passed`);
  return { status: failed ? 500 : 200, body: `${lines.join('\n')}\n` };
}

/** Options for {@link startHealthServer}. */
export interface HealthServerOptions {
  /** Where to listen (scaffold default `:8081`). */
  readonly address: BindAddress;
  /** Liveness checks. @default none (always ok) */
  readonly healthz?: readonly HealthCheck[];
  /** Readiness checks. @default none (always ok) */
  readonly readyz?: readonly HealthCheck[];
  /** @default DEFAULT_SERVER_LIMITS */
  readonly limits?: ServerLimits;
}

/** Starts `/healthz` and `/readyz`. */
export function startHealthServer(options: HealthServerOptions): Promise<RunningServer> {
  const endpoint = (name: string, checks: readonly HealthCheck[]) => async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://probe');
    const sub = url.pathname.slice(`/${name}/`.length);
    const selected = url.pathname.startsWith(`/${name}/`) ? checks.filter((c) => c.name === sub) : checks;
    if (url.pathname.startsWith(`/${name}/`) && selected.length === 0) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`no check named "${sub}"\n`);
      return;
    }
    const { status, body } = await runChecks(name, selected, url.searchParams.has('verbose'));
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }).end(body);
  };
  const healthz = endpoint('healthz', options.healthz ?? []);
  const readyz = endpoint('readyz', options.readyz ?? []);
  return startHttpServer(options.address, { '/healthz': healthz, '/healthz/': healthz, '/readyz': readyz, '/readyz/': readyz }, options.limits);
}
