/**
 * The small HTTP servers of the process (`/metrics`, `/healthz`, `/readyz`), bound to addresses in
 * controller-runtime's flag format (`:8080`, `127.0.0.1:8081`, `0` = disabled), and what they share
 * with the HTTPS server (routing, listening, bounded request bodies, {@link ServerLimits}).
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

/** A request body over the limit: answer 413. */
export class RequestBodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
    this.name = 'RequestBodyTooLargeError';
  }
}

/** A request body the caller's budget could not take: answer 429. */
export class RequestBodyRefusedError extends Error {
  constructor(readonly bytes: number) {
    super(`no room for a request body of ${bytes} bytes now`);
    this.name = 'RequestBodyRefusedError';
  }
}

/** Where {@link readRequestBody} accounts for and gets the memory a body takes. */
export interface BodyMemory {
  /** Asked for the bytes the read will hold before it holds them; false refuses. */
  reserve(bytes: number): boolean;
  /** The buffer the body is read into; undefined refuses. */
  allocate(bytes: number): Buffer | undefined;
}

const UNBOUNDED_MEMORY: BodyMemory = { reserve: () => true, allocate: (bytes) => Buffer.allocUnsafe(bytes) };

/**
 * Reads a request body of at most `limitBytes`: refused at once when Content-Length says more, and
 * stopped as soon as the stream passes the limit (a chunked body announces no length). `memory` is
 * asked for what the read will hold before it holds it: with a declared length, `reserve` of that
 * length and then the one buffer of that size the body is read into; without one, `reserve` of each
 * chunk as it comes, and the buffer they are copied into at the end. When it refuses, the read stops
 * with a {@link RequestBodyRefusedError}, the rest of the body unread.
 */
export function readRequestBody(req: IncomingMessage, limitBytes: number, memory: BodyMemory = UNBOUNDED_MEMORY): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const header = req.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    const refuse = (err: Error): void => {
      req.removeAllListeners('data');
      req.resume();
      reject(err);
    };
    if (declared !== undefined && declared > limitBytes) return refuse(new RequestBodyTooLargeError(limitBytes));
    // With a declared length the chunks are copied into one buffer as they come: no second copy at the end.
    const whole = declared === undefined ? undefined : memory.reserve(declared) ? memory.allocate(declared) : undefined;
    if (declared !== undefined && whole === undefined) return refuse(new RequestBodyRefusedError(declared));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size + chunk.length > limitBytes) return refuse(new RequestBodyTooLargeError(limitBytes));
      if (whole) {
        chunk.copy(whole, size);
      } else {
        if (!memory.reserve(chunk.length)) return refuse(new RequestBodyRefusedError(size + chunk.length));
        chunks.push(chunk);
      }
      size += chunk.length;
    });
    req.on('end', () => {
      if (whole) return resolve(whole.subarray(0, size));
      const body = memory.allocate(size);
      if (!body) return reject(new RequestBodyRefusedError(size));
      let at = 0;
      for (const chunk of chunks) at += chunk.copy(body, at);
      resolve(body);
    });
    req.on('error', reject);
  });
}
