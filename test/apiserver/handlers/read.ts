import { stringify as toYaml } from 'yaml';
import { statusErrors } from '../../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../../src/kube/object.ts';
import { fail, serverErrors } from '../errors.ts';
import { negotiate, sendJson, sendJsonText } from '../http-io.ts';
import { knownJson } from '../object-json.ts';
import { apiVersionOf, groupResourceKey } from '../resource-type.ts';
import { combinePredicates, parseFieldSelector, parseLabelSelector, SelectorError, type ObjectPredicate } from '../selectors.ts';
import { present, type ResourceRequest, type ServerContext } from '../server-context.ts';
import { partialObjectMetadata, toTable, type IncludeObject } from '../table.ts';
import { oneToRequestVersion, toRequestVersion } from '../conversion/index.ts';

/** Compiles labelSelector + fieldSelector of a request (400 on a bad selector). */
export function requestPredicate(r: ResourceRequest): ObjectPredicate | undefined {
  try {
    return combinePredicates(parseLabelSelector(r.query.get('labelSelector')), parseFieldSelector(r.query.get('fieldSelector'), groupResourceKey(r.type.group, r.type.resource)));
  } catch (err) {
    if (err instanceof SelectorError) fail(statusErrors.badRequest(err.message));
    throw err;
  }
}

function includeObject(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function writeFormatted(r: ResourceRequest, code: number, body: unknown, warnings: readonly string[] = []): void {
  if (negotiate(r.req.headers.accept, false) === 'yaml') {
    r.res.writeHead(code, { 'Content-Type': 'application/yaml' });
    r.res.end(toYaml(body));
    return;
  }
  // A stored object the watch streams serialized a moment ago (the answer to the write that stored it).
  const text = typeof body === 'object' && body !== null ? knownJson(body) : undefined;
  if (text !== undefined) sendJsonText(r.res, code, text, warnings);
  else sendJson(r.res, code, body, warnings);
}

/** Sends one object in the negotiated format (JSON, Table, PartialObjectMetadata). */
export function sendObject(ctx: ServerContext, r: ResourceRequest, code: number, obj: KubeObject, warnings: readonly string[] = []): void {
  const format = negotiate(r.req.headers.accept, true);
  const shown = present(r.type, obj);
  if (format === 'table') return sendJson(r.res, code, toTable(r.type, [shown], { resourceVersion: shown.metadata.resourceVersion }, includeObject(r.query), ctx.clock.now()), warnings);
  if (format === 'partial') return sendJson(r.res, code, partialObjectMetadata(shown), warnings);
  writeFormatted(r, code, shown, warnings);
}

/** Sends a stored object converted to the request's version (a custom resource stored in another one). */
export async function sendStored(ctx: ServerContext, r: ResourceRequest, code: number, stored: KubeObject, warnings: readonly string[] = []): Promise<void> {
  sendObject(ctx, r, code, await oneToRequestVersion(ctx, r.type, stored), warnings);
}

/** GET of one object. */
export async function handleGet(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  await sendStored(ctx, r, 200, ctx.store.get(r.type, r.namespace, r.info.pathName ?? ''));
}

interface ContinueToken {
  readonly v: string;
  readonly rv: number;
  readonly start: string;
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
    if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.rv !== 'number' || typeof parsed.start !== 'string') throw new Error('bad token');
    return parsed;
  } catch {
    return fail(statusErrors.badRequest(`continue key is not valid: ${token}`));
  }
}

function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString('base64url');
}

function keyOf(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? '');
}

/** Parses a resourceVersion query parameter; 400 when it is not a number. */
export function parseResourceVersion(raw: string | null): number | undefined {
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) fail(statusErrors.badRequest(`resourceVersion: Invalid value: "${raw}": must be a non-negative integer`));
  return Number(raw);
}

/**
 * LIST with resourceVersion semantics, selectors and limit/continue pagination (continue tokens
 * are kube's: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"<last key>\u0000"}`).
 */
export async function handleList(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const q = r.query;
  const format = negotiate(r.req.headers.accept, true);
  const predicate = requestPredicate(r);
  const current = ctx.storage.resourceVersion;
  const rv = parseResourceVersion(q.get('resourceVersion'));
  // resourceVersion=0 is served from the watch cache, which ignores limit in 1.32 (one complete page).
  const limit = q.get('resourceVersion') === '0' && !q.get('continue') ? 0 : Number(q.get('limit') ?? '0') || 0;
  const cont = q.get('continue');
  let listRv = current;
  let start = '';
  const gr = groupResourceKey(r.type.group, r.type.resource);
  const ns = r.type.namespaced ? r.namespace : undefined;
  let all: KubeObject[] | undefined;
  if (cont) {
    const token = decodeContinue(cont);
    listRv = token.rv;
    start = token.start;
    // Later pages are read at the first page's version, like etcd's MVCC range read.
    all = ctx.storage.listAt(gr, ns, token.rv);
    if (!all) fail(serverErrors.continueExpired());
  } else if (rv !== undefined && rv > 0) {
    if (rv > current) {
      fail({ ...statusErrors.timeout(`Too large resource version: ${rv}, current: ${current}`), details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 } });
    }
    if (q.get('resourceVersionMatch') === 'Exact') {
      all = ctx.storage.listAt(gr, ns, rv);
      if (!all) fail(statusErrors.expired());
      listRv = rv;
    }
  }
  all ??= ctx.storage.list(gr, ns);
  let items: KubeObject[] = [];
  let i = 0;
  if (start) while (i < all.length && keyOf(all[i] as KubeObject) < start) i++;
  let more = false;
  let lastKey = '';
  for (; i < all.length; i++) {
    const obj = all[i] as KubeObject;
    if (predicate && !predicate(obj)) continue;
    if (limit > 0 && items.length === limit) {
      more = true;
      break;
    }
    items.push(obj);
    lastKey = keyOf(obj);
  }
  // Custom resources stored in another version are converted, all in one review (kube: one per item).
  if (r.type.custom) items = await toRequestVersion(ctx, r.type, items);
  const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
  if (more) {
    metadata['continue'] = encodeContinue(listRv, lastKey);
    // etcd counts what is left only when nothing filters the range.
    if (!predicate) metadata['remainingItemCount'] = all.length - i;
  }
  const now = ctx.clock.now();
  if (format === 'table') return sendJson(r.res, 200, toTable(r.type, items.map((o) => present(r.type, o)), metadata, includeObject(q), now));
  if (format === 'partial-list' || format === 'partial') {
    return sendJson(r.res, 200, { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata, items: items.map(partialObjectMetadata) });
  }
  // Built-in lists come from etcd without per-item kind/apiVersion; custom resource lists keep them.
  const shown = r.type.custom ? items.map((o) => present(r.type, o)) : items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
  writeFormatted(r, 200, { kind: r.type.listKind, apiVersion: apiVersionOf(r.type), metadata, items: shown });
}
