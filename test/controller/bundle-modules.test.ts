import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildBundle } from '../e2e/harness.ts';

const UNDICI = 'NativeModule internal/deps/undici/undici';

/** The built-in modules a fresh Node process has loaded once it has imported `specifier` as an ES module. */
function modulesLoadedBy(specifier: string): string[] {
  const script = `await import(${JSON.stringify(specifier)}); process.stdout.write(JSON.stringify(process.moduleLoadList));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
}

describe('the controller bundle', () => {
  it("does not load Node's bundled undici, which an ES import of node:http would (src/runtime/node-http.ts)", async () => {
    // The control: on this Node an ES import of node:http loads undici. Were that fixed, the check
    // below would prove nothing, and src/runtime/node-http.ts could go.
    expect(modulesLoadedBy('node:http')).toContain(UNDICI);
    const chunks = join(dirname(await buildBundle()), 'chunks');
    const operator = readdirSync(chunks).find((file) => file.startsWith('operator-'));
    expect(operator).toBeDefined();
    const loaded = modulesLoadedBy(pathToFileURL(join(chunks, operator ?? '')).href);
    expect(loaded).toContain('NativeModule https');
    expect(loaded).not.toContain(UNDICI);
  });

  it('has no ES import of node:http in any of its files, the entry and the chunks the operator chunk does not reach included', async () => {
    const entry = await buildBundle();
    const chunks = join(dirname(entry), 'chunks');
    const files = [entry, ...readdirSync(chunks).map((file) => join(chunks, file))];
    expect(files.length).toBeGreaterThan(2);
    // Static (`from`), side-effect and dynamic imports alike, spelt `node:http` or `http`; `node:https` is fine.
    const esImportOfHttp = /(?:\bfrom|\bimport)\s*\(?\s*["'](?:node:)?http["']/;
    expect(files.filter((file) => esImportOfHttp.test(readFileSync(file, 'utf8')))).toEqual([]);
  });

  it("loads the AWS SDK only for a command that talks to a bucket: the backup runner's static imports never reach S3Client", async () => {
    const chunks = join(dirname(await buildBundle()), 'chunks');
    // src/backup/main.ts, the runner's entry (the image's entry imports it for `backup`).
    const runnerMain = readdirSync(chunks).find((file) => file.startsWith('main-') && readFileSync(join(chunks, file), 'utf8').includes('scavengeEvery'));
    expect(runnerMain).toBeDefined();
    // Every chunk reached by static (`from "./x.mjs"`) or side-effect (`import "./x.mjs"`) imports.
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const match of readFileSync(join(chunks, file), 'utf8').matchAll(/(?:\bfrom|^import)\s*["']\.\/([^"']+\.mjs)["']/gm)) visit(match[1] ?? '');
    };
    visit(runnerMain ?? '');
    expect(reached.size).toBeGreaterThan(3);
    expect([...reached].filter((file) => readFileSync(join(chunks, file), 'utf8').includes('S3Client'))).toEqual([]);
    // The S3 client is in the bundle, behind the dynamic imports of the object-store commands.
    expect(readdirSync(chunks).some((file) => readFileSync(join(chunks, file), 'utf8').includes('S3Client'))).toBe(true);
  });
});
