/**
 * The conversion webhook's bounds (issue 30): the answer is the contract's (handleConversionReview of the
 * whole review) though objects are parsed one at a time; memory within a byte budget shared by the
 * requests in flight (429 with Retry-After beyond it); each object bounded before it is parsed (a
 * 200,000-deep object is a Failure, not a stack overflow inside a 200); the work yields to the event loop.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { handleConversionReview } from '../../src/conversion/index.ts';
import { CONVERSION_WEBHOOK_PATH, conversionWebhookHandler, DEFAULT_OBJECT_LIMITS, type ConversionWebhookOptions } from '../../src/controller/conversion-webhook.ts';
import { ByteBudget } from '../../src/runtime/byte-budget.ts';
import { startHttpServer, type RunningServer } from '../../src/runtime/http-server.ts';
import { storedSchedule, storedSchedulesReview } from '../e2e/webhook-reviews.ts';

type Json = Record<string, unknown>;
const review = (objects: unknown[], desiredAPIVersion = 'kubelings.dev/v1', extra: Json = {}): Json => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'r-1', desiredAPIVersion, objects }, ...extra });

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(options: ConversionWebhookOptions = {}): Promise<string> {
  const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, { [CONVERSION_WEBHOOK_PATH]: conversionWebhookHandler(options) });
  servers.push(server);
  return `${server.url}${CONVERSION_WEBHOOK_PATH}`;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** POSTs `body`; with `hold`, sends its first half and waits for `hold` before the rest. */
function post(url: string, body: string | Buffer, hold?: Promise<void>): Promise<Answer> {
  const bytes = Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': bytes.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (!hold) return void req.end(bytes);
    req.write(bytes.subarray(0, bytes.length >> 1));
    void hold.then(() => req.end(bytes.subarray(bytes.length >> 1)));
  });
}

/** Resolves once `probe` holds, checking on every turn of the event loop (no timers). */
async function until(probe: () => boolean): Promise<void> {
  while (!probe()) await new Promise((resolve) => setImmediate(resolve));
}

const alpha = (name: string, spec: Json = {}): Json => ({
  apiVersion: 'kubelings.dev/v1alpha1',
  kind: 'BackupSchedule',
  metadata: { name, namespace: 'team-a', uid: `u-${name}` },
  spec: { schedule: '@daily', source: { etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepLast: 7 }, ...spec },
});
const v1 = (name: string): Json => ({
  apiVersion: 'kubelings.dev/v1',
  kind: 'BackupSchedule',
  metadata: { name, namespace: 'team-a', uid: `u-${name}` },
  spec: { schedule: '@daily', source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepLast: 3, keepDaily: 7, keepWeekly: 4, keepMonthly: 12 } },
});

describe('the answer, object by object', () => {
  it.each([
    ['several objects, both directions', review([alpha('a'), v1('b'), alpha('c')])],
    ['to v1alpha1 (the retention annotation)', review([v1('a'), alpha('b')], 'kubelings.dev/v1alpha1')],
    ['no objects', review([])],
    ['an object of another kind at index 2', review([alpha('a'), alpha('b'), { ...alpha('c'), kind: 'CronJob' }])],
    ['an object that is not an object at index 1', review([alpha('a'), 'x'])],
    ['an unsupported desiredAPIVersion', review([alpha('a')], 'kubelings.dev/v2')],
    ['a request without a uid', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { desiredAPIVersion: 'kubelings.dev/v1', objects: [alpha('a')] } }],
    ['a v1beta1 review', { ...review([alpha('a')]), apiVersion: 'apiextensions.k8s.io/v1beta1' }],
    ['another kind of review', { ...review([alpha('a')]), kind: 'AdmissionReview' }],
    ['objects that are not a list', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'r', desiredAPIVersion: 'kubelings.dev/v1', objects: { a: 1 } } }],
  ])('is what handleConversionReview answers for the whole review: %s', async (_, body) => {
    const res = await post(await serve(), JSON.stringify(body, null, 1));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body)).toEqual(JSON.parse(JSON.stringify(handleConversionReview(body))));
  });

  it('converts a review of 10,000 stored schedules (a LIST kube-apiserver converts at once)', async () => {
    const { body } = storedSchedulesReview(10_000);
    const res = await post(await serve(), body);
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.body) as { response: { result: unknown; convertedObjects: { apiVersion: string; metadata: { name: string } }[] } };
    expect(answer.response.result).toEqual({ status: 'Success' });
    expect(answer.response.convertedObjects.map((o) => `${o.apiVersion} ${o.metadata.name}`)).toEqual(Array.from({ length: 10_000 }, (_, i) => `kubelings.dev/v1 backup-${i}`));
    expect(answer.response.convertedObjects[7]).toEqual(handleConversionReview(JSON.parse(body.toString())).response?.convertedObjects[7]);
  }, 60_000);
});

