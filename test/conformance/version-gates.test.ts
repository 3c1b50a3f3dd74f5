/**
 * The version gate itself (no cluster): `/version` parsing, the table lookup for an old and a new
 * release, the skip and annotation a gate produces, the table's own consistency (every entry is used
 * by a test, dates and references well formed), and the run summary of `version-gate-reporter.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRelease, parseServerVersion } from './harness/server-version.ts';
import { formatSummary, summarize } from './version-gate-reporter.ts';
import { BEHAVIOURS, gateNote, gatesFor, hasBehaviour, VERSION_GATE_ANNOTATION, type Behaviour, type BehaviourId, type GateContext } from './version-gates.ts';

const v120 = parseServerVersion({ major: '1', minor: '20', gitVersion: 'v1.20.2' });
const v132 = parseServerVersion({ major: '1', minor: '32', gitVersion: 'v1.32.0-kubelings-test' });
const ids = Object.keys(BEHAVIOURS) as BehaviourId[];

/** A test context that records what a gate did to it. */
function recorder(): GateContext & { skipped?: string; annotations: Array<{ message: string; type?: string }> } {
  const ctx = {
    skipped: undefined as string | undefined,
    annotations: [] as Array<{ message: string; type?: string }>,
    annotate(message: string, type?: string) {
      ctx.annotations.push({ message, ...(type ? { type } : {}) });
      return Promise.resolve();
    },
    skip(note?: string) {
      ctx.skipped = note ?? '';
    },
  };
  return ctx;
}

describe('server version', () => {
  it.each([
    [{ major: '1', minor: '20', gitVersion: 'v1.20.2' }, 1, 20],
    [{ major: '1', minor: '27+', gitVersion: 'v1.27.3-eks-a5565ad' }, 1, 27],
    [{ major: '1', minor: '32', gitVersion: 'v1.32.0-kubelings-test' }, 1, 32],
    [{ major: '1', minor: '29+', gitVersion: 'v1.29.1+k3s1' }, 1, 29],
    [{ major: '1', minor: '26+', gitVersion: 'custom-build' }, 1, 26],
  ])('reads %j as %i.%i', (info, major, minor) => {
    expect(parseServerVersion(info)).toMatchObject({ major, minor });
  });

  it('refuses an answer without a release, naming the fields', () => {
    expect(() => parseServerVersion({ gitVersion: 'main' })).toThrow(/gitVersion "main" is not v<major>.<minor>/);
    expect(() => parseRelease('1.x')).toThrow(/release "1.x": expected <major>.<minor>/);
  });
});

describe('version gate lookup', () => {
  it('closes every gate on 1.20 and opens every gate on 1.32 (the test API server)', () => {
    for (const id of ids) {
      expect(hasBehaviour(v120, id), id).toBe(false);
      expect(hasBehaviour(v132, id), id).toBe(true);
    }
  });

  it('opens a gate exactly at its release: CronJob timeZone is on by default from 1.25 (beta)', () => {
    const at = (minor: number) => hasBehaviour(parseRelease(`1.${minor}`), 'cronjob-time-zone');
    expect([23, 24, 25, 26, 27].map(at)).toEqual([false, false, true, true, true]);
    expect(hasBehaviour(parseRelease('2.0'), 'cronjob-time-zone')).toBe(true);
  });

  it('skips with the "not in" note on an older server and does nothing on a newer one', () => {
    const old = recorder();
    gatesFor(v120).require(old, 'self-subject-review');
    expect(old.skipped).toBe('not in v1.20: authentication.k8s.io/v1 SelfSubjectReview (kubectl auth whoami) (KEP-3325, since 1.28)');
    const current = recorder();
    gatesFor(v132).require(current, 'self-subject-review');
    expect(current.skipped).toBeUndefined();
  });

  it('annotates a test that goes on to assert the older behaviour, and only on an older server', async () => {
    const old = recorder();
    expect(await gatesFor(v120).has(old, 'field-validation')).toBe(false);
    expect(old.annotations).toEqual([{ type: VERSION_GATE_ANNOTATION, message: expect.stringMatching(/^asserts the v1\.20 behaviour: the parameter is ignored: .* \(KEP-2885, since 1\.25\)$/) }]);
    const current = recorder();
    expect(await gatesFor(v132).has(current, 'field-validation')).toBe(true);
    expect(current.annotations).toEqual([]);
  });

  it('refuses to assert an older behaviour for an entry that defines none', async () => {
    await expect(gatesFor(v120).has(recorder(), 'self-subject-review')).rejects.toThrow(/no well-defined older behaviour/);
  });
});

describe('the table', () => {
  it.each(ids)('%s: a release, its history and a KEP or PR reference', (id) => {
    const b: Behaviour = BEHAVIOURS[id];
    expect(() => parseRelease(b.since)).not.toThrow();
    expect(b.stages).toContain(b.since);
    expect(b.ref).toMatch(/^(KEP-\d+|kubernetes\/kubernetes#\d+)( \+ (KEP-\d+|kubernetes\/kubernetes#\d+))*$/);
    expect(gateNote(v120, id)).toMatch(new RegExp(`^not in v1\\.20: .+ \\(${b.ref.replace(/[/#+]/g, '\\$&')}, since ${b.since.replace('.', '\\.')}\\)$`));
  });

  it('has no entry that no conformance test gates on', () => {
    const dir = import.meta.dirname;
    const sources = readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts') && f !== 'version-gates.test.ts')
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    expect(ids.filter((id) => !sources.includes(`'${id}'`))).toEqual([]);
  });
});

describe('run summary', () => {
  it('counts passed, version-gated and failed apart and lists each delta with its tests', () => {
    const summary = summarize([
      { name: 'a', state: 'passed', annotations: [] },
      { name: 'b', state: 'passed', annotations: [{ type: VERSION_GATE_ANNOTATION, message: 'asserts the v1.20 behaviour: x (KEP-1, since 1.25)' }] },
      { name: 'c', state: 'skipped', note: 'not in v1.20: y (KEP-2, since 1.28)', annotations: [] },
      { name: 'd', state: 'skipped', note: 'not in v1.20: y (KEP-2, since 1.28)', annotations: [] },
      { name: 'e', state: 'skipped', annotations: [] },
      { name: 'f', state: 'failed', annotations: [] },
    ]);
    expect(summary).toMatchObject({ passed: 2, passedOlder: 1, gated: 2, failed: 1, otherSkipped: 1 });
    expect([...summary.deltas]).toEqual([
      ['asserts the v1.20 behaviour: x (KEP-1, since 1.25)', ['b']],
      ['not in v1.20: y (KEP-2, since 1.28)', ['c', 'd']],
    ]);
    expect(formatSummary(summary).split('\n')).toEqual([
      'conformance: 2 passed (1 asserting an older release\'s behaviour), 2 version-gated, 1 failed, 1 skipped for other reasons',
      'version deltas met:',
      '  asserts the v1.20 behaviour: x (KEP-1, since 1.25) — 1 test',
      '  not in v1.20: y (KEP-2, since 1.28) — 2 tests',
    ]);
  });
});
