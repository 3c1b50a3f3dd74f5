import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiStatusError, isConflict, statusErrors } from '../../src/kube/api-status-error.ts';
import { gateWrites, isTransientError, KubeClient, KubeRequestError, requestEndpoint, ResponseTooLargeError, searchOf, type RequestObservation } from '../../src/kube/kube-client.ts';
import { KubeConfig } from '../../src/kube/kube-config.ts';
import type { KubeObject, WatchEvent } from '../../src/kube/object.ts';
import { ResourceClient } from '../../src/kube/resource-client.ts';
import { decodeWatchStream } from '../../src/kube/watch-stream.ts';
import { FakeClock } from '../../src/runtime/clock.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[];
let respond: (req: IncomingMessage, body: string, res: ServerResponse) => void;

beforeEach(async () => {
  seen = [];
  respond = (_req, _body, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      respond(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(extra: Partial<ConstructorParameters<typeof KubeClient>[0]> = {}): KubeClient {
  return new KubeClient({ config: new KubeConfig({ server: base, auth: { type: 'token', token: 't0k3n' } }), ...extra });
}

const cronJobs = (c: KubeClient) => new ResourceClient<KubeObject>(c, { group: 'batch', version: 'v1', plural: 'cronjobs', kind: 'CronJob', namespaced: true });
const namespaces = (c: KubeClient) => new ResourceClient<KubeObject>(c, { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });

describe('KubeClient', () => {
  it('sends the bearer token and query parameters and parses the JSON answer', async () => {
    respond = (_q, _b, res) => res.writeHead(200).end('{"metadata":{"resourceVersion":"7"},"items":[]}');
    const list = await cronJobs(client()).list({ namespace: 'ns', limit: 500, labelSelector: 'a=b,c in (d)', continue: 'tok' });
    expect(list.metadata.resourceVersion).toBe('7');
    expect(seen[0]?.url).toBe('/apis/batch/v1/namespaces/ns/cronjobs?limit=500&continue=tok&labelSelector=a%3Db%2Cc+in+%28d%29');
    expect(seen[0]?.headers.authorization).toBe('Bearer t0k3n');
  });

  it.each<[Record<string, string | number | boolean | undefined>, string]>([
    // What Go's url.Values.Encode (client-go) sends for the same values.
    [{ labelSelector: "a=b,c in (d)!*'~", limit: 500 }, "?labelSelector=a%3Db%2Cc+in+%28d%29%21%2A%27~&limit=500"],
    [{ continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ+/=', watch: true }, '?continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ%2B%2F%3D&watch=true'],
    [{ fieldManager: 'backupschedule-operator', dryRun: undefined }, '?fieldManager=backupschedule-operator'],
    [{ 'ü k': 'é\u{1F600}' }, '?%C3%BC+k=%C3%A9%F0%9F%98%80'],
    [{ dryRun: undefined }, ''],
  ])('writes the query %j as %s', (query, search) => {
    expect(searchOf(query)).toBe(search);
  });

  it('writes any query so that a server parsing it gets back the same parameters', () => {
    // Lone surrogates included: they cannot be sent as such and arrive as U+FFFD, as with URLSearchParams.
    const unit = fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.constantFrom('\uD800', '\uDFFF', ' ', '+', '%', '&', '='));
    const text = fc.string({ unit, maxLength: 12 });
    fc.assert(fc.property(fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean())), (query) => {
      const parsed = [...new URLSearchParams(searchOf(query).slice(1))];
      expect(parsed).toEqual(Object.entries(query).map(([k, v]) => [k.toWellFormed(), String(v).toWellFormed()]));
    }), { seed: 20261130, numRuns: 500 });
  });

  it.each<[string, object]>([
    ['https://[fd00::1]:6443', { protocol: 'https:', hostname: 'fd00::1', port: '6443' }],
    ['https://[::1]', { protocol: 'https:', hostname: '::1' }],
    ['https://10.96.0.1:443', { protocol: 'https:', hostname: '10.96.0.1' }],
    ['http://api.example:8080', { protocol: 'http:', hostname: 'api.example', port: '8080' }],
  ])('sends the requests for %s to %j', (server, endpoint) => {
    expect(requestEndpoint(new URL(server))).toEqual(endpoint);
  });

  it('reads a rotated token file again right after a 401 instead of waiting for the refresh period', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'token-'));
    writeFileSync(join(dir, 'token'), 'expired\n');
    const config = new KubeConfig({ server: base, auth: { type: 'tokenFile', path: join(dir, 'token') }, clock: new FakeClock() });
    const kube = new KubeClient({ config });
    respond = (req, _b, res) =>
      req.headers.authorization === 'Bearer fresh'
        ? res.writeHead(200).end('{"metadata":{},"items":[]}')
        : res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }));
    await expect(cronJobs(kube).list({})).rejects.toMatchObject({ code: 401 });
    writeFileSync(join(dir, 'token'), 'fresh\n');
    await expect(cronJobs(kube).list({})).resolves.toMatchObject({ items: [] });
    kube.close();
  });

  it('turns a Status answer into an ApiStatusError with its reason and message', async () => {
    respond = (_q, _b, res) => res.writeHead(409).end(JSON.stringify(statusErrors.conflict({ group: 'batch', resource: 'cronjobs' }, 'x')));
    const err = await cronJobs(client()).update({ metadata: { name: 'x', namespace: 'ns', resourceVersion: '1' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiStatusError);
    expect(isConflict(err)).toBe(true);
    expect((err as Error).message).toMatch(/^Operation cannot be fulfilled on cronjobs.batch "x"/);
  });

  it.each([
    [502, '<html>Bad Gateway</html>', undefined, 'Unknown', '<html>Bad Gateway</html>', undefined],
    [503, 'upstream connect error', '7', 'ServiceUnavailable', 'upstream connect error', 7],
    [429, JSON.stringify(statusErrors.tooManyRequests(3)), '3', 'TooManyRequests', 'Too many requests, please try again later.', 3],
    [429, JSON.stringify({ ...statusErrors.tooManyRequests(3), details: undefined }), '9', 'TooManyRequests', 'Too many requests, please try again later.', 9],
  ])('builds an ApiStatusError for HTTP %i with body %j and Retry-After %s', async (code, body, retryAfter, reason, message, retryAfterSeconds) => {
    respond = (_q, _b, res) => res.writeHead(code, retryAfter ? { 'Retry-After': retryAfter } : {}).end(body);
    const err = (await client().request('GET', '/api/v1/pods').catch((e: unknown) => e)) as ApiStatusError;
    expect(err).toBeInstanceOf(ApiStatusError);
    expect([err.code, err.reason, err.message, err.retryAfterSeconds]).toEqual([code, reason, message, retryAfterSeconds]);
  });

  it('calls beforeWrite for every write and sends nothing when it throws', async () => {
    const writes: string[] = [];
    let open = true;
    const c = client({
      beforeWrite: (method, path) => {
        writes.push(`${method} ${path}`);
        if (!open) throw new Error('write gate closed');
      },
    });
    const cj = cronJobs(c);
    await cj.get({ namespace: 'ns', name: 'a' });
    await cj.create({ metadata: { name: 'a', namespace: 'ns' } });
    await cj.patch({ namespace: 'ns', name: 'a' }, { spec: { suspend: true } });
    open = false;
    await expect(cj.delete({ namespace: 'ns', name: 'a' })).rejects.toThrow('write gate closed');
    expect(writes).toEqual(['POST /apis/batch/v1/namespaces/ns/cronjobs', 'PATCH /apis/batch/v1/namespaces/ns/cronjobs/a', 'DELETE /apis/batch/v1/namespaces/ns/cronjobs/a']);
    expect(seen.map((s) => s.method)).toEqual(['GET', 'POST', 'PATCH']);
  });

  it('refuses writes through a closed write gate with the gate error, naming the write', async () => {
    const refused: string[] = [];
    const gate = { check: (what: string) => { refused.push(what); throw new Error(`write gate closed: ${what}`); } };
    await expect(cronJobs(client({ beforeWrite: gateWrites(gate) })).updateStatus({ metadata: { name: 'a', namespace: 'ns' } })).rejects.toThrow(
      'write gate closed: PUT /apis/batch/v1/namespaces/ns/cronjobs/a/status',
    );
    expect(seen).toEqual([]);
  });

  it('fails a request whose signal is already aborted without sending it or raising an uncaught error', async () => {
    const abort = new AbortController();
    abort.abort(new Error('SIGTERM'));
    const err = await cronJobs(client()).update({ metadata: { name: 'a', namespace: 'ns' } }, { signal: abort.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeRequestError);
    expect((err as Error).message).toBe('PUT /apis/batch/v1/namespaces/ns/cronjobs/a: aborted');
    // The destroyed request's 'error' comes a tick later: an unhandled one fails the run.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
  });

  it('fails a request that gets no answer within the timeout', async () => {
    respond = () => {};
    const clock = new FakeClock();
    const observed: RequestObservation[] = [];
    const pending = client({ clock, timeoutMs: 5_000, onRequest: (o) => observed.push(o) }).request('GET', '/api/v1/pods').catch((e: unknown) => e);
    while (seen.length === 0) await new Promise((r) => setImmediate(r));
    clock.step(5_000);
    const err = await pending;
    expect(err).toBeInstanceOf(KubeRequestError);
    expect((err as Error).message).toBe('GET /api/v1/pods: timed out after 5000 ms');
    expect(observed.map((o) => [o.method, o.code])).toEqual([['GET', '<error>']]);
  });

  it('fails a request whose body stalls after the headers, once the timeout passes', async () => {
    respond = (_q, _b, res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).write('{"items":[');
    const clock = new FakeClock();
    let headersArrived = false;
    const pending = client({ clock, timeoutMs: 5_000, onRequest: () => (headersArrived = true) }).request('GET', '/api/v1/pods').catch((e: unknown) => e);
    while (!headersArrived) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    clock.step(5_000);
    const err = await pending;
    expect(err).toBeInstanceOf(KubeRequestError);
    expect((err as Error).message).toBe('GET /api/v1/pods: body timed out after 5000 ms');
  });

  it('fails a request whose body is cut off by the connection with a transient error', async () => {
    respond = (_q, _b, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' }).write('{"items":[');
      setImmediate(() => res.socket?.destroy());
    };
    const err = await client().request('GET', '/api/v1/pods').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeRequestError);
    expect((err as Error).message).toBe('GET /api/v1/pods: body failed: aborted');
    expect(isTransientError(err)).toBe(true);
  });

  it('stops reading a LIST page whose answer passes maxBytes, closes its connection, and still reads one within it', async () => {
    let written = 0;
    let closed = false;
    respond = (req, _b, res) => {
      if (req.url?.includes('limit=40')) {
        // An answer of 64 MiB: only the cap can stop the reading early.
        res.once('close', () => void (closed = true));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const more = (): void => {
          if (res.destroyed || written > 64 * 2 ** 20) return;
          written += 64 * 1024;
          if (res.write('x'.repeat(64 * 1024))) setImmediate(more);
          else res.once('drain', more);
        };
        res.write('{"items":[');
        more();
        return;
      }
      res.writeHead(200).end(JSON.stringify({ metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'x'.repeat(1000) } }] }));
    };
    const c = client();
    const err = await cronJobs(c).list({ namespace: 'ns', limit: 40, maxBytes: 256 * 1024 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toBe('GET /apis/batch/v1/namespaces/ns/cronjobs: the answer passed 262144 bytes');
    expect(isTransientError(err)).toBe(false);
    // The server saw its connection closed long before it wrote everything it would have.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(true);
    expect(written).toBeLessThan(32 * 2 ** 20);
    const small = await cronJobs(c).list({ namespace: 'ns', limit: 20, maxBytes: 256 * 1024 });
    expect(small.items).toHaveLength(1);
  });

  it('fails a request aborted while its body arrives, without waiting for the body', async () => {
    respond = (_q, _b, res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).write('{"items":[');
    const abort = new AbortController();
    const pending = client({ onRequest: () => setImmediate(() => abort.abort()) }).request('GET', '/api/v1/pods', { signal: abort.signal }).catch((e: unknown) => e);
    const err = await pending;
    expect(err).toBeInstanceOf(KubeRequestError);
    expect((err as Error).message).toBe('GET /api/v1/pods: connection closed before the body ended');
  });

  it('reports every request to the observer with method, host and code', async () => {
    const observed: RequestObservation[] = [];
    respond = (req, _b, res) => res.writeHead(req.method === 'GET' ? 404 : 201).end(req.method === 'GET' ? JSON.stringify(statusErrors.notFound({ group: '', resource: 'namespaces' }, 'x')) : '{}');
    const ns = namespaces(client({ onRequest: (o) => observed.push(o) }));
    await ns.get({ name: 'x' }).catch(() => undefined);
    await ns.create({ metadata: { name: 'x' } });
    expect(observed.map((o) => [o.method, o.code, o.host])).toEqual([['GET', '404', new URL(base).host], ['POST', '201', new URL(base).host]]);
  });

  it('decodes a watch stream whose events are split across and packed into chunks', async () => {
    const events = [
      { type: 'ADDED', object: { metadata: { name: 'ünïcødé-1', resourceVersion: '1' } } },
      { type: 'MODIFIED', object: { metadata: { name: 'b', resourceVersion: '2' } } },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '3' } } },
    ];
    const bytes = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    respond = (_q, _b, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // 7-byte chunks split lines and multi-byte characters.
      let i = 0;
      const tick = (): void => {
        if (i >= bytes.length) return void res.end();
        res.write(bytes.subarray(i, (i += 7)));
        setImmediate(tick);
      };
      tick();
    };
    const got: WatchEvent[] = [];
    for await (const ev of cronJobs(client()).watch({ namespace: 'ns', resourceVersion: '0', timeoutSeconds: 300 })) got.push(ev);
    expect(got).toEqual(events);
    expect(seen[0]?.url).toBe('/apis/batch/v1/namespaces/ns/cronjobs?resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=300&watch=true');
  });

  it('throws the Status of a watch refused with HTTP 410 and ends quietly when aborted', async () => {
    respond = (_q, _b, res) => res.writeHead(410).end(JSON.stringify(statusErrors.expired('too old resource version: 1 (5)')));
    const refused = (async () => {
      for await (const _ of cronJobs(client()).watch({ resourceVersion: '1' })) void _;
    })();
    await expect(refused).rejects.toMatchObject({ code: 410, reason: 'Expired' });

    respond = (_q, _b, res) => void res.writeHead(200).write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n');
    const abort = new AbortController();
    const got: string[] = [];
    for await (const ev of cronJobs(client()).watch({ signal: abort.signal })) {
      got.push(ev.type);
      abort.abort();
    }
    expect(got).toEqual(['ADDED']);
  });
});

