#!/usr/bin/env node
/**
 * `backupschedule` (`npx backupschedule …`, `npm run cli -- …`): offline tools for teams that write
 * BackupSchedules in their own repositories. `validate` checks them as the API server and the
 * controller would; `preview` prints the CronJob each one becomes.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SERVED_GROUP_VERSIONS } from '../api/constants.ts';
import { TZDATA_VERSION } from '../api/time-zone-names.ts';
import { OPERATOR_VERSION } from '../pure/image.ts';
import { EXIT_OK, EXIT_USAGE, processIo, UsageError, type CliIo } from './io.ts';
import { PREVIEW_USAGE, previewCommand } from './preview-command.ts';
import { VALIDATE_USAGE, validateCommand } from './validate-command.ts';

/** `backupschedule --help`. */
export const USAGE = `Usage: backupschedule <command> [options] <file|dir|->...

Commands:
  validate   check BackupSchedules (v1alpha1 or v1) offline (schema, CEL rules, cron syntax, time zone)
  preview    print the CronJob each BackupSchedule becomes

Options:
  -h, --help     show this help
  -V, --version  print the version (and the API versions and tz database it checks against)

Run "backupschedule <command> --help" for a command's options.

Exit status: 0 valid, 1 invalid input, 2 bad command line (details in each command's --help).
`;

/** `backupschedule --version`: the release, and what its checks are built from. */
const VERSION_TEXT = `backupschedule ${OPERATOR_VERSION} (${SERVED_GROUP_VERSIONS.join(', ')}; tzdata ${TZDATA_VERSION})\n`;

const COMMANDS: Readonly<Record<string, { run: (args: readonly string[], io: CliIo) => number; usage: string }>> = {
  validate: { run: validateCommand, usage: VALIDATE_USAGE },
  preview: { run: previewCommand, usage: PREVIEW_USAGE },
};

/** Runs the CLI on `argv` (without node and the script); returns the exit code. */
export function runCli(argv: readonly string[], io: CliIo = processIo): number {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io[name === undefined ? 'stderr' : 'stdout'](USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    io.stdout(VERSION_TEXT);
    return EXIT_OK;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.stderr(`backupschedule: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  try {
    return command.run(args, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`backupschedule ${name}: ${error.message}\n\n${command.usage}`);
    return EXIT_USAGE;
  }
}

// Through `npx`/node_modules/.bin, argv[1] is a symlink to this file: compare real paths.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  process.exitCode = runCli(process.argv.slice(2));
}
