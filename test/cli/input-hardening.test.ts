/**
 * What the CLI does with hostile or odd input (issue 30): alias bombs, folder loops, endless or huge
 * files, binary data, and the YAML 1.1 scalars kubectl reads differently from YAML 1.2.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { readInputs } from '../../src/cli/inputs.ts';
import type { PreviewItem } from '../../src/cli/preview-command.ts';
import { decodeYamlText, MAX_INPUT_BYTES, readBoundedBytes } from '../../src/cli/read-text.ts';
import type { ValidateReport } from '../../src/cli/validate-command.ts';
import { validSchedule } from '../api/invalid-cases.ts';
import { cli } from './cli-io.ts';

const scratch = mkdtempSync(join(tmpdir(), 'cli-hardening-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
function file(name: string, content: string | Buffer): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}
const report = (stdout: string): ValidateReport => JSON.parse(stdout) as ValidateReport;
const argsOf = (item: PreviewItem | undefined): string[] => item?.cronJob.spec?.jobTemplate.spec?.template.spec?.containers[0]?.args ?? [];

/** Nine levels of nine aliases each: 9^9 strings once expanded. */
const BILLION_LAUGHS = [
  'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array.from({ length: 9 }, () => `*a${i}`).join(',')}]`),
  '',
].join('\n');

