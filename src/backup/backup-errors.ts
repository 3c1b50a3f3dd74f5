/**
 * Errors of a run: file-system errors in words an on-call person can act on (the errno says whether the
 * destination is full, read-only, missing or forbidden), and the error whose message is already final.
 */

const HINTS: Readonly<Record<string, string>> = {
  ENOSPC: 'the destination volume is full',
  EFBIG: 'the destination refuses a file this large (file size limit)',
  EDQUOT: 'the destination volume quota is exhausted',
  EROFS: 'the destination is mounted read-only',
  EACCES: 'permission denied (the backup runs as a non-root user; check the volume\'s owner/mode or spec.podSecurityContext)',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a path component is not a directory',
  EIO: 'I/O error from the storage',
};

/** `<what>: <hint> (<code> <path>)` for an errno error, else `<what>: <message>`. */
export function describeIoError(what: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const hint = e.code ? HINTS[e.code] : undefined;
  if (hint) return `${what}: ${hint} (${e.code}${e.path ? ` ${e.path}` : ''})`;
  return `${what}: ${err instanceof Error ? err.message : String(err)}`;
}

/** A run failed for a reason already put in words: the summary line logs the message as is. */
export class BackupFailedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BackupFailedError';
  }
}
