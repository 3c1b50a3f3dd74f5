/**
 * The `backup` subcommand's flag parsing: parse-flags.ts (strict `parseArgs`), and a flag given twice
 * is a usage error naming it. `parseArgs` keeps the last of two values silently, so
 * `--keep-last=30 … --keep-last=3` (a template merged with a patch) pruned to 3 without a word. Flags
 * declared `multiple: true` (`--age-recipient`) are meant to repeat and may.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { parseFlags } from '../runtime/parse-flags.ts';

/** Throws `new usageError(…)` naming the first flag of `options` given more than once in `argv`. */
function rejectRepeatedFlags(argv: readonly string[], options: ParseArgsOptionsConfig, usageError: new (message: string) => Error): void {
  // Not strict: unknown flags and missing values are parse-flags' to report, in its words.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple) continue;
    if (seen.has(token.name)) throw new usageError(`--${token.name}: given more than once; give it once`);
    seen.add(token.name);
  }
}

/** {@link parseFlags} after {@link rejectRepeatedFlags}. */
export function parseBackupFlags<const O extends ParseArgsOptionsConfig>(argv: readonly string[], options: O, usageError: new (message: string) => Error) {
  rejectRepeatedFlags(argv, options, usageError);
  return parseFlags(argv, options, usageError);
}
