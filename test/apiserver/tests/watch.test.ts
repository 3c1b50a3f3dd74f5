import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../index.ts';
import { client, readWatch } from './http-client.ts';

let server: TestApiServer;
let api: ReturnType<typeof client>;
const CM = '/api/v1/namespaces/w/configmaps';

beforeAll(async () => {
  server = await startTestApiServer({ bookmarkIntervalMs: 50 });
  api = client(server);
  await api('POST', '/api/v1/namespaces', { metadata: { name: 'w' } });
});
afterAll(() => server.stop());

describe('watch', () => {
  it('replays history after the given resourceVersion: ADDED, MODIFIED, DELETED with the deletion version', async () => {
    const start = (await api('GET', CM)).body.metadata.resourceVersion;
    const created = (await api('POST', CM, { metadata: { name: 'x' }, data: { a: '1' } })).body;
    const updated = (await api('PUT', `${CM}/x`, { ...created, data: { a: '2' } })).body;
    await api('DELETE', `${CM}/x`);
    const events = await readWatch(server, `${CM}?watch=1&resourceVersion=${start}`, 3);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[1].object.metadata.resourceVersion).toBe(updated.metadata.resourceVersion);
    expect(Number(events[2].object.metadata.resourceVersion)).toBeGreaterThan(Number(updated.metadata.resourceVersion));
  });

  it('sends synthetic ADDED events for current objects when no resourceVersion is given', async () => {
    await api('POST', CM, { metadata: { name: 'present' } });
    const events = await readWatch(server, `${CM}?watch=true`, 1);
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'present' } } });
  });

  it('answers a compacted resourceVersion with one ERROR event carrying 410 Expired on a 200 stream', async () => {
    const old = (await api('GET', CM)).body.metadata.resourceVersion;
    await api('POST', CM, { metadata: { name: 'newer' } });
    server.compactHistory();
    const events = await readWatch(server, `${CM}?watch=1&resourceVersion=${old}`, 2);
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe('ERROR');
    expect(events[0].object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(events[0].object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  });

  it('turns an object leaving the label selection into DELETED', async () => {
    const created = (await api('POST', CM, { metadata: { name: 'sel', labels: { app: 'a' } } })).body;
    const rv = created.metadata.resourceVersion;
    await api('PATCH', `${CM}/sel`, { metadata: { labels: { app: 'b' } } }, { 'content-type': 'application/merge-patch+json' });
    const events = await readWatch(server, `${CM}?watch=1&resourceVersion=${Number(rv) - 1}&labelSelector=app%3Da`, 2);
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    expect(events[1].object.metadata.labels).toEqual({ app: 'a' });
  });

  it('sends BOOKMARKs with only kind, apiVersion and resourceVersion when allowed, and one before the timeout closes the stream', async () => {
    const rv = (await api('GET', CM)).body.metadata.resourceVersion;
    const events = await readWatch(server, `${CM}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`, 100);
    expect(events.length).toBeGreaterThan(1);
    for (const e of events) expect(e).toEqual({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: expect.any(String) } } });
  });

  it('ends open watches on closeWatches', async () => {
    const pending = readWatch(server, `${CM}?watch=1&resourceVersion=${(await api('GET', CM)).body.metadata.resourceVersion}`, 1);
    await new Promise((r) => setTimeout(r, 50));
    server.closeWatches();
    expect(await pending).toEqual([]);
  });
});
