import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { App, Chart, Yaml } from 'cdk8s';
import { GROUP_VERSION, KIND, SERVED_GROUP_VERSIONS, type ServedGroupVersion } from '../api/constants.ts';
import { RESTORE_KIND } from '../api/restore-schema.ts';
import { jsonSchemaFile, restoreEditorJsonSchema, RESTORE_JSON_SCHEMA_FILE, toEditorJsonSchema } from '../api/json-schema.ts';
import { ExampleChart } from './example-chart.ts';
import { OperatorChart, type OperatorChartProps } from './operator-chart.ts';
import { SYNC_WAVE_ANNOTATION } from './sync-wave.ts';

/**
 * File name of the kustomization written next to the manifests, in dist/ and dist/examples/.
 *
 * `Kustomization` (no extension) is one of the three names kustomize, Argo CD and Flux recognise
 * (`kustomization.yaml`, `kustomization.yml`, `Kustomization`). It is the only one that does not break
 * `kubectl create|apply -f dist/`: kubectl reads every `.yaml`/`.yml`/`.json` file of a directory and
 * maps every object before creating any, so a `kustomization.yaml` fails the whole command with
 * "no matches for kind Kustomization in version kustomize.config.k8s.io/v1beta1"; files without one of
 * those extensions are skipped when kubectl walks a directory.
 */
export const KUSTOMIZATION_FILE = 'Kustomization';

/** Sub-folder of the example BackupSchedule (and its Namespace). */
export const EXAMPLES_DIR = 'examples';

/** Sub-folder of the BackupSchedule JSON Schemas for editors and CI, one per served version (`backupschedule_v1alpha1.json`, `backupschedule_v1.json`). */
export const SCHEMAS_DIR = 'schemas';

/**
 * Kinds in the order they must be created within one sync wave: what others live in or refer to first.
 * Kinds not listed come after these, by name.
 */
export const KIND_ORDER: readonly string[] = [
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Lease',
  // cert-manager's: an Issuer before the Certificates it signs; both before the Deployment mounting the Secret.
  'Issuer',
  'Certificate',
  'Secret',
  'Service',
  'Deployment',
];

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly annotations?: Record<string, string> };
}

/** One synthesized folder: the manifest file names in apply order (= lexical order). */
export interface SynthesizedDir {
  /** Folder, relative to the synth output. */
  readonly dir: string;
  /** Manifest file names, in apply order; the kustomization lists them in this order. */
  readonly files: readonly string[];
}

/** Sort key of a manifest: Argo CD sync wave, then {@link KIND_ORDER}, then kind and name. */
function compareManifests(a: Manifest, b: Manifest): number {
  const wave = (m: Manifest): number => Number(m.metadata.annotations?.[SYNC_WAVE_ANNOTATION] ?? '0');
  const rank = (m: Manifest): number => {
    const i = KIND_ORDER.indexOf(m.kind);
    return i === -1 ? KIND_ORDER.length : i;
  };
  const text = (m: Manifest): string => `${m.kind}/${m.metadata.name}`;
  return wave(a) - wave(b) || rank(a) - rank(b) || (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0);
}

/**
 * Writes one chart's objects into `dir`, one per file named `<NN>-<kind>-<name>.yaml` with NN the apply
 * position, so that `kubectl create -f <dir>` (which reads a directory in lexical file order) creates a
 * Namespace before what lives in it; then the kustomization listing the same files in the same order.
 * A BackupSchedule's file starts with a modeline pointing at the schema of its own version in `schemaDir`.
 */
