/**
 * A deliberately small HTTP client for the conformance suite: node:http/https with keep-alive, bearer
 * token or client certificate, JSON in and out, and a line-oriented WATCH reader. It is independent of
 * the project's own REST client on purpose, so the suite judges the server and not our client.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { KubeObject } from '../../../src/kube/object.ts';

/** A decoded JSON document as the suite reads it: any object, read through `toMatchObject` or `dig`. */
export type Doc = KubeObject;

/** Where and how to connect: what a kubeconfig context boils down to. */
export interface Endpoint {
  /** Base URL of the API server, e.g. `https://127.0.0.1:6443`. */
  readonly server: string;
  /** Bearer token of the default user, if the kubeconfig has one. */
  readonly token?: string;
  /** TLS options (CA, client certificate, skip verify) for https servers. */
  readonly tls?: https.AgentOptions;
}

/** Options of one request. */
export interface RequestOptions {
  /** JSON-serialisable body (or a string sent as is). @default no body */
  readonly body?: unknown;
  /** Content-Type of the body. @default application/json */
  readonly contentType?: string;
  /** Accept header. @default application/json */
  readonly accept?: string;
  /** Query parameters. @default none */
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Bearer token for this request; `null` sends none. @default the client's token */
  readonly token?: string | null;
}

/** A decoded HTTP response. */
export interface ApiResponse<T = Doc> {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** JSON body when the server sent JSON, otherwise `undefined`. */
  readonly body: T;
  /** The raw body text. */
  readonly text: string;
  /** Milliseconds from sending to the end of the body. */
  readonly elapsedMs: number;
}

/** One decoded line of a WATCH stream. */
export interface WatchLine {
  readonly type: string;
  readonly object: Doc;
}

/** Builds a path with a query string. */
export function withQuery(path: string, query?: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

/** A JSON client bound to one endpoint and one default identity. */
export class ApiClient {
  readonly #endpoint: Endpoint;
  readonly #agent: http.Agent;
  readonly #token: string | undefined;

  constructor(endpoint: Endpoint, token?: string, agent?: http.Agent) {
    this.#endpoint = endpoint;
    this.#token = token ?? endpoint.token;
    const isHttps = endpoint.server.startsWith('https:');
    this.#agent =
      agent ?? (isHttps ? new https.Agent({ keepAlive: true, ...endpoint.tls }) : new http.Agent({ keepAlive: true }));
  }

  /** The same server, another bearer token (and no client certificate). */
  as(token: string): ApiClient {
    const isHttps = this.#endpoint.server.startsWith('https:');
    const tls: https.AgentOptions = { ...this.#endpoint.tls, cert: undefined, key: undefined };
    const agent = isHttps ? new https.Agent({ keepAlive: true, ...tls }) : new http.Agent({ keepAlive: true });
    return new ApiClient({ server: this.#endpoint.server, tls }, token, agent);
  }

  /** Sends one request and reads the whole body. */
  request<T = Doc>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = this.#open(method, path, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          if ((res.headers['content-type'] ?? '').includes('json') && text.length > 0) {
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body as T, text, elapsedMs: performance.now() - started });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** GET shorthand. */
  get<T = Doc>(path: string, options?: RequestOptions): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path, options);
  }

  /** POST shorthand. */
  post<T = Doc>(path: string, body: unknown, options?: RequestOptions): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, { ...options, body });
  }

  /** PUT shorthand. */
  put<T = Doc>(path: string, body: unknown, options?: RequestOptions): Promise<ApiResponse<T>> {
    return this.request<T>('PUT', path, { ...options, body });
  }

  /** PATCH shorthand; `contentType` defaults to a JSON merge patch. */
  patch<T = Doc>(path: string, body: unknown, options?: RequestOptions): Promise<ApiResponse<T>> {
    return this.request<T>('PATCH', path, { contentType: 'application/merge-patch+json', ...options, body });
  }

  /** DELETE shorthand (optional DeleteOptions body). */
  delete<T = Doc>(path: string, options?: RequestOptions): Promise<ApiResponse<T>> {
    return this.request<T>('DELETE', path, options);
  }

  /** Opens a WATCH (`watch=true` is added) and returns a reader over its JSON lines. */
  watch(path: string, query: RequestOptions['query'] = {}, options: RequestOptions = {}): WatchStream {
    return new WatchStream((onResponse) => this.#open('GET', path, { ...options, query: { ...query, watch: 'true' } }, onResponse));
  }

  #open(method: string, path: string, options: RequestOptions, onResponse: (res: http.IncomingMessage) => void): http.ClientRequest {
    const url = new URL(withQuery(path, options.query), this.#endpoint.server);
    const headers: Record<string, string> = {
      accept: options.accept ?? 'application/json',
      'user-agent': 'conformance-suite/1.0',
    };
    const token = options.token === undefined ? this.#token : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method, headers, agent: this.#agent }, onResponse);
    if (payload !== undefined) req.write(payload);
    return req;
  }

  /** Frees sockets. */
  close(): void {
    this.#agent.destroy();
  }
}

