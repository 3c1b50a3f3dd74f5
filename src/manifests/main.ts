/**
 * The cdk8s app (`npm run synth`, `npx cdk8s synth`): writes the operator's manifests into dist/
 * (or `$CDK8S_OUTDIR`, which cdk8s-cli sets).
 */
import { synthesize } from './synthesize.ts';

const outdir = process.env['CDK8S_OUTDIR'] ?? 'dist';
const files = synthesize(outdir);
console.log(`synthesized ${files.length} objects into ${outdir}/`);