function writeChart(chart: Chart, dir: string, schemaDir: string): string[] {
  mkdirSync(dir, { recursive: true });
  // chart.toJson() resolves dependencies and runs every construct's validation, as `app.synth()` does.
  const manifests = (chart.toJson() as Manifest[]).slice().sort(compareManifests);
  const width = Math.max(2, String(manifests.length - 1).length);
  const files = manifests.map((m, i) => `${String(i).padStart(width, '0')}-${m.kind.toLowerCase()}-${m.metadata.name}.yaml`);
  // The yaml-language-server modeline: editors complete and check a BackupSchedule (or Restore) against its version's schema.
  const modeline = (m: Manifest): string => {
    if (m.kind === RESTORE_KIND) return `# yaml-language-server: $schema=${relative(dir, join(schemaDir, RESTORE_JSON_SCHEMA_FILE))}\n`;
    if (m.kind !== KIND) return '';
    const version = (SERVED_GROUP_VERSIONS as readonly string[]).includes(m.apiVersion) ? (m.apiVersion as ServedGroupVersion) : GROUP_VERSION;
    return `# yaml-language-server: $schema=${relative(dir, join(schemaDir, jsonSchemaFile(version)))}\n`;
  };
  manifests.forEach((m, i) => writeFileSync(join(dir, files[i] ?? ''), `${modeline(m)}${Yaml.stringify(m)}`));
  const kustomization = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: files };
  writeFileSync(
    join(dir, KUSTOMIZATION_FILE),
    `# Generated by \`npm run synth\` (src/manifests/synthesize.ts). Do not edit.\n` +
      // cdk8s' own YAML writer: loading the `yaml` package a second time costs synth ~40 ms.
      `# Named \`Kustomization\` (no extension) so that \`kubectl create -f\` of this folder skips it.\n${Yaml.stringify(kustomization)}`,
  );
  return files;
}

/** Removes what an earlier synth wrote into `outdir` (`npm run synth` does not wipe it the way `cdk8s synth` does). */
function clean(outdir: string): void {
  if (!existsSync(outdir)) return;
  rmSync(join(outdir, EXAMPLES_DIR), { recursive: true, force: true });
  rmSync(join(outdir, SCHEMAS_DIR), { recursive: true, force: true });
  for (const file of readdirSync(outdir)) {
    if (file.endsWith('.yaml') || file.endsWith('.yml') || file === KUSTOMIZATION_FILE) rmSync(join(outdir, file));
  }
}

/**
 * Synthesizes the operator into `outdir` and the example BackupSchedule into `outdir/examples/`
 * (unless `props.includeExample` is false). The example lives apart because kubectl maps every object
 * of a `kubectl create|apply -f` before creating any, so a custom resource cannot be created in the
 * same invocation as its CRD ("resource mapping not found … ensure CRDs are installed first"), and
 * `kubectl -f <dir>` without `-R` does not descend into sub-folders. The BackupSchedule JSON Schemas, one
 * per served version, go into `outdir/schemas/` (kubectl never reads .json files there without `-R`). Deterministic: same
 * props, same bytes.
 * @returns the folders written with their manifest file names, in apply order.
 */
export function synthesize(outdir: string, props: OperatorChartProps = {}): SynthesizedDir[] {
  clean(outdir);
  const app = new App({ outdir });
  const operator = new OperatorChart(app, 'backupschedule-operator', props);
  const example = (props.includeExample ?? true) ? new ExampleChart(app, 'examples', { labels: operator.commonLabels }) : undefined;
  const schemaDir = join(outdir, SCHEMAS_DIR);
  mkdirSync(schemaDir, { recursive: true });
  for (const version of SERVED_GROUP_VERSIONS) writeFileSync(join(schemaDir, jsonSchemaFile(version)), `${JSON.stringify(toEditorJsonSchema(version), null, 2)}\n`);
  writeFileSync(join(schemaDir, RESTORE_JSON_SCHEMA_FILE), `${JSON.stringify(restoreEditorJsonSchema(), null, 2)}\n`);
  const out: SynthesizedDir[] = [{ dir: '.', files: writeChart(operator, outdir, schemaDir) }];
  if (example) out.push({ dir: EXAMPLES_DIR, files: writeChart(example, join(outdir, EXAMPLES_DIR), schemaDir) });
  return out;
}
