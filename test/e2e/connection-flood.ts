/**
 * A connection flood as its own process (test/e2e/server-attack.test.ts starts it; so can anyone
 * replaying the attack by hand): `count` TCP connections to `host:port`, opened `batch` at a time, each
 * either sending nothing (`--mode silent`: half-open, as a port scanner or a slowloris client leaves
 * them) or a GET of `--path` whose answer it never reads (`--mode no-read`). Once every connection is
 * attempted it prints one JSON line (how many were established, how many refused) and then holds them,
 * never reading, until it is killed. Whether the server closed them is for the server's side to say
 * (a socket that never reads does not notice): the test counts the server process's sockets.
 *
 *   node --import tsx test/e2e/connection-flood.ts --port 8080 --count 6000 --mode silent
 */
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

/** What the flood opened. */
export interface FloodReport {
  readonly established: number;
  /** Attempts the server refused or reset before they were established. */
  readonly refused: number;
}

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    count: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '500' },
    mode: { type: 'string', default: 'silent' },
    path: { type: 'string', default: '/metrics' },
  },
});
const port = Number(values.port);
const count = Number(values.count);
const batch = Number(values.batch);
if (!Number.isInteger(port) || !Number.isInteger(count) || !['silent', 'no-read'].includes(values.mode)) {
  throw new Error(`connection-flood: --port, --count and --mode silent|no-read are required, got ${JSON.stringify(values)}`);
}

const sockets: Socket[] = [];

/** Opens one connection; resolves whether it was established. */
function attempt(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, values.host);
    socket.once('connect', () => {
      if (values.mode === 'no-read') socket.write(`GET ${values.path} HTTP/1.1\r\nHost: ${values.host}\r\n\r\n`);
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    // Never read: what the server sends stays in the kernel's buffers.
    socket.pause();
    sockets.push(socket);
  });
}

let established = 0;
for (let i = 0; i < count; i += batch) {
  for (const ok of await Promise.all(Array.from({ length: Math.min(batch, count - i) }, attempt))) if (ok) established++;
}
const report: FloodReport = { established, refused: count - established };
process.stdout.write(`${JSON.stringify(report)}\n`);
// Held until killed.
setInterval(() => undefined, 60_000);
