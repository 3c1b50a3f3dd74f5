import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import { statusErrors } from '../../src/kube/api-status-error.ts';
import { fail, serverErrors } from './errors.ts';
import type { FaultRule } from './faults/index.ts';
import type { PipelineControls } from './http-server.ts';
import { parseBody, readBody, sendJson } from './http-io.ts';

/**
 * Test-only endpoints (they do not exist on real clusters, so black-box tests can detect them):
 * `GET|DELETE /debug/requests`, `POST /debug/requests/drain` (the entries, removed as they are read),
 * `GET|DELETE /debug/event-loop-delay`, `POST|DELETE /debug/faults`, `POST /debug/compact`,
 * `POST /debug/close-watches`, `POST /debug/pause`, `POST /debug/resume`.
 */
export async function serveDebug(req: IncomingMessage, res: ServerResponse, path: string, controls: PipelineControls): Promise<void> {
  const method = req.method ?? 'GET';
  const ok = (): void => sendJson(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 });
  switch (`${method} ${path.replace(/\/$/, '')}`) {
    case 'GET /debug/requests': return sendJson(res, 200, { items: controls.log.entries() });
    case 'DELETE /debug/requests': controls.log.clear(); return ok();
    case 'POST /debug/requests/drain': return sendJson(res, 200, { items: controls.log.drain() });
    case 'GET /debug/event-loop-delay': return sendJson(res, 200, controls.loopDelay.stats());
    case 'DELETE /debug/event-loop-delay': controls.loopDelay.reset(); return ok();
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

/** Event-loop delay figures in ms; zeros before the first sample. */
export interface LoopDelayStats {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly samples: number;
}

/**
 * The server's event-loop delay (`monitorEventLoopDelay`, 5 ms resolution) since the last
 * {@link reset}, for tests that measure latency through the server when it runs as its own process
 * (`GET|DELETE /debug/event-loop-delay`). Off until the first reset, so idle servers run no timer.
 */
export class LoopDelayProbe {
  #histogram: ELDHistogram | undefined;

  /** Starts measuring afresh. */
  reset(): void {
    this.#histogram ??= monitorEventLoopDelay({ resolution: 5 });
    this.#histogram.disable();
    this.#histogram.reset();
    this.#histogram.enable();
  }

  /** The figures since the last reset. */
  stats(): LoopDelayStats {
    const h = this.#histogram;
    if (!h || h.count === 0) return { p50Ms: 0, p99Ms: 0, maxMs: 0, samples: 0 };
    return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, samples: h.count };
  }

  /** Stops measuring. */
  stop(): void {
    this.#histogram?.disable();
  }
}
