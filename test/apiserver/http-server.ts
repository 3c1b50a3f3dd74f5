import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ApiStatusError, statusErrors } from '../../src/kube/api-status-error.ts';
import type { KubeObject } from '../../src/kube/object.ts';
import type { AuthenticatedUser } from './auth.ts';
import { serveDebug, type LoopDelayProbe } from './debug-endpoints.ts';
import type { FaultInjector } from './faults/index.ts';
import { sendStatus } from './http-io.ts';
import { authorize, forbiddenStatus, type AuthorizationAttributes, type RbacObjects } from './rbac/index.ts';
import { rbacObjects } from './rbac-cache.ts';
import type { RequestLog, RequestLogEntry } from './request-log.ts';
import { serveNonResource } from './router/non-resource.ts';
import { parseRequestInfo } from './router/request-info.ts';
import { serveResource } from './router/resource-router.ts';
import type { ServerContext } from './server-context.ts';

/** Controls of the test-only machinery around the request pipeline. */
export interface PipelineControls {
  readonly faults: FaultInjector;
  readonly log: RequestLog;
  readonly loopDelay: LoopDelayProbe;
  /** Resolves when requests may proceed (pause/resume). */
  gate(): Promise<void> | undefined;
  pause(): void;
  resume(): void;
  compact(): void;
  closeWatches(): void;
}


/**
 * The request pipeline of kube-apiserver in the order its filters run: (pause gate) → authentication
 * (bearer token, 401) → test debug endpoints (admin only) → authorization (RBAC, 403) → fault
 * injection → routing; every request lands in the request log with its final code.
 */
export function createRequestHandler(ctx: ServerContext, controls: PipelineControls, serverAddress: () => string): RequestListener {
  const rbac = (): RbacObjects => rbacObjects(ctx.storage);
  const uidOf = (resource: 'serviceaccounts' | 'secrets', namespace: string, name: string): string | undefined => (ctx.storage.get(`/${resource}`, namespace, name) as KubeObject | undefined)?.metadata.uid;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const url = { pathname: q < 0 ? rawUrl : rawUrl.slice(0, q), searchParams: new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1)) };
    // The debug endpoints bypass the pause, or nobody could resume.
    const gate = url.pathname.startsWith('/debug/') ? undefined : controls.gate();
    if (gate) await gate;
    const info = parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams);
    const entry: RequestLogEntry = controls.log.add({
      time: new Date(ctx.clock.now()).toISOString(),
      user: '',
      verb: info.verb,
      apiGroup: info.apiGroup,
      apiVersion: info.apiVersion,
      resource: info.isResourceRequest ? info.resource : info.path,
      ...(info.subresource !== undefined ? { subresource: info.subresource } : {}),
      ...(info.namespace !== undefined ? { namespace: info.namespace } : {}),
      ...(info.name !== undefined ? { name: info.name } : {}),
      code: 0,
    });
    try {
      let user: AuthenticatedUser | undefined = ctx.auth.authenticate(req.headers.authorization, ctx.clock.now(), uidOf);
      if (!user) throw new ApiStatusError(statusErrors.unauthorized());
      user = impersonate(req, user, rbac());
      entry.user = user.name;
      controls.log.identified(entry);
      if (url.pathname.startsWith('/debug/')) {
        if (!user.groups.includes('system:masters')) throw new ApiStatusError(forbiddenStatus(attributes(user, info)));
        await serveDebug(req, res, url.pathname, controls);
        return;
      }
      const attrs = attributes(user, info);
      const decision = authorize(rbac(), attrs);
      if (!decision.allowed) throw new ApiStatusError(forbiddenStatus(attrs));
      const fault = controls.faults.match(attrs);
      if (fault) {
        if (fault.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs));
        if (fault.status) throw new ApiStatusError(fault.status);
      }
      if (info.isResourceRequest) await serveResource(ctx, req, res, info, url.searchParams, user);
      else serveNonResource(ctx, req, res, url.pathname, serverAddress());
    } catch (err) {
      if (res.headersSent) {
        res.end();
      } else if (err instanceof ApiStatusError) {
        sendStatus(res, err.status);
      } else {
        sendStatus(res, statusErrors.internalError(err instanceof Error ? err.message : String(err)));
      }
    } finally {
      entry.code = res.statusCode;
    }
  };

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Failures before the pipeline's own error handling (a malformed %-escape in the path).
      if (res.headersSent) res.destroy();
      else sendStatus(res, err instanceof URIError ? statusErrors.badRequest(err.message) : statusErrors.internalError(String(err)));
    });
  };
}

function attributes(user: AuthenticatedUser, info: ReturnType<typeof parseRequestInfo>): AuthorizationAttributes {
  return {
    user: { name: user.name, groups: [...user.groups] },
    verb: info.verb,
    apiGroup: info.apiGroup,
    resource: info.resource,
    ...(info.subresource !== undefined ? { subresource: info.subresource } : {}),
    ...(info.namespace !== undefined ? { namespace: info.namespace } : {}),
    ...(info.name !== undefined ? { name: info.name } : {}),
    path: info.path,
    isResourceRequest: info.isResourceRequest,
  };
}

/**
 * `Impersonate-User` / `Impersonate-Group` (kubectl `--as`, `--as-group`): the requester needs
 * `impersonate` on users/groups (serviceaccounts for `system:serviceaccount:` names), as kube's
 * impersonation filter checks; the request then runs as the impersonated user.
 */
function impersonate(req: IncomingMessage, user: AuthenticatedUser, rbac: RbacObjects): AuthenticatedUser {
  const asUser = req.headers['impersonate-user'];
  if (typeof asUser !== 'string' || asUser === '') return user;
  const rawGroups = req.headers['impersonate-group'];
  const groups = Array.isArray(rawGroups) ? rawGroups : rawGroups ? [rawGroups] : [];
  const requester = { name: user.name, groups: [...user.groups] };
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(asUser);
  const check = (resource: string, name: string, namespace?: string): void => {
    const attrs: AuthorizationAttributes = { user: requester, verb: 'impersonate', apiGroup: '', resource, name, path: '', isResourceRequest: true, ...(namespace ? { namespace } : {}) };
    if (!authorize(rbac, attrs).allowed) throw new ApiStatusError(forbiddenStatus(attrs));
  };
  if (sa) check('serviceaccounts', sa[2] as string, sa[1] as string);
  else check('users', asUser);
  for (const g of groups) check('groups', g);
  const implied = sa ? ['system:serviceaccounts', `system:serviceaccounts:${sa[1] as string}`] : [];
  return { name: asUser, groups: [...new Set([...groups, ...implied, 'system:authenticated'])] };
}
