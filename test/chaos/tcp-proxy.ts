/**
 * A TCP proxy in front of the test API server (TLS passes through untouched), so a scenario can make
 * the API server refuse connections: {@link TcpProxy.refuse} closes the listening socket and resets
 * every open connection; {@link TcpProxy.accept} listens again on the same port.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export class TcpProxy {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  /** Starts a proxy on an ephemeral loopback port forwarding to `targetUrl`'s host and port. */
  static async start(targetUrl: string): Promise<TcpProxy> {
    const url = new URL(targetUrl);
    const proxy = new TcpProxy({ host: url.hostname, port: Number(url.port) });
    await proxy.accept();
    return proxy;
  }

  /** `https://127.0.0.1:<port>`: what a kubeconfig points at. */
  get httpsUrl(): string {
    return `https://127.0.0.1:${this.#port}`;
  }

  /** Listens (again): new connections are forwarded. */
  async accept(): Promise<void> {
    if (this.#server) return;
    const server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops listening (connects get ECONNREFUSED) and resets every open connection. */
  async refuse(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.resetAndDestroy();
    this.#sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stops the proxy for good (the same as {@link refuse}, named for teardown). */
  async stop(): Promise<void> {
    await this.refuse();
  }
}
