/**
 * A ConversionReview body answered one object at a time, so the memory it takes follows its bytes, not
 * its object count. Parsed whole, a review of 254,000 tiny objects (31.5 MiB) took 60 MiB of heap for
 * the parsed input alone, 16 MiB for the converted objects and 32 MiB for the serialized answer, all at
 * once (issue 30). Here the body is scanned (src/runtime/json-scan.ts) for `request.objects`; what
 * surrounds it (a few hundred bytes from kube-apiserver) is parsed and checked by
 * {@link handleConversionReview}; then each object is parsed from its own bytes, converted by
 * {@link handleConversionReview} too (a review of that one object: the contract stays in one place) and
 * serialized into the answer's buffers at once. Only one object is ever parsed at a time, and each is
 * bounded in bytes, nodes (objects, arrays, keys) and depth before it is parsed (see {@link ObjectLimits}).
 *
 * The work yields to the event loop between objects whenever its slice of time is used up, so the
 * controller's reconciles and other requests keep running during a large review.
 */
import { handleConversionReview, type ConversionReview } from '../conversion/index.ts';
import { ArrayElements, locateArray, type ValueLimits } from '../runtime/json-scan.ts';

/** Bounds of one object of a review, checked on its bytes before it is parsed. */
export interface ObjectLimits extends ValueLimits {
  /** Bytes of what surrounds `request.objects` (kube-apiserver sends a few hundred). */
  readonly maxEnvelopeBytes: number;
}

/** What answering a review body came to. */
export type ReviewOutcome =
  /** A ConversionReview to answer with 200 (Success or Failure), serialized in `chunks`. */
  | { readonly kind: 'answer'; readonly chunks: Buffer[]; readonly bytes: number; readonly objects: number; readonly failure?: string }
  /** Not a ConversionReview at all: 400 with `message`. */
  | { readonly kind: 'bad-request'; readonly message: string }
  /** The answer did not fit the memory budget: 429. */
  | { readonly kind: 'no-room' }
  /** The client went away: nothing to answer. */
  | { readonly kind: 'abandoned' };

/** Options of {@link answerReviewBody}. */
export interface AnswerOptions {
  readonly limits: ObjectLimits;
  /** A buffer of `bytes` for the answer, from the budget; undefined refuses. */
  allocate(bytes: number): Buffer | undefined;
  /** Called between objects: a promise to await when the slice of time is used up (see `timeSlicer`). */
  pace(): Promise<void> | undefined;
  /** Whether to stop (the client closed the connection). */
  abandoned(): boolean;
  /** Size of the answer's buffers. @default the body's size, from 1 KiB to 64 KiB (the answer is about as large) */
  readonly chunkBytes?: number;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The answer serialized into buffers taken from the budget, so the memory it holds is counted exactly. */
class AnswerBuffers {
  readonly chunks: Buffer[] = [];
  bytes = 0;
  #current: Buffer = Buffer.alloc(0);
  #used = 0;

  constructor(
    private readonly allocate: (bytes: number) => Buffer | undefined,
    private readonly chunkBytes: number,
  ) {}

  /** Appends `text` (UTF-8); false when the budget refused a buffer for it. */
  append(text: string): boolean {
    const length = Buffer.byteLength(text);
    if (length > this.#current.length - this.#used) {
      const size = Math.max(this.chunkBytes, length);
      const next = this.allocate(size);
      if (!next) return false;
      this.#seal();
      this.#current = next;
    }
    this.#used += this.#current.write(text, this.#used);
    this.bytes += length;
    return true;
  }

  /** The chunks, the last one trimmed to what was written. */
  finish(): Buffer[] {
    this.#seal();
    return this.chunks;
  }

