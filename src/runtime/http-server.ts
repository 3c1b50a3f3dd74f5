/**
 * The small HTTP servers of the process (`/metrics`, `/healthz`, `/readyz`), bound to addresses in
 * controller-runtime's flag format (`:8080`, `127.0.0.1:8081`, `0` = disabled).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A host/port pair to listen on. */
export interface BindAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses `host:port`, `:port` (all interfaces) or `[::1]:port`; `'0'` means "do not serve"
 * (controller-runtime's convention for `--metrics-bind-address`) and returns `undefined`.
 */
export function parseBindAddress(value: string, flag = 'bind address'): BindAddress | undefined {
  if (value === '0') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new TypeError(`${flag}: "${value}" is not host:port, :port or 0 (e.g. ":8080", "127.0.0.1:8081")`);
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

/** A listening server. */
export interface RunningServer {
  /** The bound address (the real port when 0 was asked for). */
  readonly address: BindAddress;
  /** `http://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

/** A request handler; it may answer asynchronously. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Starts an HTTP server; routes unknown paths to 404. */
export async function startHttpServer(address: BindAddress, routes: Readonly<Record<string, Handler>>): Promise<RunningServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const handler = routes[path] ?? Object.entries(routes).find(([prefix]) => prefix.endsWith('/') && path.startsWith(prefix))?.[1];
    if (!handler) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`internal error: ${(err as Error).message}\n`);
    });
  });
  // Probes and scrapes are short: do not let idle keep-alive sockets hold shutdown up.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      const why = err.code === 'EADDRINUSE' ? 'the address is already in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
      reject(new Error(`cannot listen on ${address.host}:${address.port}: ${why}`, { cause: err }));
    };
    server.once('error', onError);
    server.listen(address.port, address.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.address;
  return {
    address: { host, port: bound.port },
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
