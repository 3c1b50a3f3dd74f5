/** Serves a {@link MetricsExposition} on `/metrics`. */
import type { ServerResponse } from 'node:http';
import { startHttpServer, type BindAddress, type RunningServer } from './http-server.ts';
import type { MetricsExposition } from './metrics.ts';

/**
 * Starts the `/metrics` endpoint (Prometheus text format). The text is written chunk by chunk as it is
 * produced, waiting for a slow reader's socket to drain, so a scrape neither holds the event loop nor
 * the whole text in memory.
 */
export function startMetricsServer(address: BindAddress, exposition: MetricsExposition): Promise<RunningServer> {
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
  });
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
