/**
 * The restore runner's termination message (src/backup/termination-message.ts writes it; docs/restore.md
 * documents it), read back by the controller: one JSON object of at most 4096 bytes,
 *
 *   {"exitCode":0,"file":"nightly-20261130T020007Z.tar.gz","time":"2026-11-30T02:00:07.000Z",
 *    "size":123,"sha256":"<64 hex>","message":"restored …"}
 *
 * The text comes from a Pod in a tenant's namespace: whoever may create Pods there can make a container
 * write anything to its termination log. So it is parsed strictly and bounded, every field checked for
 * type, pattern and range, and a bad message is a problem named in the Restore's condition, never a
 * throw. Unknown fields are ignored, so a newer runner adding one still reports to this controller.
 */
import { BACKUP_NAME_PATTERN, LATEST_BACKUP } from '../../api/restore-schema.ts';
import { STAMP_SOURCE, stampTime } from '../../pure/backup-stamp.ts';
import type { ReportedBackup, RunnerReport } from '../../pure/restore-status.ts';
import { formatTime } from '../../pure/status.ts';

/** What the kubelet keeps of a termination message (and so the most a genuine one can be), in bytes. */
export const TERMINATION_MESSAGE_MAX_BYTES = 4096;
/** The longest backup name the status holds (`status.backup.name`'s maxLength). */
const MAX_NAME_LENGTH = 512;
/** The most of a hostile value quoted back in a problem. */
const QUOTE_LENGTH = 64;
/** A backup name, as spec.backup names one (`latest` aside); the stamp is checked as a date below. */
const BACKUP_NAME = new RegExp(BACKUP_NAME_PATTERN);
/** The stamp before the extensions (`-<stamp>[.incomplete].db|.tar…`). */
const STAMP = new RegExp(`-${STAMP_SOURCE}(?:\\.incomplete)?\\.(?:db|tar)`);
const SHA256 = /^[0-9a-f]{64}$/;
/** RFC 3339 in UTC as Date#toISOString (the runner) or the API server (no fraction) writes it. */
const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;
/** C0 and C1 controls (newlines, escape sequences): a condition message is one line of text. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]+/g;

/** A parsed report, or what is wrong with the message (naming the field). */
export type ParsedReport = { readonly report: RunnerReport } | { readonly problem: string };

/** `value` quoted for a problem message: JSON, controls replaced, cut to {@link QUOTE_LENGTH}. */
function quote(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  const text = json.replace(CONTROLS, ' ');
  return text.length > QUOTE_LENGTH ? `${text.slice(0, QUOTE_LENGTH)}…` : text;
}

/** One line of text: controls replaced by one space each run, trimmed. */
export function oneLine(text: string): string {
  return text.replace(CONTROLS, ' ').trim();
}

/** The backup fields of `fields` (all four or none), or the problem. */
function parseBackup(fields: Readonly<Record<string, unknown>>): { backup?: ReportedBackup } | { problem: string } {
  const { file, size, sha256, time } = fields;
  if (file === undefined && size === undefined && sha256 === undefined && time === undefined) return {};
  if (typeof file !== 'string' || file.length > MAX_NAME_LENGTH || file === LATEST_BACKUP || !BACKUP_NAME.test(file)) {
    return { problem: `field "file": must be a backup name (<schedule>-<yyyymmddThhmmssZ>.db|.tar…, at most ${MAX_NAME_LENGTH} characters), got ${quote(file)}` };
  }
  const stamp = STAMP.exec(file)?.[1];
  const taken = stamp === undefined ? undefined : stampTime(stamp);
  if (taken === undefined) return { problem: `field "file": the stamp of ${quote(file)} is not a valid UTC time` };
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return { problem: `field "size": must be a non-negative integer of bytes, got ${quote(size)}` };
  if (typeof sha256 !== 'string' || !SHA256.test(sha256)) return { problem: `field "sha256": must be 64 lowercase hex digits, got ${quote(sha256)}` };
  // The runner takes the time from the name; a runner before 0.4.0 does not write it.
  if (time !== undefined && (typeof time !== 'string' || !UTC_TIME.test(time) || Date.parse(time) !== taken)) {
    return { problem: `field "time": must be the UTC time of the name's stamp (${formatTime(taken)}), got ${quote(time)}` };
  }
  return { backup: { name: file, time: formatTime(taken), size, sha256 } };
}

/**
 * Parses a termination message. Refused: more than {@link TERMINATION_MESSAGE_MAX_BYTES} bytes, empty,
 * not a JSON object (a truncated one included), `exitCode` not an integer 0–255, `message` not a
 * string, the backup fields (`file`, `size`, `sha256`, optional `time`) incomplete or ill-typed, a name
 * that is not a backup name or whose stamp is not a time, a `time` other than the stamp's.
 */
export function parseRunnerReport(text: string): ParsedReport {
  const bytes = Buffer.byteLength(text);
  if (bytes > TERMINATION_MESSAGE_MAX_BYTES) return { problem: `${bytes} bytes, more than the ${TERMINATION_MESSAGE_MAX_BYTES} a termination message holds` };
  if (text.trim() === '') return { problem: 'empty: the runner wrote none (killed, out of memory, or not the restore runner)' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // SyntaxError's text quotes the input: not echoed.
    return { problem: 'not JSON (cut short, or not written by the restore runner)' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: `not a JSON object, got ${Array.isArray(value) ? 'an array' : quote(value)}` };
  const fields = value as Readonly<Record<string, unknown>>;
  const { exitCode, message } = fields;
  if (typeof exitCode !== 'number' || !Number.isInteger(exitCode) || exitCode < 0 || exitCode > 255) return { problem: `field "exitCode": must be an integer from 0 to 255, got ${quote(exitCode)}` };
  if (typeof message !== 'string') return { problem: `field "message": must be a string, got ${quote(message)}` };
  const parsed = parseBackup(fields);
  if ('problem' in parsed) return parsed;
  if (exitCode === 0 && parsed.backup === undefined) return { problem: 'field "file": a restore that succeeded (exitCode 0) must name its backup (file, size, sha256)' };
  return { report: { exitCode, message: oneLine(message), ...(parsed.backup ? { backup: parsed.backup } : {}) } };
}

/** What the Restore asked for, to check a report against. */
export interface ReportExpectation {
  /** spec.backup: a name, or `latest`. */
  readonly backup: string;
  /** spec.from.backupScheduleName: `latest` picks only that schedule's backups. */
  readonly schedule?: string;
  /** The exit code of the terminated container the message came from. */
  readonly containerExitCode: number;
}

/**
 * What contradicts the Restore in a parsed report, if anything: an exit code other than the container's,
 * a backup other than the one spec.backup names, or (for `latest` of a BackupSchedule) another
 * schedule's backup.
 */
export function reportContradiction(report: RunnerReport, expected: ReportExpectation): string | undefined {
  if (report.exitCode !== expected.containerExitCode) return `field "exitCode": says ${report.exitCode}, but the container exited with ${expected.containerExitCode}`;
  const name = report.backup?.name;
  if (name === undefined) return undefined;
  if (expected.backup !== LATEST_BACKUP && name !== expected.backup) return `field "file": names ${quote(name)}, but spec.backup is ${quote(expected.backup)}`;
  if (expected.backup === LATEST_BACKUP && expected.schedule !== undefined && !(name.startsWith(`${expected.schedule}-`) && /^\d{8}T\d{6}Z/.test(name.slice(expected.schedule.length + 1)))) {
    return `field "file": ${quote(name)} is not a backup of BackupSchedule ${expected.schedule}`;
  }
  return undefined;
}
