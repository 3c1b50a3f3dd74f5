/**
 * Bundles the image's entry point (src/controller/main.ts) into ES modules with esbuild: what the image
 * runs (`Dockerfile`) and what the e2e tests and the demo start, so they test the very files the image
 * copies. Output goes to build/ (dist/ is the synth's YAML): the entry file plus `chunks/`.
 *
 * Code splitting: the entry point dynamically imports either the controller or the backup runner
 * (`backup …`), and each lives in its own chunks, so a process parses and keeps only the code it runs:
 * the runner never loads the controller's 1.5 MB and the controller never loads gRPC and tar
 * (measured: `backup --help` peaks at 61 MiB RSS with splitting, 71 MiB from one file).
 *
 *   npm run bundle                      # → build/controller.mjs
 *   npm run bundle -- --outfile <path>
 */
import { build, type BuildResult, type Plugin } from 'esbuild';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where `npm run bundle` writes the controller bundle. */
export const DEFAULT_BUNDLE = fileURLToPath(new URL('../build/controller.mjs', import.meta.url));

/**
 * The banner of every ES-module bundle here: CommonJS dependencies (pino, prom-client, ajv) call
 * require() for Node built-ins, and an ES module has none. Aliased because bundled modules import
 * `createRequire` themselves (src/runtime/node-http.ts), and esbuild hoists their import beside it.
 */
export const ESM_REQUIRE_BANNER = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * Dependencies' own imports of `http`/`node:http` (the AWS SDK's, for http:// endpoints) resolve to
 * src/runtime/node-http-module.ts, which loads it with `require`: an ES import of node:http loads
 * Node's bundled undici (src/runtime/node-http.ts says why), and test/controller/bundle-modules.test.ts
 * allows none in any chunk.
 */
const NODE_HTTP_OF_DEPENDENCIES: Plugin = {
  name: 'node-http-of-dependencies',
  setup(build) {
    build.onResolve({ filter: /^(node:)?http$/ }, (args) => (args.importer.includes('/node_modules/') ? { path: join(ROOT, 'src/runtime/node-http-module.ts') } : undefined));
  },
};

/** Options for {@link bundleController}. */
export interface BundleOptions {
  /** Entry file; the chunks go to `chunks/` next to it. @default build/controller.mjs */
  readonly outfile?: string;
  /** Minify identifiers and whitespace. @default false (readable stack traces in logs) */
  readonly minify?: boolean;
  /** Return esbuild's metafile (what each output holds, from which inputs: the image's SBOM reads it). @default false */
  readonly metafile?: boolean;
}

/** Builds the controller bundle; resolves with esbuild's result (warnings included). */
export async function bundleController(options: BundleOptions = {}): Promise<BuildResult> {
  const outfile = options.outfile ?? DEFAULT_BUNDLE;
  // Chunk names carry content hashes: clear old ones so the directory holds exactly one build. Only
  // chunks this script wrote (named `chunk-*.mjs` or `<entry>-*.mjs`): the folder may not be ours.
  const chunks = join(dirname(outfile), 'chunks');
  if (existsSync(chunks)) {
    for (const file of readdirSync(chunks)) if (/^[\w-]+-[A-Z0-9]{8}\.mjs$/.test(file)) rmSync(join(chunks, file), { force: true });
  }
  return build({
    absWorkingDir: ROOT,
    entryPoints: { [basename(outfile, '.mjs')]: 'src/controller/main.ts' },
    outdir: dirname(outfile),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: options.minify ?? false,
    metafile: options.metafile ?? false,
    // No source map: Node's --enable-source-maps costs ~40 MiB of RSS for this bundle; unminified
    // output keeps stack traces readable (function names and module comments survive).
    sourcemap: false,
    legalComments: 'none',
    // Lets the entry point refuse what the bundle cannot do (--log-format=text: see `external`).
    define: { 'process.env.BKS_BUNDLED': '"1"' },
    logLevel: 'warning',
    banner: { js: ESM_REQUIRE_BANNER },
    plugins: [NODE_HTTP_OF_DEPENDENCIES],
    external: [
      // Loaded only for --log-format=text, through a worker thread that resolves it by name at run time.
      'pino-pretty',
      // Loaded only for kubeconfig users with `exec`/`auth-provider` (src/kube/kube-config.ts), never
      // in-cluster; bundling it would add 17 MB of source to every start. Run `npm run controller` from a
      // checkout for such kubeconfigs.
      '@kubernetes/client-node',
    ],
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { outfile: { type: 'string' }, minify: { type: 'boolean' } } });
  const started = performance.now();
  const outfile = values.outfile ?? DEFAULT_BUNDLE;
  await bundleController({ outfile, minify: values.minify ?? false });
  console.log(`bundled ${outfile} in ${Math.round(performance.now() - started)} ms`);
}
