/**
 * Entry point of the controller image (bundled into build/controller.mjs by scripts/bundle.ts) and of
 * `npm run controller -- <flags>`. Exit codes: 0 after a graceful shutdown (SIGTERM/SIGINT; 1 if it overran its deadline) or
 * `--help`; 1 on a runtime failure (caches never synced, no configuration, a port in use); 2 on a bad
 * flag. `backup …` is the backup Job runner (src/backup/main.ts documents its exit codes);
 * `migrate-storage …` the storage-version migration (src/migration/migrate-storage-command.ts).
 *
 * Only light modules at the top (logging, shutdown): the backup runner starts without loading the
 * controller (its schema validator, informers, metrics), and the controller without the runner's gRPC
 * and tar code; the bundle (scripts/bundle.ts) puts each behind its own chunks.
 */
import { pino } from 'pino';
import type { KubeConfig } from '../kube/kube-config.ts';
import { createLogger } from '../runtime/logger.ts';
import { GracefulShutdown } from '../runtime/shutdown.ts';
import type { Command } from './cli-options.ts';
import type { RunningOperator } from './operator.ts';

/** Shutdown time beyond draining reconciles: Events, the Lease release, closing watches and servers. */
const RELEASE_AND_CLOSE_SECONDS = 10;

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'backup') {
    // Before the runner's modules load and get hot (src/backup/v8-flags.ts says why).
    (await import('../backup/v8-flags.ts')).applyRunnerV8Flags();
    const { runBackupCli } = await import('../backup/main.ts');
    return runBackupCli(argv.slice(1));
  }
  if (argv[0] === 'migrate-storage') {
    const [{ runMigrateStorageCli }, { CRD_NAME }] = await Promise.all([import('../migration/migrate-storage-command.ts'), import('../api/constants.ts')]);
    return runMigrateStorageCli(argv.slice(1), { defaultCrd: CRD_NAME });
  }
  const [{ KubeConfig }, { parseCommandLine, UsageError, USAGE }, { OperatorStartError, startOperator }] = await Promise.all([
    import('../kube/kube-config.ts'),
    import('./cli-options.ts'),
    import('./operator.ts'),
  ]);
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.kind === 'version') {
    process.stdout.write(`backupschedule-operator ${(await import('../pure/image.ts')).OPERATOR_VERSION}\n`);
    return 0;
  }
  if (command.kind === 'backup' || command.kind === 'migrate-storage') throw new Error(`unreachable: "${command.kind}" is dispatched before the controller loads`);
  const { options } = command;
  if (options.logFormat === 'text' && process.env['BKS_BUNDLED'] === '1') {
    // pino-pretty runs in a worker thread that pino resolves by file path, which a single-file bundle lacks.
    process.stderr.write('error: --log-format: "text" is not available in the bundled controller (the image); use json, or `npm run controller` from a checkout\n');
    return 2;
  }
  // Buffered asynchronous stdout: pino's default destination makes one blocking write(2) per line, a
  // tenth of the controller's CPU during a convergence burst. This one writes 4 KiB at a time, and at
  // least every 250 ms so a quiet controller's lines still show promptly; pino flushes it on exit.
  const destination = options.logFormat === 'json' ? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }) : undefined;
  const logger = createLogger({ level: options.logLevel, format: options.logFormat, base: { name: 'backupschedule-operator' }, ...(destination ? { destination } : {}) });
  let config: KubeConfig;
  try {
    config = options.kubeconfig ? KubeConfig.fromKubeconfigFile(options.kubeconfig) : KubeConfig.inCluster();
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, options.kubeconfig ? `cannot load --kubeconfig ${options.kubeconfig}` : 'cannot load the in-cluster configuration (use --kubeconfig outside a cluster)');
    return 1;
  }

  let operator: RunningOperator;
  try {
    operator = await startOperator(options, { config, inCluster: !options.kubeconfig, logger });
  } catch (err) {
    if (!(err instanceof OperatorStartError)) throw err;
    logger.fatal({ err: err.message }, `cannot start: ${err.message}`);
    return 1;
  }
  // SIGTERM/SIGINT: the operator's own ordered shutdown (drain reconciles for --shutdown-timeout, flush
  // Events, release the Lease, close watches and servers) under one overall deadline that leaves room
  // for the Lease release within the pod's default 30 s grace period; exits 0, or 1 past the deadline.
  new GracefulShutdown({ deadlineMs: (options.shutdownTimeoutSeconds + RELEASE_AND_CLOSE_SECONDS) * 1000, logger })
    .register('operator', () => operator.shutdown())
    .install();
  // Resolves only on a failure (caches never synced): exit at once. A lost Lease is not one: the
  // operator pauses its workers and campaigns again.
  return operator.failed;
}

main(process.argv.slice(2)).then(
  (code) => {
    // Let pino flush; sockets are closed, so the process ends by itself, but never wait forever.
    process.exitCode = code;
    setTimeout(() => process.exit(code), 1_000).unref();
    if (code !== 0) setImmediate(() => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
