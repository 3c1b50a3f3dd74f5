import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';

const TLS_HANDSHAKE = 0x16;

/** The server's certificate (PEM); clients trust it as their CA (`certificate-authority-data`). */
export const SERVER_CERT_PEM = readFileSync(new URL('./tls/server.crt', import.meta.url), 'utf8');
const SERVER_KEY_PEM = readFileSync(new URL('./tls/server.key', import.meta.url), 'utf8');

/** One port, two protocols: the first byte of a connection picks HTTPS (TLS handshake) or plain HTTP. */
export interface DualListener {
  readonly tcp: TcpServer;
  readonly http: HttpServer;
  readonly https: HttpServer;
  /** Destroys every open connection (stop). */
  destroyAll(): void;
}

/**
 * Serves `handler` over HTTPS and plain HTTP on the same port. kubectl needs TLS to send a bearer
 * token; plain HTTP stays available for `fetch`-based tests that know the admin token.
 */
export function createDualListener(handler: RequestListener): DualListener {
  const options = { keepAlive: true, requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 60_000 };
  const http = createHttpServer(options, handler);
  const https = createHttpsServer({ ...options, cert: SERVER_CERT_PEM, key: SERVER_KEY_PEM }, handler);
  const sockets = new Set<Socket>();
  const tcp = createTcpServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('readable', () => {
      const first = socket.read(1) as Buffer | null;
      if (!first) {
        socket.destroy();
        return;
      }
      socket.unshift(first);
      (first[0] === TLS_HANDSHAKE ? https : http).emit('connection', socket);
      socket.resume();
    });
    socket.on('error', () => socket.destroy());
  });
  return {
    tcp,
    http,
    https: https as unknown as HttpServer,
    destroyAll: () => {
      for (const s of sockets) s.destroy();
    },
  };
}
