/**
 * An HTTPS server whose certificate changes without a restart: {@link RotatingHttpsServer.setCredentials}
 * swaps the secure context (Node's `server.setSecureContext`), so connections opened afterwards get the
 * new certificate while open ones finish on the old. Until the first credentials arrive the port is
 * bound (a busy port fails at start) but every TLS handshake fails.
 */
import { createServer } from 'node:https';
import { listen, routeRequests, type BindAddress, type Handler, type RunningServer } from './http-server.ts';

/** A PEM certificate (chain) and its private key. */
export interface TlsCredentials {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Options of {@link startHttpsServer}. */
export interface HttpsServerOptions {
  readonly address: BindAddress;
  readonly routes: Readonly<Record<string, Handler>>;
  /** The first certificate; later ones through `setCredentials`. @default none (handshakes fail until set) */
  readonly credentials?: TlsCredentials;
  /**
   * Time a request may take, headers and body, before the socket is closed; also how long a connection
   * may make no progress at all (a client that stops reading its answer), so that what an answer holds
   * is given back. @default 30_000
   */
  readonly requestTimeoutMs?: number;
}

/** A listening HTTPS server. */
export interface RotatingHttpsServer extends RunningServer {
  /** Serves `credentials` to every connection opened from now on. Throws when the key does not fit the certificate. */
  setCredentials(credentials: TlsCredentials): void;
  /** Whether credentials were set. */
  readonly hasCredentials: boolean;
}

/** Starts the server; see the module doc. */
export async function startHttpsServer(options: HttpsServerOptions): Promise<RotatingHttpsServer> {
  const server = createServer(
    { minVersion: 'TLSv1.2', ...(options.credentials ? { cert: options.credentials.certPem, key: options.credentials.keyPem } : {}) },
    routeRequests(options.routes),
  );
  server.requestTimeout = options.requestTimeoutMs ?? 30_000;
  // Without a listener for 'timeout', Node destroys a socket idle this long in either direction.
  server.timeout = server.requestTimeout;
  server.headersTimeout = Math.min(server.requestTimeout, 10_000);
  server.keepAliveTimeout = 5_000;
  let hasCredentials = options.credentials !== undefined;
  const running = await listen(server, options.address, 'https');
  return {
    ...running,
    get hasCredentials() {
      return hasCredentials;
    },
    setCredentials(credentials) {
      server.setSecureContext({ minVersion: 'TLSv1.2', cert: credentials.certPem, key: credentials.keyPem });
      hasCredentials = true;
    },
  };
}
