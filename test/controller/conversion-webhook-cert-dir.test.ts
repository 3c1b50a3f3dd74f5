/**
 * The conversion webhook with its certificate in a directory kept by someone else (cert-manager writing
 * the Secret, kubelet projecting it into the Pod): `startConversionWebhook({ certDir })` against files
 * written exactly as kubelet writes a Secret volume (`..data` symlink swap), a CA and serving certificate
 * generated with src/runtime/tls-certificates.ts, and a client that, like kube-apiserver, trusts only the
 * CA in the bundle. Then the whole operator started from the cert-manager variant's Deployment args with
 * only that variant's RBAC: no Secret nor CRD requests, ready once the files are loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Testing } from 'cdk8s';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseCommandLine } from '../../src/controller/cli-options.ts';
import { startConversionWebhook, type RunningConversionWebhook } from '../../src/controller/conversion-webhook-server.ts';
import { startOperator } from '../../src/controller/operator.ts';
import { KubeClient, KubeConfig, type KubeObject } from '../../src/kube/index.ts';
import { OperatorChart, WEBHOOK_CERT_DIR } from '../../src/manifests/index.ts';
import { webhookDnsNames } from '../../src/pure/names.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { readCertificate } from '../../src/runtime/tls-certificates.ts';
import { startTestApiServer } from '../apiserver/index.ts';
import { applyDocuments, CONTROLLER_SA, CONTROLLER_USER } from '../e2e/harness.ts';
import { caAndServing, KubeletSecretVolume, tlsSecretFiles } from '../runtime/kubelet-secret-volume.ts';
import { tlsRequest } from '../runtime/tls-client.ts';
import { conversionReview } from './conversion-review-fixture.ts';

const NS = 'backupschedule-system';
const SERVICE = 'backupschedule-operator-webhook';
const SERVERNAME = `${SERVICE}.${NS}.svc`;
const POLL = 5_000;
const WAIT = { timeout: 10_000, interval: 20 };


/** One conversion; throws unless it is a 200 answering `uid` with a Success. */
async function convert(url: string, caPem: string, uid: string): Promise<string> {
  const res = await tlsRequest(`${url}/convert`, { caPem, servername: SERVERNAME, body: JSON.stringify(conversionReview(uid)) });
  const answer = JSON.parse(res.body) as { response?: { uid?: string; result?: { status?: string }; convertedObjects?: { apiVersion?: string }[] } };
  if (res.status !== 200 || answer.response?.uid !== uid || answer.response.result?.status !== 'Success' || answer.response.convertedObjects?.[0]?.apiVersion !== 'kubelings.dev/v1') {
    throw new Error(`${uid}: ${res.status} ${res.body.slice(0, 200)}`);
  }
  return res.peerFingerprint;
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'webhook-cert-dir-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('conversion webhook serving a certificate from a kubelet-projected directory', () => {
  let webhook: RunningConversionWebhook | undefined;
  afterAll(async () => webhook?.close());

  it('serves conversions to a client trusting only the CA, then a rotation to a new CA and certificate under continuous load: the new certificate, no failed request', async () => {
    const names = webhookDnsNames(SERVICE, NS);
    const [first, second] = await Promise.all([caAndServing(names, 'first-ca'), caAndServing(names, 'second-ca')]);
    const volume = new KubeletSecretVolume(join(root, 'tls'));
    volume.write(tlsSecretFiles(first));
    const clock = new FakeClock(Date.now());
    webhook = await startConversionWebhook({ address: { host: '127.0.0.1', port: 0 }, certDir: volume.dir, pollMs: POLL, clock, logger: pino({ level: 'silent' }) });
    const hook = webhook;
    await vi.waitFor(() => expect(hook.certificates.credentials).toBeDefined(), WAIT);
    const firstFingerprint = readCertificate(first.serving.certPem).fingerprint256;
    const secondFingerprint = readCertificate(second.serving.certPem).fingerprint256;
    expect(await convert(hook.url, first.ca.certPem, 'before')).toBe(firstFingerprint);
    // The CA cert-manager writes beside the pair (ca.crt) is the one cainjector publishes.
    expect(hook.certificates.credentials?.caBundlePem).toBe(first.ca.certPem);

    // During the rotation the client trusts both CAs, as kube-apiserver does once the caBundle spans
    // the rotation; every request opens a new connection (agent: false), so each one sees what the
    // server serves at that moment.
    const bundle = first.ca.certPem + second.ca.certPem;
    let running = true;
    let reloaded = false;
    const stats = { ok: 0, failures: [] as string[], beforeReload: new Set<string>(), afterReload: new Set<string>() };
    const load = [0, 1, 2].map(async (worker) => {
      for (let n = 0; running; n++) {
        const startedAfterReload = reloaded;
        try {
          const fingerprint = await convert(hook.url, bundle, `${worker}-${n}`);
          (startedAfterReload ? stats.afterReload : stats.beforeReload).add(fingerprint);
          stats.ok++;
        } catch (err) {
          stats.failures.push(String(err));
        }
      }
    });
    const atLeast = (n: number) => vi.waitFor(() => expect(stats.ok).toBeGreaterThanOrEqual(n), WAIT);
    await atLeast(20);
    volume.write(tlsSecretFiles(second));
    await atLeast(stats.ok + 20);
    // Files swapped, not yet polled: still the first certificate.
    expect(hook.certificates.credentials?.certPem).toBe(first.serving.certPem);
    clock.step(POLL);
    await vi.waitFor(() => expect(hook.certificates.credentials?.certPem).toBe(second.serving.certPem), WAIT);
    reloaded = true;
    await atLeast(stats.ok + 20);
    running = false;
    await Promise.all(load);

    expect(stats.failures).toEqual([]);
    // Before the flag was raised: the first certificate (the swap alone changes nothing), or the second
    // for requests started while the reload was being noticed.
    expect(stats.beforeReload.has(firstFingerprint)).toBe(true);
    expect([...stats.beforeReload].filter((f) => f !== firstFingerprint && f !== secondFingerprint)).toEqual([]);
    expect(stats.afterReload).toEqual(new Set([secondFingerprint]));
    // Only the new CA is needed from now on.
    expect(await convert(hook.url, second.ca.certPem, 'after')).toBe(secondFingerprint);
    await expect(convert(hook.url, first.ca.certPem, 'old-trust')).rejects.toThrow();
    console.log(`cert-dir rotation under load: ${stats.ok} reviews answered, ${stats.failures.length} failed`);
  }, 30_000);
});

