import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { toV1 } from '../../src/conversion/index.ts';
import type { BackupSchedule } from '../../src/api/index.ts';
import { caBundleInjector, type CrdClient } from '../../src/controller/ca-bundle-injector.ts';
import { CONVERSION_WEBHOOK_PATH, conversionWebhookHandler } from '../../src/controller/conversion-webhook.ts';
import { startHttpServer, type RunningServer } from '../../src/runtime/http-server.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import { createCertificateAuthority } from '../../src/runtime/tls-certificates.ts';

type Json = Record<string, unknown>;
const schedule: Json = {
  apiVersion: 'kubelings.dev/v1alpha1',
  kind: 'BackupSchedule',
  metadata: { name: 'nightly', namespace: 'team-a', uid: 'u1' },
  spec: { schedule: '@daily', source: { etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepLast: 7 } },
};
const review = (objects: unknown[] = [schedule], desiredAPIVersion = 'kubelings.dev/v1'): Json => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'r-1', desiredAPIVersion, objects } });

let server: RunningServer;
const outcomes: unknown[] = [];
beforeAll(async () => {
  // Plain HTTP around the handler: TLS is the HTTPS server's business (test/runtime/https-server.test.ts).
  server = await startHttpServer({ host: '127.0.0.1', port: 0 }, { [CONVERSION_WEBHOOK_PATH]: conversionWebhookHandler({ maxBodyBytes: 4096, onReview: (o) => outcomes.push(o) }) });
});
afterAll(() => server.close());

