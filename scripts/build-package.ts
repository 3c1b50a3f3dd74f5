/**
 * Builds what `npm pack` ships (run by `prepack`), under build/package/ next to the controller bundle:
 * - the library (`exports`): src/constructs/ and what it imports, compiled by tsc (tsconfig.package.json)
 *   to ES modules plus `.d.ts`, so a consumer needs neither tsx nor TypeScript;
 * - the CLI (`bin`): src/cli/main.ts bundled by esbuild with its dependencies into one file,
 *   build/package/cli.mjs, so `npx backupschedule` starts fast and installs nothing more.
 *
 *   npm run build:package
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { GENERATED_V1_VALIDATOR_PATH, GENERATED_VALIDATOR_PATH } from '../src/api/schema-validator.ts';
import { ESM_REQUIRE_BANNER } from './bundle.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where the package's compiled output goes (ignored by git, like the controller bundle). */
export const PACKAGE_OUT = fileURLToPath(new URL('../build/package/', import.meta.url));
/** The CLI bundle, the package's `bin`. */
export const CLI_BUNDLE = `${PACKAGE_OUT}cli.mjs`;

/** Lowest Node the package supports (`engines` in package.json); the output is compiled for it. */
const NODE_TARGET = 'node20';

/** Compiles the library and bundles the CLI into build/package/. */
export async function buildPackage(): Promise<void> {
  rmSync(PACKAGE_OUT, { recursive: true, force: true });
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.package.json'], { cwd: ROOT, stdio: 'inherit' });
  // The precompiled schema validators are JavaScript already (with a .d.ts), which tsc does not copy;
  // validate.ts imports both (v1alpha1's and v1's).
  for (const path of [GENERATED_VALIDATOR_PATH, GENERATED_V1_VALIDATOR_PATH]) copyFileSync(`${ROOT}${path}`, `${PACKAGE_OUT}${path}`);
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cli/main.ts'],
    outfile: CLI_BUNDLE,
    bundle: true,
    platform: 'node',
    target: NODE_TARGET,
    format: 'esm',
    // Whitespace and syntax only: smaller and faster to load, names kept for readable stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
    // The entry's shebang is kept above the banner.
    banner: { js: ESM_REQUIRE_BANNER },
  });
  chmodSync(CLI_BUNDLE, 0o755);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  await buildPackage();
  console.log(`built ${PACKAGE_OUT} in ${Math.round(performance.now() - started)} ms`);
}
