/**
 * Flags of a subcommand that takes flags only (`backup`, `migrate-storage`): `node:util` `parseArgs`
 * in strict mode, whose complaints (unknown flag, missing value, a positional) become the command's
 * own usage error, so every command reports them alike and exits 2.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** Parses `argv` against `options`; throws `new usageError(message)` on a bad command line. */
export function parseFlags<const O extends ParseArgsOptionsConfig>(argv: readonly string[], options: O, usageError: new (message: string) => Error) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new usageError((err as Error).message);
  }
}
