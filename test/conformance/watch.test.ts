/**
 * WATCH as a chunked stream of JSON lines (watch-stream-widgets.txt): ADDED/MODIFIED/DELETED in order,
 * namespaced and all-namespaces, replay after a resourceVersion, BOOKMARK with allowWatchBookmarks,
 * the end of the stream after timeoutSeconds, and the 410 Expired ERROR event after compaction
 * (watch-410-expired.txt; the compaction trigger exists only on the test server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cmPath, configMap, failure, must, rand, useCluster, useWidgets, type WatchStream } from './harness.ts';

const cluster = useCluster();
const widgets = useWidgets(cluster);

const streams: WatchStream[] = [];
function track(w: WatchStream): WatchStream {
  streams.push(w);
  return w;
}
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED for a namespace, in order, with the objects', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    const list = must(await api.get(cmPath(ns)), 200);
    const w = track(api.watch(cmPath(ns), { resourceVersion: list.metadata.resourceVersion, fieldSelector: 'metadata.name=w1' }));
    const res = await w.response;
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    const created = must(await api.post(cmPath(ns), configMap('w1')), 201);
    const updated = must(await api.patch(cmPath(ns, 'w1'), { data: { k: 'v2' } }), 200);
    must(await api.delete(cmPath(ns, 'w1')), 200);
    const added = await w.nextChange();
    expect(added).toMatchObject({ type: 'ADDED', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'w1', namespace: ns, resourceVersion: created.metadata.resourceVersion } } });
    const modified = await w.nextChange();
    expect(modified).toMatchObject({ type: 'MODIFIED', object: { data: { k: 'v2' }, metadata: { resourceVersion: updated.metadata.resourceVersion } } });
    const deleted = await w.nextChange();
    expect(deleted).toMatchObject({ type: 'DELETED', object: { kind: 'ConfigMap', metadata: { name: 'w1', uid: created.metadata.uid } } });
  });

  it('streams events of every namespace at the cluster-wide path', async () => {
    const { api } = cluster();
    const tag = rand();
    const ns1 = await cluster().namespace('watch');
    const ns2 = await cluster().namespace('watch');
    const w = track(api.watch('/api/v1/configmaps', { labelSelector: `tag=${tag}` }));
    expect((await w.response).statusCode).toBe(200);
    must(await api.post(cmPath(ns1), configMap('a', { metadata: { labels: { tag } } })), 201);
    must(await api.post(cmPath(ns2), configMap('b', { metadata: { labels: { tag } } })), 201);
    const seen = [await w.nextChange(), await w.nextChange()].map((e) => `${e?.type} ${e?.object.metadata.namespace}/${e?.object.metadata.name}`);
    expect(seen.sort()).toEqual([`ADDED ${ns1}/a`, `ADDED ${ns2}/b`].sort());
  });

  it('replays every change after the given resourceVersion', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    const first = must(await api.post(cmPath(ns), configMap('a')), 201);
    must(await api.patch(cmPath(ns, 'a'), { data: { k: 'v2' } }), 200);
    must(await api.post(cmPath(ns), configMap('b')), 201);
    must(await api.delete(cmPath(ns, 'a')), 200);
    const w = track(api.watch(cmPath(ns), { resourceVersion: first.metadata.resourceVersion }));
    const events = [];
    for (let i = 0; i < 3; i++) {
      const e = await w.nextChange();
      if (e?.object.metadata.name === 'kube-root-ca.crt') {
        i--;
        continue;
      }
      events.push(`${e?.type} ${e?.object.metadata.name}`);
    }
    expect(events).toEqual(['MODIFIED a', 'ADDED b', 'DELETED a']);
  });

  it('sends the current objects as ADDED when started without a resourceVersion', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    must(await api.post(cmPath(ns), configMap('existing')), 201);
    const w = track(api.watch(cmPath(ns), { fieldSelector: 'metadata.name=existing' }));
    expect(await w.nextChange()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'existing' } } });
  });

  it('sends DELETED when an object stops matching the labelSelector and ADDED when it starts', async () => {
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    must(await api.post(cmPath(ns), configMap('a', { metadata: { labels: { role: 'x' } } })), 201);
    const list = must(await api.get(cmPath(ns), { query: { labelSelector: 'role=x' } }), 200);
    const w = track(api.watch(cmPath(ns), { resourceVersion: list.metadata.resourceVersion, labelSelector: 'role=x' }));
    const moved = must(await api.patch(cmPath(ns, 'a'), { metadata: { labels: { role: 'y' } } }), 200);
    must(await api.patch(cmPath(ns, 'a'), { data: { k: 'unseen' } }), 200);
    must(await api.patch(cmPath(ns, 'a'), { metadata: { labels: { role: 'x' } } }), 200);
    const left = await w.nextChange();
    // The watch cache sends the previous content (which matched) at the event's resourceVersion.
    expect(left).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'a', labels: { role: 'x' }, resourceVersion: moved.metadata.resourceVersion } } });
    const back = await w.nextChange();
    expect(back).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'a', labels: { role: 'x' } }, data: { k: 'unseen' } } });
  });

  it('answers a LIST at an exact compacted resourceVersion with HTTP 410 Expired', async (ctx) => {
    if (!cluster().hasDebug) ctx.skip(); // compaction can be forced only on the test server
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    const old = must(await api.post(cmPath(ns), configMap('a')), 201);
    must(await api.patch(cmPath(ns, 'a'), { data: { k: 'v2' } }), 200);
    must(await api.post('/debug/compact', {}), 200, 201, 204);
    const res = await api.get(cmPath(ns), { query: { resourceVersion: old.metadata.resourceVersion, resourceVersionMatch: 'Exact' } });
    expect(res.status).toBe(410);
    expect(res.body).toEqual(failure(410, 'Expired', 'The resourceVersion for the provided list is too old.'));
  });

  it('answers a watch from a compacted resourceVersion with HTTP 200 and one ERROR event 410 Expired', async (ctx) => {
    if (!cluster().hasDebug) ctx.skip(); // compaction can be forced only on the test server
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    const old = must(await api.post(cmPath(ns), configMap('a')), 201);
    for (let i = 0; i < 3; i++) must(await api.patch(cmPath(ns, 'a'), { data: { k: `v${i}` } }), 200);
    must(await api.post('/debug/compact', {}), 200, 201, 204);
    const stream = track(api.watch(cmPath(ns), { resourceVersion: old.metadata.resourceVersion }));
    expect((await stream.response).statusCode).toBe(200);
    const events = await stream.drain(5_000);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Expired', code: 410 } });
    expect(events[0]?.object.message).toMatch(new RegExp(`^too old resource version: ${old.metadata.resourceVersion} \\(\\d+\\)$`));
  });
});

// These wait for the server's timeout: run them side by side to keep the suite fast. They end their
// own streams (the server closes them), so they do not use `track` (its afterEach would cut the others).
describe.concurrent('watch timeouts', () => {
  it('sends a BOOKMARK carrying only kind, apiVersion and metadata.resourceVersion before timeoutSeconds ends the stream', async ({ expect }) => {
    const { api } = cluster();
    const w = widgets();
    const ns = await cluster().namespace('watch');
    const created = must(await api.post(w.path(ns), w.body('w1')), 201);
    const stream = (api.watch(w.path(ns), { resourceVersion: created.metadata.resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: 3 }));
    expect((await stream.response).statusCode).toBe(200);
    // Bookmarks are best effort: the watch cache sends one (about a second before the deadline, and
    // each second after) at the last resourceVersion it processed, and a watcher drops any event not
    // newer than the resourceVersion it started from (cacheWatcher.process, 1.20 and since). Without a
    // change to this resource after the watch's start, a 1.20 server has nothing newer to bookmark.
    const later = must(await api.post(w.path(ns), w.body('w2')), 201);
    const events = await stream.drain(10_000);
    expect(events.find((e) => e.type === 'ADDED')).toMatchObject({ object: { metadata: { name: 'w2' } } });
    const bookmarks = events.filter((e) => e.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThanOrEqual(1);
    expect(BigInt(bookmarks.at(-1)?.object.metadata.resourceVersion ?? '0')).toBeGreaterThanOrEqual(BigInt(later.metadata.resourceVersion ?? ''));
    for (const b of bookmarks) {
      expect(Object.keys(b.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(b.object).toMatchObject({ kind: 'Widget', apiVersion: w.apiVersion });
      expect(Object.keys(b.object.metadata)).toEqual(['resourceVersion']);
      expect(typeof b.object.metadata.resourceVersion).toBe('string');
    }
    expect(stream.durationMs).toBeGreaterThan(2_500);
  });

  it('sends no BOOKMARK without allowWatchBookmarks', async ({ expect }) => {
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    const list = must(await api.get(cmPath(ns)), 200);
    const stream = (api.watch(cmPath(ns), { resourceVersion: list.metadata.resourceVersion, timeoutSeconds: 3 }));
    const events = await stream.drain(10_000);
    expect(events.filter((e) => e.type === 'BOOKMARK')).toEqual([]);
  });

  it('ends the stream after timeoutSeconds', async ({ expect }) => {
    const { api } = cluster();
    const ns = await cluster().namespace('watch');
    const list = must(await api.get(cmPath(ns)), 200);
    const stream = (api.watch(cmPath(ns), { resourceVersion: list.metadata.resourceVersion, timeoutSeconds: 1 }));
    await stream.drain(8_000);
    expect(stream.durationMs).toBeGreaterThan(900);
    expect(stream.durationMs).toBeLessThan(6_000);
  });
});
