import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { statusErrors } from '../../src/kube/api-status-error.ts';
import type { StatusBody } from '../../src/kube/object.ts';
import { fail, serverErrors } from './errors.ts';
import { decodeKubernetesProtobuf } from './protobuf-decode.ts';

/** What the client asked for in `Accept`. */
export type ResponseFormat = 'json' | 'yaml' | 'table' | 'partial' | 'partial-list';

const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Reads the whole request body (the apiserver's limit is 3 MiB). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request entity too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Parses a JSON or YAML request body; 400 with the decoder's message when it is malformed. */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  const media = (contentType ?? 'application/json').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === 'application/vnd.kubernetes.protobuf') {
    let decoded: Record<string, unknown> | undefined;
    try {
      decoded = decodeKubernetesProtobuf(raw);
    } catch (err) {
      fail(statusErrors.badRequest(`unable to decode protobuf body: ${(err as Error).message}`));
    }
    return decoded ?? fail(serverErrors.unsupportedMediaType(media));
  }
  const text = raw.toString('utf8');
  if (media === 'application/yaml' || media === 'application/apply-patch+yaml') {
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      fail(statusErrors.badRequest(`error converting YAML to JSON: ${(err as Error).message}`));
    }
  }
  if (media !== '' && !media.endsWith('json') && media !== '*/*') fail(serverErrors.unsupportedMediaType(media));
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    fail(statusErrors.badRequest(`Object 'Kind' is missing in '${text.slice(0, 200)}': ${(err as Error).message}`));
  }
}

/**
 * Picks the response format from `Accept` like the apiserver's negotiation: the first acceptable
 * entry wins; protobuf is not offered; nothing acceptable → 406.
 */
export function negotiate(accept: string | undefined, allowTable: boolean): ResponseFormat {
  if (!accept || accept.trim() === '') return 'json';
  for (const entry of accept.split(',')) {
    const [mediaRaw, ...paramParts] = entry.split(';');
    const media = (mediaRaw ?? '').trim().toLowerCase();
    const params = new Map(paramParts.map((p) => {
      const [k, v] = p.split('=');
      return [(k ?? '').trim(), (v ?? '').trim()] as const;
    }));
    const as = params.get('as');
    if (media === 'application/json' || media === '*/*' || media === 'application/*') {
      if (as === undefined) return 'json';
      const g = params.get('g');
      const v = params.get('v');
      if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
      if (as === 'Table' && allowTable) return 'table';
      if (as === 'PartialObjectMetadata') return 'partial';
      if (as === 'PartialObjectMetadataList') return 'partial-list';
      continue;
    }
    if ((media === 'application/yaml') && as === undefined) return 'yaml';
  }
  return fail(serverErrors.notAcceptable());
}

/** Writes a JSON response with optional `Warning` headers. */
export function sendJson(res: ServerResponse, code: number, body: unknown, warnings: readonly string[] = []): void {
  sendJsonText(res, code, JSON.stringify(body), warnings);
}

/** {@link sendJson} of a body already serialized (`text` is sent as it is). */
export function sendJsonText(res: ServerResponse, code: number, text: string, warnings: readonly string[] = []): void {
  const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Content-Length': String(Buffer.byteLength(text)) };
  if (warnings.length > 0) headers['Warning'] = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(text);
}

/** Go's `http.NotFound`: what kube-apiserver answers for a path no handler in its chain serves. */
export function sendPlainNotFound(res: ServerResponse): void {
  const text = '404 page not found\n';
  res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Writes a Status body with its code (and Retry-After for 429/503 with retryAfterSeconds). */
export function sendStatus(res: ServerResponse, status: StatusBody): void {
  const code = status.code ?? 200;
  if (status.details?.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(status.details.retryAfterSeconds));
  sendJson(res, code, status);
}
