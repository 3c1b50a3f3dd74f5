/**
 * The Pod's termination message: one JSON line in `/dev/termination-log` (the container's
 * terminationMessagePath), so `kubectl describe pod` and the Job's Pod status show how the run ended
 * without reading its logs: `{"exitCode":0,"file":…,"size":…,"sha256":…,"durationSec":…,"message":…}`,
 * on failure the error in `message`; a restore's also has the backup's `time`, and the Restore
 * controller reads it back into status.backup (src/controller/restore/runner-report.ts). Kubernetes
 * keeps at most 4096 bytes of it.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** Kubernetes' default terminationMessagePath. */
export const DEFAULT_TERMINATION_LOG = '/dev/termination-log';
/** Environment variable naming another path (tests, or a Pod that sets terminationMessagePath). */
export const ENV_TERMINATION_LOG = 'BACKUP_TERMINATION_LOG';
/** What the kubelet reads of the file. */
export const TERMINATION_MESSAGE_LIMIT = 4096;

/** The message for `outcome`: one JSON line of at most {@link TERMINATION_MESSAGE_LIMIT} bytes, the message shortened to fit. */
export function formatTerminationMessage(outcome: { readonly exitCode: number; readonly message: string; readonly file?: string; readonly time?: string; readonly size?: number; readonly sha256?: string; readonly durationSec?: number }): string {
  const { exitCode, message, ...rest } = outcome;
  const line = (text: string): string => `${JSON.stringify({ exitCode, ...rest, message: text })}\n`;
  let text = message;
  while (Buffer.byteLength(line(text)) > TERMINATION_MESSAGE_LIMIT && text.length > 0) text = `${text.slice(0, Math.max(0, text.length - Math.max(16, Buffer.byteLength(line(text)) - TERMINATION_MESSAGE_LIMIT + 1)))}…`;
  return line(text);
}

/**
 * Writes `message` to the termination log. The default path is written only if it exists (the kubelet
 * creates it in a container; outside one nothing is left in /dev); a path from the environment is
 * created. A failure to write is reported to `onError`, never thrown: the run's exit code stands.
 */
export async function writeTerminationMessage(message: string, env: Readonly<Record<string, string | undefined>>, onError: (err: Error) => void): Promise<void> {
  const configured = env[ENV_TERMINATION_LOG];
  const path = configured || DEFAULT_TERMINATION_LOG;
  try {
    const handle = await open(path, constants.O_WRONLY | constants.O_TRUNC | (configured ? constants.O_CREAT : 0), 0o644);
    try {
      await handle.writeFile(message);
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (!configured && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
    onError(err as Error);
  }
}
