/**
 * `migrate-storage`, a subcommand of the controller image (src/controller/main.ts hands over before it
 * loads the controller): parses the flags, runs {@link migrateStorage} and maps its result to an exit
 * code. Logs are JSON lines (pino) on stdout. SIGTERM/SIGINT stop the run cleanly: in-flight rewrites
 * finish, status.storedVersions is left alone, exit 1.
 *
 * Exit codes: 0 migrated or nothing to migrate; 1 objects not rewritten (retries ran out, or the server
 * refused the caller), interrupted, or an API failure; 2 usage, or a CRD that cannot be migrated
 * (missing, no served storage version, server not switched); 3 incomplete: every object rewritten but
 * those the server refuses to store as they are (400, 413, 422), each logged with the server's message
 * and how to fix it; status.storedVersions left as it was. Fix or delete those, then run again.
 */
import { pino } from 'pino';
import { KubeClient } from '../kube/kube-client.ts';
import { KubeConfig } from '../kube/kube-config.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { MigrateStorageUsageError, migrateStorageUsage, parseMigrateStorageArgs, type MigrateStorageCommand } from './migrate-storage-args.ts';
import { MigrationRefusedError } from './migration-target.ts';
import { migrateStorage, type MigrationResult, type SkippedObject } from './storage-migrator.ts';

/** Exit codes of `migrate-storage`. */
export const MIGRATE_EXIT = { ok: 0, failed: 1, usage: 2, incomplete: 3 } as const;

/** Failed objects listed in the final log line; the rest are in the per-object lines before it. */
const LISTED_FAILURES = 100;

/** Options of {@link runMigrateStorageCli}. */
export interface MigrateStorageCliOptions {
  /** `--crd` when not given. */
  readonly defaultCrd: string;
  /** Where JSON log lines go. @default stdout, synchronous (no line lost at exit) */
  readonly logger?: Logger;
}

/** Runs `migrate-storage <argv…>` and resolves with the exit code. */
export async function runMigrateStorageCli(argv: readonly string[], cli: MigrateStorageCliOptions): Promise<number> {
  let command: MigrateStorageCommand;
  try {
    command = parseMigrateStorageArgs(argv, cli.defaultCrd);
  } catch (err) {
    if (!(err instanceof MigrateStorageUsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${migrateStorageUsage(cli.defaultCrd)}`);
    return MIGRATE_EXIT.usage;
  }
  if (command.kind === 'help') {
    process.stdout.write(migrateStorageUsage(cli.defaultCrd));
    return MIGRATE_EXIT.ok;
  }
  const { options } = command;
  const logger = cli.logger ?? createLogger({ base: { name: 'migrate-storage' }, destination: pino.destination({ dest: 1, sync: true }) });
  let config: KubeConfig;
  try {
    config = options.kubeconfig ? KubeConfig.fromKubeconfigFile(options.kubeconfig) : KubeConfig.inCluster();
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, options.kubeconfig ? `cannot load --kubeconfig ${options.kubeconfig}` : 'cannot load the in-cluster configuration (use --kubeconfig outside a cluster)');
    return MIGRATE_EXIT.failed;
  }
  // One socket per rewrite in flight, plus the prefetched LIST page.
  const client = new KubeClient({ config, userAgent: 'backupschedule-operator-migrate-storage', maxSockets: options.concurrency + 2 });
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.warn({ signal }, 'stopping: rewrites in flight finish, status.storedVersions is left alone');
    abort.abort(new Error(signal));
  };
  process.once('SIGTERM', onSignal).once('SIGINT', onSignal);
  // The runtime's timers are unref'd and idle keep-alive sockets hold nothing either: without this, a
  // run waiting out a retry backoff would let the process end, with exit code 0, mid-migration.
  const keepAlive = setInterval(() => undefined, 60_000);
  try {
    const result = await migrateStorage({ client, crdName: options.crdName, concurrency: options.concurrency, pageSize: options.pageSize, force: options.force, logger, signal: abort.signal });
    return exitCode(result, logger);
  } catch (err) {
    if (err instanceof MigrationRefusedError) {
      logger.fatal({ crd: options.crdName }, `refused: ${err.message}`);
      return MIGRATE_EXIT.usage;
    }
    logger.fatal({ crd: options.crdName, err: (err as Error).message }, `failed: ${(err as Error).message}; status.storedVersions left as it was unless the message says otherwise`);
    return MIGRATE_EXIT.failed;
  } finally {
    clearInterval(keepAlive);
    process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
    client.close();
  }
}

function exitCode(result: MigrationResult, logger: Logger): number {
  switch (result.outcome) {
    case 'up-to-date':
    case 'migrated':
      return MIGRATE_EXIT.ok;
    case 'aborted':
      return MIGRATE_EXIT.failed;
    case 'incomplete':
      logger.error(
        { crd: result.target.crdName, skippedCount: result.skipped.length, skipped: listSkipped(result.skipped) },
        `incomplete: ${result.skipped.length} objects skipped (listed in skipped, each with its fix), every other one rewritten; status.storedVersions left as it was: fix or delete them and run again`,
      );
      return MIGRATE_EXIT.incomplete;
    case 'failed': {
      const failures = result.failures.slice(0, LISTED_FAILURES).map((f) => `${f.namespace ? `${f.namespace}/` : ''}${f.name}: ${f.code ?? 'no answer'} ${f.message}`);
      logger.error(
        { crd: result.target.crdName, failed: result.failures.length, failures, skippedCount: result.skipped.length, skipped: listSkipped(result.skipped) },
        `not migrated: ${result.failures.length} objects could not be rewritten (listed in failures)${result.skipped.length > 0 ? ` and ${result.skipped.length} skipped (listed in skipped)` : ''}; fix them and run again`,
      );
      return MIGRATE_EXIT.failed;
    }
  }
}

/** The first skipped objects as `namespace/name: code message — fix`, for the final log line. */
function listSkipped(skipped: readonly SkippedObject[]): string[] {
  return skipped.slice(0, LISTED_FAILURES).map((s) => `${s.namespace ? `${s.namespace}/` : ''}${s.name}: ${s.code} ${s.message} — fix: ${s.fix}`);
}
