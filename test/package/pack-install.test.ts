import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { writeScratchProject } from './scratch-app.ts';

/**
 * The package as a consumer gets it: `npm pack` (which runs `prepack`: tsc + esbuild into
 * build/package/), installed offline into a scratch project under the OS temp dir next to cdk8s and
 * constructs, then used from plain JavaScript and TypeScript, the CLI through its `bin`.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SPEC = `{
  schedule: '0 3 * * *',
  timeZone: 'Europe/Berlin',
  source: { persistentVolumeClaim: { claimName: 'app-data' } },
  destination: { persistentVolumeClaim: { claimName: 'backups', path: 'app' } },
  retention: { keepLast: KEEP },
}`;
const APP = `import { App, Chart, Testing } from 'cdk8s';
import { BackupSchedule } from 'backupschedule-operator';

const app = new App({ outdir: 'dist' });
const chart = new Chart(app, 'backups', { namespace: 'team-a', disableResourceNameHashes: true });
const schedule = new BackupSchedule(chart, 'nightly', { metadata: { name: 'nightly' }, spec: ${SPEC} });
app.synth();
console.log(JSON.stringify({ manifests: Testing.synth(chart), cronJob: schedule.toCronJob() }));
`;

let scratch: string;
let app: string;
let tarball: string;
let install: SpawnSyncReturns<string>;
const run = (command: string, args: readonly string[], input?: string): SpawnSyncReturns<string> =>
  spawnSync(command, args, { cwd: app, encoding: 'utf8', input, env: { ...process.env, NO_COLOR: '1' } });
const bin = (...args: string[]): SpawnSyncReturns<string> => run(process.execPath, [join(app, 'node_modules/.bin/backupschedule'), ...args]);

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'pack-install-'));
  app = join(scratch, 'app');
  mkdirSync(app);
  const pack = spawnSync('npm', ['pack', '--pack-destination', scratch], { cwd: ROOT, encoding: 'utf8' });
  expect(pack.status, pack.stderr).toBe(0);
  tarball = join(scratch, readdirSync(scratch).find((f) => f.endsWith('.tgz')) ?? '');
  writeScratchProject(app, ROOT, tarball, ['cdk8s', 'constructs']);
  install = run('npm', ['ci', '--offline', '--no-audit', '--no-fund']);
}, 60_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the packed package in a scratch cdk8s app', () => {
  it('installs offline from the npm cache, compiled: no TypeScript sources, no tsx', () => {
    expect(install.status, install.stderr).toBe(0);
    const files = readdirSync(join(app, 'node_modules/backupschedule-operator'), { recursive: true }) as string[];
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files).toContain(join('build', 'package', 'cli.mjs'));
    expect(readdirSync(join(app, 'node_modules')).sort()).not.toContain('tsx');
  });

  it('synthesizes a chart with the construct; the output matches its snapshot', async () => {
    writeFileSync(join(app, 'main.mjs'), APP.replace('KEEP', '14'));
    const synth = run(process.execPath, ['main.mjs']);
    expect(synth.status, synth.stderr).toBe(0);
    const yaml = readFileSync(join(app, 'dist', readdirSync(join(app, 'dist'))[0] ?? ''), 'utf8');
    await expect(yaml).toMatchFileSnapshot('./__snapshots__/consumer-chart.k8s.yaml');
    const { manifests, cronJob } = JSON.parse(synth.stdout) as { manifests: unknown[]; cronJob: { metadata: { name: string; namespace: string } } };
    expect(manifests).toEqual(parseAllDocuments(yaml).map((d) => d.toJS()));
    expect(cronJob.metadata).toMatchObject({ name: 'nightly', namespace: 'team-a' });
  });

  it('loads into a CommonJS app with require() as well (cdk8s init typescript-app compiles to CommonJS)', () => {
    writeFileSync(join(app, 'main.cjs'), APP.replace('KEEP', '14').replace("import { App, Chart, Testing } from 'cdk8s';\nimport { BackupSchedule } from 'backupschedule-operator';", "const { App, Chart, Testing } = require('cdk8s');\nconst { BackupSchedule } = require('backupschedule-operator');").replace("outdir: 'dist'", "outdir: 'dist-cjs'"));
    const synth = run(process.execPath, ['main.cjs']);
    expect(synth.status, synth.stderr).toBe(0);
    expect(readFileSync(join(app, 'dist-cjs', 'backups.k8s.yaml'), 'utf8')).toBe(readFileSync(new URL('./__snapshots__/consumer-chart.k8s.yaml', import.meta.url), 'utf8'));
  });

  it('fails the synth of an invalid spec, naming the construct and the field', () => {
    writeFileSync(join(app, 'invalid.mjs'), APP.replace('KEEP', '5000'));
    const synth = run(process.execPath, ['invalid.mjs']);
    expect(synth.status).not.toBe(0);
    expect(synth.stderr).toContain('[backups/nightly] spec.retention.keepLast: must be <= 1000');
  });

  it('type-checks a TypeScript app against the shipped .d.ts (props typed from the schema)', () => {
    writeFileSync(
      join(app, 'typed.ts'),
      `import { Chart, Testing } from 'cdk8s';
import { BackupSchedule, type BackupScheduleSpec, type CronJob } from 'backupschedule-operator';
const spec: BackupScheduleSpec = ${SPEC.replace('KEEP', '7')};
const schedule = new BackupSchedule(new Chart(Testing.app(), 'c'), 'x', { spec });
const job: CronJob = schedule.toCronJob();
export const image: string | undefined = job.spec?.jobTemplate.spec?.template.spec?.containers[0]?.image;
// @ts-expect-error keepLast is a number: the types really come from the package.
export const bad: BackupScheduleSpec = { ...spec, retention: { keepLast: 'seven' } };
`,
    );
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: [] }, files: ['typed.ts'] }));
    const tsc = run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(tsc.status, tsc.stdout).toBe(0);
  });

  it('runs the CLI from its bin: validate with file:line, preview, --help, exit 2 on unknown flags', () => {
    writeFileSync(join(app, 'bad.yaml'), 'apiVersion: kubelings.dev/v1alpha1\nkind: BackupSchedule\nmetadata: {name: x}\nspec:\n  schedule: "0 2 * * *"\n  source: {persistentVolumeClaim: {claimName: a}}\n  destination: {persistentVolumeClaim: {claimName: b}}\n  retention:\n    keepLast: 0\n');
    const invalid = bin('validate', 'bad.yaml');
    expect(invalid.status).toBe(1);
    expect(invalid.stdout).toBe('bad.yaml:9: spec.retention.keepLast: must be >= 1\n');
    const valid = bin('validate', '-', '--output', 'json');
    expect(valid.status).toBe(0);
    expect(bin('validate', 'dist', '-o', 'json').stdout).toContain('"backupSchedules": 1');
    const preview = bin('preview', 'dist');
    expect(preview.status, preview.stderr).toBe(0);
    expect(parse(preview.stdout)).toMatchObject({ kind: 'CronJob', metadata: { name: 'nightly', namespace: 'team-a' } });
    expect(bin('preview', '--help').stdout).toMatch(/^Usage: backupschedule preview/);
    expect(bin('validate', '--strict', 'bad.yaml').status).toBe(2);
    const npx = run('npm', ['exec', '--offline', '--', 'backupschedule', 'validate', 'bad.yaml']);
    expect([npx.status, npx.stdout]).toEqual([1, 'bad.yaml:9: spec.retention.keepLast: must be >= 1\n']);
  });

  it('exports the JSON Schema for editors and kubeconform', () => {
    const resolved = run(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('backupschedule-operator/schemas/backupschedule_v1alpha1.json'))"]);
    expect(JSON.parse(readFileSync(new URL(resolved.stdout.trim()), 'utf8'))).toEqual(JSON.parse(readFileSync(join(ROOT, 'dist/schemas/backupschedule_v1alpha1.json'), 'utf8')));
  });
});
