import type { KubeObject } from '../../../src/kube/object.ts';
import { statusErrors } from '../../../src/kube/api-status-error.ts';
import { fail, serverErrors } from '../errors.ts';
import { negotiate } from '../http-io.ts';
import { apiVersionOf, groupResourceKey } from '../resource-type.ts';
import { present, type ResourceRequest, type ServerContext } from '../server-context.ts';
import { toTable } from '../table.ts';
import type { StoredEvent, WatchSubscriber } from '../watch-hub.ts';
import { flushPerTurn } from '../watch-flush.ts';
import { storedJson } from '../object-json.ts';
import { parseResourceVersion, requestPredicate } from './read.ts';

/**
 * WATCH: a chunked stream of one JSON event per line. Starts at `resourceVersion` (replaying the
 * retained history after it; a compacted version gets one ERROR event with a 410 Expired Status on
 * a 200 stream), or, when unset/0, with synthetic ADDED events for the current objects. Selector
 * watches see an object leave as DELETED and enter as ADDED, like kube's cacher. BOOKMARKs are sent
 * periodically and right before `timeoutSeconds` ends the stream when `allowWatchBookmarks` is set.
 */
export function handleWatch(ctx: ServerContext, r: ResourceRequest): void {
  const q = r.query;
  const type = r.type;
  const gr = groupResourceKey(type.group, type.resource);
  const predicate = requestPredicate(r);
  const asTable = negotiate(r.req.headers.accept, true) === 'table';
  const rv = parseResourceVersion(q.get('resourceVersion'));
  const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
  const sendInitial = q.get('sendInitialEvents') === 'true';
  const timeoutParam = Number(q.get('timeoutSeconds') ?? '');
  // Without timeoutSeconds kube picks a random timeout in [minRequestTimeout, 2*minRequestTimeout) (30–60 min).
  const timeoutMs = Number.isFinite(timeoutParam) && timeoutParam > 0 ? timeoutParam * 1000 : (1800 + Math.random() * 1800) * 1000;
  const namespace = type.namespaced ? r.namespace : undefined;
  const current = ctx.storage.resourceVersion;
  if (rv !== undefined && rv > current) {
    // kube waits up to 3 s for its cache to catch up, then answers 504 with ResourceVersionTooLarge.
    fail({ ...statusErrors.timeout(`Too large resource version: ${rv}, current: ${current}`), details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 } });
  }
  const res = r.res;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();

  const inScope = (obj: KubeObject | undefined): boolean =>
    obj !== undefined && (namespace === undefined || obj.metadata.namespace === namespace) && (!predicate || predicate(obj));

  const out = flushPerTurn(res);
  const send = (text: string): void => out.write(text);
  const emit = (type: string, obj: KubeObject, raw?: string): void => {
    if (res.writableEnded) return;
    if (asTable && type !== 'BOOKMARK') {
      send(`{"type":"${type}","object":${JSON.stringify(toTable(r.type, [present(r.type, obj)], { resourceVersion: obj.metadata.resourceVersion }, 'Metadata', ctx.clock.now()))}}\n`);
      return;
    }
    send(`{"type":"${type}","object":${raw ?? JSON.stringify(present(r.type, obj))}}\n`);
  };
  // A custom resource stored in another version is converted for this watcher; while a conversion is
  // pending, later events queue behind it so the stream keeps resourceVersion order.
  const target = apiVersionOf(type);
  let chain: Promise<void> = Promise.resolve();
  let pending = 0;
  /** Sends events of one type in order, converting them (in one review) when needed. */
  const writeAll = (evType: string, objs: readonly KubeObject[], raw?: string): void => {
    if (pending === 0 && (evType === 'BOOKMARK' || !objs.some((o) => ctx.converter.needs(type, o, target)))) {
      for (const o of objs) emit(evType, o, raw);
      return;
    }
    pending++;
    chain = chain
      .then(async () => {
        if (res.writableEnded) return;
        const shown = evType === 'BOOKMARK' ? objs : await ctx.converter.convert(type, objs, target);
        for (const o of shown) emit(evType, o);
      })
      // kube's watch cache fails to decode the event, restarts and ends every watcher of the version.
      .catch(() => finish())
      .finally(() => void pending--);
  };
  const write = (evType: string, obj: KubeObject, raw?: string): void => writeAll(evType, [obj], raw);
  const bookmark = (annotations?: Record<string, string>): void => {
    write('BOOKMARK', { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(ctx.storage.resourceVersion), ...(annotations ? { annotations } : {}) } });
  };
  const sameVersion = (obj: KubeObject): boolean => obj.apiVersion === apiVersionOf(type);

  const deliver = (e: StoredEvent): void => {
    const now = inScope(e.object);
    const before = e.type === 'ADDED' ? false : inScope(e.prev);
    if (e.type === 'DELETED') {
      if (before) write('DELETED', e.object, sameVersion(e.object) ? storedJson(e.object) : undefined);
      return;
    }
    if (now && before) write('MODIFIED', e.object, sameVersion(e.object) ? storedJson(e.object) : undefined);
    else if (now) write('ADDED', e.object, sameVersion(e.object) ? storedJson(e.object) : undefined);
    else if (before && e.prev) {
      // Left the selection: DELETED with the previous content at the new resourceVersion (cacher `convertToWatchEvent`).
      write('DELETED', { ...e.prev, metadata: { ...e.prev.metadata, resourceVersion: String(e.rv) } });
    }
  };

  let timers: NodeJS.Timeout[] = [];
  const sub: WatchSubscriber = {
    gr,
    deliver,
    close: () => finish(),
  };
  const finish = (): void => {
    for (const t of timers) clearTimeout(t);
    for (const t of timers) clearInterval(t);
    timers = [];
    ctx.storage.hub.unsubscribe(sub);
    out.flush();
    if (!res.writableEnded) res.end();
  };
  r.req.on('close', finish);
  res.on('close', finish);
  // A client that vanished mid-write must not take the server down.
  res.on('error', finish);

  if (rv === undefined || rv === 0 || sendInitial) {
    writeAll('ADDED', predicate ? ctx.storage.list(gr, namespace).filter(predicate) : ctx.storage.list(gr, namespace));
    const start = ctx.storage.hub.subscribe(sub, ctx.storage.resourceVersion);
    if (!start.ok) return finish();
    if (sendInitial) bookmark({ 'k8s.io/initial-events-end': 'true' });
  } else {
    const start = ctx.storage.hub.subscribe(sub, rv);
    if (!start.ok) {
      res.write(`{"type":"ERROR","object":${JSON.stringify(serverErrors.watchExpired(rv, start.oldestRetained))}}\n`);
      return finish();
    }
    for (const e of start.replay) deliver(e);
  }
  if (bookmarks) timers.push(setInterval(() => bookmark(), ctx.bookmarkIntervalMs).unref());
  timers.push(
    setTimeout(() => {
      if (bookmarks) bookmark();
      finish();
    }, timeoutMs).unref(),
  );
}
