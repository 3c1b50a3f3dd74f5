import { checkManifest, formatError, isBackupSchedule, isRestore, type ManifestError } from './check-manifest.ts';
import type { SkippedPath } from './expand-paths.ts';
import { readInputs } from './inputs.ts';
import { MAX_INPUT_BYTES } from './read-text.ts';
import { EXIT_INVALID, EXIT_OK, outputFormat, parseCommandLine, UsageError, type CliIo } from './io.ts';

/** `backupschedule validate --help`. */
export const VALIDATE_USAGE = `Usage: backupschedule validate [--output text|json] <file|dir|->...

Checks every BackupSchedule and Restore in the given YAML/JSON files (multi-document; folders are read
recursively for .yaml, .yml and .json; - reads standard input) offline, as the API server and the
controller would: the schema (types, bounds, patterns, unknown fields), the CEL rules, the cron
syntax and the time zone. Each is checked in the version its apiVersion names (kubelings.dev/v1alpha1
or kubelings.dev/v1; both may appear in one file); a Restore (kubelings.dev/v1) by its schema and CEL
rules. Objects of other kinds are skipped and counted; a misspelt kind in the kubelings.dev group
(BackupSchedul, backupschedule) is an error.

Input is read as kubectl reads it: YAML 1.1 (yes/no/on/off are booleans, 010 is octal 8, << merges),
at most ${MAX_INPUT_BYTES / 1024 / 1024} MiB per file, UTF-8 text only; symbolic links to folders are not followed.

Options:
  -o, --output text|json  text: one "file:line: namespace/name: field: message" line per error
                          (default); json: one report object, for CI
  -h, --help              show this help

Exit status:
  0  every BackupSchedule and Restore is valid
  1  an error: an invalid BackupSchedule or Restore, a misspelt kind, or an input that cannot be read, is too
     large, is not text or not YAML
  2  bad command line (unknown flag, missing argument, no such file or folder)
`;

/** One error in the JSON report. */
export type ValidateError = ManifestError;

/** The `--output json` report. */
export interface ValidateReport {
  readonly valid: boolean;
  readonly files: number;
  readonly backupSchedules: number;
  readonly restores: number;
  readonly skipped: number;
  /** Paths under the folders given that were not read, and why (a symbolic link to a folder). */
  readonly skippedPaths: SkippedPath[];
  readonly errors: ValidateError[];
}

/** Validates the BackupSchedules and Restores of `paths`; the report lists every error with its file and line. */
export function validateInputs(paths: readonly string[], io: CliIo): ValidateReport {
  const errors: ValidateError[] = [];
  const skippedPaths: SkippedPath[] = [];
  let backupSchedules = 0;
  let restores = 0;
  let skipped = 0;
  const files = readInputs(paths, io.stdin, {
    problem: (p) => errors.push({ file: p.file, line: p.line, message: p.message }),
    skipped: (path) => skippedPaths.push(path),
    manifest: (manifest) => {
      const found = checkManifest(manifest);
      if (isBackupSchedule(manifest.object)) backupSchedules++;
      else if (isRestore(manifest.object)) restores++;
      else if (found.length === 0) skipped++;
      errors.push(...found);
    },
  });
  return { valid: errors.length === 0, files, backupSchedules, restores, skipped, skippedPaths, errors };
}

/** `backupschedule validate …`; returns the exit code. */
export function validateCommand(args: readonly string[], io: CliIo): number {
  const { values, positionals } = parseCommandLine(args, { output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } });
  if (values['help'] === true) {
    io.stdout(VALIDATE_USAGE);
    return EXIT_OK;
  }
  const format = outputFormat(values['output'], ['text', 'json'] as const);
  if (positionals.length === 0) throw new UsageError('validate needs at least one file, folder or - (standard input)');
  const report = validateInputs(positionals, io);
  if (format === 'json') {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const error of report.errors) io.stdout(`${formatError(error)}\n`);
    for (const { path, reason } of report.skippedPaths) io.stderr(`skipped ${path}: ${reason}\n`);
    const summary = `${report.backupSchedules} BackupSchedule(s)${report.restores === 0 ? '' : `, ${report.restores} Restore(s)`} in ${report.files} file(s), ${report.skipped} other object(s) skipped: `;
    io.stderr(`${summary}${report.valid ? 'all valid' : `${report.errors.length} error(s)`}\n`);
  }
  return report.valid ? EXIT_OK : EXIT_INVALID;
}
