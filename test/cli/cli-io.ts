/** A CliIo that records what a command writes, for in-process CLI tests. */
import type { CliIo } from '../../src/cli/io.ts';
import { runCli } from '../../src/cli/main.ts';

/** The result of one in-process CLI run. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `backupschedule <argv…>` in-process, with `stdin` (text, or bytes as they are) as standard input. */
export function cli(argv: readonly string[], stdin: string | Buffer = ''): CliRun {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), stdin: () => ({ bytes: Buffer.from(stdin) }) };
  const code = runCli(argv, io);
  return { code, stdout, stderr };
}
