import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay, performance, PerformanceObserver, type ELDHistogram } from 'node:perf_hooks';
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
  /** The server's garbage-collection pauses over the same time. */
  readonly gc: GcPauseStats;
}

/** Garbage-collection pauses: how many, how long in all and at most, and when the long ones began. */
export interface GcPauseStats {
  readonly count: number;
  readonly totalMs: number;
  readonly maxMs: number;
  /** Start (epoch ms) and length of each pause of at least {@link LONG_GC_PAUSE_MS}, at most {@link MAX_LONG_PAUSES} kept. */
  readonly long: readonly { readonly at: number; readonly ms: number }[];
}

/** A pause this long can hold a request past a 20 ms latency target on its own. */
const LONG_GC_PAUSE_MS = 10;
const MAX_LONG_PAUSES = 10_000;

/**
 * The server's event-loop delay (`monitorEventLoopDelay`, 5 ms resolution) and its GC pauses since
 * the last {@link reset}, for tests that measure latency through the server when it runs as its own
 * process (`GET|DELETE /debug/event-loop-delay`): a stall the request log shows is then placed in the
 * server's collector or elsewhere. Off until the first reset, so idle servers run no timer.
 */
export class LoopDelayProbe {
  #histogram: ELDHistogram | undefined;
  #observer: PerformanceObserver | undefined;
  #gc = { count: 0, totalMs: 0, maxMs: 0, long: [] as { at: number; ms: number }[] };

  /** Starts measuring afresh. */
  reset(): void {
    this.#histogram ??= monitorEventLoopDelay({ resolution: 5 });
    this.#histogram.disable();
    this.#histogram.reset();
    this.#histogram.enable();
    this.#gc = { count: 0, totalMs: 0, maxMs: 0, long: [] };
    if (!this.#observer) {
      this.#observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) this.#addPause(performance.timeOrigin + e.startTime, e.duration);
      });
      this.#observer.observe({ entryTypes: ['gc'] });
    }
  }

  #addPause(at: number, ms: number): void {
    const gc = this.#gc;
    gc.count++;
    gc.totalMs += ms;
    gc.maxMs = Math.max(gc.maxMs, ms);
    if (ms >= LONG_GC_PAUSE_MS && gc.long.length < MAX_LONG_PAUSES) gc.long.push({ at: Math.round(at), ms: Math.round(ms * 10) / 10 });
  }

  /** The figures since the last reset. */
  stats(): LoopDelayStats {
    const h = this.#histogram;
    const gc = { ...this.#gc, long: [...this.#gc.long] };
    if (!h || h.count === 0) return { p50Ms: 0, p99Ms: 0, maxMs: 0, samples: 0, gc };
    return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, samples: h.count, gc };
  }

  /** Stops measuring. */
  stop(): void {
    this.#histogram?.disable();
    this.#observer?.disconnect();
    this.#observer = undefined;
  }
}
