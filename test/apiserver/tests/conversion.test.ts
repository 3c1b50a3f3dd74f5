/**
 * Conversion pieces the conformance suite cannot reach: the ConversionReview checks one by one
 * (v1 and v1beta1), metadata a webhook may not change, CRD conversion validation, and a webhook given
 * as a Service that the test maps to loopback (TLS still checked against `<name>.<namespace>.svc`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/object.ts';
import { acceptConverted, buildReview, convertedObjectsOf } from '../conversion/conversion-review.ts';
import { compareKubeVersions } from '../discovery.ts';
import { validateConversion, validateStoredVersions } from '../crd-versions.ts';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { startConversionWebhook, type ConversionWebhook } from '../../conformance/harness/conversion-webhook.ts';
import { gadgetCrd } from '../../conformance/harness/gadget-crd.ts';
import { client } from './http-client.ts';

const original: KubeObject = { apiVersion: 'g.example.com/v1alpha1', kind: 'Gadget', metadata: { name: 'a', namespace: 'ns', uid: 'u-1', resourceVersion: '7', labels: { keep: 'x' }, finalizers: ['f'] }, spec: {} };

describe('ConversionReview answers', () => {
  const review = buildReview(['v9', 'v1'], [original], 'g.example.com/v1', 'uid-1');
  if (review instanceof Error) throw review;

  it('speaks the first review version of the CRD list the server understands', () => {
    expect(review.reviewVersion).toBe('v1');
    expect(review.body).toEqual({ kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1', request: { uid: 'uid-1', desiredAPIVersion: 'g.example.com/v1', objects: [original] } });
    expect(buildReview(['v9'], [original], 'g.example.com/v1', 'u')).toEqual(new Error('no supported conversion review versions'));
  });

  it.each([
    ['an answer of another kind', { apiVersion: 'v1', kind: 'Status' }, 'expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status'],
    ['no response', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }, 'no response provided'],
    ['another uid', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'x', result: { status: 'Success' } } }, 'expected response.uid="uid-1", got "x"'],
    ['Failure without message', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'uid-1', result: { status: 'Failure' } } }, "response.result.status was 'Failure', not 'Success'"],
    ['Failure with message', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'uid-1', result: { status: 'Failure', message: 'nope' } } }, 'nope'],
  ])('refuses %s', (_what, answer, message) => {
    expect(convertedObjectsOf(review, answer)).toEqual(new Error(message));
  });

  it('does not check uid nor kind of a v1beta1 answer, as kube keeps for compatibility', () => {
    const beta = buildReview(['v1beta1'], [original], 'g.example.com/v1', 'uid-2');
    if (beta instanceof Error) throw beta;
    expect(beta.body['apiVersion']).toBe('apiextensions.k8s.io/v1beta1');
    expect(convertedObjectsOf(beta, { response: { uid: 'other', result: { status: 'Success' }, convertedObjects: [1] } })).toEqual([1]);
  });

  it('keeps labels and annotations from the webhook and everything else of metadata from the original', () => {
    const converted = { apiVersion: 'g.example.com/v1', kind: 'Gadget', metadata: { name: 'a', namespace: 'ns', uid: 'u-1', labels: { new: 'y' }, annotations: { a: 'b' }, finalizers: [], resourceVersion: '1' }, spec: { x: 1 } };
    expect(acceptConverted(original, converted, 'g.example.com/v1', 0, true)).toEqual({
      apiVersion: 'g.example.com/v1', kind: 'Gadget', spec: { x: 1 },
      metadata: { name: 'a', namespace: 'ns', uid: 'u-1', resourceVersion: '7', finalizers: ['f'], labels: { new: 'y' }, annotations: { a: 'b' } },
    });
  });

  it.each([
    ['another apiVersion', { apiVersion: 'g.example.com/v2', kind: 'Gadget', metadata: {} }, 'returned invalid object at index 0: invalid groupVersion (expected g.example.com/v1, received g.example.com/v2)'],
    ['another kind', { apiVersion: 'g.example.com/v1', kind: 'Gizmo', metadata: {} }, 'returned invalid object at index 0: invalid kind (expected Gadget, received Gizmo)'],
    ['another uid', { apiVersion: 'g.example.com/v1', kind: 'Gadget', metadata: { name: 'a', namespace: 'ns', uid: 'u-2' } }, 'returned invalid object: must have the same UID: u-1 != u-2'],
    ['a label that is not a string', { apiVersion: 'g.example.com/v1', kind: 'Gadget', metadata: { name: 'a', namespace: 'ns', uid: 'u-1', labels: { n: 1 } } }, 'returned invalid metadata: metadata.labels[n] must be a string, but is number in converted object'],
  ])('refuses a converted object with %s', (_what, converted, message) => {
    expect(acceptConverted(original, converted, 'g.example.com/v1', 0, true)).toEqual(new Error(message));
  });
});

describe('CRD version rules', () => {
  const crd = (spec: Record<string, unknown>, storedVersions: string[]): KubeObject => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: {}, spec, status: { storedVersions } });

  it('needs the storage version among storedVersions and every stored version in spec.versions', () => {
    const versions = [{ name: 'v1', storage: true }];
    expect(validateStoredVersions(crd({ versions }, []))).toEqual([{ reason: 'FieldValueInvalid', field: 'status.storedVersions', message: 'Invalid value: []string{}: must have at least one stored version' }]);
    expect(validateStoredVersions(crd({ versions }, ['v1alpha1'])).map((c) => c.message)).toEqual([
      'Invalid value: {"name":"v1","storage":true}: must have the storage version v1',
      'Invalid value: "v1alpha1": must appear in spec.versions',
    ]);
  });

  it.each([
    [{ strategy: 'Other' }, 'Unsupported value: "Other": supported values: "None", "Webhook"'],
    [{ strategy: 'None', webhook: { clientConfig: { url: 'https://x' } } }, 'Forbidden: should not be set when strategy is not set to Webhook'],
    [{ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } }, 'Required value: required when strategy is set to Webhook'],
    [{ strategy: 'Webhook', webhook: { clientConfig: {}, conversionReviewVersions: ['v1'] } }, 'Required value: exactly one of url or service is required'],
    [{ strategy: 'Webhook', webhook: { clientConfig: { url: 'http://x/convert' }, conversionReviewVersions: ['v1'] } }, `Invalid value: "http": 'https' is the only allowed URL scheme`],
    [{ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://x/convert' } } }, 'Required value'],
  ])('refuses conversion %j', (conversion, message) => {
    expect(validateConversion(crd({ conversion }, ['v1'])).map((c) => c.message)).toEqual([message]);
  });

  it('orders versions as kube does for discovery', () => {
    expect(['v1alpha1', 'v1beta1', 'v2', 'v1', 'foo', 'v1beta2', 'v2alpha1'].sort(compareKubeVersions)).toEqual(['v2', 'v1', 'v1beta2', 'v1beta1', 'v2alpha1', 'v1alpha1', 'foo']);
  });
});

describe('a conversion webhook given as a Service', () => {
  let server: TestApiServer;
  let webhook: ConversionWebhook;
  let api: ReturnType<typeof client>;
  const group = 'svc.fixtures.example.com';

  beforeAll(async () => {
    webhook = await startConversionWebhook('gadget-webhook.conv.svc');
    server = await startTestApiServer();
    api = client(server);
    await api('POST', '/api/v1/namespaces', { metadata: { name: 'conv' } });
    const crd = gadgetCrd(group, { storage: 'v1alpha1', conversion: { strategy: 'Webhook', url: webhook.url, caBundle: webhook.caBundle } });
    const conversion = (crd['spec'] as { conversion: { webhook: { clientConfig: Record<string, unknown> } } }).conversion;
    conversion.webhook.clientConfig = { service: { namespace: 'conv', name: 'gadget-webhook', path: '/convert', port: 8443 }, caBundle: webhook.caBundle };
    expect((await api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    expect((await api('POST', `/apis/${group}/v1alpha1/namespaces/conv/gadgets`, { metadata: { name: 'a' }, spec: { color: 'red' } })).status).toBe(201);
  });
  afterAll(async () => {
    await server.stop();
    await webhook.stop();
  });

  it('answers 500 naming the service URL until the test maps the service, then converts through it', async () => {
    const before = await api('GET', `/apis/${group}/v1/namespaces/conv/gadgets/a`);
    expect(before.status).toBe(500);
    expect(before.body.message).toBe(`conversion webhook for ${group}/v1alpha1, Kind=Gadget failed: Post "https://gadget-webhook.conv.svc:8443/convert?timeout=30s": service "gadget-webhook" not found`);
    server.registerService('conv', 'gadget-webhook', 8443, `127.0.0.1:${webhook.port}`);
    const after = await api('GET', `/apis/${group}/v1/namespaces/conv/gadgets/a`);
    expect(after.status).toBe(200);
    expect(after.body.spec).toEqual({ paint: { color: 'red' }, size: 1 });
  });

  it('applies a v1 patch again when a v1alpha1 write lands while the webhook converts, and keeps a preconditioned patch a 409', async () => {
    const path = (v: string): string => `/apis/${group}/${v}/namespaces/conv/gadgets/a`;
    const merge = { 'content-type': 'application/merge-patch+json' };
    const seen = webhook.reviews.length;
    const release = webhook.hold();
    const slow = api('PATCH', path('v1'), JSON.stringify({ spec: { size: 5 } }), merge);
    while (webhook.reviews.length === seen) await new Promise((r) => setImmediate(r));
    expect((await api('PATCH', path('v1alpha1'), JSON.stringify({ spec: { color: 'blue' } }), merge)).status).toBe(200);
    release();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.body.spec).toEqual({ paint: { color: 'blue' }, size: 5 });

    const rv = (await api('GET', path('v1alpha1'))).body.metadata.resourceVersion as string;
    const hold = webhook.hold();
    const pinned = api('PATCH', path('v1'), JSON.stringify({ metadata: { resourceVersion: rv }, spec: { size: 6 } }), merge);
    const before = webhook.reviews.length;
    while (webhook.reviews.length === before) await new Promise((r) => setImmediate(r));
    expect((await api('PATCH', path('v1alpha1'), JSON.stringify({ spec: { color: 'red' } }), merge)).status).toBe(200);
    hold();
    expect((await pinned).status).toBe(409);
  });

  it('ends a v1 watch when an event cannot be converted, as kube\'s restarting watch cache does', async () => {
    const path = `/apis/${group}/v1/namespaces/conv/gadgets`;
    const rv = (await api('GET', `/apis/${group}/v1alpha1/namespaces/conv/gadgets/a`)).body.metadata.resourceVersion as string;
    const res = await fetch(`${server.url}${path}?watch=1&resourceVersion=${rv}`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(res.status).toBe(200);
    webhook.mode = 'fail';
    try {
      const merge = { 'content-type': 'application/merge-patch+json' };
      expect((await api('PATCH', `/apis/${group}/v1alpha1/namespaces/conv/gadgets/a`, JSON.stringify({ spec: { size: 9 } }), merge)).status).toBe(200);
      // The stream ends (no event line): reading it to the end resolves.
      expect(await res.text()).toBe('');
    } finally {
      webhook.mode = 'convert';
    }
  });

  it('refuses a serving certificate the caBundle does not sign', async () => {
    const stranger = await startConversionWebhook('gadget-webhook.conv.svc');
    await stranger.stop();
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`;
    const crd = (await api('GET', crdPath)).body;
    crd.spec.conversion.webhook.clientConfig.caBundle = stranger.caBundle;
    expect((await api('PUT', crdPath, crd)).status).toBe(200);
    const res = await api('GET', `/apis/${group}/v1/namespaces/conv/gadgets/a`);
    expect(res.status).toBe(500);
    expect(res.body.message).toMatch(/failed: Post "https:\/\/gadget-webhook\.conv\.svc:8443\/convert\?timeout=30s": .*certificate/);
    crd.spec.conversion.webhook.clientConfig.caBundle = webhook.caBundle;
    crd.metadata.resourceVersion = (await api('GET', crdPath)).body.metadata.resourceVersion;
    expect((await api('PUT', crdPath, crd)).status).toBe(200);
    expect((await api('GET', `/apis/${group}/v1/namespaces/conv/gadgets/a`)).status).toBe(200);
  });

  it('refuses a serving certificate that does not name <service>.<namespace>.svc', async () => {
    server.registerService('conv', 'other-name', 8443, `127.0.0.1:${webhook.port}`);
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`;
    const crd = (await api('GET', crdPath)).body;
    crd.spec.conversion.webhook.clientConfig.service.name = 'other-name';
    expect((await api('PUT', crdPath, crd)).status).toBe(200);
    const res = await api('GET', `/apis/${group}/v1/namespaces/conv/gadgets/a`);
    expect(res.status).toBe(500);
    expect(res.body.message).toContain(`Post "https://other-name.conv.svc:8443/convert?timeout=30s": `);
    expect(res.body.message).toMatch(/other-name\.conv\.svc/);
  });
});