describe("the operator from the cert-manager variant's Deployment, with only that variant's RBAC", () => {
  it('serves conversions from the mounted files, is ready once they are loaded, and never asks for a Secret or the CRD', async () => {
    const server = await startTestApiServer();
    const logLines: string[] = [];
    const operators: Awaited<ReturnType<typeof startOperator>>[] = [];
    try {
      const objects = Testing.synth(new OperatorChart(Testing.app(), 'op', { certificates: 'cert-manager' })) as KubeObject[];
      const admin = new KubeClient({ config: new KubeConfig({ server: server.url, auth: { type: 'token', token: server.adminToken } }) });
      // cert-manager's kinds are not served by the test API server (nothing issues there), nor Services.
      await applyDocuments(admin, objects.filter((o) => !['Issuer', 'Certificate', 'Service'].includes(o.kind ?? '')));
      const deployment = objects.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: { containers: { args: string[] }[] } } } };
      const args = deployment.spec.template.spec.containers[0]!.args;
      expect(args).toContain(`--conversion-webhook-cert-dir=${WEBHOOK_CERT_DIR}`);
      // The Deployment's flags, with this machine's directory and free ports.
      const local = args
        .map((a) => (a === `--conversion-webhook-cert-dir=${WEBHOOK_CERT_DIR}` ? `--conversion-webhook-cert-dir=${join(root, 'operator-tls')}` : a))
        .map((a) => a.replace(/^(--(?:metrics|health-probe|conversion-webhook)-bind-address)=:\d+$/, '$1=127.0.0.1:0'));
      const command = parseCommandLine(local);
      if (command.kind !== 'run') throw new Error('expected run');
      const volume = new KubeletSecretVolume(join(root, 'operator-tls'));
      const token = await server.serviceAccountToken(CONTROLLER_SA.namespace, CONTROLLER_SA.name);
      const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
      const start = async () => {
        const operator = await startOperator(command.options, { config: new KubeConfig({ server: server.url, auth: { type: 'token', token } }), inCluster: false, logger });
        operators.push(operator);
        return { operator, readyz: async () => (await fetch(`${operator.healthUrl}/readyz?verbose`)).text() };
      };
      // Before cert-manager issued (the Pod would not even start without the Secret; an empty directory here).
      const early = await start();
      await vi.waitFor(async () => expect(await early.readyz()).toContain('[-]conversion-webhook-certificate failed: no valid serving certificate loaded from'), WAIT);
      await early.operator.shutdown();
      // cert-manager issued, kubelet projected: a replica starting now is ready once it read the files.
      const pair = await caAndServing(webhookDnsNames(SERVICE, NS));
      volume.write(tlsSecretFiles(pair));
      const { operator, readyz } = await start();
      await vi.waitFor(async () => expect(await readyz()).toContain('[+]conversion-webhook-certificate ok'), WAIT);
      expect(await convert(operator.conversionWebhookUrl ?? '', pair.ca.certPem, 'operator')).toBe(readCertificate(pair.serving.certPem).fingerprint256);
      const calls = server.requestLog.entries().filter((e) => e.user === CONTROLLER_USER);
      expect(calls.filter((e) => e.code === 403).map((e) => `${e.verb} ${e.resource}`)).toEqual([]);
      expect(calls.filter((e) => e.resource === 'secrets' || e.resource === 'customresourcedefinitions')).toEqual([]);
      expect(calls.some((e) => e.resource === 'leases')).toBe(true);
      const messages = logLines.map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(messages).toContain('serving certificate loaded from files');
      expect(messages.filter((m) => /webhook certificates written|CA bundle injected|certificate sync failed/.test(m))).toEqual([]);
    } finally {
      for (const operator of operators) await operator.shutdown();
      await server.stop();
    }
  }, 30_000);
});
