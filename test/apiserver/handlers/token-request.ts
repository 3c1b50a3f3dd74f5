import { statusErrors } from '../../../src/kube/api-status-error.ts';
import { fail } from '../errors.ts';
import { parseBody, readBody, sendJson } from '../http-io.ts';
import { rfc3339 } from '../object-meta.ts';
import type { ResourceRequest, ServerContext } from '../server-context.ts';

/** Default and minimum `expirationSeconds` of a TokenRequest (kube: 1 h default, 10 min minimum). */
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;

/** Issues a token for a ServiceAccount; what `POST …/serviceaccounts/<name>/token` and the library call share. */
export function issueToken(ctx: ServerContext, namespace: string, name: string, expirationSeconds = DEFAULT_EXPIRATION_SECONDS, audiences: readonly string[] = ['https://kubernetes.default.svc.cluster.local']): { token: string; expirationTimestamp: string } {
  const type = ctx.registry.get('', 'v1', 'serviceaccounts');
  if (!type) throw new Error('serviceaccounts is not registered');
  const sa = ctx.store.get(type, namespace, name);
  const now = ctx.clock.now();
  const token = ctx.auth.issueServiceAccountToken(namespace, name, sa.metadata.uid ?? '', now, expirationSeconds, audiences);
  return { token, expirationTimestamp: rfc3339(now + expirationSeconds * 1000) };
}

/** `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` (authentication.k8s.io/v1 TokenRequest). */
export async function handleTokenRequest(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const raw = await readBody(r.req);
  const body = (raw.length ? parseBody(raw, r.req.headers['content-type']) : {}) as { spec?: { audiences?: string[]; expirationSeconds?: number } } | null;
  const spec = body?.spec ?? {};
  const expirationSeconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) {
    fail(statusErrors.invalid({ group: 'authentication.k8s.io', kind: 'TokenRequest' }, r.info.pathName ?? '', [{ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes` }]));
  }
  const audiences = spec.audiences?.length ? spec.audiences : ['https://kubernetes.default.svc.cluster.local'];
  const issued = issueToken(ctx, r.namespace ?? '', r.info.pathName ?? '', expirationSeconds, audiences);
  sendJson(r.res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: r.info.pathName, namespace: r.namespace, creationTimestamp: null },
    spec: { audiences, expirationSeconds, boundObjectRef: null },
    status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
  });
}
