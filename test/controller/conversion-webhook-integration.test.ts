/**
 * Two controller replicas' conversion webhooks (certificate manager + HTTPS server) against the test
 * API server, sharing one Secret; replica A leads (its write gate is open), B follows. The certificates
 * run on a FakeClock set in the past, so stepping it walks through a serving renewal and a CA rotation
 * while every certificate stays valid for the real clock that TLS checks. A load of ConversionReviews
 * runs against both replicas throughout, trusting only the caBundle read from the CRD, as
 * kube-apiserver does.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { pino } from 'pino';
import { startConversionWebhook, type RunningConversionWebhook } from '../../src/controller/conversion-webhook-server.ts';
import { gateWrites, KubeClient, KubeConfig, ResourceClient, type KubeObject, type ResourceType } from '../../src/kube/index.ts';
import type { SecretObject } from '../../src/runtime/certificate-manager.ts';
import { CERTIFICATE_SECRET_KEYS } from '../../src/runtime/certificate-plan.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { readCertificate, splitPemBundle } from '../../src/runtime/tls-certificates.ts';
import { WriteGateClosedError } from '../../src/runtime/write-gate.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/index.ts';
import { applyDocuments, CONTROLLER_SA, CONTROLLER_USER } from '../e2e/harness.ts';
import { Testing } from 'cdk8s';
import { OperatorChart } from '../../src/manifests/index.ts';
import { tlsRequest } from '../runtime/tls-client.ts';
import { conversionReview } from './conversion-review-fixture.ts';

const NS = 'backupschedule-system';
const SERVICE = 'backupschedule-operator-webhook';
const SECRET = 'backupschedule-operator-webhook-tls';
const CRD = 'backupschedules.kubelings.dev';
const SECRETS: ResourceType = { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true };
const CRDS: ResourceType = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', kind: 'CustomResourceDefinition', namespaced: false };
const DAY = 86_400_000;
const HOUR = 3_600_000;
const RESYNC = 60_000;

let server: TestApiServer;
let admin: ResourceClient<KubeObject>;
const clock = new FakeClock(Date.now() - 80 * DAY - HOUR);
interface Replica {
  readonly name: string;
  webhook: RunningConversionWebhook;
  leads: boolean;
}
const replicas: Replica[] = [];

async function adminRequest(method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(server.url + path, { method, headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

async function startReplica(name: string, leads: boolean, on: TestApiServer = server, token = on.userToken(name, ['system:masters'])): Promise<Replica> {
  const config = new KubeConfig({ server: on.url, auth: { type: 'token', token } });
  const r: Replica = { name, leads, webhook: undefined as unknown as RunningConversionWebhook };
  const gate = { isOpen: () => r.leads, check: (what: string) => { if (!r.leads) throw new WriteGateClosedError(`${what}: not the leader`); } };
  const client = new KubeClient({ config, beforeWrite: gateWrites(gate) });
  r.webhook = await startConversionWebhook({
    address: { host: '127.0.0.1', port: 0 },
    namespace: NS,
    serviceName: SERVICE,
    secretName: SECRET,
    secrets: new ResourceClient<SecretObject>(client, SECRETS),
    crds: new ResourceClient<KubeObject>(client, CRDS),
    isLeader: () => gate.isOpen(),
    rotation: { caLifetimeMs: 120 * DAY, servingLifetimeMs: 90 * DAY, caOverlapMs: 10 * 60_000 },
    resyncMs: RESYNC,
    clock,
    logger: pino({ level: 'silent' }),
  });
  replicas.push(r);
  return r;
}

const crdCaBundle = async (): Promise<string> => {
  const crd = await admin.get({ name: CRD });
  const b64 = (crd['spec'] as { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } }).conversion?.webhook?.clientConfig?.caBundle ?? '';
  return Buffer.from(b64, 'base64').toString('utf8');
};
const served = (i: number): string | undefined => {
  const pem = replicas[i]?.webhook.certificates.credentials?.certPem;
  return pem ? readCertificate(pem).fingerprint256 : undefined;
};
const secretData = async (): Promise<Record<string, string>> => ((await new ResourceClient<SecretObject>(new KubeClient({ config: new KubeConfig({ server: server.url, auth: { type: 'token', token: server.adminToken } }) }), SECRETS).get({ namespace: NS, name: SECRET })).data ?? {});
const secretPem = async (key: string): Promise<string> => Buffer.from((await secretData())[key] ?? '', 'base64').toString('utf8');

/** Generous: certificates are generated while other suites share the 2 cores. */
const WAIT = { timeout: 10_000, interval: 20 };

