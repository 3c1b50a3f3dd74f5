import { once } from 'node:events';
import { createServer, request } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { applyServerLimits, routeRequests, startHttpServer, type RunningServer, type ServerLimits } from '../../src/runtime/http-server.ts';

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** GETs `url`: the status and body, or the error the client saw. */
function get(url: string): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
    req.end();
  });
}

describe('routeRequests', () => {
  it('answers a handler that fails before its status with 500 and the reason', async () => {
    const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, { '/x': () => Promise.reject(new Error('boom')) });
    servers.push(server);
    expect(await get(`${server.url}/x`)).toEqual({ status: 500, body: 'internal error: boom\n' });
  });

  it('cuts the connection when a handler fails after its status was sent: no error text passes for the rest of a 200', async () => {
    const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, {
      '/x': async (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"partial":');
        await new Promise((resolve) => setImmediate(resolve));
        throw new RangeError('Maximum call stack size exceeded');
      },
    });
    servers.push(server);
    const answer = await get(`${server.url}/x`);
    expect(answer).toHaveProperty('error');
    expect(JSON.stringify(answer)).not.toContain('internal error');
  });
});

/**
 * A raw TCP connection that sends `text` (nothing by default); `closed` resolves when the server closes
 * it. Unless `reading`, it never reads (and so never sees the close either).
 */
function rawConnection(url: string, text = '', reading = true): { readonly socket: Socket; readonly closed: Promise<void> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname, () => void (text && socket.write(text)));
  socket.on('error', () => undefined);
  if (reading) socket.resume();
  return { socket, closed: once(socket, 'close').then(() => undefined) };
}

describe('server limits', () => {
  const limits: ServerLimits = { maxConnections: 3, headersTimeoutMs: 200, requestTimeoutMs: 400, writeTimeoutMs: 10_000, idleTimeoutMs: 300, keepAliveTimeoutMs: 200 };
  const sockets: Socket[] = [];
  afterEach(() => sockets.splice(0).forEach((s) => s.destroy()));
  const track = (c: ReturnType<typeof rawConnection>): ReturnType<typeof rawConnection> => (sockets.push(c.socket), c);

  it('closes a connection past maxConnections as it arrives, and the ones that send nothing or half their headers after the headers timeout', async () => {
    // Timeouts long enough that the three are still held when the fourth is refused, however busy the machine.
    const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, { '/': (_req, res) => void res.end('ok') }, { ...limits, headersTimeoutMs: 2_000, requestTimeoutMs: 4_000 });
    servers.push(server);
    const held = [track(rawConnection(server.url)), track(rawConnection(server.url, 'GET / HTTP/1.1\r\nHost: x\r\n')), track(rawConnection(server.url))];
    await Promise.all(held.map((c) => once(c.socket, 'connect')));
    // Accepted in the order they connected: the fourth is over the limit.
    const over = track(rawConnection(server.url));
    let heldClosed = 0;
    for (const c of held) void c.closed.then(() => heldClosed++);
    await over.closed;
    expect(heldClosed).toBe(0);
    await Promise.all(held.map((c) => c.closed));
  });

  it('cuts a client that stops reading its answer once the connection is idle', async () => {
    let answerClosed!: () => void;
    const closed = new Promise<void>((resolve) => (answerClosed = resolve));
    const server = await startHttpServer({ host: '127.0.0.1', port: 0 }, {
      '/big': async (_req, res) => {
        res.once('close', answerClosed);
        res.writeHead(200);
        const chunk = Buffer.alloc(1 << 20);
        // Far more than the socket buffers hold: the writes stall once the client stops reading.
        for (let i = 0; i < 256 && !res.destroyed; i++) if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        res.end();
      },
    }, limits);
    servers.push(server);
    track(rawConnection(server.url, 'GET /big HTTP/1.1\r\nHost: x\r\n\r\n', false));
    await closed;
  });

  it('cuts a client that reads its answer too slowly at the write timeout, though the connection never goes idle', async () => {
    const clock = new FakeClock();
    let writing!: () => void;
    const started = new Promise<void>((resolve) => (writing = resolve));
    let cut!: (finished: boolean) => void;
    const answerClosed = new Promise<boolean>((resolve) => (cut = resolve));
    let written = 0;
    const server = createServer(routeRequests({
      '/metrics': async (_req, res) => {
        res.once('close', () => cut(res.writableFinished));
        res.writeHead(200);
        writing();
        for (let i = 0; i < 4096 && !res.destroyed; i++) {
          written += 64 * 1024;
          if (!res.write(Buffer.alloc(64 * 1024))) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        }
        res.end();
      },
    }, { writeTimeoutMs: 30_000, clock }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const client = track(rawConnection(`http://127.0.0.1:${port}`, 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n', false));
    // A byte now and then: the socket is never idle.
    const trickle = setInterval(() => client.socket.read(1), 5);
    await started;
    let closedEarly = false;
    void answerClosed.then(() => (closedEarly = true));
    clock.step(29_999);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closedEarly).toBe(false);
    clock.step(1);
    expect(await answerClosed).toBe(false);
    clearInterval(trickle);
    server.close();
    expect(written).toBeLessThan(4096 * 64 * 1024);
  });

  it('refuses limits that are not positive integers, or a headers timeout past the request timeout', () => {
    const server = createServer();
    expect(() => applyServerLimits(server, { ...limits, maxConnections: 0 })).toThrow('server limits: maxConnections must be a positive integer, got 0');
    expect(() => applyServerLimits(server, { ...limits, headersTimeoutMs: 500 })).toThrow('server limits: headersTimeoutMs (500) must not exceed requestTimeoutMs (400)');
  });
});
