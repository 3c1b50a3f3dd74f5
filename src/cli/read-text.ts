/**
 * Reading one input file as text, with a bound: the CLI reads whatever paths it is given (a CI job's
 * checkout, `<(kustomize build)`, by mistake `/dev/zero` or a 50 MB blob), so a file is read in chunks
 * and given up on past {@link MAX_INPUT_BYTES}, and bytes that are not UTF-8 text are an error naming
 * the file and line rather than a YAML string that parses as "1 other object".
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * The most bytes one input (file or standard input) may hold: 16 MiB. kube-apiserver takes at most
 * 3 MiB in one request (its default max request body), so no single object is bigger than that; 16 MiB
 * holds thousands of BackupSchedules (`npm run bench:validate`'s 1,000 are ~0.3 MB), and parsing it
 * stays within a few hundred MB of memory (docs/cli-hardening.md).
 */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** What reading an input gave: its bytes, or why there are none. */
export type BytesOrProblem = { readonly bytes: Buffer } | { readonly problem: string };

/** What decoding an input gave: its text, or why there is none (`line` where the problem is, 1-based). */
export type TextOrProblem = { readonly text: string } | { readonly problem: string; readonly line: number };

const CHUNK = 1024 * 1024;
/** What Atomics.wait sleeps on while a non-blocking input has no data yet; nothing ever wakes it early. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Reads the file `path` (or the open descriptor `fd`, e.g. 0 for standard input), at most `limit`
 * bytes. Regular files whose size is over the limit are refused without reading; anything else (a FIFO
 * from `<(…)`, a character device) is read until it ends or passes the limit. Errors opening or reading
 * (permissions, a dangling symlink) come back as the problem, in Node's words.
 */
export function readBoundedBytes(source: string | number, limit = MAX_INPUT_BYTES): BytesOrProblem {
  let fd: number | undefined;
  try {
    fd = typeof source === 'number' ? source : openSync(source, 'r');
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return { problem: 'is a folder, not a file' };
    if (stat.isFile() && stat.size > limit) return { problem: tooLarge(limit, stat.size) };
    const chunks: Buffer[] = [];
    let total = 0;
    // One read buffer, and a copy of what each read gave: a pipe gives 4-64 KiB a read, and a slice kept
    // of a fresh 1 MiB buffer per read would hold 1 MiB for each (15 MB piped in held 506 MiB).
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      let read: number;
      try {
        read = readSync(fd, buffer, 0, CHUNK, null);
      } catch (error) {
        // A non-blocking standard input (a pipe its writer made so) has nothing yet: wait a little
        // for it, without spinning a core (this read is synchronous, so is the wait).
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(PAUSE, 0, 0, 10);
          continue;
        }
        throw error;
      }
      if (read === 0) break;
      total += read;
      if (total > limit) return { problem: tooLarge(limit) };
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
    return { bytes: Buffer.concat(chunks, total) };
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return { problem: `cannot read: ${code === undefined ? message : `${code} ${message.replace(/^\w+: /, '').split(',')[0] ?? ''}`}` };
  } finally {
    if (fd !== undefined && typeof source !== 'number') closeSync(fd);
  }
}

const tooLarge = (limit: number, size?: number): string =>
  `is larger than ${limit / 1024 / 1024} MiB${size === undefined ? '' : ` (${size} bytes)`}, the most one input may hold; split it, or validate the objects in smaller files`;

/** 1-based line of byte `offset` of `bytes`. */
const lineAt = (bytes: Buffer, offset: number): number => {
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) line++;
  return line;
};

// YAML's printable set (1.1 §5.1, 1.2 §5.1): no C0 controls but tab, LF and CR, no DEL, no C1 controls but
// NEL, no surrogates (UTF-8 decoding already refuses them), no U+FFFE/U+FFFF. go-yaml (kubectl) refuses
// the rest with "control characters are not allowed".
// eslint-disable-next-line no-control-regex
const NOT_PRINTABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u0084\u0086-\u009F\uFFFE\uFFFF]/;

/**
 * Bytes as YAML text: UTF-8 (a leading byte order mark dropped), nothing outside YAML's printable
 * characters. Binary input (an image, a tarball, random bytes) is refused here with the line of the
 * first bad byte, as kubectl refuses it, instead of parsing as one long plain string.
 */
export function decodeYamlText(bytes: Buffer): TextOrProblem {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    // TextDecoder does not say where; bytes that are not UTF-8 come back changed (as U+FFFD) when decoded
    // leniently and encoded again, so the first changed byte is the first bad one.
    const offset = firstDifference(Buffer.from(bytes.toString('utf8'), 'utf8'), bytes);
    return { problem: `is not UTF-8 text (binary data at byte ${offset}); kubectl reads only UTF-8 YAML or JSON`, line: lineAt(bytes, offset) };
  }
  const bad = NOT_PRINTABLE.exec(text);
  if (bad !== null) {
    const code = bad[0].codePointAt(0) ?? 0;
    const line = text.slice(0, bad.index).split('\n').length;
    return { problem: `is not YAML text: control character U+${code.toString(16).toUpperCase().padStart(4, '0')} (binary data?); YAML allows only printable characters`, line };
  }
  return { text };
}

function firstDifference(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
  return length;
}
