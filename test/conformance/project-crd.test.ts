/**
 * The project's own CRD and manifests from dist/ (written by `npm run synth`): the CRD is accepted and
 * served, the example BackupSchedule passes strict validation, the printer columns appear, an invalid
 * BackupSchedule is a 422 naming the field, and — on the test server only, since it installs
 * cluster-wide objects — `kubectl create` of every dist/ manifest, then of dist/examples/, succeeds.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { eventually, isRealCluster, must, useCluster, type Doc } from './harness.ts';

const cluster = useCluster();
const distDir = join(import.meta.dirname, '..', '..', 'dist');
const examplesDir = join(distDir, 'examples');
/** The `.yaml` files directly in `dir`, in name order: what `kubectl create -f <dir>` reads. */
const yamlFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort().map((f) => join(dir, f)) : []);
// The operator in dist/, the example BackupSchedule in dist/examples/ (applied after its CRD exists).
const manifests = [...yamlFiles(distDir), ...yamlFiles(examplesDir)];
const docs = manifests.map((f) => ({ file: f, doc: parse(readFileSync(f, 'utf8')) as Doc }));
const crd = docs.find((d) => d.doc.kind === 'CustomResourceDefinition')?.doc;
const example = docs.find((d) => crd && d.doc.kind === (crd.spec as { names: { kind: string } }).names.kind)?.doc;
const run = promisify(execFile);

interface CrdSpec {
  group: string;
  names: { plural: string; kind: string };
  versions: Array<{ name: string; storage: boolean; additionalPrinterColumns?: Array<{ name: string; priority?: number }> }>;
}

