/**
 * `npm run bench:conversion`: what the conversion webhook adds per object, at `--objects` objects per
 * ConversionReview (default 1,000, target ≤ 1 ms p99 per object). Two figures:
 * - per review: parse the request body, handleConversionReview, serialize the answer (the webhook's whole
 *   work short of TLS and the socket), divided by the object count; p50/p99 over `--reviews` reviews;
 * - per object: convertBackupSchedule alone, each call timed; p50/p99/max over every object converted;
 * - per object over HTTPS: the same reviews POSTed to the webhook's server (`/convert` on the HTTPS server
 *   of src/runtime, a certificate from src/runtime/tls-certificates.ts, one keep-alive TLS connection as
 *   kube-apiserver keeps), request to last byte of the answer, divided by the object count.
 * Reviews alternate direction (v1alpha1 → v1, v1 → v1alpha1); objects carry status with conditions, and
 * half of the v1 ones grandfather-father-son rules (so the annotation path is exercised).
 *
 * Options: `--objects N` (default 1000), `--reviews N` (default 200).
 */
import { Agent, request } from 'node:https';
import { parseArgs } from 'node:util';
import { conversionWebhookHandler, CONVERSION_WEBHOOK_PATH } from '../src/controller/conversion-webhook.ts';
import { startHttpsServer } from '../src/runtime/https-server.ts';
import { createCertificateAuthority, issueServingCertificate } from '../src/runtime/tls-certificates.ts';
import { GROUP_VERSION, GROUP_VERSION_V1 } from '../src/api/index.ts';
import { convertBackupSchedule, handleConversionReview, toV1 } from '../src/conversion/index.ts';
import type { BackupSchedule } from '../src/api/index.ts';
import { quantile } from './stats.ts';

const { values } = parseArgs({ options: { objects: { type: 'string', default: '1000' }, reviews: { type: 'string', default: '200' } } });
const N = Number(values.objects);
const REVIEWS = Number(values.reviews);

/** The i-th v1alpha1 schedule as the API server would send it: defaulted, with metadata and status. */
function alpha(i: number): Record<string, unknown> {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'BackupSchedule',
    metadata: {
      name: `backup-${i}`,
      namespace: `team-${i % 40}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i),
      generation: 1 + (i % 5),
      creationTimestamp: '2026-11-01T00:00:00Z',
      labels: { team: `team-${i % 40}` },
      annotations: { 'example.com/owner': `owner-${i % 7}` },
    },
    spec: {
      schedule: `${i % 60} ${i % 24} * * *`,
      timeZone: 'Europe/Berlin',
      suspend: false,
      source: i % 2 === 0 ? { etcd: { endpoints: [`https://etcd-${i % 3}.etcd:2379`], tlsSecretName: 'etcd-tls' } } : { persistentVolumeClaim: { claimName: `data-${i}` } },
      destination: { persistentVolumeClaim: { claimName: 'backups', path: `team/${i}` } },
      retention: { keepLast: 7 },
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      backoffLimit: 3,
    },
    status: {
      observedGeneration: 1 + (i % 5),
      cronJobName: `backup-${i}`,
      lastScheduleTime: '2026-11-30T02:00:00Z',
      conditions: [{ type: 'Ready', status: 'True', reason: 'CronJobReady', message: 'the CronJob matches the spec', observedGeneration: 1, lastTransitionTime: '2026-11-01T00:00:05Z' }],
    },
  };
}

/** The i-th v1 schedule: the v1alpha1 one converted, every other one with grandfather-father-son rules. */
function v1(i: number): Record<string, unknown> {
  const object = toV1(alpha(i) as unknown as BackupSchedule) as unknown as Record<string, any>;
  if (i % 2 === 0) object['spec'] = { ...object['spec'], retention: { keepLast: 3, keepDaily: 7, keepWeekly: 4, keepMonthly: 12 } };
  return object;
}

const bodies = [GROUP_VERSION_V1, GROUP_VERSION].map((desired) =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'bench', desiredAPIVersion: desired, objects: Array.from({ length: N }, (_, i) => (desired === GROUP_VERSION_V1 ? alpha(i) : v1(i))) },
  }),
);

const perReview: number[] = [];
for (let r = 0; r < REVIEWS + 20; r++) {
  const started = performance.now();
  const answer = handleConversionReview(JSON.parse(bodies[r % 2]!));
  const out = JSON.stringify(answer);
  const ms = performance.now() - started;
  if (answer.response?.result.status !== 'Success' || answer.response.convertedObjects.length !== N || out.length === 0) throw new Error(`review failed: ${JSON.stringify(answer.response?.result)}`);
  if (r >= 20) perReview.push(ms / N); // the first 20 warm the JIT
}

const perObject: number[] = [];
const parsed = bodies.map((b) => JSON.parse(b) as { request: { desiredAPIVersion: string; objects: Record<string, unknown>[] } });
for (let r = 0; r < REVIEWS; r++) {
  const { desiredAPIVersion, objects } = parsed[r % 2]!.request;
  for (const object of objects) {
    const started = performance.now();
    convertBackupSchedule(object, desiredAPIVersion);
    perObject.push(performance.now() - started);
  }
}

const now = Date.now();
const ca = await createCertificateAuthority({ commonName: 'bench-ca', notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
const serving = await issueServingCertificate(ca, { commonName: 'bench', dnsNames: ['bench.ns.svc'], notBefore: now - 3_600_000, notAfter: now + 86_400_000 });
const server = await startHttpsServer({ address: { host: '127.0.0.1', port: 0 }, routes: { [CONVERSION_WEBHOOK_PATH]: conversionWebhookHandler() }, credentials: serving });
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.certPem, servername: 'bench.ns.svc' });
const post = (body: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(`${server.url}${CONVERSION_WEBHOOK_PATH}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    });
    req.on('error', reject);
    req.end(body);
  });
const overHttps: number[] = [];
for (let r = 0; r < REVIEWS + 20; r++) {
  const ms = await post(bodies[r % 2]!);
  if (r >= 20) overHttps.push(ms / N);
}
agent.destroy();
await server.close();

const us = (ms: number): string => `${(ms * 1000).toFixed(1)} µs`;
const p99 = quantile(perReview, 0.99);
console.log(`conversion webhook, ${N} objects per ConversionReview, ${REVIEWS} reviews (alternating v1alpha1→v1 and v1→v1alpha1):`);
console.log(`  per object, whole review (parse + convert + serialize) / ${N}: p50 ${us(quantile(perReview, 0.5))}, p99 ${us(p99)}`);
console.log(`  per object, convertBackupSchedule alone (${perObject.length.toLocaleString('en')} calls): p50 ${us(quantile(perObject, 0.5))}, p99 ${us(quantile(perObject, 0.99))}, max ${us(perObject.reduce((a, b) => Math.max(a, b), 0))}`);
console.log(`  per object over HTTPS (TLS keep-alive, /convert, request to answer) / ${N}: p50 ${us(quantile(overHttps, 0.5))}, p99 ${us(quantile(overHttps, 0.99))}`);
console.log(`  target ≤ 1 ms p99 per object: ${p99 <= 1 && quantile(overHttps, 0.99) <= 1 ? 'met' : 'MISSED'}`);
