/**
 * The cdk8s app (`npm run synth`, `npx cdk8s synth`): writes the operator's manifests into dist/
 * (or `$CDK8S_OUTDIR`, which cdk8s-cli sets) and the example BackupSchedule into dist/examples/.
 * Edit CHART_PROPS to choose the namespace, image, replicas, watched namespaces or Lease name, then
 * run `npm run synth`.
 */
import { join } from 'node:path';
import type { OperatorChartProps } from './operator-chart.ts';
import { synthesize } from './synthesize.ts';

/** The props dist/ is synthesized with (defaults: see OperatorChartProps). */
export const CHART_PROPS: OperatorChartProps = {};

const outdir = process.env['CDK8S_OUTDIR'] ?? 'dist';
for (const { dir, files } of synthesize(outdir, CHART_PROPS)) {
  console.log(`synthesized ${files.length} objects into ${join(outdir, dir)}/`);
}