describe('bounds of one object', () => {
  it('answers a 200,000-deep object with a Failure naming it, not a broken 200', async () => {
    const deep = `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`;
    const body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"deep","desiredAPIVersion":"kubelings.dev/v1","objects":[${JSON.stringify(alpha('a'))},{"apiVersion":"kubelings.dev/v1alpha1","kind":"BackupSchedule","metadata":{"name":"d"},"spec":${deep}}]}}`;
    const res = await post(await serve(), body);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: { uid: 'deep', convertedObjects: [], result: { status: 'Failure', message: `request.objects[1]: nested deeper than ${DEFAULT_OBJECT_LIMITS.maxDepth} levels` } },
    });
  });

  it.each([
    ['bytes', { maxBytes: 2000 }, 'request.objects[1]: larger than 2000 bytes, more than kube-apiserver accepts in one object', { annotations: { a: 'x'.repeat(2000) } }],
    ['objects, arrays and keys', { maxNodes: 40 }, 'request.objects[1]: more than 40 objects, arrays and keys in one object', { labels: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`l${i}`, 'v'])) }],
  ])('fails a review whose object passes the bound on %s, before parsing it', async (_, bound, message, metadata) => {
    const url = await serve({ objectLimits: { ...DEFAULT_OBJECT_LIMITS, ...bound } });
    const res = await post(url, JSON.stringify(review([alpha('a'), { ...alpha('b'), metadata: { name: 'b', ...metadata } }])));
    expect(JSON.parse(res.body).response.result).toEqual({ status: 'Failure', message });
  });

  it('refuses a body with more than the envelope bound outside request.objects (400), and one with no list of objects', async () => {
    const url = await serve({ objectLimits: { ...DEFAULT_OBJECT_LIMITS, maxEnvelopeBytes: 1024 } });
    const text = JSON.stringify(review([alpha('a')], 'kubelings.dev/v1', { padding: 'x'.repeat(2000) }));
    const padded = await post(url, text);
    const outside = text.length - JSON.stringify([alpha('a')]).length + '[]'.length;
    expect([padded.status, padded.body]).toEqual([400, `request body has ${outside} bytes outside request.objects; at most 1024\n`]);
    const noList = await post(url, JSON.stringify(Array.from({ length: 500 }, () => ({}))));
    expect(noList.status).toBe(400);
    expect(noList.body).toMatch(/^request body is not a ConversionReview with a request \(\d+ bytes, no request\.objects list in it\)/);
  });
});

describe('the byte budget shared by requests in flight', () => {
  it('answers 429 with Retry-After to a review that does not fit with the one in flight, and serves it once the budget is given back', async () => {
    const big = JSON.stringify(review(Array.from({ length: 600 }, (_, i) => alpha(`s-${i}`))));
    // Room for one review (its body and as much again for the answer) and a half, not two.
    const budget = new ByteBudget(Math.floor(2.5 * big.length));
    const url = await serve({ budget });
    let finish!: () => void;
    const first = post(url, big, new Promise((resolve) => (finish = resolve)));
    await until(() => budget.inUse >= big.length >> 1);
    const refused = await post(url, big);
    expect([refused.status, refused.headers['retry-after']]).toEqual([429, '1']);
    expect(refused.body).toMatch(/the conversion webhook holds \d+ of its \d+ bytes for reviews in flight|the answer did not fit the conversion webhook's budget/);
    finish();
    expect((await first).status).toBe(200);
    await until(() => budget.inUse === 0);
    const again = await post(url, big);
    expect([again.status, JSON.parse(again.body).response.convertedObjects.length]).toEqual([200, 600]);
    await until(() => budget.inUse === 0);
    expect(budget.peak).toBeLessThanOrEqual(budget.capacity);
  });

  it('frees the body and the answer when the response closes, not at V8\'s next collection', async () => {
    const budget = new ByteBudget(2 ** 26);
    const allocated: Buffer[] = [];
    const lease = budget.lease.bind(budget);
    budget.lease = () => {
      const held = lease();
      const allocate = held.allocate;
      return Object.assign(held, { allocate: (bytes: number) => {
        const buffer = allocate(bytes);
        if (buffer) allocated.push(buffer);
        return buffer;
      } });
    };
    const body = JSON.stringify(review(Array.from({ length: 600 }, (_, i) => alpha(`s-${i}`))));
    const res = await post(await serve({ budget }), body);
    expect([res.status, JSON.parse(res.body).response.convertedObjects.length]).toEqual([200, 600]);
    await until(() => budget.inUse === 0);
    // The body, then the answer in buffers of 64 KiB: all of them emptied once the lease was released.
    expect(allocated.length).toBeGreaterThan(2);
    expect(allocated.map((b) => b.length)).toEqual(allocated.map(() => 0));
  });

  it('answers 429 when the answer outgrows what the budget has left', async () => {
    // v1 → v1alpha1 adds the retention annotation: the answer is larger than the body.
    const body = JSON.stringify(review(Array.from({ length: 50 }, (_, i) => v1(`s-${i}`)), 'kubelings.dev/v1alpha1'));
    const budget = new ByteBudget(2 * body.length);
    const res = await post(await serve({ budget }), body);
    expect([res.status, res.headers['retry-after']]).toEqual([429, '1']);
    expect(res.body).toContain(`the answer did not fit the conversion webhook's budget of ${budget.capacity} bytes`);
    await until(() => budget.inUse === 0);
  });
});

describe('time slices', () => {
  it('yields to the event loop between objects once its slice is used up', async () => {
    let clock = 0;
    const url = await serve({ sliceMs: 5, now: () => (clock += 2) });
    let turns = 0;
    let running = true;
    const other = (): void => {
      turns++;
      if (running) setImmediate(other);
    };
    setImmediate(other);
    const turnsBefore = turns;
    const res = await post(url, JSON.stringify(review(Array.from({ length: 300 }, (_, i) => storedSchedule(i)))));
    running = false;
    expect(res.status).toBe(200);
    // The 300 objects took 600 ms by that clock: about 100 slices of 5 ms, each followed by a turn of the loop.
    expect(turns - turnsBefore).toBeGreaterThanOrEqual(100);
  });
});
