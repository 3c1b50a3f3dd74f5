/**
 * `backup restore …` as a process: parses the flags (exit 2 with the usage on a mistake), runs the
 * restore with JSON log lines on stdout (progress every 5 s), writes the termination message the
 * Restore controller reads from the Pod, and returns the exit code (run-restore.ts lists them).
 */
import { pino } from 'pino';
import { createLogger } from '../../runtime/logger.ts';
import { BackupUsageError } from '../backup-args.ts';
import { formatTerminationMessage, writeTerminationMessage } from '../termination-message.ts';
import { parseRestoreArgs, RESTORE_USAGE } from './restore-args.ts';
import { runRestore } from './run-restore.ts';

/** Exit code of a usage mistake. */
const EXIT_USAGE = 2;

/** Runs `backup restore <argv…>`. */
export async function runRestoreCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(RESTORE_USAGE);
    return 0;
  }
  let command;
  try {
    command = parseRestoreArgs(argv);
  } catch (err) {
    if (!(err instanceof BackupUsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${RESTORE_USAGE}`);
    await writeTerminationMessage(formatTerminationMessage({ exitCode: EXIT_USAGE, message: `usage: ${err.message}` }), env, () => undefined);
    return EXIT_USAGE;
  }
  const logger = createLogger({ base: { name: 'restore' }, destination: pino.destination({ dest: 1, sync: true }) });
  const outcome = await runRestore(command, { logger, env });
  const message = formatTerminationMessage({ exitCode: outcome.exitCode, message: outcome.message, ...(outcome.backup ? { file: outcome.backup.file, time: outcome.backup.time, size: outcome.backup.size, sha256: outcome.backup.sha256 } : {}) });
  await writeTerminationMessage(message, env, (err) => logger.warn({ err: err.message }, 'could not write the termination message'));
  return outcome.exitCode;
}
