import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { writeScratchProject } from './scratch-app.ts';

/**
 * The package as a consumer gets it: `npm pack` (which runs `prepare`: tsc + esbuild into
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
/** A v1 schedule: grandfather-father-son retention, the source union's discriminator. */
const SPEC_V1 = `{
  schedule: '0 2 * * *',
  source: { type: 'Etcd', etcd: { endpoints: ['https://etcd-0.etcd:2379'] } },
  destination: { persistentVolumeClaim: { claimName: 'etcd-backups' } },
  retention: { keepDaily: DAILY, keepWeekly: 4, keepMonthly: 6 },
}`;
const APP_V1 = `import { App, Chart } from 'cdk8s';
import { BackupSchedule, GROUP_VERSION_V1, toV1alpha1 } from 'backupschedule-operator';

const app = new App({ outdir: 'dist-v1' });
const chart = new Chart(app, 'backups', { namespace: 'team-a', disableResourceNameHashes: true });
const schedule = new BackupSchedule(chart, 'gfs', { apiVersion: GROUP_VERSION_V1, metadata: { name: 'gfs' }, spec: ${SPEC_V1} });
app.synth();
console.log(JSON.stringify({ cronJob: schedule.toCronJob(), alpha: toV1alpha1(schedule.toBackupSchedule()) }));
`;
const APP = `import { App, Chart, Testing } from 'cdk8s';
import { BackupSchedule } from 'backupschedule-operator';

const app = new App({ outdir: 'dist' });
const chart = new Chart(app, 'backups', { namespace: 'team-a', disableResourceNameHashes: true });
const schedule = new BackupSchedule(chart, 'nightly', { apiVersion: 'kubelings.dev/v1alpha1', metadata: { name: 'nightly' }, spec: ${SPEC} });
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

  it('synthesizes a v1 BackupSchedule (apiVersion kubelings.dev/v1) and previews its GFS CronJob; a bad v1 spec fails the synth', () => {
    writeFileSync(join(app, 'v1.mjs'), APP_V1.replace('DAILY', '7'));
    const synth = run(process.execPath, ['v1.mjs']);
    expect(synth.status, synth.stderr).toBe(0);
    const [manifest] = parseAllDocuments(readFileSync(join(app, 'dist-v1', 'backups.k8s.yaml'), 'utf8')).map((d) => d.toJS() as { apiVersion: string; spec: { source: { type: string } } });
    expect(manifest).toMatchObject({ apiVersion: 'kubelings.dev/v1', spec: { source: { type: 'Etcd' }, retention: { keepDaily: 7, keepWeekly: 4, keepMonthly: 6 } } });
    const { cronJob, alpha } = JSON.parse(synth.stdout) as { cronJob: { spec: { jobTemplate: { spec: { template: { spec: { containers: { args: string[] }[] } } } } } }; alpha: { apiVersion: string; spec: { retention: unknown } } };
    expect(cronJob.spec.jobTemplate.spec.template.spec.containers[0]?.args.filter((a) => a.startsWith('--keep-'))).toEqual(['--keep-daily=7', '--keep-weekly=4', '--keep-monthly=6']);
    expect(alpha).toMatchObject({ apiVersion: 'kubelings.dev/v1alpha1', spec: { retention: { keepLast: 1000 } } });
    writeFileSync(join(app, 'v1-invalid.mjs'), APP_V1.replace('DAILY', '0'));
    const invalid = run(process.execPath, ['v1-invalid.mjs']);
    expect(invalid.status).not.toBe(0);
    expect(invalid.stderr).toContain('[backups/gfs] spec.retention.keepDaily: must be >= 1');
  });

  it('type-checks a TypeScript app against the shipped .d.ts (props typed from the schema)', () => {
    writeFileSync(
      join(app, 'typed.ts'),
      `import { Chart, Testing } from 'cdk8s';
