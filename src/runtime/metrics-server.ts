/** Serves a {@link RuntimeMetrics} registry on `/metrics`. */
import type { Registry } from 'prom-client';
import { startHttpServer, type BindAddress, type RunningServer } from './http-server.ts';

/** Starts the `/metrics` endpoint (Prometheus text format) for `registry`. */
export function startMetricsServer(address: BindAddress, registry: Registry): Promise<RunningServer> {
  return startHttpServer(address, {
    '/metrics': async (_req, res) => {
      const body = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(body);
    },
  });
}
