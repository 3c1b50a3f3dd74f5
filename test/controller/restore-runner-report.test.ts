/**
 * The restore runner's termination message as the controller reads it back: a good one becomes
 * status.backup (also 0.3.0's, which has no `time`); a truncated, oversize, ill-typed or hostile one
 * is refused with a problem naming the field, never a throw; a report that contradicts the Restore
 * (container exit code, spec.backup, the schedule of `latest`) is refused too.
 */
import { describe, expect, it } from 'vitest';
import { oneLine, parseRunnerReport, reportContradiction, TERMINATION_MESSAGE_MAX_BYTES } from '../../src/controller/restore/runner-report.ts';
import type { RunnerReport } from '../../src/pure/restore-status.ts';

const SHA = '0123456789abcdef'.repeat(4);
const FILE = 'nightly-20261130T020007Z.tar.gz';
const good = { exitCode: 0, file: FILE, time: '2026-11-30T02:00:07.000Z', size: 211_000_000, sha256: SHA, message: `restored ${FILE} into /backup/target: 2101 files, 210000000 bytes` };
const json = (fields: Record<string, unknown>): string => `${JSON.stringify(fields)}\n`;
const problemOf = (text: string): string => {
  const parsed = parseRunnerReport(text);
  if (!('problem' in parsed)) throw new Error(`accepted: ${text}`);
  return parsed.problem;
};

describe('parseRunnerReport', () => {
  it('reads a successful restore into status.backup (time without fraction, as the status writes times)', () => {
    expect(parseRunnerReport(json(good))).toEqual({ report: { exitCode: 0, message: good.message, backup: { name: FILE, time: '2026-11-30T02:00:07Z', size: 211_000_000, sha256: SHA } } });
  });

  it('takes the time from the name when the runner (0.3.0) does not write it, and ignores fields it does not know', () => {
    const { time: _time, ...old } = good;
    expect(parseRunnerReport(json({ ...old, durationSec: 12.5, future: { x: 1 } }))).toEqual({ report: { exitCode: 0, message: good.message, backup: { name: FILE, time: '2026-11-30T02:00:07Z', size: 211_000_000, sha256: SHA } } });
  });

  it('reads failures: exit 1 with the backup being written, exit 5 and 2 without one', () => {
    expect(parseRunnerReport(json({ ...good, exitCode: 1, message: 'restore of x failed: ENOSPC' }))).toMatchObject({ report: { exitCode: 1, backup: { name: FILE } } });
    expect(parseRunnerReport(json({ exitCode: 5, message: 'no backup of nightly verifies' }))).toEqual({ report: { exitCode: 5, message: 'no backup of nightly verifies' } });
    expect(parseRunnerReport(json({ exitCode: 2, message: 'usage: --from is required' }))).toEqual({ report: { exitCode: 2, message: 'usage: --from is required' } });
  });

  it('accepts object names (.tar.zst.age) and incomplete archives', () => {
    for (const file of ['db-20261130T020007Z.tar.zst.age', 'etcd.prod-20261130T020007Z.db.age', 'vol-20261130T020007Z.incomplete.tar.gz']) {
      expect(parseRunnerReport(json({ ...good, file, time: undefined }))).toMatchObject({ report: { backup: { name: file } } });
    }
  });

  it('refuses a truncated message (what the kubelet keeps of a longer file)', () => {
    const whole = json(good);
    for (const cut of [1, 10, whole.length - 3]) expect(problemOf(whole.slice(0, cut))).toBe('not JSON (cut short, or not written by the restore runner)');
  });

  it('refuses more than 4096 bytes, counting bytes and not characters', () => {
    const padded = (n: number, char: string): string => json({ ...good, message: char.repeat(n) });
    const fits = padded(TERMINATION_MESSAGE_MAX_BYTES - Buffer.byteLength(padded(0, 'x')), 'x');
    expect(Buffer.byteLength(fits)).toBe(4096);
    expect(parseRunnerReport(fits)).toHaveProperty('report');
    expect(problemOf(`${fits} `)).toBe('4097 bytes, more than the 4096 a termination message holds');
    // 2,100 two-byte characters: 2,100 characters, over 4,200 bytes.
    expect(problemOf(padded(2100, 'é'))).toMatch(/^\d{4} bytes, more than the 4096/);
  });

  it.each([
    ['', 'empty: the runner wrote none'],
    ['   \n', 'empty: the runner wrote none'],
    ['[1,2]', 'not a JSON object, got an array'],
    ['null', 'not a JSON object, got null'],
    ['"restored"', 'not a JSON object, got "restored"'],
    ['Error: ENOSPC\n    at write', 'not JSON'],
    [json({ ...good, exitCode: '0' }), 'field "exitCode": must be an integer from 0 to 255, got "0"'],
    [json({ ...good, exitCode: 0.5 }), 'field "exitCode": must be an integer from 0 to 255, got 0.5'],
    [json({ ...good, exitCode: 256 }), 'field "exitCode": must be an integer from 0 to 255, got 256'],
    [json({ ...good, exitCode: -1 }), 'field "exitCode": must be an integer from 0 to 255, got -1'],
    [json({ ...good, exitCode: undefined }), 'field "exitCode": must be an integer from 0 to 255, got undefined'],
    [json({ ...good, message: ['a'] }), 'field "message": must be a string, got ["a"]'],
    [json({ ...good, message: undefined }), 'field "message": must be a string'],
    [json({ ...good, size: -1 }), 'field "size": must be a non-negative integer of bytes, got -1'],
    [json({ ...good, size: 2 ** 53 }), 'field "size": must be a non-negative integer of bytes, got 9007199254740992'],
    ['{"exitCode":0,"message":"m","file":"nightly-20261130T020007Z.db","sha256":"' + SHA + '","size":1e400}', 'field "size": must be a non-negative integer of bytes, got null'],
    [json({ ...good, size: 1.5 }), 'field "size": must be a non-negative integer of bytes, got 1.5'],
    [json({ ...good, size: undefined }), 'field "size": must be a non-negative integer of bytes, got undefined'],
    [json({ ...good, sha256: SHA.toUpperCase() }), 'field "sha256": must be 64 lowercase hex digits'],
    [json({ ...good, sha256: `${SHA}00` }), 'field "sha256": must be 64 lowercase hex digits'],
    [json({ ...good, sha256: undefined }), 'field "sha256": must be 64 lowercase hex digits, got undefined'],
    [json({ ...good, time: '2026-11-30T02:00:08.000Z' }), 'field "time": must be the UTC time of the name\'s stamp (2026-11-30T02:00:07Z), got "2026-11-30T02:00:08.000Z"'],
    [json({ ...good, time: '2026-11-30T03:00:07+01:00' }), 'field "time": must be the UTC time of the name\'s stamp'],
    [json({ ...good, time: 1_796_004_007_000 }), 'field "time": must be the UTC time of the name\'s stamp'],
    [json({ ...good, file: undefined, size: undefined, sha256: undefined, time: undefined }), 'field "file": a restore that succeeded (exitCode 0) must name its backup'],
    [json({ ...good, file: undefined }), 'field "file": must be a backup name'],
  ])('refuses %j: %s', (text, problem) => {
    expect(problemOf(text)).toContain(problem);
  });

  it.each([
    ['a path', '../../etc/passwd-20261130T020007Z.db'],
    ['an absolute path', '/backup/from/nightly-20261130T020007Z.db'],
    ['latest', 'latest'],
    ['a newline and an escape sequence', 'nightly-20261130T020007Z.db\n\u001b[31mRestored'],
    ['another file type', 'nightly-20261130T020007Z.sh'],
    ['a name of 600 characters', `${'a'.repeat(580)}-20261130T020007Z.db`],
    ['a number', 42],
  ])('refuses a file name that is %s', (_what, file) => {
    const problem = problemOf(json({ ...good, file, time: undefined }));
    expect(problem).toMatch(/^field "file": must be a backup name/);
    // The hostile value is quoted on one line, cut short.
    expect(problem).not.toMatch(/[\n\u001b]/);
    expect(problem.length).toBeLessThan(200);
  });

  it('refuses a stamp that is not a time (month 13, February 30, hour 24)', () => {
    for (const stamp of ['20261330T020007Z', '20260230T020007Z', '20261130T240000Z']) {
      expect(problemOf(json({ ...good, file: `nightly-${stamp}.db`, time: undefined }))).toBe(`field "file": the stamp of "nightly-${stamp}.db" is not a valid UTC time`);
    }
  });

  it('makes a hostile message one line, and never lets __proto__ or deep nesting through', () => {
    const parsed = parseRunnerReport(json({ ...good, message: 'done\n\u001b[2J\u0007\u009bnext\r\nline' }));
    expect(parsed).toMatchObject({ report: { message: 'done [2J next line' } });
    expect(parseRunnerReport('{"__proto__":{"exitCode":0},"message":"m"}')).toEqual({ problem: 'field "exitCode": must be an integer from 0 to 255, got undefined' });
    expect(({} as Record<string, unknown>)['exitCode']).toBeUndefined();
    expect(problemOf(`${'['.repeat(2000)}${']'.repeat(2000)}`)).toBe('not a JSON object, got an array');
    expect(oneLine('\u0000a\u0085b ')).toBe('a b');
  });
});

