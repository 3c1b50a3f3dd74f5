/**
 * The scratch apps of consumer-apps.test.ts, as users write them: several BackupSchedules in several
 * charts, the default version (v1) and one app that asks for v1alpha1, endpoints from a `string[]`.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The charts every app synthesizes: two teams in v1, one legacy chart in v1alpha1. */
const CHARTS_TS = `const ENDPOINTS: string[] = ['https://etcd-0.etcd:2379', 'https://etcd-1.etcd:2379'];

export class TeamChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new BackupSchedule(this, 'etcd', {
      spec: {
        schedule: '0 2 * * *',
        source: { type: 'Etcd', etcd: { endpoints: ENDPOINTS, tlsSecretName: 'etcd-client-tls' } },
        destination: { persistentVolumeClaim: { claimName: 'etcd-backups' } },
        retention: { keepDaily: 7, keepWeekly: 4 },
      },
    });
    new BackupSchedule(this, 'data', {
      spec: {
        schedule: '30 3 * * *',
        source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'app-data' } },
        destination: { persistentVolumeClaim: { claimName: 'backups', path: id } },
      },
    });
  }
}

export class LegacyChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    new BackupSchedule(this, 'old', {
      apiVersion: 'kubelings.dev/v1alpha1',
      spec: {
        schedule: '0 4 * * *',
        source: { persistentVolumeClaim: { claimName: 'legacy-data' } },
        destination: { persistentVolumeClaim: { claimName: 'backups' } },
        retention: { keepLast: 14 },
      },
    });
  }
}
`;

/** The charts in plain JavaScript (the TypeScript above without its types). */
const CHARTS_JS = CHARTS_TS.replace(': string[]', '')
  .replace(/constructor\(scope: Construct, id: string, props: ChartProps = \{\}\)/g, 'constructor(scope, id, props = {})')
  .replace(/export class (\w+)/g, 'class $1');

const SYNTH = `const app = new App();
new TeamChart(app, 'team-a', { namespace: 'team-a' });
new TeamChart(app, 'team-b', { namespace: 'team-b' });
new LegacyChart(app, 'legacy', { namespace: 'legacy' });
app.synth();
`;

/** The names of the YAML files every app's synth writes to dist/. */
export const SYNTH_FILES = ['legacy.k8s.yaml', 'team-a.k8s.yaml', 'team-b.k8s.yaml'];

/**
 * `cdk8s init typescript-app` as its template (shipped in cdk8s-cli) makes it: package.json, tsconfig,
 * jest.config.js, cdk8s.yaml as they are; main.ts with the charts above; main.test.ts a snapshot test.
 * Its packages come from the scratch project around it (Node resolves up the directory tree).
 */
export function writeTemplateApp(dir: string, repoRoot: string): void {
  const template = join(repoRoot, 'node_modules/cdk8s-cli/templates/typescript-app');
  mkdirSync(dir, { recursive: true });
  for (const file of ['jest.config.js', 'tsconfig.json', 'cdk8s.yaml']) cpSync(join(template, file), join(dir, file));
  const pkg = readFileSync(join(template, 'package.json'), 'utf8').replace(/\{\{ \$base \}\}/g, 'backups').replace(/\{\{ \w+ \}\}/g, '*');
  writeFileSync(join(dir, 'package.json'), pkg);
  writeFileSync(
    join(dir, 'main.ts'),
    `import { Construct } from 'constructs';\nimport { App, Chart, ChartProps } from 'cdk8s';\nimport { BackupSchedule } from 'backupschedule-operator';\n\n${CHARTS_TS}\n${SYNTH}`,
  );
  writeFileSync(
    join(dir, 'main.test.ts'),
    `import { TeamChart, LegacyChart } from './main';
import { Testing } from 'cdk8s';
import { BackupSchedule } from 'backupschedule-operator';

describe('Backups', () => {
  test('team chart', () => {
    const app = Testing.app();
    const chart = new TeamChart(app, 'test-chart', { namespace: 'team-a' });
    expect(Testing.synth(chart)).toMatchSnapshot();
    const schedules = chart.node.children.filter((c) => c instanceof BackupSchedule) as BackupSchedule[];
    expect(schedules.map((s) => s.toCronJob().spec?.jobTemplate.spec?.template.spec?.containers[0].args)).toMatchSnapshot();
  });

  test('legacy chart in v1alpha1', () => {
    const chart = new LegacyChart(Testing.app(), 'legacy');
    expect(Testing.synth(chart)).toMatchSnapshot();
  });
});
`,
  );
}

