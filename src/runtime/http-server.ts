/**
 * The small HTTP servers of the process (`/metrics`, `/healthz`, `/readyz`), bound to addresses in
 * controller-runtime's flag format (`:8080`, `127.0.0.1:8081`, `0` = disabled), and what they share
 * with the HTTPS server (routing, listening, {@link ServerLimits}; bounded request bodies are
 * request-body.ts's).
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { realClock, type Clock } from './clock.ts';
import { http } from './node-http.ts';

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
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  if (!match) throw new TypeError(`${flag}: "${value}" is not host:port, :port or 0 (e.g. ":8080", "127.0.0.1:8081")`);
  const port = Number(match[3]);
  if (port > 65535) throw new TypeError(`${flag}: port ${match[3]} of "${value}" is out of range; a port is 0 to 65535`);
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

/**
 * What one server lets its clients hold (issue 41): anyone who reaches a Pod's port may open
 * connections. Without these, 19,500 half-open connections took the controller from 91 to 272 MiB, and
 * 1,500 clients that never read their `/metrics` answer held theirs for good.
 */
export interface ServerLimits {
  /** Connections open at once; a connection past it is closed as it arrives (Node's `maxConnections`). */
  readonly maxConnections: number;
  /** Time to receive a request's headers, from the connection's start or the previous answer (one that sends nothing included). */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /**
   * Time from a request's headers to the last byte of its answer handed to the kernel (Go's
   * `WriteTimeout`); past it the connection is cut, so a client that reads its answer a byte at a
   * time gives back what the answer holds.
   */
  readonly writeTimeoutMs: number;
  /** A connection with no traffic either way this long is closed (a client that stopped reading). */
  readonly idleTimeoutMs: number;
  /** Time a kept-alive connection waits for its next request. */
  readonly keepAliveTimeoutMs: number;
}

/**
 * Limits of the probe and metrics servers: kubelet probes (a new connection each, a timeout of 1 s by
 * default) and Prometheus scrapes (one connection per Prometheus, a scrape timeout of 10 s by default)
 * need a handful of connections and a few seconds.
 */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxConnections: 64,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  writeTimeoutMs: 10_000,
  idleTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
};

/**
 * Options of `createServer` for `limits`: how often Node checks the headers and request timeouts (every
 * 30 s by default, which would let a connection that sends nothing live 30 s past its timeout).
 */
export const serverOptions = (limits: ServerLimits): ServerOptions => ({ connectionsCheckingInterval: Math.max(100, Math.min(1_000, limits.headersTimeoutMs / 2)) });

/** Applies `limits` to `server` (before it listens). */
export function applyServerLimits(server: Server | HttpsServer, limits: ServerLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`server limits: ${name} must be a positive integer, got ${value}`);
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) throw new RangeError(`server limits: headersTimeoutMs (${limits.headersTimeoutMs}) must not exceed requestTimeoutMs (${limits.requestTimeoutMs})`);
  server.maxConnections = limits.maxConnections;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Without a listener for 'timeout', Node destroys a socket idle this long in either direction.
  server.timeout = limits.idleTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
}

/** Options of {@link routeRequests}. */
export interface RouteOptions {
  /** @see ServerLimits.writeTimeoutMs @default DEFAULT_SERVER_LIMITS.writeTimeoutMs */
  readonly writeTimeoutMs?: number;
  /** @default realClock */
  readonly clock?: Clock;
}

/**
 * A request listener dispatching on the path (a route ending in `/` also takes what is below it);
 * unknown paths get 404. An answer not handed to the kernel within `writeTimeoutMs` cuts the connection.
 */
export function routeRequests(routes: Readonly<Record<string, Handler>>, options: RouteOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const clock = options.clock ?? realClock;
  const writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_SERVER_LIMITS.writeTimeoutMs;
  return (req, res) => {
    const deadline = clock.setTimeout(() => res.destroy(), writeTimeoutMs);
    const done = (): void => clock.clearTimeout(deadline);
    res.once('finish', done).once('close', done);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const handler = routes[path] ?? Object.entries(routes).find(([prefix]) => prefix.endsWith('/') && path.startsWith(prefix))?.[1];
    if (!handler) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      // Once a status is sent, an error text appended to the body would pass for part of a good answer
      // (a 200 whose JSON ends in "internal error: …"): the connection is cut instead, which the client
      // sees as the failure it is.
      if (res.headersSent) {
        res.destroy(err as Error);
        return;
      }
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`internal error: ${(err as Error).message}\n`);
    });
  };
}

/** Listens on `address` (errors name the address and why) and returns the server as a {@link RunningServer}. */
export async function listen(server: Server | HttpsServer, address: BindAddress, scheme: 'http' | 'https'): Promise<RunningServer> {
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
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Starts an HTTP server within `limits`; routes unknown paths to 404. */
export async function startHttpServer(address: BindAddress, routes: Readonly<Record<string, Handler>>, limits: ServerLimits = DEFAULT_SERVER_LIMITS): Promise<RunningServer> {
  const server: Server = http.createServer(serverOptions(limits), routeRequests(routes, { writeTimeoutMs: limits.writeTimeoutMs }));
  applyServerLimits(server, limits);
  return listen(server, address, 'http');
}