function send(options: { method?: string; contentType?: string; body?: string; path?: string }): Promise<{ status: number; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${options.path ?? CONVERSION_WEBHOOK_PATH}`, { method: options.method ?? 'POST', headers: options.contentType === undefined ? {} : { 'Content-Type': options.contentType } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('conversionWebhookHandler', () => {
  it('answers a ConversionReview with the converted objects, as JSON, uid echoed', async () => {
    const res = await send({ contentType: 'application/json; charset=utf-8', body: JSON.stringify(review()) });
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(JSON.parse(res.body)).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: { uid: 'r-1', result: { status: 'Success' }, convertedObjects: [toV1(schedule as unknown as BackupSchedule)] },
    });
    expect(outcomes.at(-1)).toEqual({ status: 200, objects: 1 });
  });

  it('answers a review it cannot convert with 200 and a Failure result naming the problem (the API server reports the message)', async () => {
    const res = await send({ contentType: 'application/json', body: JSON.stringify(review([schedule], 'kubelings.dev/v2')) });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response).toMatchObject({ uid: 'r-1', result: { status: 'Failure', message: expect.stringContaining('unsupported desiredAPIVersion "kubelings.dev/v2"') } });
    expect(outcomes.at(-1)).toMatchObject({ status: 200, failure: expect.stringContaining('kubelings.dev/v2') });
  });

  it.each([
    ['another method', { method: 'GET' }, 405, 'method GET not allowed; POST a ConversionReview'],
    ['another content type', { contentType: 'application/yaml', body: 'a: 1' }, 415, 'content type "application/yaml" not supported; expected application/json'],
    ['no content type', { body: '{}' }, 415, 'content type "" not supported; expected application/json'],
    ['a body that is not JSON', { contentType: 'application/json', body: '{"apiVersion":' }, 400, 'request body is not JSON:'],
    ['JSON without a request', { contentType: 'application/json', body: '{"kind":"ConversionReview"}' }, 400, 'request body is not a ConversionReview with a request'],
    ['a JSON array', { contentType: 'application/json', body: '[]' }, 400, 'request body is not a ConversionReview with a request'],
    ['a body past the limit', { contentType: 'application/json', body: JSON.stringify(review(Array.from({ length: 20 }, () => schedule))) }, 413, 'request body exceeds 4096 bytes'],
  ])('refuses %s with a 4xx and a plain-text reason', async (_, options, status, message) => {
    const res = await send(options);
    expect(res.status).toBe(status);
    expect(res.contentType).toBe('text/plain; charset=utf-8');
    expect(res.body).toContain(message);
  });
});

describe('caBundleInjector', () => {
  const PEM = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
  const b64 = Buffer.from(PEM).toString('base64');

  /** A CRD client answering GET with `crd` and recording patches; any other call fails. */
  function fakeCrds(crd: KubeObject): CrdClient & { gets: number; patches: unknown[] } {
    const fake = {
      gets: 0,
      patches: [] as unknown[],
      get: async (ref: { name: string }) => {
        if (ref.name !== 'backupschedules.kubelings.dev') throw new Error(`unexpected get of ${ref.name}`);
        fake.gets++;
        return structuredClone(crd);
      },
      patch: async (ref: { name: string }, patch: unknown) => {
        if (ref.name !== 'backupschedules.kubelings.dev') throw new Error(`unexpected patch of ${ref.name}`);
        fake.patches.push(patch);
        return crd;
      },
    };
    return fake;
  }
  const crd = (conversion: unknown): KubeObject => ({ metadata: { name: 'backupschedules.kubelings.dev', resourceVersion: '42' }, spec: conversion === undefined ? {} : { conversion } });
  const webhook = (caBundle?: string) => ({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 'hook', namespace: 'ns', path: '/convert' }, ...(caBundle ? { caBundle } : {}) } } });

  it.each([
    ['no conversion', undefined],
    ['strategy None', { strategy: 'None' }],
  ])('leaves a CRD with %s alone and logs that once', async (_, conversion) => {
    const lines: unknown[] = [];
    const logger = { info: (fields: object, msg: string) => lines.push([fields, msg]) };
    const crds = fakeCrds(crd(conversion));
    const inject = caBundleInjector({ crds, crdName: 'backupschedules.kubelings.dev', logger: logger as unknown as pino.Logger });
    await inject(PEM, 'exact');
    await inject(PEM, 'include');
    expect(crds.patches).toEqual([]);
    expect(crds.gets).toBe(2);
    expect(lines).toEqual([[{ crd: 'backupschedules.kubelings.dev', strategy: 'None' }, 'the CRD has no webhook conversion; its caBundle is not injected']]);
  });

  it('exact (the leader): patches only the caBundle of a webhook conversion, at the read resourceVersion, and only when it differs', async () => {
    const logger = pino({ level: 'silent' });
    const stale = fakeCrds(crd(webhook('b2xk')));
    await caBundleInjector({ crds: stale, crdName: 'backupschedules.kubelings.dev', logger })(PEM, 'exact');
    expect(stale.patches).toEqual([{ metadata: { resourceVersion: '42' }, spec: { conversion: { webhook: { clientConfig: { caBundle: b64 } } } } }]);
    const current = fakeCrds(crd(webhook(b64)));
    await caBundleInjector({ crds: current, crdName: 'backupschedules.kubelings.dev', logger })(PEM, 'exact');
    expect(current.patches).toEqual([]);
  });

  describe('include (a follower)', () => {
    const DAY = 86_400_000;
    const now = Date.now();
    const authorities = Promise.all([
      createCertificateAuthority({ commonName: 'ca-1', notBefore: now - DAY, notAfter: now + 300 * DAY }),
      createCertificateAuthority({ commonName: 'ca-2', notBefore: now - DAY, notAfter: now + 30 * DAY }),
    ]);
    const logger = pino({ level: 'silent' });
    const patched = (crds: { patches: unknown[] }): string[] =>
      crds.patches.map((p) => Buffer.from((p as { spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } } }).spec.conversion.webhook.clientConfig.caBundle, 'base64').toString());
    const b64Of = (pem: string): string => Buffer.from(pem).toString('base64');

    it('adds the CAs of its bundle the caBundle lacks (after it filled an empty Secret under an old leader), keeping the others', async () => {
      const [ca1, ca2] = await authorities;
      const empty = fakeCrds(crd(webhook()));
      await caBundleInjector({ crds: empty, crdName: 'backupschedules.kubelings.dev', logger })(ca1.certPem, 'include');
      expect(patched(empty)).toEqual([ca1.certPem]);
      const partial = fakeCrds(crd(webhook(b64Of(ca1.certPem))));
      await caBundleInjector({ crds: partial, crdName: 'backupschedules.kubelings.dev', logger })(ca2.certPem + ca1.certPem, 'include');
      expect(patched(partial)).toEqual([ca1.certPem + ca2.certPem]);
      expect((partial.patches[0] as { metadata: unknown }).metadata).toEqual({ resourceVersion: '42' });
    });

    it('never removes a CA (its read of the Secret may be older than the leader\'s write), nor adds an expired one', async () => {
      const [ca1, ca2] = await authorities;
      const both = fakeCrds(crd(webhook(b64Of(ca1.certPem + ca2.certPem))));
      await caBundleInjector({ crds: both, crdName: 'backupschedules.kubelings.dev', logger })(ca1.certPem, 'include');
      expect(both.patches).toEqual([]);
      const later = fakeCrds(crd(webhook(b64Of(ca1.certPem))));
      await caBundleInjector({ crds: later, crdName: 'backupschedules.kubelings.dev', logger, now: () => now + 60 * DAY })(ca1.certPem + ca2.certPem, 'include');
      expect(later.patches).toEqual([]);
    });
  });
});
