/**
 * A small HTTP client for the Kubernetes API on `node:http(s)` with one keep-alive agent: JSON
 * requests whose failures become {@link ApiStatusError}, and streaming WATCH responses.
 */
import https from 'node:https';
import type { Agent, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { ApiStatusError } from './api-status-error.ts';
import type { KubeConfig } from './kube-config.ts';
import type { KubeObject, StatusBody, WatchEvent } from './object.ts';
import { decodeWatchStream } from './watch-stream.ts';
import { realClock, type Clock } from '../runtime/clock.ts';
import { http } from '../runtime/node-http.ts';

/** What the client reports about each finished request (wired to `rest_client_*` metrics). */
export interface RequestObservation {
  /** HTTP method, upper case (client-go's `method`/`verb` label). */
  readonly method: string;
  /** `host:port` of the API server. */
  readonly host: string;
  /** HTTP status code as a string, or `<error>` when no response arrived (client-go's convention). */
  readonly code: string;
  /** From sending the request to receiving the response headers. */
  readonly durationSeconds: number;
}

/** Options for {@link KubeClient}. */
export interface KubeClientOptions {
  /** Server, TLS and credentials. */
  readonly config: KubeConfig;
  /**
   * Per-request timeout in ms. For WATCH it bounds only the wait for the response headers: a
   * healthy stream is never cut by the client (the reflector owns inactivity detection).
   * @default 30_000
   */
  readonly timeoutMs?: number;
  /**
   * Called before every non-GET request is sent; when it throws, the request is not sent and the
   * error propagates. The leader-election write gate plugs in here. @default none
   */
  readonly beforeWrite?: (method: string, path: string) => void;
  /** Observes every finished request (metrics). @default none */
  readonly onRequest?: (observation: RequestObservation) => void;
  /** `User-Agent` header. @default 'backupschedule-operator' */
  readonly userAgent?: string;
  /** Maximum concurrent sockets to the API server. @default 32 */
  readonly maxSockets?: number;
  /** Clock for request timeouts. @default realClock */
  readonly clock?: Clock;
}

/** Query parameters; `undefined` values are omitted. */
export type QueryParams = Readonly<Record<string, string | number | boolean | undefined>>;

/** Options of one request. */
export interface KubeRequestOptions {
  /** Query string parameters. @default none */
  readonly query?: QueryParams;
  /** Body, sent as JSON unless it is already a string. @default none */
  readonly body?: unknown;
  /** `Content-Type` of the body. @default 'application/json' */
  readonly contentType?: string;
  /** Aborts the request. @default none */
  readonly signal?: AbortSignal;
  /** Overrides the client's timeout for this request. @default the client's `timeoutMs` */
  readonly timeoutMs?: number;
  /**
   * Fails with {@link ResponseTooLargeError} once the answer's body passes this many bytes, its
   * connection closed: the caller asked for more than it means to hold, and asks again for less.
   * @default no limit
   */
  readonly maxBodyBytes?: number;
}

/**
 * A `beforeWrite` hook that lets a write out only through `gate` (the leader elector's write gate:
 * its `check` throws while writes are fenced), e.g. `new KubeClient({ config, beforeWrite: gateWrites(elector.gate) })`.
 */
export function gateWrites(gate: { check(description: string): void }): (method: string, path: string) => void {
  return (method, path) => gate.check(`${method} ${path}`);
}

/** An answer whose body passed the request's `maxBodyBytes`: not read further, not retried as such. */
export class ResponseTooLargeError extends Error {
  constructor(what: string, readonly limitBytes: number) {
    super(`${what}: the answer passed ${limitBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/** A request that got no HTTP answer: network failure, timeout or abort. */
export class KubeRequestError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KubeRequestError';
  }
}

/**
 * Whether the same request may succeed if sent again unchanged: the server was overloaded or had a
 * moment (408, 429, 5xx), our token was rotated (401), or no answer came at all (connection refused
 * or reset, a client timeout: a {@link KubeRequestError}). Any other error is a verdict or a bug.
 */
export function isTransientError(err: unknown): boolean {
  if (err instanceof ApiStatusError) return err.code === 401 || err.code === 408 || err.code === 429 || err.code >= 500;
  return err instanceof KubeRequestError;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed',
  409: 'Conflict', 410: 'Expired', 415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests',
  500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/** Builds the error for a non-2xx response, whether its body is a `Status` or anything else. */
export function statusErrorFromResponse(code: number, bodyText: string, retryAfterHeader?: string): ApiStatusError {
  let status: StatusBody | undefined;
  try {
    const parsed = JSON.parse(bodyText) as Partial<StatusBody>;
    if (parsed && parsed.kind === 'Status') status = { ...parsed, code: parsed.code ?? code } as StatusBody;
  } catch {
    // Not JSON (a proxy's HTML page, a plain-text 503): synthesised below.
  }
  status ??= {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code,
    reason: REASONS[code] ?? 'Unknown',
    message: bodyText.trim().slice(0, 500) || `the server responded with HTTP ${code}`,
  };
  const retryAfter = retryAfterHeader === undefined ? NaN : Number(retryAfterHeader);
  if (Number.isFinite(retryAfter) && status.details?.retryAfterSeconds === undefined) {
    status = { ...status, details: { ...status.details, retryAfterSeconds: retryAfter } };
  }
  return new ApiStatusError(status);
}

/**
 * The keep-alive agent of a client: one API server, one TLS identity. Node's `https.Agent` names its
 * socket pool per request from the host and every TLS option, the CA bundle included (a Buffer, turned
 * into a string each time: kilobytes per request); every request of this agent would get the same
 * name, so it is made once.
 */
class OneServerHttpsAgent extends https.Agent {
  #name: string | undefined;

  override getName(options?: https.AgentOptions): string {
    return (this.#name ??= super.getName(options));
  }
}

/** Where a request goes, as `http.request` options. */
export type RequestEndpoint = Pick<https.RequestOptions, 'protocol' | 'hostname' | 'port'>;

/**
 * The request options naming the API server of `server`: the hostname without the brackets of an IPv6
 * literal and no port for the protocol's default, as Node's own URL-to-options conversion gives them.
 */
export function requestEndpoint(server: URL): RequestEndpoint {
  const hostname = server.hostname.startsWith('[') ? server.hostname.slice(1, -1) : server.hostname;
  return { protocol: server.protocol, hostname, ...(server.port ? { port: server.port } : {}) };
}

/** The Kubernetes REST client. */
export class KubeClient {
  readonly config: KubeConfig;
  readonly #endpoint: RequestEndpoint;
  /** `host[:port]` of the API server, for the request metrics. */
  readonly #host: string;
  readonly #http: typeof http | typeof https;
  readonly #agent: Agent;
  readonly #timeoutMs: number;
  readonly #beforeWrite: ((method: string, path: string) => void) | undefined;
  readonly #onRequest: ((o: RequestObservation) => void) | undefined;
  readonly #userAgent: string;
  readonly #clock: Clock;

  constructor(options: KubeClientOptions) {
    this.config = options.config;
    const server = new URL(options.config.server);
    this.#endpoint = requestEndpoint(server);
    this.#host = server.host;
    this.#http = server.protocol === 'https:' ? https : http;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#beforeWrite = options.beforeWrite;
    this.#onRequest = options.onRequest;
    this.#userAgent = options.userAgent ?? 'backupschedule-operator';
    this.#clock = options.clock ?? realClock;
    const maxSockets = options.maxSockets ?? 32;
    this.#agent = this.#http === https
      ? new OneServerHttpsAgent({ keepAlive: true, maxSockets, ...options.config.tlsOptions() })
      : new http.Agent({ keepAlive: true, maxSockets });
  }

  /**
   * Sends a request and parses the JSON answer; non-2xx answers throw {@link ApiStatusError}. `path` is
   * the API path alone (`/apis/batch/v1/…`): the query string comes from `options.query`.
   */
  async request<T>(method: string, path: string, options: KubeRequestOptions = {}): Promise<T> {
    const res = await this.#send(method, path, options, 'application/json');
    const text = await this.#readBodyWithin(res, `${method.toUpperCase()} ${path}`, options.timeoutMs ?? this.#timeoutMs, options.maxBodyBytes);
    if (!text) return undefined as T;
    return JSON.parse(text) as T;
  }

  /**
   * Opens a WATCH (`path` is the collection path; `watch=true` is added) and yields its events until
   * the server closes the stream. Ends quietly when `signal` aborts. A non-2xx answer throws
   * {@link ApiStatusError}; an `ERROR` event is yielded as is.
   */
  async *watch<T extends KubeObject>(path: string, options: Omit<KubeRequestOptions, 'body' | 'contentType'> = {}): AsyncGenerator<WatchEvent<T>> {
    const res = await this.#send('GET', path, { ...options, query: { ...options.query, watch: true } }, 'application/json');
    try {
      yield* decodeWatchStream<T>(res);
    } catch (err) {
      if (options.signal?.aborted) return;
      throw new KubeRequestError(`watch ${path}: stream failed: ${(err as Error).message}`, { cause: err });
    } finally {
      res.destroy();
    }
  }

  /**
   * Reads a whole (non-watch) body, or fails once `timeoutMs` passes: a server that sends headers and
   * then stalls must not hang a LIST forever (client-go's timeout covers the body too).
   */
  async #readBodyWithin(res: IncomingMessage, what: string, timeoutMs: number, maxBytes = Infinity): Promise<string> {
    const timer = this.#clock.setTimeout(() => res.destroy(new KubeRequestError(`${what}: body timed out after ${timeoutMs} ms`)), timeoutMs);
    try {
      return await readBody(res, what, maxBytes);
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /** Closes idle keep-alive sockets and refuses reuse (call at shutdown). */
  close(): void {
    this.#agent.destroy();
  }

  async #send(method: string, path: string, options: KubeRequestOptions, accept: string): Promise<IncomingMessage> {
    method = method.toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') this.#beforeWrite?.(method, path);
    const search = options.query ? searchOf(options.query) : '';
    const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const headers: Record<string, string> = { Accept: accept, 'User-Agent': this.#userAgent };
    if (body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    // Host and port as options, not a URL per request: Node parses and copies a URL for every request.
    const reqOptions: https.RequestOptions = { ...this.#endpoint, path: `${path}${search}`, method, headers, agent: this.#agent };
    await this.config.authenticate(reqOptions);
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const started = performance.now();
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = this.#http.request(reqOptions);
      // At once: a request failed before it is sent (a signal already aborted) is destroyed below, and
      // its 'error' (socket hang up) must not reach the process as an uncaught exception.
      req.on('error', (err) => fail(err.message, err));
      let settled = false;
      const finish = (code: string): void => {
        settled = true;
        this.#clock.clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.#onRequest?.({ method, host: this.#host, code, durationSeconds: (performance.now() - started) / 1000 });
      };
      const fail = (message: string, cause?: unknown): void => {
        if (settled) return;
        finish('<error>');
        req.destroy();
        reject(new KubeRequestError(`${method} ${path}: ${message}`, cause === undefined ? undefined : { cause }));
      };
      const timer = this.#clock.setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      const onAbort = (): void => fail('aborted', options.signal?.reason);
      if (options.signal?.aborted) return fail('aborted', options.signal.reason);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('response', (res) => {
        if (settled) {
          res.destroy();
          return;
        }
        const code = res.statusCode ?? 0;
        finish(String(code));
        if (code >= 200 && code < 300) {
          // Abort after the headers must still end the body (watch streams).
          const signal = options.signal;
          if (signal) {
            const onBodyAbort = (): void => void res.destroy();
            signal.addEventListener('abort', onBodyAbort, { once: true });
            res.once('close', () => signal.removeEventListener('abort', onBodyAbort));
          }
          resolve(res);
          return;
        }
        if (code === 401) this.config.invalidateToken();
        this.#readBodyWithin(res, `${method} ${path}`, timeoutMs).then(
          (text) => reject(statusErrorFromResponse(code, text, headerValue(res.headers['retry-after']))),
          (err: unknown) => reject(new KubeRequestError(`${method} ${path}: HTTP ${code}, body unreadable`, { cause: err })),
        );
      });
      req.end(body);
    });
  }
}

/**
 * `?a=1&b=2` of the defined parameters, or '' when there are none; escaped as client-go escapes them
 * (Go's `url.QueryEscape`). Not `URLSearchParams`: its constructor cost ~4 µs per request in a fresh
 * controller, a twentieth of its CPU while 1,000 new schedules converge.
 */
export function searchOf(query: QueryParams): string {
  let search = '';
  for (const key of Object.keys(query)) {
    const value = query[key];
    if (value !== undefined) search += `${search === '' ? '?' : '&'}${queryEscape(key)}=${queryEscape(String(value))}`;
  }
  return search;
}

/** What `encodeURIComponent` leaves that Go's `QueryEscape` escapes, and the space it writes as `+`. */
const GO_ESCAPED = /[!'()*]|%20/g;

/** Go's `url.QueryEscape` (letters, digits and `-_.~` stay; space is `+`); a lone surrogate becomes U+FFFD, as in `URLSearchParams`. */
function queryEscape(text: string): string {
  const escaped = encodeURIComponent(text.toWellFormed());
  return escaped.replace(GO_ESCAPED, (c) => (c === '%20' ? '+' : `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads a whole body. A stream that fails or closes before its end rejects with a
 * {@link KubeRequestError}: no whole answer came, so the request may be sent again. Listeners rather
 * than `for await`, whose async iterator cost a fresh process ~15 µs more per request.
 */
function readBody(res: IncomingMessage, what: string, maxBytes = Infinity): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        reject(new ResponseTooLargeError(what, maxBytes));
        res.destroy();
        return;
      }
      chunks.push(chunk);
    });
    res.once('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    res.once('error', (err) => reject(err instanceof KubeRequestError ? err : new KubeRequestError(`${what}: body failed: ${err.message}`, { cause: err })));
    res.once('close', () => {
      if (!res.readableEnded) reject(new KubeRequestError(`${what}: connection closed before the body ended`));
    });
  });
}