  #seal(): void {
    if (this.#used > 0) this.chunks.push(this.#current.subarray(0, this.#used));
    this.#current = Buffer.alloc(0);
    this.#used = 0;
  }
}

/** `review` with its result set to Failure and `message`, no objects (the contract: no partial answer). */
function failed(review: ConversionReview, message: string): ConversionReview {
  return { apiVersion: review.apiVersion, kind: review.kind, response: { uid: review.response?.uid ?? '', convertedObjects: [], result: { status: 'Failure', message } } };
}

/** A small answer (an envelope's own Failure, or one of ours) as the outcome. */
function single(review: ConversionReview, objects: number): ReviewOutcome {
  const chunk = Buffer.from(JSON.stringify(review));
  const failure = review.response?.result.status === 'Failure' ? { failure: review.response.result.message ?? '' } : {};
  return { kind: 'answer', chunks: [chunk], bytes: chunk.length, objects, ...failure };
}

/** What an object past each bound of {@link ObjectLimits} is told. */
const BOUNDS: Readonly<Record<'too-large' | 'too-many-nodes' | 'too-deep', (limits: ObjectLimits) => string>> = {
  'too-large': (limits) => `larger than ${limits.maxBytes} bytes, more than kube-apiserver accepts in one object`,
  'too-many-nodes': (limits) => `more than ${limits.maxNodes} objects, arrays and keys in one object`,
  'too-deep': (limits) => `nested deeper than ${limits.maxDepth} levels`,
};

const notAReview = (body: Buffer): ReviewOutcome => ({ kind: 'bad-request', message: `request body is not a ConversionReview with a request (${body.length} bytes, no request.objects list in it)` });

/**
 * Answers the ConversionReview in `body` (see the module doc). The answer is what
 * {@link handleConversionReview} gives for the whole review, except that an object past the
 * {@link ObjectLimits} fails the review with a message naming its index and the bound.
 */
export async function answerReviewBody(body: Buffer, options: AnswerOptions): Promise<ReviewOutcome> {
  const { limits } = options;
  const objects = locateArray(body, ['request', 'objects']);
  // Without a list of objects the body is either small (parsed whole: handleConversionReview says what is wrong) or not a review.
  const envelopeBytes = objects ? body.length - (objects.end - objects.start) + 2 : body.length;
  if (envelopeBytes > limits.maxEnvelopeBytes) {
    if (!objects) return notAReview(body);
    return { kind: 'bad-request', message: `request body has ${envelopeBytes} bytes outside request.objects; at most ${limits.maxEnvelopeBytes}` };
  }
  const envelopeText = objects ? `${body.toString('utf8', 0, objects.start)}[]${body.toString('utf8', objects.end)}` : body.toString('utf8');
  let envelope: unknown;
  try {
    envelope = JSON.parse(envelopeText);
  } catch (err) {
    return { kind: 'bad-request', message: `request body is not JSON: ${(err as Error).message}` };
  }
  const request = isObject(envelope) ? envelope['request'] : undefined;
  if (!isObject(envelope) || !isObject(request)) return { kind: 'bad-request', message: 'request body is not a ConversionReview with a request' };
  const head = handleConversionReview(envelope);
  if (!objects || head.response?.result.status !== 'Success') return single(head, 0);

  // The Success answer around its objects, cut where they go: `…"convertedObjects":[` + objects + `]…`.
  const headText = JSON.stringify(head);
  const marker = '"convertedObjects":[';
  const cut = headText.indexOf(`${marker}]`) + marker.length;
  const answer = new AnswerBuffers(options.allocate, options.chunkBytes ?? Math.min(65_536, Math.max(1024, body.length)));
  if (!answer.append(headText.slice(0, cut))) return { kind: 'no-room' };
  const elements = new ArrayElements(body, objects);
  let index = 0;
  for (; ; index++) {
    const extent = elements.next(limits);
    if (extent === undefined) break;
    const at = `request.objects[${index}]`;
    if (extent.kind === 'malformed') return { kind: 'bad-request', message: `request body is not JSON: ${at} is malformed at byte ${extent.at}` };
    if (extent.kind !== 'value') return single(failed(head, `${at}: ${BOUNDS[extent.kind](limits)}`), index);
    let object: unknown;
    try {
      object = JSON.parse(body.toString('utf8', extent.start, extent.end));
    } catch (err) {
      return { kind: 'bad-request', message: `request body is not JSON: ${at}: ${(err as Error).message}` };
    }
    const one = handleConversionReview({ ...envelope, request: { ...request, objects: [object] } });
    if (one.response?.result.status !== 'Success') {
      // The contract names the object's index in its one-object review: name it in the whole review.
      const message = (one.response?.result.message ?? '').replace(/^request\.objects\[0\]/, at);
      return single(failed(head, message), index);
    }
    if (!answer.append(`${index === 0 ? '' : ','}${JSON.stringify(one.response.convertedObjects[0])}`)) return { kind: 'no-room' };
    const pause = options.pace();
    if (pause) await pause;
    if (options.abandoned()) return { kind: 'abandoned' };
  }
  if (!answer.append(headText.slice(cut))) return { kind: 'no-room' };
  const chunks = answer.finish();
  return { kind: 'answer', chunks, bytes: answer.bytes, objects: index };
}

/**
 * A pacer for {@link AnswerOptions.pace}: once `sliceMs` have passed (by `now`) since the last yield, the
 * returned promise resolves on the event loop's next turn (setImmediate: after pending I/O), so work in
 * slices leaves the loop to others between them.
 */
export function timeSlicer(sliceMs: number, now: () => number = () => performance.now()): () => Promise<void> | undefined {
  let sliceStart = now();
  return () => {
    if (now() - sliceStart < sliceMs) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      sliceStart = now();
    });
  };
}
