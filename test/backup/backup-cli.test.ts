import { readdirSync, watch } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { runBackupCli } from '../../src/backup/main.ts';
import { EXIT_OK } from '../../src/backup/run-backup.ts';
import { removeTempDirsAfterEach, sourceAndDestination } from './temp-dirs.ts';

removeTempDirsAfterEach();

describe('backup run (CLI entry)', () => {
  it('exits 0 when SIGTERM arrives after the backup was written: the finished run stands', async () => {
    const { source, destination } = sourceAndDestination('data.bin', 100_000, 1);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const before = new Set(process.listeners('SIGTERM'));
    // The signal the kubelet sends, delivered the moment the sidecar (the last file of a backup) appears.
    let signalled = false;
    const watcher = watch(destination, (_event, name) => {
      if (signalled || !name?.endsWith('.tar.gz.sha256')) return;
      signalled = true;
      const handler = process.listeners('SIGTERM').find((l) => !before.has(l));
      (handler as ((s: NodeJS.Signals) => void) | undefined)?.('SIGTERM');
    });
    try {
      const code = await runBackupCli(['--source=pvc', `--source-dir=${source}`, `--destination-dir=${destination}`, '--keep-last=1'], { BACKUP_SCHEDULE_NAME: 'pg', BACKUP_SCHEDULE_NAMESPACE: 'db' });
      expect(signalled).toBe(true);
      expect(code).toBe(EXIT_OK);
      expect(readdirSync(destination).filter((f) => f.startsWith('pg-'))).toHaveLength(2);
    } finally {
      watcher.close();
      stdout.mockRestore();
    }
  });
});