describe('ResourceClient', () => {
  it.each<[string, (c: KubeClient) => Promise<unknown>, string, string, string | undefined, unknown]>([
    ['get of a cluster-scoped object', (c) => namespaces(c).get({ name: 'kube-system' }), 'GET', '/api/v1/namespaces/kube-system', undefined, ''],
    ['updateStatus', (c) => cronJobs(c).updateStatus({ metadata: { name: 'a', namespace: 'ns', resourceVersion: '4' } }), 'PUT', '/apis/batch/v1/namespaces/ns/cronjobs/a/status', 'application/json', { metadata: { name: 'a', namespace: 'ns', resourceVersion: '4' } }],
    ['a JSON patch', (c) => cronJobs(c).patch({ namespace: 'ns', name: 'a' }, [{ op: 'remove', path: '/spec/x' }], { type: 'json' }), 'PATCH', '/apis/batch/v1/namespaces/ns/cronjobs/a', 'application/json-patch+json', [{ op: 'remove', path: '/spec/x' }]],
    ['a merge patch with field manager', (c) => cronJobs(c).patch({ namespace: 'ns', name: 'a' }, { spec: {} }, { fieldManager: 'op' }), 'PATCH', '/apis/batch/v1/namespaces/ns/cronjobs/a?fieldManager=op', 'application/merge-patch+json', { spec: {} }],
    ['delete with propagation and preconditions', (c) => cronJobs(c).delete({ namespace: 'ns', name: 'a' }, { propagationPolicy: 'Foreground', preconditions: { uid: 'u1' } }), 'DELETE', '/apis/batch/v1/namespaces/ns/cronjobs/a', 'application/json', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground', preconditions: { uid: 'u1' } }],
  ])('sends %s to the right path with the right body', async (_name, call, method, url, contentType, body) => {
    await call(client());
    expect(seen[0]?.method).toBe(method);
    expect(seen[0]?.url).toBe(url);
    expect(seen[0]?.headers['content-type']).toBe(contentType);
    expect(seen[0]?.body ? JSON.parse(seen[0].body) : '').toEqual(body);
  });

  it.each<[string, () => unknown, string]>([
    ['a namespaced get without namespace', () => cronJobs(client()).get({ name: 'a' }), 'cronjobs: namespace is required for "a" (the resource is namespaced)'],
    ['a cluster-scoped list with a namespace', () => namespaces(client()).list({ namespace: 'x' }), 'namespaces: is cluster-scoped, namespace must be omitted (got "x")'],
    ['a create without metadata.namespace', () => cronJobs(client()).create({ metadata: { name: 'a' } }), 'cronjobs: metadata.namespace is required (the resource is namespaced)'],
  ])('rejects %s naming the problem', async (_name, call, message) => {
    await expect(call()).rejects.toThrow(message);
    expect(seen).toEqual([]);
  });
});

describe('decodeWatchStream', () => {
  async function* chunks(parts: string[]): AsyncGenerator<Buffer> {
    for (const p of parts) yield Buffer.from(p);
  }

  it('decodes several events in one chunk and a last line without newline', async () => {
    const out: WatchEvent[] = [];
    for await (const e of decodeWatchStream(chunks(['{"type":"ADDED","object":{"metadata":{}}}\n{"type":"DELETED","object":{"metadata":{}}}\n\n{"type":"BOOKMARK","obj', 'ect":{"metadata":{}}}']))) out.push(e);
    expect(out.map((e) => e.type)).toEqual(['ADDED', 'DELETED', 'BOOKMARK']);
  });

  it.each([
    ['not JSON', 'nope\n', /line is not JSON: nope/],
    ['an unknown type', '{"type":"SYNC","object":{}}\n', /event has no valid "type"/],
    ['no object', '{"type":"ADDED"}\n', /ADDED event has no "object"/],
  ])('rejects a line that is %s', async (_name, text, message) => {
    const run = async (): Promise<void> => {
      for await (const _ of decodeWatchStream(chunks([text]))) void _;
    };
    await expect(run()).rejects.toThrow(message);
  });
});
