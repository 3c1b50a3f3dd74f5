import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ts from 'typescript-5';
import { parseAllDocuments } from 'yaml';
import { backupScheduleSchema, type SchemaNode } from '../../src/api/schema.ts';
import { backupScheduleV1Schema } from '../../src/api/schema-v1.ts';
import { buildPackage, reachableDeclarations, TYPES_ENTRY } from '../../scripts/build-package.ts';
import { SYNTH_FILES, TYPED_CONSUMER, writeCommonJsApp, writeTemplateApp, writeVitestApp } from './consumer-apps.ts';
import { writeScratchProject } from './scratch-app.ts';

/**
 * The packed package in the apps users have (issue 33): the `cdk8s init typescript-app` template with
 * jest + ts-jest and `ts-node main.ts`, an ES-module app with vitest, a CommonJS JavaScript app, and
 * TypeScript in every module mode, none with kubernetes-models installed and none with any extra
 * configuration. One scratch project installs everything offline (its lockfile is written from this
 * repository's, see scratch-app.ts); each app is a directory inside it, resolving packages upwards.
 * The package is built into a scratch copy of the package root and packed there (pack-install.test.ts
 * packs here through `prepare`; two builds into one build/package/ at once would race).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What the apps install beside the tarball, at this repository's locked versions. */
const TOOLS = ['cdk8s', 'constructs', 'jest', 'ts-jest', '@types/jest', 'ts-node', 'typescript', 'vitest', '@types/node'];

let scratch: string;
let stage: string;
let project: string;
let tarball: string;
let packReport: { files: { path: string }[] };

/** The environment of an app's own processes: nothing of this vitest run (its workers' variables) leaks in. */
function appEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1', FORCE_COLOR: '0' };
  for (const [key, value] of Object.entries(process.env)) if (!/^(VITEST|NODE_OPTIONS|NODE_ENV|TEST|CI$|JEST)/.test(key)) env[key] = value;
  return env;
}
const run = (cwd: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = appEnv()): SpawnSyncReturns<string> =>
  spawnSync(command, args, { cwd, encoding: 'utf8', env, timeout: 120_000 });
const output = (r: SpawnSyncReturns<string>): string => `${r.stdout}\n${r.stderr}`;

/**
 * The machine's own `node` (the first on PATH outside this repository: `npm run` puts the repository's
 * Node 24 first), which is what `npx ts-node main.ts` runs under in a user's app: Node 20 here.
 */
