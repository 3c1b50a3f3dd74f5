import { EXIT_INVALID, EXIT_OK, outputFormat, parseCommandLine, UsageError, type CliIo } from './io.ts';
import { isBackupSchedule, manifestProblems, readInputs, type Manifest } from './inputs.ts';

/** `backupschedule validate --help`. */
export const VALIDATE_USAGE = `Usage: backupschedule validate [--output text|json] <file|dir|->...

Checks every BackupSchedule in the given YAML/JSON files (multi-document; folders are read
recursively for .yaml, .yml and .json; - reads standard input) offline, as the API server and the
controller would: the schema (types, bounds, patterns, unknown fields), the CEL rules, the cron
syntax and the time zone. Each is checked in the version its apiVersion names (kubelings.dev/v1alpha1
or kubelings.dev/v1; both may appear in one file). Objects of other kinds are skipped and counted.

Options:
  -o, --output text|json  text: one "file:line: field: message" line per error (default);
                          json: one report object, for CI
  -h, --help              show this help

Exit status: 0 all valid, 1 any error, 2 bad command line.
`;

/** One error in the JSON report. */
export interface ValidateError {
  readonly file: string;
  readonly line: number;
  /** `namespace/name` of the BackupSchedule, when it has a name. */
  readonly object?: string;
  readonly field?: string;
  readonly message: string;
}

/** The `--output json` report. */
export interface ValidateReport {
  readonly valid: boolean;
  readonly files: number;
  readonly backupSchedules: number;
  readonly skipped: number;
  readonly errors: ValidateError[];
}

/** `namespace/name` (or `name`) of a manifest, for messages. */
export function objectName(manifest: Manifest): string | undefined {
  const metadata = (manifest.object as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  if (typeof metadata?.name !== 'string') return undefined;
  return typeof metadata.namespace === 'string' ? `${metadata.namespace}/${metadata.name}` : metadata.name;
}

/** Validates the BackupSchedules of `paths`; the report lists every error with its file and line. */
export function validateInputs(paths: readonly string[], io: CliIo): ValidateReport {
  const errors: ValidateError[] = [];
  let backupSchedules = 0;
  let skipped = 0;
  const files = readInputs(paths, io.stdin, {
    problem: (p) => errors.push({ file: p.file, line: p.line, message: p.message }),
    manifest: (manifest) => {
      if (!isBackupSchedule(manifest.object)) {
        skipped++;
        return;
      }
      backupSchedules++;
      const object = objectName(manifest);
      // In file order, so the output reads top to bottom.
      const found = manifestProblems(manifest.object).map((error) => ({ error, line: manifest.lineOf(error.field) }));
      for (const { error, line } of found.sort((a, b) => a.line - b.line)) {
        errors.push({ file: manifest.file, line, ...(object === undefined ? {} : { object }), field: error.field, message: error.message });
      }
    },
  });
  return { valid: errors.length === 0, files, backupSchedules, skipped, errors };
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
    for (const error of report.errors) io.stdout(`${error.file}:${error.line}: ${error.message}\n`);
    const summary = `${report.backupSchedules} BackupSchedule(s) in ${report.files} file(s), ${report.skipped} other object(s) skipped: `;
    io.stderr(`${summary}${report.valid ? 'all valid' : `${report.errors.length} error(s)`}\n`);
  }
  return report.valid ? EXIT_OK : EXIT_INVALID;
}