describe('reportContradiction', () => {
  const report: RunnerReport = { exitCode: 0, message: 'ok', backup: { name: FILE, time: '2026-11-30T02:00:07Z', size: 1, sha256: SHA } };

  it('accepts the report of the backup the Restore named, or of latest of its schedule', () => {
    expect(reportContradiction(report, { backup: FILE, containerExitCode: 0 })).toBeUndefined();
    expect(reportContradiction(report, { backup: 'latest', schedule: 'nightly', containerExitCode: 0 })).toBeUndefined();
    expect(reportContradiction(report, { backup: 'latest', containerExitCode: 0 })).toBeUndefined();
    expect(reportContradiction({ exitCode: 5, message: 'refused' }, { backup: FILE, containerExitCode: 5 })).toBeUndefined();
  });

  it.each([
    [{ backup: FILE, containerExitCode: 137 }, 'field "exitCode": says 0, but the container exited with 137'],
    [{ backup: 'nightly-20261201T020007Z.tar.gz', containerExitCode: 0 }, 'field "file": names "nightly-20261130T020007Z.tar.gz", but spec.backup is "nightly-20261201T020007Z.tar.gz"'],
    [{ backup: 'latest', schedule: 'weekly', containerExitCode: 0 }, 'field "file": "nightly-20261130T020007Z.tar.gz" is not a backup of BackupSchedule weekly'],
    // `nightly-2`'s backups share the prefix `nightly-` but are not `nightly`'s.
    [{ backup: 'latest', schedule: 'nightly', containerExitCode: 0, name: 'nightly-2-20261130T020007Z.db' }, 'is not a backup of BackupSchedule nightly'],
  ])('refuses %j', (expectation, problem) => {
    const { name, ...expected } = expectation as typeof expectation & { name?: string };
    const subject = name === undefined ? report : { ...report, backup: { ...report.backup!, name } };
    expect(reportContradiction(subject, expected)).toContain(problem);
  });
});
