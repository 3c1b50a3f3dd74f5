/**
 * What the image's backup runner loads before it knows whether it encrypts: the chunks its entry
 * (src/backup/main.ts) reaches by static imports. age-encryption and its @noble dependencies belong
 * behind the dynamic imports of an encrypting run: loaded by a plain etcd snapshot they made V8 run
 * 9-14 full GCs during a 211 MB stream instead of 8-9 (src/backup/snapshot-pipeline.ts).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRunnerBundle } from './runner-process.ts';

/** The chunk files `file` reaches through static (`from "./x.mjs"`) and side-effect (`import "./x.mjs"`) imports, itself included. */
function staticallyReached(chunks: string, file: string, reached = new Set<string>()): Set<string> {
  if (reached.has(file)) return reached;
  reached.add(file);
  for (const match of readFileSync(join(chunks, file), 'utf8').matchAll(/(?:\bfrom|^import)\s*["']\.\/([^"']+\.mjs)["']/gm)) staticallyReached(chunks, match[1] ?? '', reached);
  return reached;
}

describe('the backup runner bundle', () => {
  let bundle: string;
  let chunks: string;
  beforeAll(async () => {
    bundle = await buildRunnerBundle();
    chunks = join(dirname(bundle), 'chunks');
  }, 120_000);
  afterAll(() => rmSync(dirname(bundle), { recursive: true, force: true }));

  // esbuild marks each bundled file with a `// <path>/node_modules/<package>/…` comment (the bundle is not minified).
  const hasPackage = (file: string, name: string): boolean => new RegExp(`^// (?:.*/)?node_modules/${name}/`, 'm').test(readFileSync(join(chunks, file), 'utf8'));

  it("reaches neither age-encryption nor @noble's code by static imports; they are in the bundle, behind dynamic ones", () => {
    const runnerMain = readdirSync(chunks).find((file) => file.startsWith('main-') && readFileSync(join(chunks, file), 'utf8').includes('scavengeEvery'));
    expect(runnerMain).toBeDefined();
    const reached = [...staticallyReached(chunks, runnerMain ?? '')];
    // The control: the walk follows imports (the runner's gRPC client is a static import of every run).
    expect(reached.some((file) => hasPackage(file, '@grpc/grpc-js'))).toBe(true);
    for (const name of ['age-encryption', '@noble/post-quantum', '@noble/curves', '@noble/ciphers']) {
      expect(reached.filter((file) => hasPackage(file, name)), name).toEqual([]);
      expect(readdirSync(chunks).some((file) => hasPackage(file, name)), name).toBe(true);
    }
  });
});
