import type { IncomingMessage, ServerResponse } from 'node:http';
import { aggregatedDiscovery, aggregatedDiscoveryContentType, type AggregatedDiscoveryVersion, apiGroup, apiGroupList, apiResourceList, apiVersions } from '../discovery.ts';
import { fail, serverErrors } from '../errors.ts';
import { sendJson } from '../http-io.ts';
import { openApiV2, openApiV2Protobuf, openApiV3GroupVersion, openApiV3Root } from '../openapi.ts';
import type { ServerContext } from '../server-context.ts';

const AGGREGATED = 'as=apigroupdiscoverylist';

/** The aggregated discovery version (v2, or v2beta1 which 1.32 still serves) the first media type of `Accept` asks for. */
function wantsAggregated(accept: string): AggregatedDiscoveryVersion | undefined {
  const first = accept.split(',')[0]?.replace(/\s/g, '') ?? '';
  if (!first.includes('g=apidiscovery.k8s.io') || !first.includes(AGGREGATED)) return undefined;
  return first.includes('v=v2beta1') ? 'v2beta1' : first.includes('v=v2') ? 'v2' : undefined;
}

/**
 * `/api`, `/apis`, group and group-version discovery, `/version`, health checks and OpenAPI.
 * `/api` and `/apis` answer aggregated discovery (v2 or v2beta1) when the client asks for it first, else the
 * plain documents; a client that accepts only an aggregated type we do not serve gets 406.
 */
export function serveNonResource(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, path: string, serverAddress: string): void {
  const parts = path.split('/').filter((p) => p !== '');
  const accept = (req.headers.accept ?? '').toLowerCase();
  const onlyAggregated = accept !== '' && accept.split(',').every((a) => a.replace(/\s/g, '').includes(AGGREGATED));
  const discovery = (body: Record<string, unknown> | undefined): void => {
    if (!body) fail(serverErrors.pathNotFound());
    if (onlyAggregated) fail(serverErrors.notAcceptable());
    sendJson(res, 200, body);
  };
  const [p0, p1, p2, p3] = parts;
  const aggregated = wantsAggregated(accept);
  if ((p0 === 'api' || p0 === 'apis') && parts.length === 1 && aggregated) {
    const text = JSON.stringify(aggregatedDiscovery(ctx.registry, p0 === 'api', aggregated));
    res.writeHead(200, { 'Content-Type': aggregatedDiscoveryContentType(aggregated), 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-cache, private' });
    res.end(text);
    return;
  }
  if (p0 === 'api' && parts.length === 1) return discovery(apiVersions(serverAddress));
  if (p0 === 'api' && parts.length === 2) return discovery(apiResourceList(ctx.registry, '', p1 as string));
  if (p0 === 'apis' && parts.length === 1) return discovery(apiGroupList(ctx.registry));
  if (p0 === 'apis' && parts.length === 2) return discovery(apiGroup(ctx.registry, p1 as string));
  if (p0 === 'apis' && parts.length === 3) return discovery(apiResourceList(ctx.registry, p1 as string, p2 as string));
  if (p0 === 'version' && parts.length === 1) return sendJson(res, 200, ctx.versionInfo);
  if ((p0 === 'healthz' || p0 === 'livez' || p0 === 'readyz') && parts.length <= 2) {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end('ok');
    return;
  }
  if (p0 === 'openapi' && p1 === 'v2' && parts.length === 2) {
    if (accept.includes('application/com.github.proto-openapi.spec.v2')) {
      const body = openApiV2Protobuf();
      res.writeHead(200, { 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'Content-Length': String(body.length) });
      res.end(body);
      return;
    }
    return sendJson(res, 200, openApiV2());
  }
  if (p0 === 'openapi' && p1 === 'v3') {
    if (parts.length === 2) return sendJson(res, 200, openApiV3Root(ctx.registry, ctx.registry.generation));
    if (p2 === 'api' && parts.length === 4) return discovery(openApiV3GroupVersion(ctx.registry, '', p3 as string));
    if (p2 === 'apis' && parts.length === 5) return discovery(openApiV3GroupVersion(ctx.registry, p3 as string, parts[4] as string));
  }
  fail(serverErrors.pathNotFound());
}
