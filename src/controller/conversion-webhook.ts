/**
 * The HTTP side of the conversion webhook: `POST /convert` with a JSON `ConversionReview`, answered by
 * `handleConversionReview` (src/conversion) one object at a time (src/controller/conversion-review-stream.ts). What
 * kube-apiserver sends is always well-formed; anything else gets the 4xx a webhook server gives
 * (controller-runtime's conversion webhook does the same): 405 for another method, 415 for another
 * content type, 413 past the body limit, 400 for a body that is not JSON or has no `request`. A review
 * that is well-formed but cannot be converted is a 200 with a `Failure` result, which the API server
 * reports to its client with the message.
 *
 * Memory is bounded whatever clients send (issues 30 and 41; docs/webhook-hardening.md): every request
 * in flight holds its body and its answer within one {@link ByteBudget} shared by all of them (buffers
 * of its lease, taken as the body arrives and freed when the response closes rather than at V8's next
 * full collection), with room kept for small reviews; each client's uploads in progress hold at most
 * one largest body ({@link ClientShares}); a body must arrive at a minimum rate
 * ({@link DEFAULT_UPLOAD_PACE}: 408 and the connection closed otherwise). A request the budget or its
 * client's share cannot take now is answered 429 with `Retry-After: 1` (client-go, which kube-apiserver
 * calls webhooks with, retries that up to 10 times); one object is parsed at a time, within
 * {@link DEFAULT_OBJECT_LIMITS}.
 */
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONVERSION_WEBHOOK_PATH } from '../conversion/index.ts';
import { ByteBudget, type SmallLeaseRoom } from '../runtime/byte-budget.ts';
import { ClientShares } from '../runtime/client-shares.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import { DEFAULT_SERVER_LIMITS, type Handler, type ServerLimits } from '../runtime/http-server.ts';
import { drainRequestBody, readRequestBody, RequestBodyRefusedError, RequestBodyTooLargeError, RequestBodyTooSlowError, type BodyMemory, type UploadPace } from '../runtime/request-body.ts';
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
 * Room in the budget only small reviews use: 8 MiB, for reviews holding at most 1 MiB (body and answer;
 * kube-apiserver converting one object sends a few KiB, a stored object is at most 1.5 MiB). Large
 * reviews never take it, so a flood of large uploads cannot keep the single-object conversions of
 * ordinary reads and writes waiting (issue 41).
 */
export const SMALL_REVIEW_ROOM: SmallLeaseRoom = { bytes: 8 * MiB, leaseBytes: 1 * MiB };

/**
 * Bytes all reviews in flight may hold together: 64 MiB for any, plus {@link SMALL_REVIEW_ROOM}. A review
 * holds its body and its answer (about as large), so a review of {@link DEFAULT_MAX_REVIEW_BYTES} takes
 * all of the 64 MiB, and reviews that large are answered one at a time (the next gets 429;
 * kube-apiserver's client retries it a second later). With the controller's V8 flags, three concurrent
 * 31.5 MiB reviews, repeated, peak at ~190 MiB RSS against 530 MiB and a crash before (the Deployment's
 * limit is 320Mi; docs/webhook-hardening.md).
 */
export const DEFAULT_BUDGET_BYTES = 64 * MiB + SMALL_REVIEW_ROOM.bytes;

/**
 * Bytes of request bodies one client (remote address) may have in progress across its connections: one
 * largest review. An upload is paced by its client; many slow ones from one address would otherwise
 * hold the budget (issue 41: two connections declaring 32 MiB and sending a byte every 2 s kept
 * client-go-like reviews failing for 45 s).
 */
export const DEFAULT_CLIENT_UPLOAD_BYTES = DEFAULT_MAX_REVIEW_BYTES;

/**
 * The slowest a review body may arrive: within 5 s, plus a second per 256 KiB (2 Mbit/s). kube-apiserver
 * sends a review at once, over the cluster's network: even the largest (32 MiB) arrives in well under a
 * second; a client trickling a byte every 2 s is cut after 5 s, holding the few bytes it sent.
 */
