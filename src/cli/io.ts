/** What a CLI command reads and writes, so tests run commands in-process without touching the real streams. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { readBoundedBytes, type BytesOrProblem } from './read-text.ts';

/** The streams of one command run. */
export interface CliIo {
  /** Writes to standard output. */
  readonly stdout: (text: string) => void;
  /** Writes to standard error. */
  readonly stderr: (text: string) => void;
  /** The whole of standard input (read when an input path is `-`), or why it could not be read (too large). */
  readonly stdin: () => BytesOrProblem;
}

/** The process' own streams. */
export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: () => readBoundedBytes(0),
};

/** Exit codes: 0 valid, 1 invalid input (including a file that is not a readable YAML manifest), 2 a bad command line (unknown flag, missing argument, no such file). */
export const EXIT_OK = 0;
/** Some input was invalid. */
export const EXIT_INVALID = 1;
/** The command line was wrong; usage was printed. */
export const EXIT_USAGE = 2;

/** A wrong command line: printed with the command's usage, exit 2. */
export class UsageError extends Error {}

/** `parseArgs` in strict mode, its complaints (unknown flag, missing value) turned into a UsageError. */
export function parseCommandLine<T extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: T): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    throw new UsageError((error as Error).message.split('. ')[0] ?? String(error));
  }
}

/** The `--output` value, checked against the formats a command supports. */
export function outputFormat<F extends string>(value: string | boolean | undefined, formats: readonly F[]): F {
  const format = value === undefined ? formats[0] : value;
  if (typeof format !== 'string' || !(formats as readonly string[]).includes(format)) {
    throw new UsageError(`--output must be one of ${formats.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return format as F;
}