describe('backupschedule validate on hostile input', () => {
  it('reports an alias bomb as file:line, exit 1, instead of crashing', () => {
    const path = file('laughs.yaml', `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n${BILLION_LAUGHS}`);
    const run = cli(['validate', path]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`${path}:5: not valid YAML: more than 100 aliases expanded (a "billion laughs" document?)\n`);
  });

  it('does not follow a symbolic link to a folder (loop -> .), reads each file once and says what it skipped', () => {
    const folder = join(scratch, 'looped');
    mkdirSync(folder);
    writeFileSync(join(folder, 'schedule.yaml'), stringify(validSchedule()));
    symlinkSync('.', join(folder, 'loop'));
    // A link to a file is read, as kubectl reads it.
    mkdirSync(join(scratch, 'elsewhere'));
    writeFileSync(join(scratch, 'elsewhere', 'other.yaml'), stringify({ ...validSchedule(), metadata: { name: 'other', namespace: 'team-a' } }));
    symlinkSync(join(scratch, 'elsewhere', 'other.yaml'), join(folder, 'linked.yaml'));
    const run = cli(['validate', folder]);
    expect(run.code, run.stdout).toBe(0);
    expect(run.stderr).toBe(
      `skipped ${join(folder, 'loop')}: a symbolic link to a folder: not followed (kubectl -R does not follow them either)\n` +
        '2 BackupSchedule(s) in 2 file(s), 0 other object(s) skipped: all valid\n',
    );
    expect(report(cli(['validate', '-o', 'json', folder]).stdout).skippedPaths).toEqual([{ path: join(folder, 'loop'), reason: expect.stringContaining('not followed') as unknown }]);
  });

  it('refuses a regular file over the limit without reading it, naming the file', () => {
    const path = join(scratch, 'huge.yaml');
    closeSync(openSync(path, 'w'));
    truncateSync(path, MAX_INPUT_BYTES + 1); // sparse: nothing is written
    const run = cli(['validate', path]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`${path}:1: is larger than 16 MiB (${MAX_INPUT_BYTES + 1} bytes), the most one input may hold; split it, or validate the objects in smaller files\n`);
  });

  it('reads an endless device only up to the limit (/dev/zero)', () => {
    expect(readBoundedBytes('/dev/zero', 4096)).toEqual({ problem: 'is larger than 0.00390625 MiB, the most one input may hold; split it, or validate the objects in smaller files' });
    const fd = openSync('/dev/zero', 'r');
    try {
      expect('problem' in readBoundedBytes(fd, 4096)).toBe(true);
    } finally {
      closeSync(fd);
    }
    const run = cli(['validate', '/dev/zero']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^\/dev\/zero:1: is larger than 16 MiB, the most one input may hold/);
  });

  it('holds about what a pipe gave, not a 1 MiB buffer per read of it', () => {
    const fifo = join(scratch, 'piped');
    execFileSync('mkfifo', [fifo]);
    const size = 4 * 1024 * 1024;
    // The writer is another process: a pipe's reads give at most 64 KiB each.
    const writer = spawn('sh', ['-c', `head -c ${size} /dev/zero > '${fifo}'`], { stdio: 'ignore' });
    const before = process.memoryUsage().arrayBuffers;
    const result = readBoundedBytes(fifo);
    // Nothing has been allocated since: no collection can have run, so this counts what the read held.
    const held = process.memoryUsage().arrayBuffers - before;
    writer.kill();
    expect('bytes' in result && result.bytes.length).toBe(size);
    expect(held).toBeLessThan(3 * size);
  });

  it('names an unreadable file instead of throwing', () => {
    symlinkSync(join(scratch, 'nowhere.yaml'), join(scratch, 'dangling.yaml'));
    const run = cli(['validate', '-o', 'json', scratch]);
    expect(report(run.stdout).errors).toContainEqual({ file: join(scratch, 'dangling.yaml'), line: 1, message: expect.stringMatching(/^cannot read: ENOENT/) as unknown });
  });

  it.each([
    ['bytes that are not UTF-8', Buffer.from([0x6b, 0x69, 0x6e, 0x64, 0x3a, 0x0a, 0xff, 0xfe, 0x00, 0x89]), /^<stdin>:2: is not UTF-8 text \(binary data at byte 6\)/],
    ['UTF-8 with control characters', Buffer.from('a: 1\nb: 2\nc: \u0000\u0001\u0002\n'), /^<stdin>:3: is not YAML text: control character U\+0000/],
    ['a PNG header', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), /^<stdin>:1: is not UTF-8 text \(binary data at byte 0\)/],
    ['text that is one long string', Buffer.from('just some words\n'), /^<stdin>:1: not a Kubernetes object: a document must be a mapping with apiVersion and kind, got a string\n$/],
    ['a bare list', Buffer.from('- a\n- b\n'), /^<stdin>:1: not a Kubernetes object: a document must be a mapping with apiVersion and kind, got a list\n$/],
  ])('refuses %s as an error naming the input, not as "1 other object skipped"', (_name, bytes, message) => {
    const run = cli(['validate', '-'], bytes);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(message);
    expect(run.stderr).toContain('0 other object(s) skipped');
  });

  it('refuses random bytes, whatever they are', () => {
    // A fixed pseudo-random sequence (xorshift), so the test is the same on every run.
    let x = 0x2545f491;
    const bytes = Buffer.from(
      Array.from({ length: 300 }, () => {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return x & 0xff;
      }),
    );
    const run = cli(['validate', '-'], bytes);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('all valid');
  });

  it('drops a byte order mark and reads the text after it', () => {
    expect(decodeYamlText(Buffer.from(`\uFEFF${stringify(validSchedule())}`))).toEqual({ text: stringify(validSchedule()) });
  });
});

/** A v1alpha1 schedule written by hand, `spec` lines as given. */
const handWritten = (...specLines: string[]): string =>
  ['apiVersion: kubelings.dev/v1alpha1', 'kind: BackupSchedule', 'metadata: {name: nightly, namespace: team-a}', 'spec:', ...specLines.map((l) => `  ${l}`), ''].join('\n');
const SOURCE = 'source: {etcd: {endpoints: ["https://etcd-0.etcd:2379"]}}';

