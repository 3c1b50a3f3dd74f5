/**
 * The termination message (`/dev/termination-log`, BACKUP_TERMINATION_LOG for tests): one JSON line
 * that `kubectl describe pod` shows, with the backup's name, size, SHA-256, duration and exit code, or
 * the error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runBackupCli } from '../../src/backup/main.ts';
import { formatTerminationMessage, TERMINATION_MESSAGE_LIMIT, writeTerminationMessage } from '../../src/backup/termination-message.ts';
import { removeTempDirsAfterEach, sourceAndDestination, tempDir } from './temp-dirs.ts';

removeTempDirsAfterEach();
afterEach(() => void vi.restoreAllMocks());

const quiet = (): void => {
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
};

describe('termination message', () => {
  it('names the backup, its size, SHA-256, duration and exit code after a run', async () => {
    const { source, destination } = sourceAndDestination('data.bin', 100_000, 1);
    const log = join(tempDir('bks-term-'), 'termination-log');
    quiet();
    const code = await runBackupCli(['--source=pvc', `--source-dir=${source}`, `--destination-dir=${destination}`, '--keep-last=1'], { BACKUP_SCHEDULE_NAME: 'pg', BACKUP_TERMINATION_LOG: log });
    expect(code).toBe(0);
    const text = readFileSync(log, 'utf8');
    expect(text.endsWith('\n') && text.split('\n').length).toBe(2);
    const sidecar = readFileSync(join(destination, readFileSync(log, 'utf8').match(/pg-\d{8}T\d{6}Z\.tar\.gz/)![0] + '.sha256'), 'utf8').split(' ')[0];
    expect(JSON.parse(text)).toMatchObject({ exitCode: 0, file: expect.stringMatching(/\/pg-\d{8}T\d{6}Z\.tar\.gz$/), size: expect.any(Number), sha256: sidecar, durationSec: expect.any(Number), message: 'backup complete: written, verified and pruned' });
  });

  it('holds the error line of a failed run, and of a usage error', async () => {
    const root = tempDir('bks-term-');
    const log = join(root, 'termination-log');
    quiet();
    expect(await runBackupCli(['--source=pvc', `--source-dir=${join(root, 'missing')}`, `--destination-dir=${join(root, 'dest')}`, '--keep-last=1'], { BACKUP_SCHEDULE_NAME: 'pg', BACKUP_TERMINATION_LOG: log })).toBe(1);
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ exitCode: 1, message: expect.stringMatching(/^backup failed: source directory .*missing: no such file or directory/) });
    expect(await runBackupCli(['--source=pvc', '--keep-last=1', '--keep-last=2'], { BACKUP_SCHEDULE_NAME: 'pg', BACKUP_TERMINATION_LOG: log })).toBe(2);
    expect(JSON.parse(readFileSync(log, 'utf8'))).toEqual({ exitCode: 2, message: 'usage: --keep-last: given more than once; give it once' });
  });

  it('fits the kubelet limit, shortening the message', () => {
    const line = formatTerminationMessage({ exitCode: 1, message: `backup failed: ${'x'.repeat(10_000)}`, durationSec: 1 });
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(TERMINATION_MESSAGE_LIMIT);
    expect(JSON.parse(line)).toMatchObject({ exitCode: 1, durationSec: 1, message: expect.stringMatching(/^backup failed: x+…$/) });
  });

  it.skipIf(existsSync('/dev/termination-log'))('leaves /dev alone outside a container (the default path is written only if it exists)', async () => {
    const errors: Error[] = [];
    await writeTerminationMessage('{}\n', {}, (err) => errors.push(err));
    expect(existsSync('/dev/termination-log')).toBe(false);
    expect(errors).toEqual([]);
  });
});