/**
 * Waits for `assertion`, stepping the certificates' clock by `stepMs` before each retry, so a timer set
 * late is reached too (a resync for followers; 1 ms for the leader's due timers, time barely moving).
 */
async function afterResyncs(assertion: () => void | Promise<void>, stepMs = RESYNC): Promise<void> {
  await vi.waitFor(async () => {
    try {
      await assertion();
    } catch (err) {
      clock.step(stepMs);
      throw err;
    }
  }, WAIT);
}

const review = conversionReview;

beforeAll(async () => {
  server = await startTestApiServer();
  admin = new ResourceClient<KubeObject>(new KubeClient({ config: new KubeConfig({ server: server.url, auth: { type: 'token', token: server.adminToken } }) }), CRDS);
  await adminRequest('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  // The CRD of dist/ without its webhook conversion (as a release before it had one), until the test sets it.
  const crd = parse(readFileSync('dist/01-customresourcedefinition-backupschedules.kubelings.dev.yaml', 'utf8')) as { spec: Record<string, unknown> };
  await adminRequest('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { ...crd, spec: { ...crd.spec, conversion: { strategy: 'None' } } });
  await startReplica('replica-a', true);
  await startReplica('replica-b', false);
});

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.webhook.close()));
  await server?.stop();
});

const WEBHOOK_CONVERSION = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: SERVICE, namespace: NS, path: '/convert', port: 443 } } } };

