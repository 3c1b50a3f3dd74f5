import { statusErrors } from '../../../src/kube/api-status-error.ts';
import { fail } from '../errors.ts';
import { parseBody, readBody, sendJson } from '../http-io.ts';
import { API_AUDIENCE } from '../auth.ts';
import { rfc3339 } from '../object-meta.ts';
import type { ResourceRequest, ServerContext } from '../server-context.ts';

/** Default and minimum `expirationSeconds` of a TokenRequest (kube: 1 h default, 10 min minimum). */
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;

/** `spec.boundObjectRef` of a TokenRequest. */
interface BoundObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

/**
 * The Secret a token is bound to (`serviceaccount/storage` `TokenREST.Create`): binding to a Pod or a
 * Node is not ported (Nodes are not served, Pods are stored but never run), so it answers 404 as for a
 * missing object; other kinds are 400; a uid that does not match is 409.
 */
function boundSecret(ctx: ServerContext, namespace: string, ref: BoundObjectReference): { name: string; uid: string } {
  const name = ref.name ?? '';
  const apiVersion = ref.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group !== '' || !['Secret', 'Pod', 'Node'].includes(ref.kind ?? '')) {
    // schema.GroupVersionKind.String(): `<group>/<version>, Kind=<kind>`.
    fail(statusErrors.badRequest(`cannot bind token to object of type ${apiVersion.includes('/') ? apiVersion : `/${apiVersion}`}, Kind=${ref.kind ?? ''}`));
  }
  if (ref.kind !== 'Secret') fail(statusErrors.notFound({ group: '', resource: ref.kind === 'Pod' ? 'pods' : 'nodes' }, name));
  const secret = ctx.storage.get('/secrets', namespace, name);
  if (!secret) fail(statusErrors.notFound({ group: '', resource: 'secrets' }, name));
  if (ref.uid && ref.uid !== secret.metadata.uid) {
    fail(statusErrors.conflict({ group: '', resource: 'Secret' }, name, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`));
  }
  return { name, uid: secret.metadata.uid ?? '' };
}

/** Issues a token for a ServiceAccount; what `POST …/serviceaccounts/<name>/token` and the library call share. */
export function issueToken(ctx: ServerContext, namespace: string, name: string, expirationSeconds = DEFAULT_EXPIRATION_SECONDS, audiences: readonly string[] = [API_AUDIENCE], bound?: BoundObjectReference): { token: string; expirationTimestamp: string } {
  const type = ctx.registry.get('', 'v1', 'serviceaccounts');
  if (!type) throw new Error('serviceaccounts is not registered');
  const sa = ctx.store.get(type, namespace, name);
  const secret = bound ? boundSecret(ctx, namespace, bound) : undefined;
  const now = ctx.clock.now();
  const token = ctx.auth.issueServiceAccountToken(namespace, name, sa.metadata.uid ?? '', now, expirationSeconds, audiences, secret);
  return { token, expirationTimestamp: rfc3339(now + expirationSeconds * 1000) };
}

/** `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` (authentication.k8s.io/v1 TokenRequest). */
export async function handleTokenRequest(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const raw = await readBody(r.req);
  const body = (raw.length ? parseBody(raw, r.req.headers['content-type']) : {}) as { spec?: { audiences?: string[]; expirationSeconds?: number; boundObjectRef?: BoundObjectReference } } | null;
  const spec = body?.spec ?? {};
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) {
    fail(statusErrors.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, r.info.pathName ?? '', [{ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes` }]));
  }
  const audiences = spec.audiences?.length ? spec.audiences : [API_AUDIENCE];
  const issued = issueToken(ctx, r.namespace ?? '', r.info.pathName ?? '', expirationSeconds, audiences, spec.boundObjectRef ?? undefined);
  sendJson(r.res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: r.info.pathName, namespace: r.namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
    status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
  });
}
