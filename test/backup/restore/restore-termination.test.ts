/**
 * The contract between `backup restore` and the Restore controller: the termination message the runner
 * writes (runRestoreCli, with BACKUP_TERMINATION_LOG pointing at a file) is one JSON line that the
 * controller's parser accepts as it is, giving the backup's name, time (also written by the runner
 * now), size in bytes and SHA-256 (the sidecar's) for status.backup; a refused restore reports its exit
 * code and reason without a backup.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runRestoreCli } from '../../../src/backup/restore/restore-cli.ts';
import { parseRunnerReport } from '../../../src/controller/restore/runner-report.ts';
import { removeTempDirsAfterEach, tempDir } from '../temp-dirs.ts';
import { runnerArchive } from './restore-fixtures.ts';

removeTempDirsAfterEach();

/** Runs the CLI with its log lines kept off the test output; returns the exit code and the message written. */
async function run(argv: string[], log: string): Promise<{ exitCode: number; message: string }> {
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const exitCode = await runRestoreCli(argv, { BACKUP_TERMINATION_LOG: log });
    return { exitCode, message: readFileSync(log, 'utf8') };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('backup restore termination message', () => {
  it('is what the controller reads into status.backup', async () => {
    const root = tempDir('bks-restore-term-');
    const source = join(root, 'source');
    const backups = join(root, 'backups');
    mkdirSync(source);
    mkdirSync(backups);
    writeFileSync(join(source, 'data.txt'), 'restored bytes');
    const file = 'vol-20261201T010203Z.tar.gz';
    await runnerArchive(source, backups, file);
    const sha256 = readFileSync(join(backups, `${file}.sha256`), 'utf8').split(' ')[0];

    const { exitCode, message } = await run([`--from=${backups}`, '--backup=latest', `--target-dir=${join(root, 'target')}`, '--schedule=vol'], join(root, 'termination-log'));
    expect(exitCode).toBe(0);
    expect(message.endsWith('}\n')).toBe(true);
    expect(JSON.parse(message)).toMatchObject({ exitCode: 0, file, time: '2026-12-01T01:02:03.000Z' });
    expect(parseRunnerReport(message)).toEqual({
      report: { exitCode: 0, message: expect.stringContaining(`restored ${file} into`), backup: { name: file, time: '2026-12-01T01:02:03Z', size: statSync(join(backups, file)).size, sha256 } },
    });
  });

  it('of a refused restore carries the exit code and the reason, and no backup', async () => {
    const root = tempDir('bks-restore-term-');
    mkdirSync(join(root, 'backups'));
    const { exitCode, message } = await run([`--from=${join(root, 'backups')}`, '--backup=latest', `--target-dir=${join(root, 'target')}`], join(root, 'termination-log'));
    expect(exitCode).toBe(5);
    const parsed = parseRunnerReport(message);
    expect(parsed).toMatchObject({ report: { exitCode: 5, message: expect.any(String) } });
    expect(parsed).not.toHaveProperty('report.backup');
  });
});
