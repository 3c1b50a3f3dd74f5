/**
 * The HTTP side of a conversion webhook call: where `clientConfig` points (a URL, or a Service the
 * test maps to a loopback address since there is no cluster DNS), TLS verified with `caBundle`
 * (the system roots without one), and a POST of the review with kube's 30 s timeout. Certificates
 * are read as Go's x509 reads them, stricter than Node: a name Go cannot parse (0.2.0's CA, a
 * PrintableString with '@') fails the handshake, and such a CA in the bundle is skipped.
 */
import { Agent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { splitPemBundle } from '../../../src/runtime/tls-certificates.ts';
import { goX509NameProblem } from '../../../src/runtime/x509-names.ts';

/** `spec.conversion.webhook.clientConfig`. */
export interface WebhookClientConfig {
  readonly url?: string;
  readonly service?: { readonly namespace?: string; readonly name?: string; readonly path?: string; readonly port?: number };
  /** base64 PEM bundle. */
  readonly caBundle?: string;
}

/** Where a Service `namespace/name:port` is reached: `host:port` on this machine (what cluster DNS and kube-proxy would give). */
export type ServiceResolver = (namespace: string, name: string, port: number) => string | undefined;

/** The URL to POST to and the TLS name the certificate must carry. */
export interface WebhookTarget {
  /** What kube shows in errors: `https://<name>.<namespace>.svc:<port><path>` for a service. */
  readonly displayUrl: string;
  /** Where the connection actually goes. */
  readonly connectUrl: URL;
  /** SNI and the name checked against the certificate. */
  readonly serverName: string;
}

/** Resolves a clientConfig, or explains why it cannot be reached (kube: `service "x" not found`-like). */
export function resolveTarget(config: WebhookClientConfig, resolve: ServiceResolver): WebhookTarget | Error {
  if (config.url) {
    const url = new URL(config.url);
    return { displayUrl: config.url, connectUrl: url, serverName: url.hostname };
  }
  const svc = config.service;
  if (!svc?.name || !svc.namespace) return new Error('clientConfig has neither url nor service');
  const port = svc.port ?? 443;
  const path = svc.path ?? '';
  const host = `${svc.name}.${svc.namespace}.svc`;
  const displayUrl = `https://${host}:${port}${path}`;
  const address = resolve(svc.namespace, svc.name, port);
  if (!address) return new Error(`Post "${displayUrl}?timeout=30s": service "${svc.name}" not found`);
  return { displayUrl, connectUrl: new URL(`https://${address}${path}`), serverName: host };
}

/** Why Go's TLS client (kube-apiserver's) would refuse the certificates the server presented, if it would. */
function goRefusal(cert: PeerCertificate): Error | undefined {
  const pem = `-----BEGIN CERTIFICATE-----\n${cert.raw.toString('base64')}\n-----END CERTIFICATE-----\n`;
  const problem = goX509NameProblem(pem);
  return problem ? new Error(`tls: failed to parse certificate from server: x509: the certificate: ${problem}`) : undefined;
}

/** A PEM bundle as Go's `CertPool.AppendCertsFromPEM` takes it: certificates it cannot parse are skipped. */
const goCertPool = (bundle: string): string[] => splitPemBundle(bundle).filter((pem) => goX509NameProblem(pem) === undefined);

/** Outcome of one POST: the decoded JSON answer, or the transport/HTTP error text. */
export type PostOutcome = { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly error: string };

/**
 * Keep-alive connections per webhook endpoint and CA (kube's webhook client manager caches its REST
 * clients likewise), so a conversion costs no TLS handshake once warm.
 */
export class WebhookAgents {
  readonly #agents = new Map<string, Agent>();

  /** The agent for a target trusted with `caBundle` (the system roots without one). */
  get(target: WebhookTarget, caBundle: string | undefined): Agent {
    const key = `${target.connectUrl.host}|${target.serverName}|${caBundle ?? ''}`;
    let agent = this.#agents.get(key);
    if (!agent) {
      agent = new Agent({
        keepAlive: true,
        // SNI carries DNS names only (RFC 6066); the identity check below covers IP SANs.
        ...(isIP(target.serverName) ? {} : { servername: target.serverName }),
        ...(caBundle ? { ca: goCertPool(Buffer.from(caBundle, 'base64').toString('utf8')) } : {}),
        // The certificate must name the service (or the URL's host), even though we dial loopback.
        checkServerIdentity: (_host, cert) => goRefusal(cert) ?? checkServerIdentity(target.serverName, cert),
      });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** Closes every connection. */
  destroy(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}

/** POSTs `body` as JSON to the target through `agent` (timeout 30 s, as kube's webhook client). */
export function postReview(target: WebhookTarget, agent: Agent, body: unknown, timeoutMs = 30_000): Promise<PostOutcome> {
  const payload = Buffer.from(JSON.stringify(body));
  const shown = `Post "${target.displayUrl}?timeout=30s"`;
  const url = new URL(target.connectUrl);
  url.searchParams.set('timeout', '30s');
  return new Promise((resolve) => {
    const req = httpsRequest(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, */*', 'Content-Length': payload.length },
        agent,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) return resolve({ ok: false, error: `an error on the server (${JSON.stringify(text.slice(0, 200))}) has prevented the request from succeeding` });
          try {
            resolve({ ok: true, body: JSON.parse(text) as unknown });
          } catch (err) {
            resolve({ ok: false, error: `${shown}: invalid JSON in the answer: ${(err as Error).message}` });
          }
        });
        res.on('error', (err) => resolve({ ok: false, error: `${shown}: ${err.message}` }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', (err) => resolve({ ok: false, error: `${shown}: ${err.message}` }));
    req.end(payload);
  });
}
