/**
 * The HTTP side of the conversion webhook: `POST /convert` with a JSON `ConversionReview`, answered by
 * `handleConversionReview` (src/conversion) one object at a time (src/controller/conversion-review-stream.ts). What
 * kube-apiserver sends is always well-formed; anything else gets the 4xx a webhook server gives
 * (controller-runtime's conversion webhook does the same): 405 for another method, 415 for another
 * content type, 413 past the body limit, 400 for a body that is not JSON or has no `request`. A review
 * that is well-formed but cannot be converted is a 200 with a `Failure` result, which the API server
 * reports to its client with the message.
 *
 * Memory is bounded whatever clients send (issue 30; docs/webhook-hardening.md): every request in
 * flight holds its body and its answer within one {@link ByteBudget} shared by all of them (buffers of
 * its lease, freed when the response closes rather than at V8's next full collection), and a
 * request the budget cannot take now is answered 429 with `Retry-After: 1` (client-go, which
 * kube-apiserver calls webhooks with, retries that up to 10 times); one object is parsed at a time,
 * within {@link DEFAULT_OBJECT_LIMITS}.
 */
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONVERSION_WEBHOOK_PATH } from '../conversion/index.ts';
import { ByteBudget } from '../runtime/byte-budget.ts';
import { DEFAULT_SERVER_LIMITS, readRequestBody, RequestBodyRefusedError, RequestBodyTooLargeError, type Handler, type ServerLimits } from '../runtime/http-server.ts';
import { answerReviewBody, timeSlicer, type ObjectLimits } from './conversion-review-stream.ts';

export { CONVERSION_WEBHOOK_PATH };

const MiB = 2 ** 20;

/**
 * Largest request accepted. kube-apiserver converts a whole LIST in one review (webhook_converter.go),
 * so this bounds the largest list read in the other version: ~18,000 stored schedules of 1.8 KiB (with
 * their managedFields; 10,000 are 16.9 MiB).
 */
export const DEFAULT_MAX_REVIEW_BYTES = 32 * MiB;

/**
 * Bytes all reviews in flight may hold together: a review holds its body and its answer (about as
 * large), so a review of {@link DEFAULT_MAX_REVIEW_BYTES} takes all of it, and reviews that large are
 * answered one at a time (the next gets 429; kube-apiserver's client retries it a second later). With
 * the controller's V8 flags, three concurrent 31.5 MiB reviews, repeated, peak at ~190 MiB RSS against
 * 530 MiB and a crash before (the Deployment's limit is 320Mi; docs/webhook-hardening.md).
 */
export const DEFAULT_BUDGET_BYTES = 64 * MiB;

/**
 * Bounds of one object, checked on its bytes before it is parsed (V8 spends 60-90 bytes of heap on each
 * parsed object, array or new key, so the bytes alone do not bound the heap one object takes):
 * - 3 MiB: kube-apiserver refuses a request body past 3 MiB, so no object written through it is larger
 *   (etcd's default limit, 1.5 MiB, is lower still);
 * - 131,072 nodes (objects, arrays, keys): a stored schedule has 144, managedFields included; within
 *   both bounds the worst object measured takes 14 MiB of heap parsed (3 MiB of tiny unique keys);
 * - 100 levels: a stored schedule is 9 deep (managedFields' fieldsV1 mirroring spec), and serializing
 *   stays far from the stack's limit (a 200,000-deep object overflowed it).
 * The envelope (the review without its objects) is at most 64 KiB; kube-apiserver's is a few hundred bytes.
 */
export const DEFAULT_OBJECT_LIMITS: ObjectLimits = { maxBytes: 3 * MiB, maxNodes: 131_072, maxDepth: 100, maxEnvelopeBytes: 64 * 1024 };

/**
 * Limits of the webhook's HTTPS server. kube-apiserver gives a conversion call 30 s in all (the
 * `?timeout=30s` of its requests), so a review is received and answered within 30 s or never used;
 * 256 connections: kube-apiserver keeps a few per replica alive (several apiservers, concurrent
 * conversions), and each costs tens of KB with TLS.
 */
export const WEBHOOK_SERVER_LIMITS: ServerLimits = { ...DEFAULT_SERVER_LIMITS, maxConnections: 256, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, writeTimeoutMs: 30_000, idleTimeoutMs: 30_000 };

/** Time a review works before it yields to the event loop (reconciles, other requests). */
export const DEFAULT_SLICE_MS = 5;

