/**
 * The conversion webhook under a memory attack (issue 30, HIGH 1): anyone who reaches port 9443 may POST
 * any body. Three concurrent 31.5 MiB ConversionReviews of 254,000 tiny objects, repeated, took the
 * controller from 90 to 530 MiB RSS and then out of heap. The controller bundle, with the image's V8
 * flags and the webhook on, must stay under the Deployment's memory limit with margin, stay alive, keep
 * answering (200 or 429 with Retry-After, which kube-apiserver's client retries), and keep reconciling:
 * schedules created during the attack converge. A legitimate large review (10,000 stored schedules,
 * managedFields included, as kube-apiserver sends a whole LIST in one review) still converts.
 * The peak RSS is the kernel's high-water mark (`VmHWM`), read before the process is stopped.
 */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/kube/object.ts';
import { WEBHOOK_SECRET_NAME, WEBHOOK_SERVICE_NAME } from '../../src/manifests/index.ts';
import { buildBundle, clientFor, ControllerProcess, CONTROLLER_SA, startCluster, waitFor, WEBHOOK_FLAG, type Cluster } from './harness.ts';
import { api, readyOf, scheduleManifest } from './scenarios.ts';
import { memoryLimitBytes, peakRssBytes } from './process-memory.ts';
import { attackReview, storedSchedulesReview } from './webhook-reviews.ts';

const LIMIT = memoryLimitBytes();
/** The margin the peak must keep under the limit: a fifth of it. */
const MARGIN = 0.8;
const MiB = 2 ** 20;
let cluster: Cluster;
let bundle: string;
let controller: ControllerProcess;
let webhook: { url: string; caPem: string };

/** POSTs `body` to the webhook over TLS as kube-apiserver does; resolves with the status, Retry-After and body. */
function post(body: Buffer): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(webhook.url, {
      method: 'POST',
      ca: webhook.caPem,
      servername: `${WEBHOOK_SERVICE_NAME}.${CONTROLLER_SA.namespace}.svc`,
      agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // The server may refuse before reading the body (429) and close: that is an answer, not a failure.
    req.on('error', reject);
    req.end(body);
  });
}

/** Creates `n` schedules in `namespace` and resolves with the milliseconds until all are Ready. */
async function timeToConverge(namespace: string, n: number): Promise<number> {
  const k = api(cluster.admin);
  await k.createNamespace(namespace);
  const started = Date.now();
  for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, (_, j) => k.schedules.create(scheduleManifest(namespace, `s-${i + j}`) as never)));
  const died = controller.exited().then((code) => Promise.reject(new Error(`the controller exited with ${code}:\n${controller.lines.slice(-15).join('\n')}`)));
  died.catch(() => undefined);
  await Promise.race([
    waitFor(`${n} schedules Ready in ${namespace}`, async () => {
      const list = await k.schedules.list({ namespace });
      return list.items.length === n && list.items.every((s) => readyOf(s)?.status === 'True');
    }, 90_000, 200),
    died,
  ]);
  return Date.now() - started;
}

beforeAll(async () => {
  [bundle, cluster] = await Promise.all([buildBundle(), startCluster()]);
  controller = ControllerProcess.start(bundle, ['--kubeconfig', cluster.controllerKubeconfig, '--concurrency=4', '--log-level=info', WEBHOOK_FLAG]);
  await controller.waitForLog('the webhook certificate', (r) => r['msg'] === 'serving certificate loaded' || r['msg'] === 'webhook certificates written', 30_000);
  const url = String((await controller.waitForLog('the webhook to listen', (r) => r['msg'] === 'conversion webhook listening'))['url']);
  const secret = await clientFor<KubeObject & { data?: Record<string, string> }>(cluster.admin, 'Secret').get({ namespace: CONTROLLER_SA.namespace, name: WEBHOOK_SECRET_NAME });
  webhook = { url, caPem: Buffer.from(secret.data?.['ca-bundle.crt'] ?? '', 'base64').toString() };
  await controller.waitForLog('workers to start', (r) => r['msg'] === 'starting workers');
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await cluster?.stop();
});

describe('the conversion webhook under attack', () => {
  it('stays under the memory limit, keeps answering, and reconciles keep converging', async () => {
    const calm = await timeToConverge('calm', 100);
    const attack = attackReview();
    expect(attack.objects).toBe(254_000);
    expect(attack.body.length).toBeLessThanOrEqual(31.5 * MiB);
    const statuses: number[] = [];
    const unexpected: string[] = [];
    let attacking = true;
    const attacker = async (): Promise<void> => {
      for (let round = 0; attacking || round < 3; round++) {
        const res = await post(attack.body).catch((err: Error) => ({ status: 0, retryAfter: undefined, body: err.message }));
        statuses.push(res.status);
        if (res.status === 200 || (res.status === 429 && res.retryAfter === '1')) continue;
        unexpected.push(`${res.status} (Retry-After ${res.retryAfter}): ${res.body.slice(0, 200)}`);
      }
    };
    const attackers = [attacker(), attacker(), attacker()];
    const underAttack = await timeToConverge('attacked', 100).finally(() => (attacking = false));
    await Promise.all(attackers);
    const peak = peakRssBytes(controller.child.pid ?? 0);
    console.info(`time to converge 100 schedules: ${calm} ms calm, ${underAttack} ms under attack; ${statuses.length} attack reviews answered ${JSON.stringify(Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length])))}; peak RSS ${(peak / MiB).toFixed(0)} MiB (limit ${(LIMIT / MiB).toFixed(0)} MiB)`);
    expect(controller.child.exitCode).toBeNull();
    expect(unexpected).toEqual([]);
    expect(statuses).toContain(200);
    expect(peak).toBeLessThan(LIMIT * MARGIN);
  }, 300_000);

  it('converts a legitimate review of 10,000 stored schedules in one answer', async () => {
    const legit = storedSchedulesReview(10_000);
    const res = await post(legit.body);
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.body) as { response: { uid: string; result: { status: string }; convertedObjects: { apiVersion: string; metadata: { name: string } }[] } };
    expect(answer.response.result).toEqual({ status: 'Success' });
    expect(answer.response.convertedObjects).toHaveLength(10_000);
    expect(answer.response.convertedObjects.every((o, i) => o.apiVersion === 'kubelings.dev/v1' && o.metadata.name === `backup-${i}`)).toBe(true);
    console.info(`a review of 10,000 stored schedules (${(legit.body.length / MiB).toFixed(1)} MiB) converted; peak RSS so far ${(peakRssBytes(controller.child.pid ?? 0) / MiB).toFixed(0)} MiB`);
    expect(peakRssBytes(controller.child.pid ?? 0)).toBeLessThan(LIMIT * MARGIN);
  }, 120_000);
});
