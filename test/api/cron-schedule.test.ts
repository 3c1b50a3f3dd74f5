import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cronScheduleError } from '../../src/api/cron-schedule.ts';
import { goParseDurationError } from '../../src/api/go-duration.ts';
import { validateBackupSchedule } from '../../src/api/index.ts';
import { SCHEDULE_PATTERN } from '../../src/api/schema.ts';
import { CronPanic, cronParseError } from '../apiserver/builtins/cron-schedule.ts';
import { crdPattern } from './crd-regexp.ts';
import { validSchedule } from './invalid-cases.ts';

/** The validator's verdict on a schedule: the spec.schedule errors it reports. */
function scheduleErrors(schedule: string): string[] {
  const input = validSchedule();
  input['spec'].schedule = schedule;
  return validateBackupSchedule(input).filter((e) => e.field === 'spec.schedule').map((e) => e.message);
}

describe('the schedule check against the CronJob API (robfig/cron v3 ParseStandard)', () => {
  it.each([
    ['0 2 * * 7', 'end of range (7) above maximum (6): 7'],
    ['0 2 * * 0-7', 'end of range (7) above maximum (6): 0-7'],
    ['0 2 * * SUN-7', 'end of range (7) above maximum (6): SUN-7'],
    ['0 2 L * *', 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'],
    ['0 2 5L * *', 'failed to parse int from 5L: strconv.Atoi: parsing "5L": invalid syntax'],
    ['0 2 * * 1#2', 'failed to parse int from 1#2: strconv.Atoi: parsing "1#2": invalid syntax'],
    ['0 2 * * 5L', 'failed to parse int from 5L: strconv.Atoi: parsing "5L": invalid syntax'],
    ['*/0 2 * * *', 'step of range should be a positive number: */0'],
    ['0 2 * * -1', 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'],
    ['0 2 5-2 * *', 'beginning of range (5) beyond end of range (2): 5-2'],
    ['0 2 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['0 2 * 13 *', 'end of range (13) above maximum (12): 13'],
    ['0 2 1-2-3 * *', 'too many hyphens: 1-2-3'],
    ['0 2 */2/3 * *', 'too many slashes: */2/3'],
    ['0 2 * * monday', 'failed to parse int from monday: strconv.Atoi: parsing "monday": invalid syntax'],
    // U+200B is no Go whitespace: it stays in the field, and strconv.Quote escapes it (JSON would not).
    ['0 2 * * 1\u200b', 'failed to parse int from 1\u200b: strconv.Atoi: parsing "1\\u200b": invalid syntax'],
    ['0 2 * * "\u00e9', 'failed to parse int from "\u00e9: strconv.Atoi: parsing "\\"\u00e9": invalid syntax'],
    ['0 0 2 * * *', 'expected exactly 5 fields, found 6: [0 0 2 * * *]'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@daily ', 'unrecognized descriptor: @daily '],
    ['@every 5', 'failed to parse duration @every 5: time: missing unit in duration "5"'],
    ['@every 1h-5m', 'failed to parse duration @every 1h-5m: time: unknown unit "h-" in duration "1h-5m"'],
    ['@every 9999999999h', 'failed to parse duration @every 9999999999h: time: invalid duration "9999999999h"'],
  ])('rejects %j: %s', (schedule, problem) => {
    expect(cronScheduleError(schedule)).toBe(problem);
    expect(scheduleErrors(schedule)).toEqual([`spec.schedule: invalid cron schedule ${JSON.stringify(schedule)}: ${problem}`]);
  });

  it.each([
    '0 0 30 2 *',
    '0 0 31 4 *',
    '0 2 * * +1',
    '*/60 * * * *',
    '*/120 4-22 * * *',
    '0 2 * * 6',
    '0 2 * * SAT',
    '0 2 * * sun-SAT/2',
    '0 2 ? * ?',
    '0 2 1,,15 * *',
    '0 2 , * *',
    '0 2 * * *-9',
    '*/+5 * * * *',
    '0 2 * JAN-dec *',
    '0 2 * * FR\u0130',
    '007 02 * * *',
    ' 0\t2\u00a0*\u3000*\u2003* ',
    '@yearly',
    '@annually',
    '@monthly',
    '@weekly',
    '@daily',
    '@midnight',
    '@hourly',
    '@every 1h30m',
    '@every .5s',
    '@every -1h',
    '@every 0',
  ])('accepts %j, as kube-apiserver does', (schedule) => {
    expect(cronScheduleError(schedule)).toBeUndefined();
    expect(scheduleErrors(schedule)).toEqual([]);
  });

  it.each(['TZ=UTC 0 2 * * *', 'CRON_TZ=Europe/Berlin 0 2 * * *', 'TZ=Mars/Base 0 2 * * *', 'TZ=UTC'])(
    'rejects %j because the CronJob API allows no TZ in a new schedule (spec.timeZone instead)',
    (schedule) => {
      const errors = scheduleErrors(schedule);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/^spec\.schedule: cannot use TZ or CRON_TZ in schedule, use spec\.timeZone instead/);
    },
  );

  it('words a bad TZ prefix zone as robfig does, Go-case-sensitively', () => {
    expect(cronScheduleError('TZ=utc 0 2 * * *')).toBe('provided bad location utc: unknown time zone utc');
    expect(cronScheduleError('TZ=Etc/UTC 0 2 * * *')).toBeUndefined();
  });
});

describe('Go time.ParseDuration (the argument of @every)', () => {
  it.each(['1h', '1h30m', '1.5h', '.5s', '5.s', '-1m', '+1m', '0', '-0', '1µs', '1μs', '1us', '1ns', '9223372036854775807ns', '-9223372036854775808ns'])(
    'parses %j',
    (text) => expect(goParseDurationError(text)).toBeUndefined(),
  );
  it.each([
    ['', 'time: invalid duration ""'],
    ['-', 'time: invalid duration "-"'],
    ['1', 'time: missing unit in duration "1"'],
    ['.s', 'time: invalid duration ".s"'],
    ['1.5.5h', 'time: missing unit in duration "1.5.5h"'],
    ['1hh', 'time: unknown unit "hh" in duration "1hh"'],
    ['1h-1m', 'time: unknown unit "h-" in duration "1h-1m"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['-9223372036854775809ns', 'time: invalid duration "-9223372036854775809ns"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    [' 1h', 'time: invalid duration " 1h"'],
    ['1µ', 'time: unknown unit "\\xc2\\xb5" in duration "1\\xc2\\xb5"'],
  ])('rejects %j: %s', (text, error) => {
    expect(goParseDurationError(text)).toBe(error);
  });
});

/** Schedule-like strings: fields of edge tokens joined by Go and non-Go whitespace, descriptors, TZ prefixes. */
const token = fc.oneof(
  fc.constantFrom('*', '?', '0', '1', '5', '6', '7', '12', '13', '23', '24', '31', '32', '59', '60', '00', '+1', '-1', '-0', '+0'),
  fc.constantFrom('jan', 'DEC', 'Sun', 'SAT', 'mon', 'fri', 'FR\u0130', 'jun', 'monday', 'L', 'W', '5L', '1#2', '', 'x'),
  fc.constantFrom('9223372036854775807', '9223372036854775808', '99999999999999999999', 'constructor', '__proto__', 'toString'),
  fc.integer({ min: 0, max: 70 }).map(String),
);
const range = fc
  .tuple(token, fc.option(token, { nil: undefined }), fc.option(fc.oneof(token, fc.constant('')), { nil: undefined }), fc.boolean())
  .map(([low, high, step, extraSlash]) => `${low}${high === undefined ? '' : `-${high}`}${step === undefined ? '' : `/${step}`}${extraSlash ? '/2' : ''}`);
const field = fc.array(fc.oneof(range, fc.constant('')), { minLength: 1, maxLength: 3 }).map((parts) => parts.join(','));
const space = fc.constantFrom(' ', '  ', '\t', '\n', '\u00a0', '\u2003', '\u3000', '\u0085', '\u200b', '\ufeff', '\u180e');
const fields = fc
  .tuple(fc.array(fc.tuple(field, space), { minLength: 3, maxLength: 7 }), fc.option(space, { nil: undefined }))
  .map(([list, lead]) => `${lead ?? ''}${list.map(([f, s]) => f + s).join('')}`);
const duration = fc
  .array(fc.tuple(fc.constantFrom('', '0', '1', '15', '.5', '1.', '.', '9223372036854775807', '2562048'), fc.constantFrom('h', 'm', 's', 'ms', 'us', 'µs', 'ns', 'd', '', 'hh')), { minLength: 0, maxLength: 3 })
  .chain((terms) => fc.constantFrom('', '-', '+').map((sign) => sign + terms.map(([n, u]) => n + u).join('')));
const descriptor = fc.oneof(
  fc.constantFrom('@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly', '@reboot', '@daily ', '@', '@every', '@every 0'),
  duration.map((d) => `@every ${d}`),
);
/** Mostly valid five-field schedules, so that accepted ones are common too. */
const plausible = fc
  .array(fc.tuple(fc.constantFrom('*', '?', '1', '1-5', '*/5', '1,2', '+3', '01', '2-6/2', '1/10', '*-x', '?/2', '3,'), fc.constantFrom(' ', '\t', '\u00a0', '\u3000')), { minLength: 5, maxLength: 5 })
  .map((list) => list.map(([f, s]) => f + s).join(''));
const zone = fc.constantFrom('UTC', 'utc', 'Etc/UTC', 'Europe/Berlin', 'europe/berlin', 'US/Pacific-New', 'Local', '', '../x', '/etc/passwd');
const body = fc.oneof(fields, plausible, descriptor);
const schedule = fc.oneof(
  { weight: 4, arbitrary: body },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('TZ=', 'CRON_TZ='), zone, fc.constantFrom(' ', '  ', ''), body).map((parts) => parts.join('')) },
);

describe('the validator and the test API server port of robfig/cron', () => {
  it('agree on every generated schedule, verdict and error text', () => {
    fc.assert(
      fc.property(schedule, (text) => {
        let port: string | undefined;
        try {
          port = cronParseError(text);
        } catch (error) {
          // Where Go panics (kube-apiserver: 500) the validator must still reject.
          if (!(error instanceof CronPanic)) throw error;
          expect(cronScheduleError(text)).toBeDefined();
          return;
        }
        expect(cronScheduleError(text)).toBe(port);
      }),
      { numRuns: 5000 },
    );
  });

  it('never see the CRD pattern of spec.schedule reject a schedule the API accepts, in JavaScript or in RE2', () => {
    const pattern = crdPattern(SCHEDULE_PATTERN);
    let accepted = 0;
    fc.assert(
      fc.property(schedule, (text) => {
        const matched = pattern(text);
        if (cronScheduleError(text) !== undefined || text.includes('TZ')) return;
        accepted += 1;
        expect(matched, JSON.stringify(text)).toBe(true);
      }),
      { numRuns: 5000 },
    );
    expect(accepted).toBeGreaterThan(500);
    expect(['every day', '0 2 * *', '0 0 2 * * *', '@fortnightly'].filter(pattern)).toEqual([]);
  });

  it('generates both accepted and rejected schedules (the comparison is not vacuous)', () => {
    const sample = fc.sample(schedule, { numRuns: 2000, seed: 1 });
    const accepted = sample.filter((s) => cronScheduleError(s) === undefined).length;
    expect(accepted).toBeGreaterThan(100);
    expect(sample.length - accepted).toBeGreaterThan(100);
  });
});
