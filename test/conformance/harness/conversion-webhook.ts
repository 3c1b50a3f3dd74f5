/**
 * A conversion webhook the conformance suite runs itself: HTTPS with a CA and serving certificate made
 * here with openssl, converting the suite's `Gadget` between v1alpha1 (`spec.color`) and v1
 * (`spec.paint.color`). A test switches its behaviour (`mode`) to make it fail the ways kube must
 * report, and reads the reviews it received.
 *
 * On the test server it listens on 127.0.0.1. A real cluster cannot reach loopback: set
 * `CONFORMANCE_WEBHOOK_HOST` to an address of this machine the cluster's apiserver can reach (kind:
 * the docker bridge gateway, e.g. 172.18.0.1); the certificate then names that address.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How the webhook answers. */
export type WebhookMode =
  | 'convert'
  /** `result.status: Failure` with a message. */
  | 'fail'
  /** A uid other than the request's. */
  | 'wrong-uid'
  /** No converted objects. */
  | 'drop-objects'
  /** Renames the object (kube refuses metadata changes other than labels and annotations). */
  | 'rename';

/** The message of the `fail` mode's Failed result. */
export const WEBHOOK_FAILURE_MESSAGE = 'gadget conversion refused by the test webhook';

/** One review the webhook received. */
export interface ReceivedReview {
  readonly apiVersion: string;
  readonly uid: string;
  readonly desiredAPIVersion: string;
  readonly objects: readonly Record<string, unknown>[];
}

/** A running webhook. */
export interface ConversionWebhook {
  /** `https://<host>:<port>/convert`. */
  readonly url: string;
  /** base64 PEM of the CA, for `caBundle`. */
  readonly caBundle: string;
  readonly port: number;
  mode: WebhookMode;
  readonly reviews: ReceivedReview[];
  /** Holds every answer until the returned function is called (to let another write in meanwhile). */
  hold(): () => void;
  /** Stops listening (a later call to it is refused: a webhook that is down). */
  stop(): Promise<void>;
}

type Obj = Record<string, unknown> & { apiVersion: string; spec?: Record<string, unknown>; metadata?: Record<string, unknown> };

/** v1alpha1 `spec.color` ↔ v1 `spec.paint.color`; a label records which way it went. */
export function convertGadget(obj: Obj, desired: string): Obj {
  const [, to] = desired.split('/');
  const spec = { ...(obj.spec ?? {}) };
  if (to === 'v1' && 'color' in spec) {
    spec['paint'] = { color: spec['color'] };
    delete spec['color'];
  } else if (to === 'v1alpha1' && typeof spec['paint'] === 'object' && spec['paint'] !== null) {
    spec['color'] = (spec['paint'] as Record<string, unknown>)['color'];
    delete spec['paint'];
  }
  const metadata = { ...(obj.metadata ?? {}), labels: { ...((obj.metadata?.['labels'] as Record<string, string> | undefined) ?? {}), 'converted-to': to ?? '' } };
  return { ...obj, apiVersion: desired, metadata, spec };
}

async function makeCerts(dir: string, host: string): Promise<{ key: string; cert: string; ca: string }> {
  const p = (f: string): string => join(dir, f);
  const ossl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir });
  await ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=conformance-webhook-ca', '-keyout', p('ca.key'), '-out', p('ca.crt'));
  writeFileSync(p('san.ext'), `subjectAltName=${isIP(host) ? 'IP' : 'DNS'}:${host}\nextendedKeyUsage=serverAuth\n`);
  await ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=conformance-webhook', '-keyout', p('tls.key'), '-out', p('tls.csr'));
  await ossl('x509', '-req', '-in', p('tls.csr'), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', p('san.ext'), '-out', p('tls.crt'));
  return { key: readFileSync(p('tls.key'), 'utf8'), cert: readFileSync(p('tls.crt'), 'utf8'), ca: readFileSync(p('ca.crt'), 'utf8') };
}

/** The address the webhook is reached at: `CONFORMANCE_WEBHOOK_HOST`, else loopback. */
export function webhookHost(): string | undefined {
  return process.env.CONFORMANCE_WEBHOOK_HOST;
}

/** Starts the webhook with a certificate for `host` (`127.0.0.1` unless given). */
export async function startConversionWebhook(host = webhookHost() ?? '127.0.0.1'): Promise<ConversionWebhook> {
  const dir = mkdtempSync(join(tmpdir(), 'conv-webhook-'));
  const tls = await makeCerts(dir, host);
  rmSync(dir, { recursive: true, force: true });
  const reviews: ReceivedReview[] = [];
  const hook = { mode: 'convert' as WebhookMode, gate: Promise.resolve() };
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; request: { uid: string; desiredAPIVersion: string; objects: Obj[] } };
      const { uid, desiredAPIVersion, objects } = review.request;
      reviews.push({ apiVersion: review.apiVersion, uid, desiredAPIVersion, objects });
      await hook.gate;
      const ok = hook.mode !== 'fail';
      let converted = objects.map((o) => convertGadget(o, desiredAPIVersion));
      if (hook.mode === 'drop-objects') converted = [];
      if (hook.mode === 'rename') converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, name: `${String(o.metadata?.['name'])}-renamed` } }));
      const response = {
        uid: hook.mode === 'wrong-uid' ? `${uid}-other` : uid,
        result: ok ? { status: 'Success' } : { status: 'Failure', message: WEBHOOK_FAILURE_MESSAGE },
        ...(ok ? { convertedObjects: converted } : {}),
      };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
    });
  });
  // An IP the certificate names is an address of this machine: listen there only. A name is either one
  // the test server routes to loopback, or (CONFORMANCE_WEBHOOK_HOST) this machine as a remote
  // apiserver resolves it, where only every interface is sure to be reached.
  const bindHost = isIP(host) ? host : webhookHost() === host ? '0.0.0.0' : '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, bindHost, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}/convert`,
    caBundle: Buffer.from(tls.ca).toString('base64'),
    port,
    get mode() {
      return hook.mode;
    },
    set mode(m: WebhookMode) {
      hook.mode = m;
    },
    reviews,
    hold: () => {
      let release = (): void => {};
      hook.gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        hook.gate = Promise.resolve();
        release();
      };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
