import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backupScheduleSchema, validateBackupSchedule, type SchemaNode } from '../../src/api/index.ts';
import { TIME_ZONE_NAMES, TZDATA_VERSION } from '../../src/api/time-zone-names.ts';
import { timeZoneError } from '../../src/api/time-zone.ts';
import { validateBuiltin } from '../apiserver/builtins/validate.ts';
import { moduleText, zoneNames } from '../../scripts/time-zone-names.ts';
import { crdPattern } from './crd-regexp.ts';
import { validSchedule } from './invalid-cases.ts';

function timeZoneErrors(timeZone: string): string[] {
  const input = validSchedule();
  input['spec'].timeZone = timeZone;
  return validateBackupSchedule(input).filter((e) => e.field === 'spec.timeZone').map((e) => e.message);
}

/** What the test API server's CronJob validation says of a timeZone (its port of kube's validateTimeZone). */
function serverTimeZoneErrors(timeZone: string): string[] {
  const cronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'c', namespace: 'd' },
    spec: { schedule: '0 2 * * *', timeZone, concurrencyPolicy: 'Forbid', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never', dnsPolicy: 'ClusterFirst' } } } } },
  };
  return validateBuiltin('batch', 'cronjobs', cronJob).filter((c) => c.field === 'spec.timeZone').map((c) => c.message ?? '');
}

describe('spec.timeZone against Go time.LoadLocation and kube validateTimeZone', () => {
  it.each(['Europe/Berlin', 'US/Pacific', 'US/Eastern', 'Etc/UTC', 'Etc/GMT+5', 'UTC', 'GMT', 'Asia/Calcutta', 'Asia/Kolkata', 'America/Argentina/ComodRivadavia', 'EST5EDT'])(
    'accepts %j (zones and backward links)',
    (name) => {
      expect(timeZoneError(name)).toBeUndefined();
      expect(timeZoneErrors(name)).toEqual([]);
    },
  );

  it.each([
    ['utc', 'unknown time zone utc'],
    ['europe/berlin', 'unknown time zone europe/berlin'],
    ['EUROPE/BERLIN', 'unknown time zone EUROPE/BERLIN'],
    ['US/Pacific-New', 'unknown time zone US/Pacific-New'],
    ['Mars/Olympus_Mons', 'unknown time zone Mars/Olympus_Mons'],
    ['Local', 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'],
    ['local', 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'],
    ['Europe/../Berlin', 'unknown time zone Europe/../Berlin'],
    ['America/Argentina_Buenos_Aires', 'unknown time zone America/Argentina_Buenos_Aires'],
  ])('rejects %j: %s', (name, problem) => {
    expect(timeZoneError(name)).toBe(problem);
  });

  it('names the field and says the name is case-sensitive', () => {
    expect(timeZoneErrors('utc')).toEqual(['spec.timeZone: unknown time zone utc; did you mean "UTC"? (IANA names, case-sensitive)']);
  });

  it.each([
    ['Europe/Berln', 'did you mean "Europe/Berlin"?'],
    ['europe/berlin', 'did you mean "Europe/Berlin"?'],
    ['America/Argentina_Buenos_Aires', 'did you mean "America/Argentina/Buenos_Aires"?'],
    ['Amercia/New_York', 'did you mean "America/New_York"?'],
    ['Berlin', 'did you mean "Europe/Berlin"?'],
    ['Mars/Olympus_Mons', 'use an IANA name such as "Europe/Berlin" (case-sensitive)'],
  ])('names at most three nearest zones for %s, not all ~600', (name, hint) => {
    const [message = ''] = timeZoneErrors(name);
    expect(message).toContain(hint);
    expect(message.length).toBeLessThan(200);
    expect((message.match(/"[A-Za-z_]+\/[A-Za-z_/]+"/g) ?? []).length).toBeLessThanOrEqual(3);
  });

  it('agrees with the test API server on tz names in any case and on made-up names', () => {
    const recased = fc
      .tuple(fc.constantFrom(...TIME_ZONE_NAMES), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }))
      .map(([name, flips]) => [...name].map((c, i) => (flips[i] ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c)).join(''));
    const madeUp = fc.stringMatching(/^[A-Za-z0-9._+-]{1,16}(\/[A-Za-z0-9._+-]{1,16}){0,2}$/);
    fc.assert(
      fc.property(fc.oneof(recased, madeUp, fc.constantFrom('Local', 'LOCAL', 'UTC', 'utc', '')), (name) => {
        const ours = timeZoneError(name);
        const server = serverTimeZoneErrors(name);
        // kube may add LoadLocation's error after the first one ("LOCAL"); the validator reports the first.
        expect(server.length === 0).toBe(ours === undefined);
        if (ours !== undefined) expect(server[0]).toBe(`Invalid value: ${JSON.stringify(name)}: ${ours}`);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the committed tz name list (src/api/time-zone-names.ts)', () => {
  it('holds zones and backward links, sorted, without names removed from tzdata', () => {
    expect(TZDATA_VERSION).toMatch(/^20\d\d[a-z]$/);
    expect(TIME_ZONE_NAMES).toEqual([...TIME_ZONE_NAMES].sort());
    expect(TIME_ZONE_NAMES).toEqual(expect.arrayContaining(['Europe/Berlin', 'US/Pacific', 'Etc/UTC', 'UTC']));
    expect(TIME_ZONE_NAMES).not.toContain('US/Pacific-New');
    expect(TIME_ZONE_NAMES.length).toBeGreaterThan(550);
  });

  it('passes the CRD pattern of spec.timeZone with every name the API accepts (JavaScript and RE2)', () => {
    const spec = (backupScheduleSchema['properties'] as Record<string, SchemaNode>)['spec'] as SchemaNode;
    const pattern = crdPattern(((spec['properties'] as Record<string, SchemaNode>)['timeZone'] as SchemaNode)['pattern'] as string);
    const accepted = TIME_ZONE_NAMES.filter((name) => timeZoneError(name) === undefined);
    expect(accepted.length).toBeGreaterThan(550);
    expect(accepted.filter((name) => !pattern(name))).toEqual([]);
  });

  // Machines with a tzdata package of the same release must agree with the committed list.
  const systemZi = '/usr/share/zoneinfo/tzdata.zi';
  const system = existsSync(systemZi) ? zoneNames(readFileSync(systemZi, 'utf8')) : undefined;
  it.runIf(system?.version === TZDATA_VERSION)(`equals what the script makes of ${systemZi} (same release)`, () => {
    expect(TIME_ZONE_NAMES).toEqual(system?.names);
  });

  it('is regenerated by the script from a tzdata.zi text: Zone names and Link targets', () => {
    const zi = '# version 2099z\nR EU 1981 ma - Mar lastSu 1u 1 S\nZ Europe/Berlin 0:53:28 - LMT 1893 Ap\nL Europe/Berlin Arctic/Longyearbyen\nZ Etc/UTC 0 - UTC\nL Etc/UTC UTC\n';
    const { version, names } = zoneNames(zi);
    expect({ version, names }).toEqual({ version: '2099z', names: ['Arctic/Longyearbyen', 'Etc/UTC', 'Europe/Berlin', 'UTC'] });
    expect(moduleText(version, names)).toContain("  'Arctic/Longyearbyen Etc/UTC Europe/Berlin UTC',\n].join(' ').split(' ');");
  });
});
