/**
 * Parses a request path and method the way kube-apiserver's `RequestInfoFactory`
 * (`staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`) does, to drive authorization,
 * fault injection, the request log and routing.
 */

/** kube's `RequestInfo`. */
export interface RequestInfo {
  readonly isResourceRequest: boolean;
  readonly path: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection (or the lowercase HTTP method for non-resource URLs). */
  readonly verb: string;
  /** `api` or `apis`. */
  readonly prefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace?: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly name?: string;
  /** The name in the path (unlike `name`, never taken from a fieldSelector). */
  readonly pathName?: string;
  /** Path segments that were left over (an invalid deeper path). */
  readonly extraParts: number;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function nonResource(path: string, method: string): RequestInfo {
  return { isResourceRequest: false, path, verb: method.toLowerCase(), prefix: '', apiGroup: '', apiVersion: '', resource: '', extraParts: 0 };
}

/** Builds the RequestInfo of `method path?query`. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = path.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return nonResource(path, method);
  let rest = parts.slice(1);
  let apiGroup = '';
  if (prefix === 'apis') {
    if (rest.length < 2) return nonResource(path, method);
    apiGroup = rest[0] as string;
    rest = rest.slice(1);
  } else if (rest.length < 1) {
    return nonResource(path, method);
  }
  const apiVersion = rest[0] as string;
  rest = rest.slice(1);
  if (rest.length === 0) return nonResource(path, method);

  let verb = '';
  switch (method) {
    case 'POST': verb = 'create'; break;
    case 'GET': case 'HEAD': verb = 'get'; break;
    case 'PUT': verb = 'update'; break;
    case 'PATCH': verb = 'patch'; break;
    case 'DELETE': verb = 'delete'; break;
    default: verb = method.toLowerCase();
  }
  // Deprecated `/watch/` path prefix.
  if (rest[0] === 'watch') {
    verb = 'watch';
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      namespace = rest[1];
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) rest = rest.slice(2);
    }
  }
  const resource = rest[0] ?? '';
  const name = rest[1];
  const subresource = rest[2];
  const extraParts = Math.max(0, rest.length - 3);

  if (name === undefined) {
    if (verb === 'get') verb = 'list';
    if (verb === 'delete') verb = 'deletecollection';
  }
  const watchParam = query.get('watch');
  if ((verb === 'list' || verb === 'get') && (watchParam === '1' || watchParam === 'true')) verb = 'watch';
  let effectiveName = name;
  // A list/watch narrowed by `fieldSelector=metadata.name=x` is authorized as a request for that name.
  if ((verb === 'list' || verb === 'watch') && name === undefined) {
    const fs = query.get('fieldSelector') ?? '';
    for (const term of fs.split(',')) {
      const m = /^metadata\.name(==?)(.*)$/.exec(term.trim());
      if (m) effectiveName = m[2];
    }
  }
  return {
    isResourceRequest: true,
    path,
    verb,
    prefix,
    apiGroup,
    apiVersion,
    ...(namespace !== undefined ? { namespace } : {}),
    resource,
    ...(subresource !== undefined ? { subresource } : {}),
    ...(effectiveName !== undefined ? { name: effectiveName } : {}),
    ...(name !== undefined ? { pathName: name } : {}),
    extraParts,
  };
}
