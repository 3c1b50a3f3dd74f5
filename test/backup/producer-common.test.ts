import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BackupFailedError } from '../../src/backup/backup-errors.ts';
import { EndpointError } from '../../src/backup/etcd-snapshot.ts';
import { assertAllReadable, checkSourceDirectory, fromFirstEndpoint, incompleteReason, untilAborted } from '../../src/backup/producer-common.ts';
import { SnapshotInvalidError } from '../../src/backup/snapshot-verify.ts';
import { UNREADABLE_LIMIT, type ArchiveResult } from '../../src/backup/volume-archive.ts';

function recordingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: pino({}, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) }) };
}

const archived = (over: Partial<ArchiveResult>): ArchiveResult => ({ unreadable: [], changed: [], ...over }) as unknown as ArchiveResult;

describe('fromFirstEndpoint', () => {
  it('tries endpoints in order past endpoint failures and returns the first delivery, warning once per failed endpoint', async () => {
    const { logger, lines } = recordingLogger();
    const tried: string[] = [];
    const delivered = await fromFirstEndpoint(['a:1', 'b:2', 'c:3', 'd:4'], { logger }, async (endpoint) => {
      tried.push(endpoint);
      if (endpoint === 'a:1') throw new EndpointError(endpoint, 'connection refused');
      if (endpoint === 'b:2') throw new SnapshotInvalidError('/tmp/x', 'bad trailer');
      return `from ${endpoint}`;
    });
    expect(delivered).toBe('from c:3');
    expect(tried).toEqual(['a:1', 'b:2', 'c:3']);
    expect(lines.filter((l) => l.msg === 'etcd snapshot: endpoint failed; trying the next one').map((l) => l.endpoint)).toEqual(['a:1', 'b:2']);
  });

  it('fails naming every endpoint and why (a snapshot check prefixed with its endpoint)', async () => {
    const { logger } = recordingLogger();
    const run = fromFirstEndpoint(['a:1', 'b:2'], { logger }, async (endpoint) => {
      throw endpoint === 'a:1' ? new EndpointError(endpoint, 'timed out') : new SnapshotInvalidError('/tmp/x', 'bad trailer');
    });
    await expect(run).rejects.toThrow(new BackupFailedError('etcd snapshot: no endpoint delivered a valid snapshot (a:1: timed out; b:2: /tmp/x: not a valid etcd snapshot: bad trailer)'));
  });

  it('ends at once on any other error: it is the run\'s, not the endpoint\'s', async () => {
    const { logger } = recordingLogger();
    const tried: string[] = [];
    const disk = Object.assign(new Error('no space'), { code: 'ENOSPC' });
    const run = fromFirstEndpoint(['a:1', 'b:2'], { logger }, async (endpoint) => {
      tried.push(endpoint);
      throw disk;
    });
    await expect(run).rejects.toBe(disk);
    expect(tried).toEqual(['a:1']);
  });

  it('stops when the signal fires (after a failure, or when the attempt found the run stopped) and says aborted', async () => {
    const { logger } = recordingLogger();
    const stop = new AbortController();
    const tried: string[] = [];
    const afterFailure = fromFirstEndpoint(['a:1', 'b:2'], { logger, signal: stop.signal }, async (endpoint) => {
      tried.push(endpoint);
      stop.abort();
      throw new EndpointError(endpoint, 'stream aborted');
    });
    await expect(afterFailure).rejects.toThrow('etcd snapshot: no endpoint delivered a valid snapshot (a:1: stream aborted)');
    expect(tried).toEqual(['a:1']);
    const stopped = fromFirstEndpoint(['a:1', 'b:2'], { logger }, async () => undefined);
    await expect(stopped).rejects.toThrow('etcd snapshot: no endpoint delivered a valid snapshot (aborted)');
    await expect(fromFirstEndpoint(['a:1'], { logger, signal: stop.signal }, async () => 'never')).rejects.toThrow('(aborted)');
  });
});

describe('volume archive verdicts', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('names the unreadable paths, says "at least" at the listing limit, and gives the podSecurityContext hint', () => {
    expect(() => assertAllReadable(archived({}))).not.toThrow();
    expect(() => assertAllReadable(archived({ unreadable: ['a', 'b'] }))).toThrow(/^volume archive: cannot read 2 path\(s\) as uid \d+: a, b\. Hint: .*spec\.podSecurityContext/);
    const many = Array.from({ length: UNREADABLE_LIMIT }, (_, i) => `f${i}`);
    expect(() => assertAllReadable(archived({ unreadable: many }))).toThrow(`cannot read at least ${UNREADABLE_LIMIT} path(s)`);
  });

  it('calls a run incomplete when files changed while read, naming the first ten', () => {
    expect(incompleteReason(archived({}))).toBeUndefined();
    const changed = Array.from({ length: 12 }, (_, i) => `c${i}`);
    expect(incompleteReason(archived({ changed }))).toBe(`12 file(s) changed while read (${changed.slice(0, 10).join(', ')})`);
  });

  it('refuses a source that is missing or not a directory, naming the errno', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'producer-common-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'file'), 'x');
    await expect(checkSourceDirectory(dir)).resolves.toBeUndefined();
    await expect(checkSourceDirectory(join(dir, 'file'))).rejects.toThrow(`source directory ${join(dir, 'file')}: a path component is not a directory (ENOTDIR ${join(dir, 'file')})`);
    await expect(checkSourceDirectory(join(dir, 'none'))).rejects.toThrow(`source directory ${join(dir, 'none')}: no such file or directory (ENOENT`);
  });

  it('passes chunks on until the signal fires, then fails the archive', async () => {
    const stop = new AbortController();
    async function* chunks(): AsyncGenerator<Buffer> {
      yield Buffer.from('a');
      stop.abort();
      yield Buffer.from('b');
    }
    const seen: string[] = [];
    const reading = (async () => {
      for await (const chunk of untilAborted(chunks(), stop.signal)) seen.push(chunk.toString());
    })();
    await expect(reading).rejects.toThrow('volume archive: aborted (the Pod is being stopped)');
    expect(seen).toEqual(['a']);
  });
});