describe('project CRD from dist/', () => {
  it('finds the CRD in dist/ and the example in dist/examples/ (both committed)', () => {
    expect(crd).toBeDefined();
    expect(example).toBeDefined();
  });

  const spec = (crd?.spec ?? {}) as CrdSpec;
  const version = spec.versions?.find((v) => v.storage)?.name ?? '';
  const path = (ns: string, name?: string): string => `/apis/${spec.group}/${version}/namespaces/${ns}/${spec.names.plural}${name ? `/${name}` : ''}`;
  let createdCrd = false;

  beforeAll(async () => {
    const { api } = cluster();
    const res = await api.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    // On a real cluster the CRD may already be installed: reuse it and leave it in place.
    if (res.status !== 409) must(res, 201);
    createdCrd = res.status === 201;
    await eventually(async () => ((await api.get(`/apis/${spec.group}/${version}/${spec.names.plural}`)).status === 200 ? true : undefined), 10_000);
  });
  afterAll(async () => {
    if (createdCrd) await cluster().api.delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd?.metadata.name}`);
  });

  const exampleIn = (ns: string): Doc => ({ ...example!, metadata: { ...example!.metadata, namespace: ns } });

  it('accepts the example with fieldValidation=Strict and keeps its spec', async () => {
    const ns = await cluster().namespace('proj');
    const res = await cluster().api.post(path(ns), exampleIn(ns), { query: { fieldValidation: 'Strict' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.spec).toMatchObject(example!.spec as object);
    expect(res.body.metadata.generation).toBe(1);
  });

  it('prints the CRD printer columns as a Table', async () => {
    const ns = await cluster().namespace('proj');
    must(await cluster().api.post(path(ns), exampleIn(ns)), 201);
    const res = await cluster().api.get<{ kind: string; columnDefinitions: Array<{ name: string; priority: number }>; rows: Array<{ cells: unknown[] }> }>(path(ns), {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(res.body.kind).toBe('Table');
    // Every column, with its priority: kubectl hides priority > 0 unless -o wide.
    const expected = [{ name: 'Name', priority: 0 }, ...(spec.versions.find((v) => v.name === version)?.additionalPrinterColumns ?? []).map((c) => ({ name: c.name, priority: c.priority ?? 0 }))];
    expect(res.body.columnDefinitions.map((c) => ({ name: c.name, priority: c.priority }))).toEqual(expected);
    expect(res.body.rows[0]?.cells[0]).toBe(example!.metadata.name);
  });

  it('rejects a BackupSchedule without spec.schedule with a 422 naming the field', async () => {
    const ns = await cluster().namespace('proj');
    const bad = exampleIn(ns);
    const { schedule: _dropped, ...rest } = bad.spec as Record<string, unknown>;
    const res = await cluster().api.post(path(ns), { ...bad, metadata: { name: 'bad', namespace: ns }, spec: rest });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { name: 'bad', kind: spec.names.kind, causes: expect.arrayContaining([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.schedule' }]) } });
  });

  // Issue 13: the CRD refuses what kube's own checks refuse later (one host per endpoint URL, tz name
  // parts of at most 14 characters, no negative quantity, a schedule of five fields or a descriptor) and
  // admits what they accept ('@every', blank-padded fields, quantities of any magnitude).
  const variant = (ns: string, name: string, spec: Record<string, unknown>): Doc => ({ ...exampleIn(ns), metadata: { name, namespace: ns }, spec: { ...(example!.spec as object), ...spec } });
  // The example's own source with other endpoints: a v1 example keeps its `type: Etcd`.
  const etcd = (endpoints: string[]) => ({ source: { ...((example!.spec as { source: object }).source), etcd: { endpoints, tlsSecretName: 'etcd-client-tls' } } });

  it.each<[string, Record<string, unknown>, string]>([
    ['endpoints smuggled in one URL with commas', etcd(['https://a:2379,http://b:2379']), 'spec.source.etcd.endpoints[0]'],
    ['a time zone name part over 14 characters', { timeZone: 'America/Argentina_Buenos_Aires' }, 'spec.timeZone'],
    ['a negative memory limit', { resources: { limits: { memory: '-1Gi' } } }, 'spec.resources.limits.memory'],
    ['a quantity with a fractional exponent', { resources: { requests: { cpu: '1e1.5' } } }, 'spec.resources.requests.cpu'],
    ['a schedule that is no cron at all', { schedule: 'every day' }, 'spec.schedule'],
    ['a six-field schedule', { schedule: '0 0 2 * * *' }, 'spec.schedule'],
  ])('rejects %s with a 422 naming the field', async (_name, spec, field) => {
    const ns = await cluster().namespace('proj');
    const res = await cluster().api.post(path(ns), variant(ns, 'bad', spec));
    expect(res.status, res.text).toBe(422);
    // 1.20 names an array item's error at the array (`endpoints`, not `endpoints[0]`), as elsewhere in
    // the suite (validation.test.ts): either form is accepted.
    const fields = (res.body.details as { causes: Array<{ field: string }> }).causes.map((c) => c.field);
    expect(fields.some((f) => f === field || f === field.replace(/\[\d+\]/g, '')), JSON.stringify(fields)).toBe(true);
  });

  it.each<[string, Record<string, unknown>]>([
    ['@every', { schedule: '@every 1h30m' }],
    ['a blank-padded schedule', { schedule: ' 0 2 * * * ' }],
    ['a backward-link time zone', { timeZone: 'US/Pacific' }],
    ['a quantity of any magnitude', { resources: { requests: { memory: '1e100' } } }],
    ['IPv4 and IPv6 endpoints', etcd(['https://10.0.0.1:2379', 'https://[fd00::1]:2379'])],
  ])('admits %s, which the CronJob API accepts too', async (_name, spec) => {
    const ns = await cluster().namespace('proj');
    const res = await cluster().api.post(path(ns), variant(ns, 'ok', spec));
    expect(res.status, res.text).toBe(201);
  });

  describe.skipIf(isRealCluster)('with kubectl (test server only: installs cluster-wide objects)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-dist-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const kubectl = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
      try {
        const { stdout, stderr } = await run('kubectl', ['--kubeconfig', cluster().kubeconfigPath, '--cache-dir', join(dir, 'cache'), ...args], { timeout: 30_000 });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
      }
    };

    it('creates every dist/ manifest but the CRD already installed, then dist/examples/, and lists them with printer columns', async () => {
      // File name order is apply order (Namespace first); the example needs the CRD, so it is a second call.
      const operatorFiles = yamlFiles(distDir).filter((f) => docs.find((d) => d.file === f)?.doc.kind !== 'CustomResourceDefinition');
      const res = await kubectl('create', ...operatorFiles.flatMap((f) => ['-f', f]));
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      const examples = await kubectl('create', '-f', examplesDir);
      expect(examples.stderr).toBe('');
      expect(examples.code).toBe(0);
      const printerColumns = spec.versions.find((v) => v.name === version)?.additionalPrinterColumns ?? [];
      const got = await kubectl('get', spec.names.plural, '-A');
      expect(got.code, got.stderr).toBe(0);
      const [header, row] = got.stdout.trim().split('\n');
      const columns = printerColumns.filter((c) => (c.priority ?? 0) === 0).map((c) => c.name.toUpperCase());
      expect(header?.split(/\s{2,}/)).toEqual(['NAMESPACE', 'NAME', ...columns]);
      expect(row).toContain(example!.metadata.name);
      // -o wide adds the priority > 0 columns in their place.
      const wide = await kubectl('get', spec.names.plural, '-A', '-o', 'wide');
      expect(wide.code, wide.stderr).toBe(0);
      expect(wide.stdout.split('\n')[0]?.split(/\s{2,}/)).toEqual(['NAMESPACE', 'NAME', ...printerColumns.map((c) => c.name.toUpperCase())]);
      expect(printerColumns.length).toBeGreaterThan(columns.length);
    });

    it('prints a 422 naming the field for an invalid BackupSchedule', async () => {
      const ns = await cluster().namespace('proj');
      const bad = exampleIn(ns);
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, stringify({ ...bad, metadata: { name: 'bad-bks', namespace: ns }, spec: { ...(bad.spec as object), schedule: 'every day' } }));
      const res = await kubectl('create', '-f', file);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain(`The ${spec.names.kind} "bad-bks" is invalid: spec.schedule`);
    });
  });
});
