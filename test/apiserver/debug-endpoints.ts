import type { IncomingMessage, ServerResponse } from 'node:http';
import { statusErrors } from '../../src/kube/api-status-error.ts';
import { fail, serverErrors } from './errors.ts';
import type { FaultRule } from './faults/index.ts';
import type { PipelineControls } from './http-server.ts';
import { parseBody, readBody, sendJson } from './http-io.ts';

/**
 * Test-only endpoints (they do not exist on real clusters, so black-box tests can detect them):
 * `GET|DELETE /debug/requests`, `POST|DELETE /debug/faults`, `POST /debug/compact`,
 * `POST /debug/close-watches`, `POST /debug/pause`, `POST /debug/resume`.
 */
export async function serveDebug(req: IncomingMessage, res: ServerResponse, path: string, controls: PipelineControls): Promise<void> {
  const method = req.method ?? 'GET';
  const ok = (): void => sendJson(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 });
  switch (`${method} ${path.replace(/\/$/, '')}`) {
    case 'GET /debug/requests': return sendJson(res, 200, { items: controls.log.entries() });
    case 'DELETE /debug/requests': controls.log.clear(); return ok();
    case 'GET /debug/faults': return sendJson(res, 200, { items: controls.faults.list() });
    case 'POST /debug/faults': {
      const body = parseBody(await readBody(req), req.headers['content-type']);
      if (body === null || typeof body !== 'object' || Array.isArray(body)) fail(statusErrors.badRequest('a FaultRule object is required'));
      let id: string;
      try {
        id = controls.faults.add(body as FaultRule);
      } catch (err) {
        return fail(statusErrors.badRequest((err as Error).message));
      }
      return sendJson(res, 201, { id });
    }
    case 'DELETE /debug/faults': controls.faults.clear(); return ok();
    case 'POST /debug/compact': controls.compact(); return ok();
    case 'POST /debug/close-watches': controls.closeWatches(); return ok();
    case 'POST /debug/pause': controls.pause(); return ok();
    case 'POST /debug/resume': controls.resume(); return ok();
    default: {
      const del = /^\/debug\/faults\/([^/]+)$/.exec(path);
      if (del && method === 'DELETE') {
        controls.faults.remove(decodeURIComponent(del[1] as string));
        return ok();
      }
      fail(serverErrors.pathNotFound());
    }
  }
}
