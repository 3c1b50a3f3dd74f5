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

/**
 * Creates `crd` and waits until `listPath` (a list of one of its resources) answers 200: a new CRD's
 * resources are served only once the CRD controller has established it, as on kube-apiserver. Throws
 * naming the path when the CRD is refused or its resource is not served within `timeoutMs`.
 */
export async function createCrdAndWait(api: ReturnType<typeof client>, crd: unknown, listPath: string, timeoutMs = 5_000): Promise<void> {
  const created = await api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  if (created.status !== 201) throw new Error(`CRD for ${listPath} not created: ${created.status} ${JSON.stringify(created.body)}`);
  const deadline = Date.now() + timeoutMs;
  while ((await api('GET', listPath)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${listPath} not served ${timeoutMs} ms after its CRD was created`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