describe('conversion webhook on two replicas sharing one certificate Secret', () => {
  it('the leader alone creates the Secret; the CRD without webhook conversion is left alone; both replicas then serve the same certificate', async () => {
    await vi.waitFor(() => expect(served(0)).toBeDefined(), WAIT);
    await afterResyncs(() => expect(served(1)).toBe(served(0)));
    const secretWrites = server.requestLog.entries().filter((e) => e.resource === 'secrets' && e.verb !== 'get');
    expect(secretWrites.map((e) => [e.user, e.verb, e.code])).toEqual([['replica-a', 'create', 201]]);
    expect(server.requestLog.entries().filter((e) => e.user === 'replica-b' && e.verb !== 'get')).toEqual([]);
    expect(await crdCaBundle()).toBe('');
    expect(server.requestLog.entries().filter((e) => e.resource === 'customresourcedefinitions' && e.verb === 'patch')).toEqual([]);
  });

  it('once the CRD has webhook conversion, the leader injects the CA bundle, and a client trusting only it gets converted objects from each replica', async () => {
    await admin.patch({ name: CRD }, { spec: { conversion: WEBHOOK_CONVERSION } });
    await afterResyncs(async () => expect(await crdCaBundle()).toBe(await secretPem(CERTIFICATE_SECRET_KEYS.caBundle)));
    const caPem = await crdCaBundle();
    for (const [i, r] of replicas.entries()) {
      const res = await tlsRequest(`${r.webhook.url}/convert`, { caPem, servername: `${SERVICE}.${NS}.svc`, body: JSON.stringify(review(`uid-${i}`)) });
      expect(res.status).toBe(200);
      const answer = JSON.parse(res.body) as { response: { uid: string; result: { status: string }; convertedObjects: { apiVersion: string; spec: { retention: unknown; source: { type: string } } }[] } };
      expect(answer.response.uid).toBe(`uid-${i}`);
      expect(answer.response.result).toEqual({ status: 'Success' });
      expect(answer.response.convertedObjects).toMatchObject([{ apiVersion: 'kubelings.dev/v1', spec: { retention: { keepLast: 7 }, source: { type: 'Etcd' } } }]);
      expect(res.peerFingerprint).toBe(served(0));
    }
  });

  it('a serving renewal and a CA rotation under load: no request fails, and both replicas end on a certificate of the new CA', async () => {
    let trust = await crdCaBundle();
    let running = true;
    const stats = { ok: 0, failures: [] as string[], fingerprints: new Set<string>() };
    // The same rotation seen by clients of the API server: v1alpha1 reads of an object stored in v1, which
    // the test API server converts through the Service (routed to each replica in turn, as kube-proxy
    // spreads connections) trusting the CRD's caBundle as it reads it at each call.
    await adminRequest('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    await adminRequest('POST', '/apis/kubelings.dev/v1/namespaces/team-a/backupschedules', {
      apiVersion: 'kubelings.dev/v1', kind: 'BackupSchedule', metadata: { name: 'nightly' },
      spec: { schedule: '@daily', source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepDaily: 7 } },
    });
    const apiReads = { ok: 0, failures: [] as string[] };
    const apiLoad = (async () => {
      for (let n = 0; running; n++) {
        server.registerService(NS, SERVICE, 443, new URL(replicas[n % 2]!.webhook.url).host);
        const res = await fetch(`${server.url}/apis/kubelings.dev/v1alpha1/namespaces/team-a/backupschedules/nightly`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
        const body = (await res.json()) as { apiVersion?: string; message?: string };
        if (res.status === 200 && body.apiVersion === 'kubelings.dev/v1alpha1') apiReads.ok++;
        else apiReads.failures.push(`${res.status} ${body.message ?? ''}`);
      }
    })();
    // kube-apiserver reads the caBundle from the CRD; so does this client, every 20 ms.
    const trustLoop = (async () => {
      while (running) {
        trust = await crdCaBundle();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const load = replicas.map(async (r, i) => {
      for (let n = 0; running; n++) {
        try {
          const res = await tlsRequest(`${r.webhook.url}/convert`, { caPem: trust, servername: `${SERVICE}.${NS}.svc`, body: JSON.stringify(review(`${i}-${n}`)) });
          const uid = (JSON.parse(res.body) as { response?: { uid?: string } }).response?.uid;
          if (res.status !== 200 || uid !== `${i}-${n}`) stats.failures.push(`${r.name}: ${res.status} ${res.body.slice(0, 200)}`);
          else stats.ok++;
          stats.fingerprints.add(res.peerFingerprint);
        } catch (err) {
          stats.failures.push(`${r.name}: ${String(err)}`);
        }
      }
    });
    const firstCa = readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.caCert));
    const step = async (ms: number): Promise<void> => {
      clock.step(ms);
      await new Promise((r) => setTimeout(r, 100)); // let requests run between steps
    };
    const bothServe = (fingerprint: string): Promise<void> => afterResyncs(() => expect([served(0), served(1)]).toEqual([fingerprint, fingerprint]));

    // 1. The serving certificate at 2/3 of its 90 days: renewed from the same CA.
    const serving0 = readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.tlsCert));
    await step(serving0.notBefore + (serving0.notAfter - serving0.notBefore) * (2 / 3) - clock.now());
    await afterResyncs(async () => expect(readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.tlsCert)).fingerprint256).not.toBe(serving0.fingerprint256), 1);
    const serving1 = readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.tlsCert));
    await bothServe(serving1.fingerprint256);

    // 2. The CA at 2/3 of its 120 days: the next CA joins the CRD's bundle before it signs anything.
    await step(firstCa.notBefore + (firstCa.notAfter - firstCa.notBefore) * (2 / 3) - clock.now());
    await afterResyncs(async () => expect(splitPemBundle(await crdCaBundle())).toHaveLength(2), 1);
    expect(served(0)).toBe(serving1.fingerprint256);

    // 3. After the overlap the next CA signs a new serving certificate; the old CA stays trusted.
    await step(10 * 60_000);
    await afterResyncs(async () => expect(readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.caCert)).fingerprint256).not.toBe(firstCa.fingerprint256), 1);
    const serving2 = readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.tlsCert));
    expect(serving2.issuer).not.toBe(serving1.issuer);
    await bothServe(serving2.fingerprint256);
    await new Promise((r) => setTimeout(r, 200));

    running = false;
    await Promise.all([...load, trustLoop, apiLoad]);
    expect(stats.failures).toEqual([]);
    expect(stats.ok).toBeGreaterThan(50);
    expect(apiReads.failures).toEqual([]);
    expect(apiReads.ok).toBeGreaterThan(20);
    console.log(`rotation under load: ${stats.ok} reviews and ${apiReads.ok} v1alpha1 reads through the API server answered, ${stats.failures.length + apiReads.failures.length} failed`);
    expect(stats.fingerprints).toEqual(new Set([serving0.fingerprint256, serving1.fingerprint256, serving2.fingerprint256]));
    expect(splitPemBundle(await crdCaBundle()).map((p) => readCertificate(p).fingerprint256)).toEqual([readCertificate(await secretPem(CERTIFICATE_SECRET_KEYS.caCert)).fingerprint256, firstCa.fingerprint256]);
    // Every Secret write came from the leader.
    expect(new Set(server.requestLog.entries().filter((e) => e.resource === 'secrets' && e.verb !== 'get').map((e) => e.user))).toEqual(new Set(['replica-a']));
  });
});

