import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../src/runtime/http-server.ts';

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
