/**
 * The HTTP side of the conversion webhook: `POST /convert` with a JSON `ConversionReview`, answered by
 * {@link handleConversionReview}. What kube-apiserver sends is always well-formed; anything else gets
 * the 4xx a webhook server gives (controller-runtime's conversion webhook does the same): 405 for
 * another method, 415 for another content type, 413 past the body limit, 400 for a body that is not
 * JSON or has no `request`. A review that is well-formed but cannot be converted is a 200 with a
 * `Failure` result, which the API server reports to its client with the message.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONVERSION_WEBHOOK_PATH, handleConversionReview } from '../conversion/index.ts';
import { readRequestBody, RequestBodyTooLargeError, type Handler } from '../runtime/http-server.ts';

export { CONVERSION_WEBHOOK_PATH };

/**
 * Largest request accepted. kube-apiserver converts a whole LIST in one review (webhook_converter.go),
 * so this bounds the largest list read in the other version: ~16,000 schedules of 2 KiB (a stored one
 * with its managedFields). The JSON is parsed whole, a few times its size in heap, so the bound also
 * keeps one request within the controller's heap (192 MiB old space, src/controller/node-flags.ts).
 */
export const DEFAULT_MAX_REVIEW_BYTES = 32 * 2 ** 20;

/** Options of {@link conversionWebhookHandler}. */
export interface ConversionWebhookOptions {
  /** @default DEFAULT_MAX_REVIEW_BYTES */
  readonly maxBodyBytes?: number;
  /** Called after every answered review, for logs and metrics. @default none */
  readonly onReview?: (outcome: { readonly status: number; readonly objects: number; readonly failure?: string }) => void;
}

function plain(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(`${message}\n`);
}

/** The `/convert` handler. */
export function conversionWebhookHandler(options: ConversionWebhookOptions = {}): Handler {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_REVIEW_BYTES;
  const report = options.onReview ?? (() => {});
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
    let body: Buffer;
    try {
      body = await readRequestBody(req, limit);
    } catch (err) {
      if (!(err instanceof RequestBodyTooLargeError)) throw err;
      report({ status: 413, objects: 0 });
      // The rest of the body is not read: close the connection rather than drain it.
      return plain(res, 413, err.message, { Connection: 'close' });
    }
    let review: unknown;
    try {
      review = JSON.parse(body.toString('utf8'));
    } catch (err) {
      report({ status: 400, objects: 0 });
      return plain(res, 400, `request body is not JSON: ${(err as Error).message}`);
    }
    const request = review !== null && typeof review === 'object' ? (review as { request?: unknown }).request : undefined;
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      report({ status: 400, objects: 0 });
      return plain(res, 400, 'request body is not a ConversionReview with a request');
    }
    const answer = handleConversionReview(review);
    const response = answer.response;
    report({ status: 200, objects: response?.convertedObjects.length ?? 0, ...(response?.result.status === 'Failure' ? { failure: response.result.message ?? '' } : {}) });
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
  };
}
