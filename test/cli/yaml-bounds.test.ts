/**
 * What one input may make the YAML parser build (issue 41, MEDIUM 4): 400 KB of nested flow sequences
 * took 8 s and 430 MB, 4 MB of them 2.3 GB and a stack overflow, 12 MB of `---` lines 79 s; each is now
 * refused, naming the bound, after reading no more of the input than the bound allows. How fast and how
 * much memory: docs/cli-hardening.md (measured, not asserted).
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { readInputs, type Manifest, type SyntaxProblem } from '../../src/cli/inputs.ts';
import { DEFAULT_YAML_BOUNDS, documentMarkers, parseWithinBounds, YamlBoundError, type YamlBounds } from '../../src/cli/yaml-bounds.ts';
import { validSchedule } from '../api/invalid-cases.ts';
import { cli } from './cli-io.ts';

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}\n`;

/** What readInputs hands on for `text` given as standard input. */
function read(text: string): { manifests: Manifest[]; problems: SyntaxProblem[] } {
  const manifests: Manifest[] = [];
  const problems: SyntaxProblem[] = [];
  readInputs(['-'], () => ({ bytes: Buffer.from(text) }), { manifest: (m) => manifests.push(m), problem: (p) => problems.push(p), skipped: () => undefined });
  return { manifests, problems };
}

/** The documents parseWithinBounds yields for `text` before it stops, and the bound error it stopped with. */
function parse(text: string, bounds: YamlBounds): { documents: number; error: YamlBoundError | undefined } {
  let documents = 0;
  try {
    for (const token of parseWithinBounds(text, () => undefined, bounds)) if (token.type === 'document') documents++;
    return { documents, error: undefined };
  } catch (error) {
    if (!(error instanceof YamlBoundError)) throw error;
    return { documents, error };
  }
}

describe("the issue's inputs, refused naming the bound", () => {
  it.each([
    ['400 KB of nested flow sequences', nested(200_000)],
    ['4 MB of nested flow sequences', nested(2_000_000)],
  ])('%s: nested deeper than 1000 levels, refused at the 1,001st', (_, text) => {
    const run = cli(['validate', '-'], text);
    expect([run.code, run.stdout]).toEqual([1, '<stdin>:1: nested deeper than 1000 levels, the most one document may nest; the rest is not read\n']);
    // Refused at the first token past the bound: nothing after it was read, no document composed.
    const { documents, error } = parse(text, DEFAULT_YAML_BOUNDS);
    expect([documents, error?.offset]).toEqual([0, 1_000]);
  });

  it('12 MB of --- lines: more than 10,000 documents, refused before parsing, counting stopped at the 10,001st', () => {
    const text = '---\n'.repeat(3_000_000);
    const run = cli(['validate', '-'], text);
    expect([run.code, run.stdout]).toEqual([1, '<stdin>:1: holds more than 10000 YAML documents ("---" lines), the most one input may hold; split it\n']);
    expect(documentMarkers(text, 10_000)).toBe(10_001);
  });

  it('16 MB of empty flow sequences in one document: more than 500,000 nodes, refused before it is composed', () => {
    const text = `[${'[],'.repeat(5_500_000)}[]]\n`;
    const { documents, error } = parse(text, DEFAULT_YAML_BOUNDS);
    expect(documents).toBe(0);
    expect(error?.message).toBe('the document holds more than 500000 YAML nodes (scalars, collections and their entries), the most one document may hold; split it');
    // The outer sequence and 499,999 inner ones: the 500,001st node starts at byte 1 + 3 × 499,999.
    expect(error?.offset).toBe(1 + 3 * 499_999);
  }, 60_000);
});

describe('the bounds, at and past each', () => {
  const bounds: YamlBounds = { documents: 3, depth: 4, documentNodes: 6, inputNodes: 10 };

  it('nests a document exactly as deep as allowed, and not one level more, in flow and block style', () => {
    expect(parse('[[[[1]]]]\n', bounds).error).toBeUndefined();
    expect(parse('[[[[[1]]]]]\n', bounds).error?.message).toBe('nested deeper than 4 levels, the most one document may nest; the rest is not read');
    expect(parse('a:\n  b:\n    c:\n      d: 1\n', bounds).error).toBeUndefined();
    expect(parse('a:\n  b:\n    c:\n      d:\n        e: 1\n', bounds).error?.message).toMatch(/^nested deeper than 4 levels/);
    expect(parse('- - - - x\n', bounds).error).toBeUndefined();
    expect(parse('- - - - - x\n', bounds).error?.message).toMatch(/^nested deeper than 4 levels/);
  });

  it('counts nodes per document, starting again at each document, and per input across them', () => {
    // a, 1, b, 2, c, 3: six nodes in each document.
    const six = 'a: 1\nb: 2\nc: 3\n';
    expect(parse(`${six}---\n${six}`, { ...bounds, inputNodes: 12 })).toEqual({ documents: 2, error: undefined });
    expect(parse(`${six}d: 4\n`, bounds).error?.message).toMatch(/^the document holds more than 6 YAML nodes/);
    const { documents, error } = parse(`${six}---\n${six}`, bounds);
    expect(documents).toBe(1);
    expect(error?.message).toBe('the input holds more than 10 YAML nodes (scalars, collections and their entries), the most one input may hold; the rest is not read; split it');
  });

  it('reports a bound passed in a later document at its line, after the documents before it', () => {
    const schedule = stringify(validSchedule());
    const { manifests, problems } = read(`${schedule}---\n${nested(2_000)}`);
    expect(manifests).toHaveLength(1);
    expect(problems).toEqual([{ file: '<stdin>', line: schedule.split('\n').length + 1, message: 'nested deeper than 1000 levels, the most one document may nest; the rest is not read' }]);
  });

  it('counts "---" and "..." lines as documents, not a --- inside a line or a longer dash run', () => {
    expect(documentMarkers('a: 1\n---\nb: 2\n...\n--- c\n---x\n----\nd: ---\n', 100)).toBe(3);
    expect(documentMarkers('---\n'.repeat(50), 10)).toBe(11);
  });
});

describe('duplicate keys, found in one pass', () => {
  it('refuses a repeated key at its line, as kubectl does', () => {
    expect(read('a: 1\nb: {x: 1, y: 2, x: 3}\n').problems).toEqual([{ file: '<stdin>', line: 2, message: 'not valid YAML: Map keys must be unique' }]);
    expect(read('a: 1\nb: 2\na: 3\n').problems).toEqual([{ file: '<stdin>', line: 3, message: 'not valid YAML: Map keys must be unique' }]);
    expect(read('1: a\n"1": b\ntrue: c\n"true": d\nkind: ConfigMap\napiVersion: v1\n').problems).toEqual([]);
  });

  // The yaml package's own check compared every key with each earlier one: 125,000 keys took 160 s.
  it('reads a mapping of 150,000 keys, and finds the one repeated at its end', () => {
    const keys = Array.from({ length: 150_000 }, (_, i) => `k${i}: v\n`).join('');
    expect(read(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n${keys.replace(/^/gm, '  ')}`)).toMatchObject({ problems: [], manifests: [{ line: 1 }] });
    expect(read(`${keys}k7: again\n`).problems).toEqual([{ file: '<stdin>', line: 150_001, message: 'not valid YAML: Map keys must be unique' }]);
  }, 120_000);
});