/** Reads a WATCH response line by line; `next()` waits for the next event with a deadline. */
export class WatchStream {
  /** HTTP status and headers, once the response starts. */
  readonly response: Promise<http.IncomingMessage>;
  readonly #queue: WatchLine[] = [];
  readonly #waiters: Array<() => void> = [];
  #ended = false;
  #endedAt: number | undefined;
  #req: http.ClientRequest | undefined;
  #res: http.IncomingMessage | undefined;
  #error: Error | undefined;
  readonly startedAt = performance.now();

  constructor(open: (onResponse: (res: http.IncomingMessage) => void) => http.ClientRequest) {
    this.response = new Promise((resolve, reject) => {
      this.#req = open((res) => {
        this.#res = res;
        resolve(res);
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line) this.#push(JSON.parse(line) as WatchLine);
          }
        });
        const finish = (): void => {
          if (buffer.trim()) {
            try {
              this.#push(JSON.parse(buffer.trim()) as WatchLine);
            } catch {
              // a non-JSON tail (e.g. an error page) is not an event
            }
            buffer = '';
          }
          this.#end();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      this.#req.on('error', (err) => {
        this.#error = err;
        reject(err);
        this.#end();
      });
      this.#req.end();
    });
    this.response.catch(() => undefined);
  }

  /** True once the server (or `close()`) ended the stream. */
  get ended(): boolean {
    return this.#ended && this.#queue.length === 0;
  }

  /** Milliseconds between opening and the end of the stream (undefined while open). */
  get durationMs(): number | undefined {
    return this.#endedAt === undefined ? undefined : this.#endedAt - this.startedAt;
  }

  /** The next event; `undefined` when the stream ended; throws after `timeoutMs` without one. */
  async next(timeoutMs = 5_000): Promise<WatchLine | undefined> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const item = this.#queue.shift();
      if (item) return item;
      if (this.#ended) return undefined;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Next event that is not a BOOKMARK. */
  async nextChange(timeoutMs = 5_000): Promise<WatchLine | undefined> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const ev = await this.next(Math.max(1, deadline - performance.now()));
      if (!ev || ev.type !== 'BOOKMARK') return ev;
    }
  }

  /** Every event until the server ends the stream (throws after `timeoutMs`). */
  async drain(timeoutMs: number): Promise<WatchLine[]> {
    const out: WatchLine[] = [];
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const ev = await this.next(Math.max(1, deadline - performance.now()));
      if (!ev) return out;
      out.push(ev);
    }
  }

  /** Closes the stream from the client side. */
  close(): void {
    this.#res?.destroy();
    this.#req?.destroy();
    this.#end();
  }

  #push(line: WatchLine): void {
    this.#queue.push(line);
    this.#wake();
  }

  #end(): void {
    if (!this.#ended) {
      this.#ended = true;
      this.#endedAt = performance.now();
    }
    this.#wake();
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}
