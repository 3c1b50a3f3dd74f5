import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth.ts';
import { fail, serverErrors } from '../errors.ts';
import { sendPlainNotFound } from '../http-io.ts';
import { handleReview } from '../handlers/access-review.ts';
import { handleGet, handleList } from '../handlers/read.ts';
import { getScale } from '../handlers/scale.ts';
import { handleTokenRequest } from '../handlers/token-request.ts';
import { handleWatch } from '../handlers/watch.ts';
import { handleCreate, handleDelete, handleDeleteCollection, handlePatch, handleUpdate } from '../handlers/write.ts';
import type { ResourceRequest, ServerContext } from '../server-context.ts';
import type { RequestInfo } from './request-info.ts';

/** Routes an authorized resource request to its handler; unknown paths 404, unsupported verbs 405. */
export async function serveResource(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, info: RequestInfo, query: URLSearchParams, user: AuthenticatedUser): Promise<void> {
  const type = ctx.registry.get(info.apiGroup, info.apiVersion, info.resource);
  // A group nobody serves matches no go-restful web service: kube's handler chain falls through the
  // aggregator and apiextensions to the last delegate, apiserver's notfoundhandler, whose answer is
  // `http.NotFound`'s plain text, not a Status.
  if (!type && info.apiGroup !== '' && !ctx.registry.groups().has(info.apiGroup)) return sendPlainNotFound(res);
  if (!type || info.extraParts > 0) fail(serverErrors.pathNotFound());
  const sub = info.subresource;
  if (sub !== undefined && !type.subresources.includes(sub)) fail(serverErrors.pathNotFound());
  let namespace: string | undefined;
  if (type.namespaced) {
    namespace = info.namespace;
    if (namespace === undefined && info.pathName !== undefined) fail(serverErrors.pathNotFound());
  } else if (info.namespace !== undefined && !(type.group === '' && type.resource === 'namespaces')) {
    fail(serverErrors.pathNotFound());
  }
  const r: ResourceRequest = { req, res, info, query, user, type, namespace };
  const allowed = (verb: string): void => {
    if (!type.verbs.includes(verb)) fail(serverErrors.methodNotAllowed());
  };
  if (type.group === 'authorization.k8s.io' || type.group === 'authentication.k8s.io') {
    if (info.verb !== 'create' || info.pathName !== undefined) fail(serverErrors.methodNotAllowed());
    return handleReview(ctx, r);
  }
  if (sub === 'token') {
    if (info.verb !== 'create') fail(serverErrors.methodNotAllowed());
    return handleTokenRequest(ctx, r);
  }
  if (sub !== undefined && !['get', 'update', 'patch'].includes(info.verb)) fail(serverErrors.methodNotAllowed());
  if (sub === 'scale' && info.verb === 'get') return getScale(ctx, r);
  if ((info.verb === 'update' || info.verb === 'patch') && info.pathName === undefined) fail(serverErrors.methodNotAllowed());
  switch (info.verb) {
    case 'get': allowed('get'); return handleGet(ctx, r);
    case 'list': allowed('list'); return handleList(ctx, r);
    case 'watch': allowed('watch'); return handleWatch(ctx, r);
    case 'create':
      if (info.pathName !== undefined) fail(serverErrors.methodNotAllowed());
      if (type.namespaced && namespace === undefined) fail(serverErrors.pathNotFound());
      allowed('create');
      return handleCreate(ctx, r);
    case 'update': allowed('update'); return handleUpdate(ctx, r);
    case 'patch': allowed('patch'); return handlePatch(ctx, r);
    case 'delete': allowed('delete'); return handleDelete(ctx, r);
    case 'deletecollection': allowed('deletecollection'); return handleDeleteCollection(ctx, r);
    default: fail(serverErrors.methodNotAllowed());
  }
}