/** Options of {@link conversionWebhookHandler}. */
export interface ConversionWebhookOptions {
  /** @default DEFAULT_MAX_REVIEW_BYTES */
  readonly maxBodyBytes?: number;
  /** What all requests in flight may hold (bodies and answers). @default a ByteBudget of DEFAULT_BUDGET_BYTES */
  readonly budget?: ByteBudget;
  /** @default DEFAULT_OBJECT_LIMITS */
  readonly objectLimits?: ObjectLimits;
  /** @default DEFAULT_SLICE_MS */
  readonly sliceMs?: number;
  /** Milliseconds of a monotonic clock, for the slices. @default performance.now */
  readonly now?: () => number;
  /** Called after every answered review, for logs and metrics. @default none */
  readonly onReview?: (outcome: { readonly status: number; readonly objects: number; readonly failure?: string }) => void;
}

function plain(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(`${message}\n`);
}

/** Resolves at the first of `events` on `emitter`, leaving no listener behind (a long answer waits for many drains). */
function firstOf(emitter: EventEmitter, events: readonly string[]): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      for (const event of events) emitter.off(event, done);
      resolve();
    };
    for (const event of events) emitter.on(event, done);
  });
}

/**
 * Writes `chunks` with the socket's backpressure, dropping each once written (the last with `end`, so
 * a small answer leaves in one write); stops when the connection closes.
 */
async function writeAll(res: ServerResponse, chunks: Buffer[]): Promise<void> {
  for (let chunk = chunks.shift(); chunk !== undefined && !res.destroyed; chunk = chunks.shift()) {
    if (chunks.length === 0) return void res.end(chunk);
    if (!res.write(chunk)) await firstOf(res, ['drain', 'close']);
  }
  res.end();
}

/** The `/convert` handler; its budget is shared by every request it serves. */
export function conversionWebhookHandler(options: ConversionWebhookOptions = {}): Handler {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_REVIEW_BYTES;
  const budget = options.budget ?? new ByteBudget(DEFAULT_BUDGET_BYTES);
  const limits = options.objectLimits ?? DEFAULT_OBJECT_LIMITS;
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
  const report = options.onReview ?? (() => {});
  const busy = async (req: IncomingMessage, res: ServerResponse, message: string): Promise<void> => {
    report({ status: 429, objects: 0 });
    // What the client still sends is read and dropped (no memory held) before the answer: answered
    // earlier, a client still writing (Node's, Go's) sees a broken pipe instead of the 429 and its
    // Retry-After. The request timeout bounds how long that may take.
    if (!req.complete) {
      req.resume();
      await firstOf(req, ['end', 'close']);
    }
    if (!res.destroyed) plain(res, 429, `${message}; retry later`, { 'Retry-After': '1' });
  };
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      report({ status: 405, objects: 0 });
      return plain(res, 405, `method ${req.method ?? ''} not allowed; POST a ConversionReview`, { Allow: 'POST' });
    }
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/json') {
      req.resume();
      report({ status: 415, objects: 0 });
      return plain(res, 415, `content type ${JSON.stringify(contentType)} not supported; expected application/json`);
    }
    const lease = budget.lease();
    let closed = false;
    res.once('close', () => {
      closed = true;
      lease.release();
    });
    let body: Buffer;
    try {
      // The answer is about as large as the body: room for it is taken with the body's, so a review
      // admitted rarely runs out midway, and answers draw on it first (BudgetLease.allocate).
      body = await readRequestBody(req, limit, { reserve: (bytes) => lease.tryTake(2 * bytes), allocate: (bytes) => lease.allocate(bytes) });
    } catch (err) {
      if (err instanceof RequestBodyRefusedError) return busy(req, res, `the conversion webhook holds ${budget.inUse} of its ${budget.capacity} bytes for reviews in flight; ${err.message}`);
      if (!(err instanceof RequestBodyTooLargeError)) throw err;
      report({ status: 413, objects: 0 });
      // The rest of the body is not read: close the connection rather than drain it.
      return plain(res, 413, err.message, { Connection: 'close' });
    }
    const outcome = await answerReviewBody(body, { limits, allocate: (bytes) => lease.allocate(bytes), pace: timeSlicer(sliceMs, options.now), abandoned: () => closed });
    switch (outcome.kind) {
      case 'abandoned':
        return;
      case 'no-room':
        return busy(req, res, `the answer did not fit the conversion webhook's budget of ${budget.capacity} bytes with the reviews in flight`);
      case 'bad-request':
        report({ status: 400, objects: 0 });
        return plain(res, 400, outcome.message);
      case 'answer':
        report({ status: 200, objects: outcome.objects, ...(outcome.failure !== undefined ? { failure: outcome.failure } : {}) });
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(outcome.bytes) });
        return writeAll(res, outcome.chunks);
    }
  };
}
