/**
 * The Dockerfile builds the image `npm run image` builds: the same entrypoint, user, working directory,
 * environment, ports and labels (scripts/image/image-spec.ts is their one source), and a build stage
 * that has every file its commands load before it runs them (the bug of issue 43: `npm ci` ran the
 * `prepare` script before scripts/ was copied, ERR_MODULE_NOT_FOUND). No daemon runs here, so the
 * build stage is checked against what esbuild says the build script and the bundle read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { bundleController } from '../../scripts/bundle.ts';
import { IMAGE_LOCK_PATH } from '../../scripts/image/image-lock.ts';
import { IMAGE_ENTRYPOINT, IMAGE_ENV, IMAGE_PORTS, IMAGE_USER, IMAGE_WORKDIR, imageLabels } from '../../scripts/image/image-spec.ts';
import { dockerfileStages, keyValues, only, type Instruction } from './dockerfile.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const [buildStage = [], finalStage = []] = dockerfileStages(join(ROOT, 'Dockerfile'));

/** Paths (relative to the repository) that COPY instructions before `index` bring into the build stage. */
function copiedBefore(stage: readonly Instruction[], index: number): string[] {
  return stage
    .slice(0, index)
    .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
    .flatMap((i) => i.args.split(' ').slice(0, -1))
    .map((p) => p.replace(/^\.\//, '').replace(/\/$/, ''));
}

/** Repository files esbuild reads for `entry` (and, for the bundle, what the image's bundle reads). */
async function inputsOf(entry: string): Promise<string[]> {
  const result = await build({ absWorkingDir: ROOT, entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, metafile: true, logLevel: 'silent' });
  return Object.keys(result.metafile.inputs);
}

describe('the Dockerfile', () => {
  it('runs the entrypoint of the image spec', () => {
    expect(JSON.parse(only(finalStage, 'ENTRYPOINT'))).toEqual(IMAGE_ENTRYPOINT);
  });

  it('sets the user, working directory, environment and ports of the image spec', () => {
    expect(only(finalStage, 'USER')).toBe(IMAGE_USER);
    expect(only(finalStage, 'WORKDIR')).toBe(IMAGE_WORKDIR);
    expect(Object.entries(keyValues(only(finalStage, 'ENV'))).map(([k, v]) => `${k}=${v}`)).toEqual(IMAGE_ENV);
    expect(only(finalStage, 'EXPOSE').split(' ').map(Number)).toEqual(IMAGE_PORTS);
  });

  it('labels the image as the builder does, the commit and its time from build arguments', () => {
    const labels = keyValues(only(finalStage, 'LABEL'));
    expect(labels).toEqual(imageLabels({ revision: '$REVISION', created: '$CREATED' }));
    const args = finalStage.filter((i) => i.keyword === 'ARG').map((i) => i.args);
    expect(args).toEqual(expect.arrayContaining(['REVISION', 'CREATED']));
  });

  it('puts only the built file tree on scratch: no base image brings a shell or a package manager', () => {
    expect(only(finalStage, 'FROM')).toBe('scratch');
    expect(finalStage.filter((i) => i.keyword === 'COPY').map((i) => i.args)).toEqual(['--from=build /rootfs/ /']);
    expect(finalStage.some((i) => i.keyword === 'RUN')).toBe(false);
  });

  it('runs no package script before the sources it needs are copied', () => {
    const npmCi = buildStage.findIndex((i) => i.keyword === 'RUN' && /\bnpm (ci|install)\b/.test(i.args));
    expect(npmCi).toBeGreaterThan(0);
    // `prepare` (npm runs it on install) builds the npm package with scripts/build-package.ts from src/.
    const copied = copiedBefore(buildStage, npmCi);
    if (!(copied.includes('scripts') && copied.includes('src'))) expect(buildStage[npmCi]!.args).toMatch(/--ignore-scripts/);
  });

  it('copies every file the image build reads before it runs it', async () => {
    const run = buildStage.findIndex((i) => i.keyword === 'RUN' && /npm run image\b/.test(i.args));
    expect(run).toBeGreaterThan(0);
    const copied = copiedBefore(buildStage, run);
    const dir = mkdtempSync(join(tmpdir(), 'bks-dockerfile-'));
    try {
      const bundle = await bundleController({ outfile: join(dir, 'controller.mjs'), metafile: true });
      const needed = [
        ...(await inputsOf('scripts/image/build-image.ts')),
        ...Object.keys(bundle.metafile!.inputs),
        relative(ROOT, IMAGE_LOCK_PATH),
        'package.json',
        'package-lock.json',
        'tsconfig.json',
      ].filter((p) => !p.startsWith('node_modules/'));
      const missing = [...new Set(needed)].filter((p) => !copied.some((c) => p === c || p.startsWith(`${c}/`)));
      expect(missing).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
