/**
 * An HTTPS server whose certificate changes without a restart: {@link RotatingHttpsServer.setCredentials}
 * swaps the secure context (Node's `server.setSecureContext`), so connections opened afterwards get the
 * new certificate while open ones finish on the old. Until the first credentials arrive the port is
 * bound (a busy port fails at start) but every TLS handshake fails.
 */
import { createServer } from 'node:https';
import { applyServerLimits, DEFAULT_SERVER_LIMITS, listen, routeRequests, serverOptions, type BindAddress, type Handler, type RunningServer, type ServerLimits } from './http-server.ts';

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
  /** Connections, timeouts (a client that stops reading its answer gives back what the answer holds). @default DEFAULT_SERVER_LIMITS */
  readonly limits?: ServerLimits;
  /** Time a connection may take to complete its TLS handshake (Node's default is 120 s). @default 10_000 */
  readonly handshakeTimeoutMs?: number;
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
  const limits = options.limits ?? DEFAULT_SERVER_LIMITS;
  const server = createServer(
    {
      ...serverOptions(limits),
      minVersion: 'TLSv1.2',
      handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
      ...(options.credentials ? { cert: options.credentials.certPem, key: options.credentials.keyPem } : {}),
    },
    routeRequests(options.routes, { writeTimeoutMs: limits.writeTimeoutMs }),
  );
  applyServerLimits(server, limits);
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