function machineNode(): string {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    if (!dir.startsWith(ROOT) && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return process.execPath;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'consumer-apps-'));
  project = join(scratch, 'project');
  stage = join(scratch, 'package');
  mkdirSync(project);
  // What `files` may take, and package.json itself: the build output comes from buildPackage.
  for (const path of ['package.json', 'README.md', 'dist/schemas']) cpSync(join(ROOT, path), join(stage, path), { recursive: true });
  await buildPackage(join(stage, 'build/package/'));
  const pack = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], { cwd: stage, encoding: 'utf8' });
  expect(pack.status, pack.stderr).toBe(0);
  [packReport] = JSON.parse(pack.stdout) as [{ files: { path: string }[] }];
  tarball = join(scratch, readdirSync(scratch).find((f) => f.endsWith('.tgz')) ?? '');
  // typescript: 5.9 (this repository's `typescript-5`), the template's; ts-jest and ts-node need its compiler API.
  writeScratchProject(project, ROOT, tarball, TOOLS, { typescript: 'typescript-5' });
  const install = run(project, 'npm', ['ci', '--offline', '--no-audit', '--no-fund']);
  expect(install.status, install.stderr).toBe(0);
}, 240_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the packed package in users\' apps, as they come', () => {
  it('is installed without kubernetes-models (an optional peer dependency)', () => {
    expect(existsSync(join(project, 'node_modules/kubernetes-models'))).toBe(false);
    expect(JSON.parse(readFileSync(join(project, 'node_modules/typescript/package.json'), 'utf8'))).toMatchObject({ version: expect.stringMatching(/^5\./) });
  });

  it('cdk8s init typescript-app: tsc --build, jest + ts-jest snapshot tests (written, then matched with --ci), ts-node main.ts', () => {
    const app = join(project, 'template');
    writeTemplateApp(app, ROOT);
    const compile = run(app, 'npm', ['run', 'compile']);
    expect(compile.status, output(compile)).toBe(0);
    for (const args of [['test'], ['test', '--', '--ci']]) {
      const jest = run(app, 'npm', args);
      expect(jest.status, output(jest)).toBe(0);
    }
    const snapshot = readFileSync(join(app, '__snapshots__/main.test.ts.snap'), 'utf8');
    expect(snapshot).toContain('"apiVersion": "kubelings.dev/v1"');
    expect(snapshot).toContain('"apiVersion": "kubelings.dev/v1alpha1"');
    expect(snapshot).toContain('"--keep-daily=7"');
    // cdk8s.yaml's app: `npx ts-node main.ts`, on the machine's Node.
    rmSync(join(app, 'dist'), { recursive: true, force: true });
    const node = machineNode();
    const tsNode = run(app, node, [join(project, 'node_modules/ts-node/dist/bin.js'), 'main.ts']);
    expect(tsNode.status, `${node}: ${output(tsNode)}`).toBe(0);
    expect(readdirSync(join(app, 'dist')).sort()).toEqual(SYNTH_FILES);
    const teamA = parseAllDocuments(readFileSync(join(app, 'dist/team-a.k8s.yaml'), 'utf8')).map((d) => d.toJS() as { apiVersion: string; metadata: { namespace: string } });
    expect(teamA.map((o) => [o.apiVersion, o.metadata.namespace])).toEqual([['kubelings.dev/v1', 'team-a'], ['kubelings.dev/v1', 'team-a']]);
    // tsc, two jest runs and ts-node each type-check the app: ~85 s on a loaded 2-core machine.
  }, 300_000);

  it('an ES-module app: vitest with no config, the same library whether imported or required', () => {
    const app = join(project, 'esm-vitest');
    writeVitestApp(app);
    const vitest = run(app, process.execPath, [join(project, 'node_modules/vitest/vitest.mjs'), 'run']);
    expect(vitest.status, output(vitest)).toBe(0);
    expect(output(vitest)).toContain('2 passed');
    expect(readFileSync(join(app, '__snapshots__/schedules.test.ts.snap'), 'utf8')).toContain('"kubelings.dev/v1alpha1"');
  });

  it('a CommonJS JavaScript app: require() synthesizes, and import() of the package gives the same class', () => {
    const app = join(project, 'cjs-js');
    writeCommonJsApp(app);
    for (const node of new Set([machineNode(), process.execPath])) {
      rmSync(join(app, 'dist'), { recursive: true, force: true });
      const synth = run(app, node, ['main.js']);
      expect(synth.status, `${node}: ${output(synth)}`).toBe(0);
      expect(JSON.parse(synth.stdout)).toEqual({ sameClass: true });
      expect(readdirSync(join(app, 'dist')).sort()).toEqual(SYNTH_FILES);
    }
    expect(readFileSync(join(app, 'dist/team-b.k8s.yaml'), 'utf8')).toBe(readFileSync(join(project, 'template/dist/team-b.k8s.yaml'), 'utf8'));
  });

  /** Module settings a consumer's tsconfig may have, each with the package type it is used in. */
  const MODES: [string, 'commonjs' | 'module', Record<string, string>][] = [
    ['commonjs (the template\'s; node10 resolution)', 'commonjs', { module: 'commonjs' }],
    ['node16 in a CommonJS package', 'commonjs', { module: 'node16' }],
    ['nodenext in a CommonJS package', 'commonjs', { module: 'nodenext' }],
    ['node16 in an ES-module package', 'module', { module: 'node16' }],
    ['nodenext in an ES-module package', 'module', { module: 'nodenext' }],
    ['bundler', 'module', { module: 'esnext', moduleResolution: 'bundler' }],
  ];
  it.each(MODES)('type-checks a consumer with TypeScript 5.9, module %s, strict, no skipLibCheck', (name, type, options) => {
    const app = join(project, `types-${name.replace(/\W+/g, '-')}`);
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ private: true, type }));
    writeFileSync(join(app, 'consumer.ts'), TYPED_CONSUMER);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...options, strict: true, skipLibCheck: false, noEmit: true, target: 'es2022', lib: ['es2022'], types: [] }, files: ['consumer.ts'] }));
    const tsc = run(app, process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(tsc.status, output(tsc)).toBe(0);
  });

  it('declares every spec field with JSDoc and its bounds as tags; no generated names, no optional dependency', () => {
    const types = join(project, 'node_modules/backupschedule-operator/build/package/types/esm/');
    const entry = `${types}${TYPES_ENTRY}`;
    const shipped = [...reachableDeclarations(entry, (f) => readFileSync(f, 'utf8'))].map((f) => readFileSync(f, 'utf8'));
    // Packages the declarations import (statements, not the examples in comments): the peers every app has.
    const imported = shipped.flatMap((text) => [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+['"]([^.'"][^'"]*)['"]/gm), ...text.matchAll(/\bimport\(['"]([^.'"][^'"]*)['"]\)/g)].map((m) => m[1]));
    expect([...new Set(imported)].sort()).toEqual(['cdk8s', 'constructs']);
    // json-schema-to-typescript numbers a second type of one title (`ResourceList1`).
    expect(shipped.flatMap((text) => [...text.matchAll(/^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|class)\s+(\w+)/gm)].map((m) => m[1] ?? '')).filter((name) => /[A-Za-z]\d+$/.test(name))).toEqual([]);

    const program = ts.createProgram([entry], { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
    const checker = program.getTypeChecker();
    const exportsOf = (symbol: ts.Symbol): ts.Symbol[] => checker.getExportsOfModule(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
    const root = checker.getSymbolAtLocation(program.getSourceFile(entry) as ts.SourceFile) as ts.Symbol;
    const typeNamed = (symbols: ts.Symbol[], name: string): ts.Type => {
      const symbol = symbols.find((s) => s.name === name) as ts.Symbol;
      return checker.getDeclaredTypeOfSymbol(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
    };
    const problems: string[] = [];
    const walk = (type: ts.Type, node: SchemaNode, path: string): void => {
      for (const [name, child] of Object.entries((node['properties'] as Record<string, SchemaNode> | undefined) ?? {})) {
        const property = type.getProperty(name);
        if (property === undefined) {
          problems.push(`${path}.${name}: not declared`);
          continue;
        }
        if (ts.displayPartsToString(property.getDocumentationComment(checker)) === '') problems.push(`${path}.${name}: no JSDoc`);
        const tags = property.getJsDocTags(checker).map((tag) => `@${tag.name} ${ts.displayPartsToString(tag.text)}`);
        for (const bound of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']) {
          if (child[bound] !== undefined && !tags.includes(`@${bound} ${String(child[bound])}`)) problems.push(`${path}.${name}: no @${bound} ${String(child[bound])}`);
        }
        const propertyType = checker.getNonNullableType(checker.getTypeOfSymbol(property));
        if (child['type'] === 'array' && !checker.typeToString(propertyType).startsWith('readonly ')) problems.push(`${path}.${name}: ${checker.typeToString(propertyType)} is not readonly`);
        if (child['properties'] !== undefined) walk(propertyType, child, `${path}.${name}`);
      }
    };
    const exported = exportsOf(root);
    walk(typeNamed(exported, 'BackupScheduleSpec'), (backupScheduleSchema['properties'] as Record<string, SchemaNode>)['spec'] ?? {}, 'v1alpha1 spec');
    walk(typeNamed(exportsOf(exported.find((s) => s.name === 'v1') as ts.Symbol), 'BackupScheduleSpec'), (backupScheduleV1Schema['properties'] as Record<string, SchemaNode>)['spec'] ?? {}, 'v1 spec');
    expect(problems).toEqual([]);
  });

  it('packs exactly the library, its declarations, the CLI and the schemas; npm publish --dry-run is clean', () => {
    const files = packReport.files.map((f) => f.path).sort();
    const declarations = files.filter((f) => f.startsWith('build/package/types/'));
    const esm = declarations.filter((f) => f.startsWith('build/package/types/esm/')).map((f) => f.slice('build/package/types/esm/'.length));
    const cjs = declarations.filter((f) => f.startsWith('build/package/types/cjs/')).map((f) => f.slice('build/package/types/cjs/'.length));
    expect(files.filter((f) => !declarations.includes(f))).toEqual([
      'README.md',
      'build/package/cli.mjs',
      'build/package/lib/index.cjs',
      'build/package/lib/index.mjs',
      'dist/schemas/backupschedule_v1.json',
      'dist/schemas/backupschedule_v1alpha1.json',
      'package.json',
    ]);
    expect(cjs).toEqual(esm);
    // Each declaration file is one of a source module's, and one the entry's types need (none dead).
    const dts = esm.filter((f) => f !== 'package.json');
    expect(esm).toContain('package.json');
    for (const file of dts) expect(existsSync(join(ROOT, file.replace(/\.d\.ts$/, '.ts'))), file).toBe(true);
    const installed = join(project, 'node_modules/backupschedule-operator/build/package/types/esm/');
    expect([...reachableDeclarations(`${installed}${TYPES_ENTRY}`, (f) => readFileSync(f, 'utf8'))].map((f) => f.slice(installed.length)).sort()).toEqual(dts);
    const publish = spawnSync('npm', ['publish', '--dry-run', '--ignore-scripts'], { cwd: stage, encoding: 'utf8' });
    expect(publish.status, publish.stderr).toBe(0);
    // The one warning a dry run without an npm login gives; no auto-corrected or missing metadata.
    expect(publish.stderr.split('\n').filter((l) => l.startsWith('npm warn') && !l.includes('requires you to be logged in'))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const field of ['repository', 'license', 'homepage', 'bugs', 'keywords', 'description']) expect(pkg[field], field).toBeDefined();
  });
});