export const DEFAULT_UPLOAD_PACE: UploadPace = { graceMs: 5_000, minBytesPerSecond: 256 * 1024 };

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
  /** What all requests in flight may hold (bodies and answers). @default a ByteBudget of DEFAULT_BUDGET_BYTES with SMALL_REVIEW_ROOM */
  readonly budget?: ByteBudget;
  /** What each client's uploads in progress may hold. @default ClientShares of DEFAULT_CLIENT_UPLOAD_BYTES */
  readonly clientShares?: ClientShares;
  /** How fast a body must arrive. @default DEFAULT_UPLOAD_PACE */
  readonly uploadPace?: UploadPace;
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

/** How long a connection cut for a slow upload lingers, dropping what still arrives, so its client reads the 408 rather than a reset. */
const LINGER_MS = 1_000;

/**
 * Answers 408 and closes the connection. What the client still sends is read and dropped meanwhile:
 * closed with unread data, the socket would be reset and the client see that instead of the answer;
 * a client that never stops sending is cut after {@link LINGER_MS} all the same.
 */
function tooSlow(req: IncomingMessage, res: ServerResponse, message: string, clock: Clock): void {
  req.resume();
  plain(res, 408, message, { Connection: 'close' });
  const linger = clock.setTimeout(() => res.socket?.destroy(), LINGER_MS);
  res.socket?.once('close', () => clock.clearTimeout(linger));
}

/** The `/convert` handler; its budget and client shares are shared by every request it serves. */
export function conversionWebhookHandler(options: ConversionWebhookOptions = {}): Handler {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_REVIEW_BYTES;
  const budget = options.budget ?? new ByteBudget(DEFAULT_BUDGET_BYTES, SMALL_REVIEW_ROOM);
  const shares = options.clientShares ?? new ClientShares(DEFAULT_CLIENT_UPLOAD_BYTES);
  const pace = options.uploadPace ?? DEFAULT_UPLOAD_PACE;
  const limits = options.objectLimits ?? DEFAULT_OBJECT_LIMITS;
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
  const report = options.onReview ?? (() => {});
  const busy = async (req: IncomingMessage, res: ServerResponse, message: string): Promise<void> => {
    report({ status: 429, objects: 0 });
    // What the client still sends is read and dropped (no memory held) before the answer: answered
    // earlier, a client still writing (Node's, Go's) sees a broken pipe instead of the 429 and its
    // Retry-After. A client too slow for the upload pace is cut instead.
    if (!(await drainRequestBody(req, pace))) return void res.destroy();
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
    const declared = Number(req.headers['content-length'] ?? 0);
    // Body and answer: a review declaring more than a small one is large from its first byte.
    const lease = budget.lease(Number.isSafeInteger(declared) && declared > 0 ? 2 * Math.min(declared, limit) : 0);
    const client = req.socket.remoteAddress ?? 'unknown';
    const share = shares.share(client);
    let closed = false;
    res.once('close', () => {
      closed = true;
      share.release();
      lease.release();
    });
    let refusedBy = 'budget' as 'client' | 'budget';
    // The body's bytes count against the client's share while it uploads; its buffers against the budget until the response closes.
    const memory: BodyMemory = {
      accept: (bytes) => {
        if (share.tryTake(bytes)) return true;
        refusedBy = 'client';
        return false;
      },
      allocate: (bytes) => {
        const buffer = lease.allocate(bytes);
        if (!buffer) refusedBy = 'budget';
        return buffer;
      },
      free: (buffer) => lease.free(buffer),
    };
    let body: Buffer;
    try {
      body = await readRequestBody(req, limit, memory, pace);
      share.release();
    } catch (err) {
      if (res.destroyed) return;
      if (err instanceof RequestBodyRefusedError) {
        const held = refusedBy === 'client' ? `this client (${client}) has ${shares.heldBy(client)} bytes of review bodies in progress, at most ${shares.perClientBytes}` : `the conversion webhook holds ${budget.inUse} of its ${budget.capacity} bytes for reviews in flight`;
        share.release();
        return busy(req, res, `${held}; ${err.message}`);
      }
      if (err instanceof RequestBodyTooSlowError) {
        report({ status: 408, objects: 0 });
        return tooSlow(req, res, err.message, pace.clock ?? realClock);
      }
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
