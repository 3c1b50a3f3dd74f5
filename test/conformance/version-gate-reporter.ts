/**
 * A vitest reporter for conformance runs (`npm run test:real` adds it beside the default one): counts
 * passed, version-gated and failed tests apart and lists the version deltas the run met, so a run
 * against an older cluster says which expectations it did not judge and why instead of leaving a
 * skipped count to be read. Gated tests are the ones skipped by `Cluster.require` (note
 * `not in v1.20: …`); tests that asserted an older release's behaviour through `Cluster.has` pass and
 * are counted among the passes, with their annotation listed.
 */
import type { Reporter, TestModule } from 'vitest/node';
import { VERSION_GATE_ANNOTATION } from './version-gates.ts';

/** What the summary needs of one finished test. */
export interface FinishedTest {
  readonly name: string;
  readonly state: 'passed' | 'failed' | 'skipped' | 'pending';
  /** The note of `ctx.skip(note)`. */
  readonly note?: string | undefined;
  readonly annotations: ReadonlyArray<{ readonly type: string; readonly message: string }>;
}

/** Counts of one run and its version deltas (note → tests). */
export interface GateSummary {
  readonly passed: number;
  /** Passed tests that asserted an older release's behaviour. */
  readonly passedOlder: number;
  readonly gated: number;
  readonly failed: number;
  /** Skipped for another reason (a test-server-only test, a missing CONFORMANCE_WEBHOOK_HOST, …). */
  readonly otherSkipped: number;
  /** Each delta note with the tests it covered, in first-seen order. */
  readonly deltas: ReadonlyMap<string, readonly string[]>;
}

const GATED = /^not in v\d+\.\d+: /;

/** Tallies finished tests. */
export function summarize(tests: Iterable<FinishedTest>): GateSummary {
  let passed = 0;
  let passedOlder = 0;
  let gated = 0;
  let failed = 0;
  let otherSkipped = 0;
  const deltas = new Map<string, string[]>();
  const note = (text: string, test: string): void => {
    const list = deltas.get(text) ?? [];
    list.push(test);
    deltas.set(text, list);
  };
  for (const t of tests) {
    if (t.state === 'failed') failed++;
    else if (t.state === 'passed') {
      passed++;
      const older = t.annotations.filter((a) => a.type === VERSION_GATE_ANNOTATION);
      if (older.length > 0) passedOlder++;
      for (const a of older) note(a.message, t.name);
    } else if (t.state === 'skipped' && t.note !== undefined && GATED.test(t.note)) {
      gated++;
      note(t.note, t.name);
    } else otherSkipped++;
  }
  return { passed, passedOlder, gated, failed, otherSkipped, deltas };
}

/** The summary as printed at the end of the run. */
export function formatSummary(s: GateSummary): string {
  const lines = [
    `conformance: ${s.passed} passed (${s.passedOlder} asserting an older release's behaviour), ${s.gated} version-gated, ${s.failed} failed, ${s.otherSkipped} skipped for other reasons`,
  ];
  if (s.deltas.size > 0) lines.push('version deltas met:');
  for (const [text, tests] of s.deltas) lines.push(`  ${text} — ${tests.length} test${tests.length === 1 ? '' : 's'}`);
  return lines.join('\n');
}

/** The reporter: prints {@link formatSummary} once the run ends. */
export default class VersionGateReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const tests: FinishedTest[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const r = t.result();
        tests.push({ name: t.fullName, state: r.state, note: r.state === 'skipped' ? r.note : undefined, annotations: t.annotations() });
      }
    }
    process.stdout.write(`\n${formatSummary(summarize(tests))}\n`);
  }
}
