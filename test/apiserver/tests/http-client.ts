import type { TestApiServer } from '../index.ts';

/** A response as the tests read it. */
export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** Minimal fetch wrapper for tests: JSON in, JSON out, admin token unless another is given. */
export function client(server: TestApiServer, token = server.adminToken) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (health checks)
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
}

/** Reads a watch stream until `count` events arrived or the stream ended. */
export async function readWatch(server: TestApiServer, path: string, count: number, token = server.adminToken): Promise<any[]> {
  const controller = new AbortController();
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const events: any[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    while (events.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    }
  } finally {
    controller.abort();
  }
  return events.slice(0, count);
}