describe("conversion webhook with only the chart's RBAC", () => {
  it("fills the shipped Secret with get + update (no create) and injects the caBundle with get + patch, as the operator's ServiceAccount", async () => {
    const rbacServer = await startTestApiServer();
    try {
      const adminClient = new KubeClient({ config: new KubeConfig({ server: rbacServer.url, auth: { type: 'token', token: rbacServer.adminToken } }) });
      const objects = Testing.synth(new OperatorChart(Testing.app(), 'op')) as KubeObject[];
      // The test API server serves no Services (nothing here routes through one): all but the Service.
      await applyDocuments(adminClient, objects.filter((o) => o.kind !== 'Service'));
      await new ResourceClient<KubeObject>(adminClient, CRDS).patch({ name: CRD }, { spec: { conversion: WEBHOOK_CONVERSION } });
      const token = await rbacServer.serviceAccountToken(CONTROLLER_SA.namespace, CONTROLLER_SA.name);
      const leader = await startReplica('rbac-leader', true, rbacServer, token);
      const follower = await startReplica('rbac-follower', false, rbacServer, token);
      await vi.waitFor(() => expect(leader.webhook.certificates.credentials).toBeDefined(), WAIT);
      await afterResyncs(() => expect(follower.webhook.certificates.credentials?.certPem).toBe(leader.webhook.certificates.credentials?.certPem));
      const crd = await new ResourceClient<KubeObject>(adminClient, CRDS).get({ name: CRD });
      const caBundle = (crd['spec'] as { conversion: { webhook: { clientConfig: { caBundle?: string } } } }).conversion.webhook.clientConfig.caBundle ?? '';
      expect(Buffer.from(caBundle, 'base64').toString()).toBe(leader.webhook.certificates.credentials?.caBundlePem);
      const calls = rbacServer.requestLog.entries().filter((e) => e.user === CONTROLLER_USER).map((e) => `${e.verb} ${e.resource} ${e.code}`);
      expect(new Set(calls)).toEqual(new Set(['get secrets 200', 'update secrets 200', 'get customresourcedefinitions 200', 'patch customresourcedefinitions 200']));
      expect(calls.filter((c) => c.startsWith('update secrets'))).toHaveLength(1);
      const res = await tlsRequest(`${follower.webhook.url}/convert`, { caPem: Buffer.from(caBundle, 'base64').toString(), servername: `${SERVICE}.${NS}.svc`, body: JSON.stringify(review('rbac')) });
      expect(res.status).toBe(200);
    } finally {
      for (const r of replicas.splice(2)) await r.webhook.close();
      await rbacServer.stop();
    }
  });
});