/** An ES-module app tested with vitest, no config: snapshots, and one instance whether imported or required. */
export function writeVitestApp(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'esm-vitest', private: true, type: 'module', scripts: { test: 'vitest run' } }, null, 2)}\n`);
  writeFileSync(
    join(dir, 'schedules.test.ts'),
    `import { createRequire } from 'node:module';
import { App, Chart, Testing, type ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { BackupSchedule } from 'backupschedule-operator';
import { expect, it } from 'vitest';

${CHARTS_TS}
it('synthesizes the schedules of each chart', () => {
  const app = Testing.app();
  expect([new TeamChart(app, 'team-a', { namespace: 'team-a' }), new LegacyChart(app, 'legacy')].map((chart) => Testing.synth(chart))).toMatchSnapshot();
});

it('is one library whether imported or required (no dual-package hazard), on the app\\'s cdk8s', () => {
  const required = createRequire(import.meta.url)('backupschedule-operator') as { BackupSchedule: typeof BackupSchedule };
  expect(required.BackupSchedule).toBe(BackupSchedule);
  const chart = new Chart(Testing.app(), 'c');
  const schedule = new required.BackupSchedule(chart, 's', { spec: { schedule: '@daily', source: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { claimName: 'a' } }, destination: { persistentVolumeClaim: { claimName: 'b' } } } });
  expect(schedule).toBeInstanceOf(BackupSchedule);
  expect(schedule).toBeInstanceOf(Construct);
  expect(chart.node.children).toEqual([schedule]);
});
`,
  );
}

/** A CommonJS JavaScript app: require() the package, synth, and compare with import() of it. */
export function writeCommonJsApp(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'cjs-js', private: true, type: 'commonjs' }, null, 2)}\n`);
  writeFileSync(
    join(dir, 'main.js'),
    `'use strict';
const { App, Chart } = require('cdk8s');
const { BackupSchedule } = require('backupschedule-operator');

${CHARTS_JS}
${SYNTH}
import('backupschedule-operator').then((esm) => console.log(JSON.stringify({ sameClass: esm.BackupSchedule === BackupSchedule })));
`,
  );
}

/** A TypeScript consumer of the public types, compiled in every module mode (see consumer-apps.test.ts). */
export const TYPED_CONSUMER = `import { App, Chart } from 'cdk8s';
import { BackupSchedule, GROUP_VERSION, type CronJob, type v1 } from 'backupschedule-operator';

const endpoints: readonly string[] = ['https://etcd-0.etcd:2379'];
const spec: v1.BackupScheduleSpec = {
  schedule: '0 2 * * *',
  source: { type: 'Etcd', etcd: { endpoints } },
  destination: { persistentVolumeClaim: { claimName: 'b' } },
};
const chart = new Chart(new App(), 'c');
const gfs = new BackupSchedule(chart, 'gfs', { spec: { ...spec, source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] as const } } } });
const job: CronJob = gfs.toCronJob();
export const image: string | undefined = job.spec?.jobTemplate.spec?.template.spec?.containers[0]?.image;
export const type: 'Etcd' | 'PersistentVolumeClaim' = gfs.toBackupSchedule().spec.source.type;
new BackupSchedule(chart, 'old', {
  apiVersion: GROUP_VERSION,
  spec: { schedule: '0 3 * * *', source: { persistentVolumeClaim: { claimName: 'a' } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepLast: 7 } },
});
// @ts-expect-error in v1, the default, a source names its type.
new BackupSchedule(chart, 'untyped', { spec: { ...spec, source: { etcd: { endpoints } } } });
`;
