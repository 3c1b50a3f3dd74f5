/** Serves a {@link MetricsExposition} on `/metrics`. */
import type { ServerResponse } from 'node:http';
import { DEFAULT_SERVER_LIMITS, startHttpServer, type BindAddress, type RunningServer, type ServerLimits } from './http-server.ts';
import type { MetricsExposition } from './metrics.ts';

/**
 * Limits of the metrics server: the probe servers', with 30 s to write an answer (a registry of
 * 10,000 schedules renders a few MB; Prometheus gives up after its scrape timeout anyway).
 */
export const METRICS_SERVER_LIMITS: ServerLimits = { ...DEFAULT_SERVER_LIMITS, writeTimeoutMs: 30_000 };

/**
 * Starts the `/metrics` endpoint (Prometheus text format). The text is written chunk by chunk as it is
 * produced, waiting for a slow reader's socket to drain, so a scrape neither holds the event loop nor
 * the whole text in memory; a reader too slow is cut (`limits`).
 */
export function startMetricsServer(address: BindAddress, exposition: MetricsExposition, limits: ServerLimits = METRICS_SERVER_LIMITS): Promise<RunningServer> {
  return startHttpServer(address, {
    '/metrics': async (_req, res) => {
      const chunks = exposition.chunks()[Symbol.asyncIterator]();
      // The first chunk before the status: an error rendering the registry is still answered 500.
      const first = await chunks.next();
      res.writeHead(200, { 'Content-Type': exposition.contentType });
      for (let next = first; !next.done; next = await chunks.next()) {
        if (res.destroyed) {
          await chunks.return?.();
          return;
        }
        if (!res.write(next.value)) await drainedOrClosed(res);
      }
      res.end();
    },
  }, limits);
}

/** Resolves when `res` can take more data or is gone; leaves no listener behind. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