import { BackupSchedule, GROUP_VERSION, GROUP_VERSION_V1, type BackupScheduleSpec, type CronJob, type v1 } from 'backupschedule-operator';
const spec: BackupScheduleSpec = ${SPEC.replace('KEEP', '7')};
const schedule = new BackupSchedule(new Chart(Testing.app(), 'c'), 'x', { apiVersion: GROUP_VERSION, spec });
const job: CronJob = schedule.toCronJob();
export const image: string | undefined = job.spec?.jobTemplate.spec?.template.spec?.containers[0]?.image;
// @ts-expect-error keepLast is a number: the types really come from the package.
export const bad: BackupScheduleSpec = { ...spec, retention: { keepLast: 'seven' } };
const specV1: v1.BackupScheduleSpec = ${SPEC_V1.replace('DAILY', '7')};
const gfs = new BackupSchedule(new Chart(Testing.app(), 'v'), 'gfs', { apiVersion: GROUP_VERSION_V1, spec: specV1 });
export const sourceType: 'Etcd' | 'PersistentVolumeClaim' = gfs.toBackupSchedule().spec.source.type;
// @ts-expect-error v1alpha1 has no grandfather-father-son rules.
new BackupSchedule(new Chart(Testing.app(), 'w'), 'alpha', { apiVersion: GROUP_VERSION, spec: { ...spec, retention: { keepDaily: 7 } } });
`,
    );
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: [] }, files: ['typed.ts'] }));
    const tsc = run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(tsc.status, tsc.stdout).toBe(0);
  });

  /** What validate prints for bad.yaml: file:line: name: the error, then that the rule on spec was not checked. */
  const BAD_YAML_ERRORS =
    'bad.yaml:9: x: spec.retention.keepLast: must be >= 1\nbad.yaml:4: x: spec: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation\n';

  it('runs the CLI from its bin: validate with file:line, preview, --help, exit 2 on unknown flags', () => {
    writeFileSync(join(app, 'bad.yaml'), 'apiVersion: kubelings.dev/v1alpha1\nkind: BackupSchedule\nmetadata: {name: x}\nspec:\n  schedule: "0 2 * * *"\n  source: {persistentVolumeClaim: {claimName: a}}\n  destination: {persistentVolumeClaim: {claimName: b}}\n  retention:\n    keepLast: 0\n');
    const invalid = bin('validate', 'bad.yaml');
    expect(invalid.status).toBe(1);
    expect(invalid.stdout).toBe(BAD_YAML_ERRORS);
    const valid = bin('validate', '-', '--output', 'json');
    expect(valid.status).toBe(0);
    expect(bin('validate', 'dist', '-o', 'json').stdout).toContain('"backupSchedules": 1');
    const preview = bin('preview', 'dist');
    expect(preview.status, preview.stderr).toBe(0);
    expect(parse(preview.stdout)).toMatchObject({ kind: 'CronJob', metadata: { name: 'nightly', namespace: 'team-a' } });
    expect(bin('preview', '--help').stdout).toMatch(/^Usage: backupschedule preview/);
    expect(bin('validate', '--strict', 'bad.yaml').status).toBe(2);
    const npx = run('npm', ['exec', '--offline', '--', 'backupschedule', 'validate', 'bad.yaml']);
    expect([npx.status, npx.stdout]).toEqual([1, BAD_YAML_ERRORS]);
  });

  it.each(['backupschedule_v1alpha1.json', 'backupschedule_v1.json'])('exports the JSON Schema %s for editors and kubeconform', (file) => {
    const resolved = run(process.execPath, ['--input-type=module', '-e', `console.log(import.meta.resolve('backupschedule-operator/schemas/${file}'))`]);
    expect(resolved.status, resolved.stderr).toBe(0);
    expect(JSON.parse(readFileSync(new URL(resolved.stdout.trim()), 'utf8'))).toEqual(JSON.parse(readFileSync(join(ROOT, 'dist/schemas', file), 'utf8')));
  });

  it('validates and previews v1 and v1alpha1 documents of one file from the bin', () => {
    writeFileSync(
      join(app, 'mixed.yaml'),
      'apiVersion: kubelings.dev/v1alpha1\nkind: BackupSchedule\nmetadata: {name: a, namespace: t}\nspec:\n  schedule: "0 2 * * *"\n  source: {persistentVolumeClaim: {claimName: a}}\n  destination: {persistentVolumeClaim: {claimName: b}}\n' +
        '---\napiVersion: kubelings.dev/v1\nkind: BackupSchedule\nmetadata: {name: b, namespace: t}\nspec:\n  schedule: "0 3 * * *"\n  source: {type: PersistentVolumeClaim, persistentVolumeClaim: {claimName: a}}\n  destination: {persistentVolumeClaim: {claimName: b}}\n  retention: {keepWeekly: 8}\n',
    );
    const valid = bin('validate', 'mixed.yaml');
    expect([valid.status, valid.stdout], valid.stderr).toEqual([0, '']);
    const preview = bin('preview', 'mixed.yaml');
    expect(preview.status, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('--keep-last=7');
    expect(preview.stdout).toContain('--keep-weekly=8');
  });
});
