/**
 * The yardstick of `npm run bench:synth`: the smallest useful cdk8s app (three objects in one chart,
 * written as YAML), run the same way as `npm run synth` (tsx). Its wall time is what loading Node,
 * tsx, cdk8s and constructs costs; the operator's synth should cost little more.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiObject, App, Chart } from 'cdk8s';

const outdir = process.env['CDK8S_OUTDIR'] ?? 'dist';
const app = new App({ outdir });
const chart = new Chart(app, 'three', { disableResourceNameHashes: true });
new ApiObject(chart, 'ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'three' } });
new ApiObject(chart, 'sa', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'three', namespace: 'three' } });
new ApiObject(chart, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'three', namespace: 'three' }, data: { key: 'value' } });
mkdirSync(outdir, { recursive: true });
writeFileSync(join(outdir, 'three.yaml'), app.synthYaml());