describe('YAML read as kubectl reads it (YAML 1.1, go-yaml v2)', () => {
  const preview = (yaml: string): PreviewItem | undefined => {
    const run = cli(['preview', '-o', 'json', '-'], yaml);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    return (JSON.parse(run.stdout) as { items: PreviewItem[] }).items[0];
  };

  it('reads suspend: yes as true, as kubectl sends it', () => {
    const yaml = handWritten('schedule: "0 2 * * *"', 'suspend: yes', SOURCE, 'destination: {persistentVolumeClaim: {claimName: b}}');
    expect(cli(['validate', '-'], yaml).code).toBe(0);
    expect(preview(yaml)?.cronJob.spec?.suspend).toBe(true);
    expect(preview(yaml.replace('suspend: yes', 'suspend: off'))?.cronJob.spec?.suspend).toBe(false);
  });

  it('reads 010 as octal 8, as kubectl sends it', () => {
    const yaml = handWritten('schedule: "0 2 * * *"', SOURCE, 'destination: {persistentVolumeClaim: {claimName: b}}', 'retention: {keepLast: 010}');
    expect(argsOf(preview(yaml))).toContain('--keep-last=8');
    // Go's ParseInt(s, 0, 64), which go-yaml hands integers to, reads 0o10 as 8 too.
    expect(argsOf(preview(yaml.replace('010', '0o10')))).toContain('--keep-last=8');
  });

  it('merges << keys, as kubectl does', () => {
    const yaml = [
      'apiVersion: kubelings.dev/v1alpha1',
      'kind: BackupSchedule',
      'metadata: {name: nightly, namespace: team-a}',
      'spec:',
      '  <<: &defaults',
      `    ${SOURCE}`,
      '    destination: {persistentVolumeClaim: {claimName: b}}',
      '    retention: {keepLast: 3}',
      '  schedule: "0 2 * * *"',
      '  retention: {keepLast: 5}',
      '',
    ].join('\n');
    const item = preview(yaml);
    expect(argsOf(item)).toContain('--keep-last=5'); // the mapping's own key wins over the merged one
    expect(item?.cronJob.spec?.jobTemplate.spec?.template.spec?.volumes?.map((v) => v.persistentVolumeClaim?.claimName)).toContain('b');
  });

  it('keeps a timestamp-like claim name a string (go-yaml v2 decodes timestamps into interface{} as strings)', () => {
    const yaml = handWritten('schedule: "0 2 * * *"', SOURCE, 'destination: {persistentVolumeClaim: {claimName: 2024-01-01}}');
    const run = cli(['validate', '-'], yaml);
    expect(run.stdout).toBe('');
    expect(run.code).toBe(0);
    expect(preview(yaml)?.cronJob.spec?.jobTemplate.spec?.template.spec?.volumes?.map((v) => v.persistentVolumeClaim?.claimName)).toContain('2024-01-01');
  });

  // What kubectl sends for each plain scalar: sigs.k8s.io/yaml (go-yaml v2's resolve, then JSON).
  it.each<[string, unknown]>([
    ['yes', true], ['Yes', true], ['ON', true], ['y', true], ['no', false], ['Off', false], ['n', false],
    ['true', true], ['~', null], ['null', null],
    ['010', 8], ['-010', -8], ['0o17', 15], ['0x1f', 31], ['0X1F', 31], ['0b101', 5], ['0B101', 5], ['1_000', 1000], ['08', 8], ['+12', 12],
    ['1.5e3', 1500], ['1:20', '1:20'], ['2001-12-14', '2001-12-14'], ['2001-12-14t21:59:43.10-05:00', '2001-12-14t21:59:43.10-05:00'],
    ['0o19', '0o19'], ['"yes"', 'yes'], ["'010'", '010'],
  ])('reads %s as kubectl sends it: %j', (scalar, expected) => {
    const objects: unknown[] = [];
    readInputs(['-'], () => ({ bytes: Buffer.from(`kind: ConfigMap\nvalue: ${scalar}\n`) }), { manifest: (m) => objects.push(m.object), problem: (p) => objects.push(p), skipped: () => undefined });
    expect(objects).toEqual([{ kind: 'ConfigMap', value: expected }]);
  });

  it('writes previews kubectl reads back as printed: a claim named "on" stays a string', () => {
    const schedule = validSchedule();
    schedule.spec.destination.persistentVolumeClaim.claimName = 'on';
    const run = cli(['preview', '-'], JSON.stringify(schedule));
    expect(run.code, run.stderr).toBe(0);
    const job = parse(run.stdout, { version: '1.1' }) as { spec: { jobTemplate: { spec: { template: { spec: { volumes: { persistentVolumeClaim?: { claimName: unknown } }[] } } } } } };
    expect(job.spec.jobTemplate.spec.template.spec.volumes.map((v) => v.persistentVolumeClaim?.claimName)).toContain('on');
  });
});
