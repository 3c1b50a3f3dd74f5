import { open } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { streamSnapshot } from '../../src/backup/etcd-snapshot.ts';
import { removeTempDirsAfterEach, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('streamSnapshot', () => {
  it('gives up at once when the signal was aborted before it started (SIGTERM while the temp file was created)', async () => {
    // An endpoint that accepts and never answers: without the abort, only the idle timeout would end it.
    const sockets = new Set<Socket>();
    const server = createServer((s) => void sockets.add(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    });
    const port = (server.address() as { port: number }).port;
    const file = await open(join(tempDir('bks-durable-'), 'snap'), 'w');
    cleanups.push(() => file.close());
    const abort = new AbortController();
    abort.abort(new Error('SIGTERM'));
    const started = Date.now();
    await expect(streamSnapshot({ endpoint: `http://127.0.0.1:${port}`, tls: undefined, file, onBytes: () => undefined, signal: abort.signal, idleTimeoutMs: 3_000 })).rejects.toThrow(/aborted \(the Pod is being stopped\)/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
