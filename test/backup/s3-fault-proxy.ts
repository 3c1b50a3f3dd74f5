/**
 * A proxy in front of the test's S3 server that injects the failures a real endpoint shows: an S3
 * error answer (403 RequestTimeTooSkewed, 503 SlowDown, a refused part), a delay, a dropped connection;
 * over http or over TLS with the test's own certificate (a private CA). Requests it passes through
 * reach the real server untouched, signature included (the Host header is kept).
 */
import { createServer as createHttpServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

/** What one request looks like to a fault rule. */
export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** PUT with partNumber: an UploadPart. */
  readonly isUploadPart: boolean;
}

/** A fault for one request. */
export type Fault =
  | { readonly kind: 'error'; readonly status: number; readonly code: string; readonly message: string }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'drop' };

/** Options of {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** The real server, `http://127.0.0.1:<port>`. */
  readonly target: string;
  /** Serve TLS with this certificate and key (PEM files). @default plain http */
  readonly tls?: { readonly cert: string; readonly key: string };
}

/** A running proxy; set {@link FaultProxy.rule} to inject faults. */
export class FaultProxy {
  /** Decides each request's fault (none: pass through). */
  rule: (req: ProxiedRequest) => Fault | undefined = () => undefined;
  /** Requests seen, in order. */
  readonly seen: ProxiedRequest[] = [];

  private constructor(private readonly server: Server, readonly endpoint: string) {}

  /** Starts on a free port of 127.0.0.1. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const target = new URL(options.target);
    let proxy: FaultProxy | undefined;
    const handler = (req: IncomingMessage, res: ServerResponse): void => void proxy!.handle(req, res, target);
    const server = options.tls ? createHttpsServer({ cert: readFileSync(options.tls.cert), key: readFileSync(options.tls.key) }, handler) : createHttpServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    proxy = new FaultProxy(server, `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`);
    return proxy;
  }

  /** Stops listening and drops open connections. */
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, target: URL): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const info: ProxiedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, isUploadPart: req.method === 'PUT' && url.searchParams.has('partNumber') };
    this.seen.push(info);
    const fault = this.rule(info);
    if (fault?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'error') {
      req.resume();
      const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${fault.code}</Code><Message>${fault.message}</Message><RequestId>fault</RequestId></Error>`;
      res.writeHead(fault.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), date: new Date().toUTCString() });
      res.end(body);
      return;
    }
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}
