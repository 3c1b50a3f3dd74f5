/**
 * Conversion through a webhook the test runs itself (`harness/conversion-webhook.ts`): reads, lists,
 * watches and writes in the version that is not stored call it with a ConversionReview v1, and every
 * way it can fail is reported as kube-apiserver does (HTTP 500, `conversion webhook for
 * <group>/<from>, Kind=Gadget failed: …`) while the stored version stays readable.
 *
 * On a real cluster the apiserver must reach the webhook: set CONFORMANCE_WEBHOOK_HOST (see the
 * harness). Without it these tests are skipped there, under a name saying so; they always run on the
 * test server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, isRealCluster, must, rand, useCluster, type WatchStream } from './harness.ts';
import { startConversionWebhook, WEBHOOK_FAILURE_MESSAGE, webhookHost, type ConversionWebhook } from './harness/conversion-webhook.ts';
import { installGadgets, type Gadgets } from './harness/gadget-crd.ts';

const cluster = useCluster();
const reachable = !isRealCluster || webhookHost() !== undefined;
const suite = reachable ? describe : describe.skip;
const title = reachable ? 'conversion webhook' : 'conversion webhook (needs CONFORMANCE_WEBHOOK_HOST on a real cluster)';

let webhook: ConversionWebhook | undefined;
let gadgets: Gadgets | undefined;
const watches: WatchStream[] = [];

beforeAll(async () => {
  if (!reachable) return;
  webhook = await startConversionWebhook();
  gadgets = await installGadgets(cluster().api, `w${rand()}.fixtures.example.com`, { storage: 'v1alpha1', conversion: { strategy: 'Webhook', url: webhook.url, caBundle: webhook.caBundle } });
  cluster().cleanupLater(gadgets.crdPath);
});
afterAll(async () => {
  for (const w of watches) w.close();
  await webhook?.stop();
});

function hook(): ConversionWebhook {
  if (!webhook) throw new Error('webhook not started');
  webhook.mode = 'convert';
  return webhook;
}
function g(): Gadgets {
  if (!gadgets) throw new Error('CRD not installed');
  return gadgets;
}
const prefix = (): string => `conversion webhook for ${g().group}/v1alpha1, Kind=Gadget`;

suite(title, () => {
  it('converts a read, a list and a write in v1 through ConversionReviews v1 echoing the uid', async () => {
    const { api } = cluster();
    const w = hook();
    const ns = await cluster().namespace('conv');
    must(await api.post(g().path('v1alpha1', ns), g().body('v1alpha1', 'a', 'red')), 201);
    const before = w.reviews.length;
    const got = must(await api.get(g().path('v1', ns, 'a')), 200);
    expect(got).toMatchObject({ apiVersion: `${g().group}/v1`, kind: 'Gadget', spec: { paint: { color: 'red' }, size: 1 } });
    // Labels are the one part of metadata a webhook may change.
    expect(dig(got, 'metadata.labels')).toEqual({ 'converted-to': 'v1' });
    const review = w.reviews.slice(before).find((r) => r.desiredAPIVersion === `${g().group}/v1`);
    expect(review).toMatchObject({ apiVersion: 'apiextensions.k8s.io/v1', objects: [{ apiVersion: `${g().group}/v1alpha1`, spec: { color: 'red' } }] });
    expect(review?.uid).toMatch(/^[0-9a-f-]{36}$/);

    const created = must(await api.post(g().path('v1', ns), g().body('v1', 'b', 'blue')), 201);
    expect(created).toMatchObject({ apiVersion: `${g().group}/v1`, spec: { paint: { color: 'blue' } } });
    expect(must(await api.get(g().path('v1alpha1', ns, 'b')), 200)).toMatchObject({ apiVersion: `${g().group}/v1alpha1`, spec: { color: 'blue' } });

    const list = must(await api.get(g().path('v1', ns)), 200);
    expect((list['items'] as Array<{ spec: unknown }>).map((i) => i.spec)).toEqual([{ paint: { color: 'red' }, size: 1 }, { paint: { color: 'blue' }, size: 1 }]);
  });

  it('updates and patches in v1 over an object stored in v1alpha1', async () => {
    const { api } = cluster();
    hook();
    const ns = await cluster().namespace('conv');
    must(await api.post(g().path('v1alpha1', ns), g().body('v1alpha1', 'c', 'red')), 201);
    const current = must(await api.get(g().path('v1', ns, 'c')), 200);
    const put = must(await api.put(g().path('v1', ns, 'c'), { ...current, spec: { paint: { color: 'green' } } }), 200);
    expect(put).toMatchObject({ apiVersion: `${g().group}/v1`, spec: { paint: { color: 'green' } }, metadata: { generation: 2 } });
    const patched = must(await api.patch(g().path('v1', ns, 'c'), { spec: { paint: { color: 'black' } } }, { contentType: 'application/merge-patch+json' }), 200);
    expect(patched).toMatchObject({ spec: { paint: { color: 'black' } }, metadata: { generation: 3 } });
    expect(must(await api.get(g().path('v1alpha1', ns, 'c')), 200)['spec']).toEqual({ color: 'black', size: 1 });
  });

  it('sends a v1 watcher the events of v1alpha1 writes converted', async () => {
    const { api } = cluster();
    hook();
    const ns = await cluster().namespace('conv');
    const created = must(await api.post(g().path('v1alpha1', ns), g().body('v1alpha1', 'd', 'red')), 201);
    const watch = api.watch(g().path('v1', ns), { resourceVersion: created.metadata.resourceVersion });
    watches.push(watch);
    must(await api.patch(g().path('v1alpha1', ns, 'd'), { spec: { color: 'white' } }, { contentType: 'application/merge-patch+json' }), 200);
    const event = await watch.nextChange(10_000);
    expect(event).toMatchObject({ type: 'MODIFIED', object: { apiVersion: `${g().group}/v1`, spec: { paint: { color: 'white' } } } });
    // A watch without resourceVersion starts with the current objects, converted.
    const fresh = api.watch(g().path('v1', ns));
    watches.push(fresh);
    expect(await fresh.next(10_000)).toMatchObject({ type: 'ADDED', object: { apiVersion: `${g().group}/v1`, spec: { paint: { color: 'white' } } } });
  });

  it.each([
    ['fail', `failed: ${WEBHOOK_FAILURE_MESSAGE}`],
    ['wrong-uid', 'failed: expected response.uid='],
    ['drop-objects', 'returned 0 objects, expected 1'],
    ['rename', 'must have the same name'],
  ] as const)('answers 500 to a read in v1 when the webhook misbehaves (%s), and still serves v1alpha1', async (mode, text) => {
    const { api } = cluster();
    const w = hook();
    const ns = await cluster().namespace('conv');
    must(await api.post(g().path('v1alpha1', ns), g().body('v1alpha1', 'e', 'red')), 201);
    w.mode = mode;
    const res = await api.get(g().path('v1', ns, 'e'));
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', code: 500 });
    expect(String(res.body.message).slice(0, prefix().length)).toBe(prefix());
    expect(res.body.message).toContain(text);
    expect(must(await api.get(g().path('v1alpha1', ns, 'e')), 200)['spec']).toEqual({ color: 'red', size: 1 });
    w.mode = 'convert';
  });

  it('refuses a create and a delete in v1 with 500 when the webhook fails, changing nothing', async () => {
    const { api } = cluster();
    const w = hook();
    const ns = await cluster().namespace('conv');
    must(await api.post(g().path('v1alpha1', ns), g().body('v1alpha1', 'kept', 'red')), 201);
    w.mode = 'fail';
    const res = await api.post(g().path('v1', ns), g().body('v1', 'f', 'red'));
    expect(res.status).toBe(500);
    expect(res.body.message).toContain(WEBHOOK_FAILURE_MESSAGE);
    // The delete reads the object (converting it) before deleting.
    const deleted = await api.delete(g().path('v1', ns, 'kept'));
    expect(deleted.status).toBe(500);
    expect(deleted.body.message).toContain(WEBHOOK_FAILURE_MESSAGE);
    w.mode = 'convert';
    expect((await api.get(g().path('v1alpha1', ns, 'f'))).status).toBe(404);
    expect((await api.get(g().path('v1alpha1', ns, 'kept'))).status).toBe(200);
  });
});

// Last: stops the webhook for good.
suite(`${title}: down`, () => {
  it('answers 500 naming the webhook call to reads in v1 once the webhook is gone, and keeps v1alpha1 readable', async () => {
    const { api } = cluster();
    const w = hook();
    const ns = await cluster().namespace('conv');
    must(await api.post(g().path('v1alpha1', ns), g().body('v1alpha1', 'z', 'red')), 201);
    await w.stop();
    const res = await api.get(g().path('v1', ns, 'z'));
    expect(res.status).toBe(500);
    const expected = `${prefix()} failed: Post "${w.url}?timeout=30s": `;
    expect(String(res.body.message).slice(0, expected.length)).toBe(expected);
    const list = await api.get(g().path('v1', ns));
    expect(list.status).toBe(500);
    expect(must(await api.get(g().path('v1alpha1', ns, 'z')), 200)['spec']).toEqual({ color: 'red', size: 1 });
  });
});
