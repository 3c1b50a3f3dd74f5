/**
 * Entry of the `backup` subcommand of the project image (src/controller/main.ts hands over before it
 * loads anything of the controller): parses the command line, runs a backup or an operator tool, and
 * returns the exit code. Logs are JSON lines (pino) on stdout; `list` prints a table.
 *
 * Exit codes: 0 success (written + verified + pruned; `verify`: valid); 1 failure (`verify`: invalid);
 * 2 usage; 3 volume archive written but incomplete (files changed while read); 4 written and verified,
 * pruning failed. A SIGTERM does not change the code of a run that finished anyway.
 */
import { pino } from 'pino';
import { createLogger } from '../runtime/logger.ts';
import { BACKUP_USAGE, BackupUsageError, parseBackupArgs, type BackupCommand, type BackupSource } from './backup-args.ts';
import { formatList, listBackups, verifyBackupFile } from './backup-tools.ts';
import { FLOW_CONTROL_WINDOW } from './etcd-snapshot.ts';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, runBackup, type RunOutcome } from './run-backup.ts';
import { formatTerminationMessage, writeTerminationMessage } from './termination-message.ts';
import { scavengeEvery } from './v8-flags.ts';

/**
 * Copied bytes between two scavenges (src/backup/v8-flags.ts says why), by what the run streams.
 *
 * An etcd snapshot to a directory, unencoded: one HTTP/2 receive window ({@link FLOW_CONTROL_WINDOW},
 * 2 MiB). Up to a window of chunks is always in flight (received, not yet written), and a scavenge can
 * only copy those, not free them. Scavenging twice per window, as every 1 MiB did, cost a 211 MB
 * snapshot 200 forced scavenges, and V8 then also ran 8 full GCs during the stream (an incremental
 * marking every ~100 ms, finalized by the next forced scavenge) with peak RSS at 91-100 MiB; once per
 * window: 103 scavenges, 1-2 full GCs, 76-81 MiB, user CPU 0.71-0.82 s → 0.63-0.69 s (alternating
 * runs; docs/performance.md "The backup runner").
 *
 * Anything else, 1 MiB: a 200 MB volume run peaked at 97 MiB with 4 MiB and 87–89 MiB with 1 MiB, for
 * the same CPU time (docs/volume-archive.md). Through the encode pipeline (`--age-recipient`, a bucket)
 * zstd's and age's buffers are in flight too and each snapshot byte is counted twice (written to the
 * scratch file, then sent): there 2 MiB peaked at 108-150 MiB against 99-129 with 1 MiB.
 */
export function scavengeIntervalBytes(source: BackupSource['kind'], encoded: boolean): number {
  return source === 'etcd' && !encoded ? FLOW_CONTROL_WINDOW : 1 << 20;
}

/** Runs `backup <argv…>`; `env` is the process environment. */
export async function runBackupCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  if (argv[0] === 'restore') return (await import('./restore/restore-cli.ts')).runRestoreCli(argv.slice(1), env);
  let command: BackupCommand;
  try {
    command = parseBackupArgs(argv, env);
  } catch (err) {
    if (!(err instanceof BackupUsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${BACKUP_USAGE}`);
    await writeTerminationMessage(formatTerminationMessage({ exitCode: EXIT_USAGE, message: `usage: ${err.message}` }), env, () => undefined);
    return EXIT_USAGE;
  }
  switch (command.kind) {
    case 'help':
      process.stdout.write(BACKUP_USAGE);
      return EXIT_OK;
    case 'verify': {
      try {
        const identities = command.identityFile === undefined ? undefined : await (await import('./pipeline/age-identity.ts')).readIdentities(command.identityFile);
        const result = await verifyBackupFile(command.file, identities);
        process.stdout.write(`${JSON.stringify(result)}\n`);
        if (!result.ok) process.stderr.write(`INVALID: ${result.problem ?? ''}\n`);
        return result.ok ? EXIT_OK : EXIT_FAILED;
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        return EXIT_FAILED;
      }
    }
    case 'list': {
      try {
        const rows = await listBackups(command.dir, (message) => process.stderr.write(`warning: ${message}\n`));
        process.stdout.write(formatList(rows));
        return rows.every((r) => r.verification.ok) ? EXIT_OK : EXIT_FAILED;
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        return EXIT_FAILED;
      }
    }
    case 's3-list':
    case 's3-verify':
    case 's3-fetch':
      return (await import('./object-store/object-store-cli.ts')).runObjectStoreTool(command, env);
    case 'upload':
    case 'run': {
      // grpc-js sets the TLS server name to the endpoint's host, and Node prints a DEP0123 warning when
      // that is an IP address (etcd endpoints usually are): a non-JSON line in every backup's log.
      process.noDeprecation = true;
      // Synchronous writes: a handful of lines per run, and none may be lost when the process exits.
      const logger = createLogger({ base: { name: 'backup', schedule: command.schedule, ...(command.namespace ? { namespace: command.namespace } : {}) }, destination: pino.destination({ dest: 1, sync: true }) });
      const abort = new AbortController();
      const onSignal = (signal: NodeJS.Signals): void => {
        // The run may be past the point of no return (committed, pruning): it then finishes and says so.
        logger.warn({ signal }, 'stopping: a backup still being written is abandoned and its temp file removed');
        abort.abort(new Error(signal));
      };
      process.once('SIGTERM', onSignal).once('SIGINT', onSignal);
      try {
        // The run's own code: one aborted mid-write fails (1); one that finished before the signal took hold stands.
        let outcome: RunOutcome | undefined;
        const deps = { logger, signal: abort.signal, onBytesCopied: scavengeEvery(scavengeIntervalBytes(command.source.kind, command.kind === 'upload' || command.encryption !== undefined)), onOutcome: (o: RunOutcome) => void (outcome = o) };
        const code = command.kind === 'upload' ? await (await import('./object-store/s3-run.ts')).runObjectStoreBackup(command, deps, env) : await runBackup(command, deps);
        // `kubectl describe pod` shows it: how the run ended without reading the logs.
        const message = formatTerminationMessage(outcome ?? { exitCode: code, message: `backup ended with exit code ${code}` });
        await writeTerminationMessage(message, env, (err) => logger.warn({ err: err.message }, 'could not write the termination message'));
        return code;
      } finally {
        process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
      }
    }
  }
}
