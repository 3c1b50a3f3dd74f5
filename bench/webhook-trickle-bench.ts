/**
 * `npm run bench:webhook-trickle`: the conversion webhook under trickled uploads (issue 41, HIGH 2).
 * The controller bundle, with the image's V8 flags and the webhook on, against the test API server;
 * `--clients` trickling clients, each from its own loopback address, POST reviews declaring
 * `--declared-mib` MiB and send a byte every `--interval-ms` ms, reconnecting when cut; meanwhile a
 * client-go-like client POSTs small v1alpha1 ConversionReviews (one schedule, as kube-apiserver sends
 * when a client reads or writes one) one after another for `--seconds`, retrying a 429 after its
 * Retry-After up to 10 times as client-go's REST client does. Prints the small reviews' latency (first
 * try to final answer: p50/p99/max), how many failed, and what the trickling clients were answered.
 *
 * Target: small reviews within 1 s p99 with 4 trickling clients declaring 32 MiB, a byte every 2 s.
 *
 * Options: `--seconds N` (default 60), `--clients N` (4), `--declared-mib N` (32), `--interval-ms N`
 * (2000), `--bundle PATH` (another build of the controller, e.g. an older release's; default this checkout's).
 */
import { request, type RequestOptions } from 'node:https';
import { parseArgs } from 'node:util';
import type { KubeObject } from '../src/kube/object.ts';
import { WEBHOOK_SECRET_NAME, WEBHOOK_SERVICE_NAME } from '../src/manifests/index.ts';
import { buildBundle, clientFor, ControllerProcess, CONTROLLER_SA, startCluster, WEBHOOK_FLAG } from '../test/e2e/harness.ts';
import { quantile } from './stats.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    clients: { type: 'string', default: '4' },
    'declared-mib': { type: 'string', default: '32' },
    'interval-ms': { type: 'string', default: '2000' },
    bundle: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
const DECLARED = Math.floor(Number(values['declared-mib']) * 2 ** 20) - 1;
const INTERVAL_MS = Number(values['interval-ms']);

/** A small v1alpha1 review, as kube-apiserver sends for one schedule. */
const smallReview = (uid: string): Buffer =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid,
        desiredAPIVersion: 'kubelings.dev/v1',
        objects: [{ apiVersion: 'kubelings.dev/v1alpha1', kind: 'BackupSchedule', metadata: { name: 'nightly', namespace: 'team-a', uid: 'u-1', resourceVersion: '1', generation: 1 }, spec: { schedule: '0 2 * * *', source: { etcd: { endpoints: ['https://etcd-0.etcd:2379'], tlsSecretName: 'etcd-tls' } }, destination: { persistentVolumeClaim: { claimName: 'backups' } }, retention: { keepLast: 7 } } }],
      },
    }),
  );

const cluster = await startCluster();
const bundle = values.bundle ?? (await buildBundle());
const controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--log-level=info', WEBHOOK_FLAG]);
try {
  await controller.waitForLog('the webhook certificate', (r) => r['msg'] === 'serving certificate loaded' || r['msg'] === 'webhook certificates written', 60_000);
  const url = String((await controller.waitForLog('the webhook to listen', (r) => r['msg'] === 'conversion webhook listening', 60_000))['url']);
  let caPem = '';
  for (let i = 0; i < 100 && !caPem; i++) {
    const secret = await clientFor<KubeObject & { data?: Record<string, string> }>(cluster.admin, 'Secret').get({ namespace: CONTROLLER_SA.namespace, name: WEBHOOK_SECRET_NAME });
    caPem = Buffer.from(secret.data?.['ca-bundle.crt'] ?? '', 'base64').toString();
    if (!caPem) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const tls: RequestOptions = { method: 'POST', ca: caPem, servername: `${WEBHOOK_SERVICE_NAME}.${CONTROLLER_SA.namespace}.svc`, agent: false };

  let running = true;
  const trickled: Record<string, number> = {};
  const trickler = async (localAddress: string): Promise<void> => {
    while (running) {
      const status = await new Promise<string>((resolve) => {
        const req = request(url, { ...tls, localAddress, headers: { 'Content-Type': 'application/json', 'Content-Length': DECLARED } }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
          res.on('error', () => resolve('reset'));
        });
        req.on('error', () => resolve('reset'));
        req.write('{');
        const drip = setInterval(() => req.write('x'), INTERVAL_MS);
        req.on('close', () => clearInterval(drip));
      });
      trickled[status] = (trickled[status] ?? 0) + 1;
    }
  };
  const tricklers = Array.from({ length: CLIENTS }, (_, i) => trickler(`127.0.0.${i + 2}`));
  // Let the trickling uploads start and hold what they will before measuring.
  await new Promise((resolve) => setTimeout(resolve, 1_000));

  /** One client-go-like call: retries a 429 after its Retry-After, at most 10 times; the final status. */
  const call = async (uid: string): Promise<number> => {
    const body = smallReview(uid);
    for (let attempt = 0; ; attempt++) {
      const { status, retryAfter } = await new Promise<{ status: number; retryAfter: number }>((resolve) => {
        const req = request(url, { ...tls, localAddress: '127.0.0.1', headers: { 'Content-Type': 'application/json', 'Content-Length': body.length } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers['retry-after'] ?? 0) }));
        });
        req.on('error', () => resolve({ status: 0, retryAfter: 0 }));
        req.end(body);
      });
      if (status !== 429 || attempt === 10) return status;
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    }
  };
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  const until = performance.now() + SECONDS * 1000;
  for (let i = 0; performance.now() < until; i++) {
    const started = performance.now();
    const status = await call(`small-${i}`);
    latencies.push(performance.now() - started);
    outcomes[status] = (outcomes[status] ?? 0) + 1;
  }
  running = false;
  await Promise.race([Promise.all(tricklers), new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS + 10_000))]);
  const ms = (q: number): string => quantile(latencies, q).toFixed(1);
  console.log(`webhook under ${CLIENTS} trickling clients (declaring ${values['declared-mib']} MiB, a byte every ${INTERVAL_MS} ms) for ${SECONDS} s:`);
  console.log(`  small reviews: ${latencies.length}, final status ${JSON.stringify(outcomes)}; latency (first try to answer) p50 ${ms(0.5)} ms, p99 ${ms(0.99)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
  console.log(`  trickled uploads answered: ${JSON.stringify(trickled)}`);
} finally {
  await controller.stop();
  await cluster.stop();
}
process.exit(0);
