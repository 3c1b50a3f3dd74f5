/**
 * Request bodies read within bounds: the size limit, memory asked for as the bytes arrive (buffers that
 * double as they fill, the old one freed, never past the declared length), and a minimum rate.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { startHttpServer, type RunningServer } from '../../src/runtime/http-server.ts';
import { drainRequestBody, readRequestBody, RequestBodyRefusedError, RequestBodyTooLargeError, RequestBodyTooSlowError, type BodyMemory, type UploadPace } from '../../src/runtime/request-body.ts';

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server reading each body with `memory` and `pace`, answering its length or the error's name. */
async function echoServer(limit: number, memory?: () => BodyMemory, pace?: UploadPace): Promise<RunningServer> {
  const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, {
    '/': async (req, res) => {
      try {
        const body = await readRequestBody(req, limit, memory?.(), pace);
        res.writeHead(200).end(`${body.length} ${body.subarray(0, 8).toString()}`);
      } catch (err) {
        if (err instanceof RequestBodyTooLargeError) return void res.writeHead(413, { Connection: 'close' }).end(err.message);
        if (err instanceof RequestBodyRefusedError || err instanceof RequestBodyTooSlowError) return void res.writeHead(429, { Connection: 'close' }).end(err.name);
        throw err;
      }
    },
  });
  servers.push(server);
  return server;
}

function post(url: string, chunks: (string | Buffer)[], headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** Memory that records what it allocates and frees, refusing past `capacity` bytes held. */
function recordingMemory(capacity = Number.MAX_SAFE_INTEGER): BodyMemory & { allocated: number[]; freed: number[]; peak: number } {
  let held = 0;
  const m = {
    allocated: [] as number[],
    freed: [] as number[],
    peak: 0,
    allocate(bytes: number): Buffer | undefined {
      if (held + bytes > capacity) return undefined;
      held += bytes;
      m.peak = Math.max(m.peak, held);
      m.allocated.push(bytes);
      return Buffer.alloc(bytes);
    },
    free(buffer: Buffer): void {
      held -= buffer.length;
      m.freed.push(buffer.length);
    },
  };
  return m;
}

describe('readRequestBody', () => {
  it.each([
    ['a body within the limit', ['x'.repeat(100)], {}, 200, '100 xxxxxxxx'],
    ['a body exactly at the limit, chunked', ['x'.repeat(60), 'x'.repeat(40)], {}, 200, '100 xxxxxxxx'],
    ['a Content-Length over the limit, before reading', ['x'.repeat(101)], { 'Content-Length': '101' }, 413, 'request body exceeds 100 bytes'],
    ['a chunked body that grows over the limit', ['x'.repeat(60), 'x'.repeat(60)], {}, 413, 'request body exceeds 100 bytes'],
  ])('%s', async (_, chunks, headers, status, body) => {
    const server = await echoServer(100);
    expect(await post(`${server.url}/`, chunks, headers)).toEqual({ status, body });
  });

  it('reads a large body into buffers that double as it arrives, each old one freed, the last no larger than declared', async () => {
    const memory = recordingMemory();
    const server = await echoServer(2 ** 20, () => memory);
    const size = 700 * 1024;
    const body = Buffer.alloc(size, 'a');
    body.write('{"head":', 0);
    expect(await post(`${server.url}/`, [body], { 'Content-Length': String(size) })).toEqual({ status: 200, body: `${size} {"head":` });
    // However the socket cut the body into chunks: each buffer at most twice the one before (or it and
    // the 64 KiB chunk that did not fit), the last exactly the declared length, every other one freed.
    const { allocated } = memory;
    expect(allocated.at(-1)).toBe(size);
    expect(allocated.slice(1).every((bytes, i) => bytes <= Math.max(2 * allocated[i]!, allocated[i]! + 64 * 1024))).toBe(true);
    expect(memory.freed).toEqual(allocated.slice(0, -1));
    // At most the buffer being left and the one replacing it.
    expect(memory.peak).toBeLessThanOrEqual(allocated.at(-2)! + size);
  });

  it('reads a small declared body into one buffer of its size, and a chunked one into buffers doubling as it arrives', async () => {
    const memory = recordingMemory();
    const server = await echoServer(2 ** 20, () => memory);
    await post(`${server.url}/`, ['x'.repeat(3000)], { 'Content-Length': '3000' });
    expect(memory.allocated).toEqual([3000]);
    expect(await post(`${server.url}/`, ['y'.repeat(20_000), 'y'.repeat(20_000)])).toEqual({ status: 200, body: '40000 yyyyyyyy' });
    const chunked = memory.allocated.slice(1);
    expect(chunked.at(-1)).toBeGreaterThanOrEqual(40_000);
    expect(chunked.at(-1)).toBeLessThanOrEqual(2 * 40_000);
  });

  it('stops when the memory refuses a buffer or a chunk, freeing what it held', async () => {
    const memory = recordingMemory(40 * 1024);
    const server = await echoServer(2 ** 20, () => memory);
    expect(await post(`${server.url}/`, ['z'.repeat(100 * 1024)], { 'Content-Length': String(100 * 1024) })).toEqual({ status: 429, body: 'RequestBodyRefusedError' });
    expect(memory.freed.reduce((a, b) => a + b, 0)).toBe(memory.allocated.reduce((a, b) => a + b, 0));
    const refusing = await echoServer(2 ** 20, () => ({ ...recordingMemory(), accept: () => false }));
    expect(await post(`${refusing.url}/`, ['z'])).toEqual({ status: 429, body: 'RequestBodyRefusedError' });
  });

  it('stops a body behind its pace, counted from its start and extended by what arrives', async () => {
    const clock = new FakeClock();
    let read!: (outcome: string) => void;
    const outcome = new Promise<string>((resolve) => (read = resolve));
    const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, {
      '/': (req) => {
        readRequestBody(req, 2 ** 20, undefined, { graceMs: 1_000, minBytesPerSecond: 100, clock }).then(() => read('complete'), (err: Error) => read(err.message));
      },
    });
    servers.push(server);
    const req = httpRequest(`${server.url}/`, { method: 'POST', headers: { 'Content-Length': '1000' } });
    req.on('error', () => undefined);
    req.write('x'.repeat(50));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // 50 bytes at 100 a second: half a second past the grace.
    clock.step(1_499);
    await new Promise((resolve) => setTimeout(resolve, 50));
    let settled = false;
    void outcome.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    clock.step(1);
    expect(await outcome).toBe('request body too slow: 50 bytes arrived, at least 100 bytes a second are expected after the first 1000 ms');
    req.destroy();
  });
});

describe('drainRequestBody', () => {
  it('drops the rest of a body, or gives up on one behind its pace', async () => {
    const clock = new FakeClock();
    const drained: boolean[] = [];
    const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, {
      '/': async (req, res) => {
        drained.push(await drainRequestBody(req, { graceMs: 1_000, minBytesPerSecond: 100, clock }));
        res.end('done');
      },
    });
    servers.push(server);
    expect(await post(`${server.url}/`, ['x'.repeat(5000)])).toEqual({ status: 200, body: 'done' });
    const slow = httpRequest(`${server.url}/`, { method: 'POST', headers: { 'Content-Length': '1000' } });
    slow.on('error', () => undefined);
    slow.write('x');
    await new Promise((resolve) => setTimeout(resolve, 100));
    clock.step(1_010);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(drained).toEqual([true, false]);
    slow.destroy();
  });
});
