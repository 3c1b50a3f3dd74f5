import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { API_REFERENCE_PATH, renderApiReference } from '../../src/api/api-reference.ts';
import type { AnyBackupSchedule } from '../../src/api/index.ts';
import { buildCronJob } from '../../src/pure/index.ts';
import { headingAnchors, relativeLinks } from './markdown-links.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
/** The generated API reference, which the README links (issue 33 moved it out of the README). */
const API_REFERENCE = readFileSync(new URL(`../../${API_REFERENCE_PATH}`, import.meta.url), 'utf8');

describe('README.md', () => {
  it('starts with the two set-up commands', () => {
    const block = README.split('```')[1] ?? '';
    expect(block).toContain('npm ci && npm run synth');
    expect(block).toContain('npm test');
  });

  it('links the API reference, which holds the current v1alpha1 reference (run `npm run import` if not)', () => {
    expect(README).toContain(`](${API_REFERENCE_PATH})`);
    expect(API_REFERENCE.includes(renderApiReference()), `${API_REFERENCE_PATH} is stale: run \`npm run import\``).toBe(true);
  });

  it('links an API reference holding the current v1 reference (run `npm run import` if not)', () => {
    expect(API_REFERENCE.includes(renderApiReference('v1')), `${API_REFERENCE_PATH} v1 reference is stale: run \`npm run import\``).toBe(true);
  });

  it('lists every runner flag buildCronJob emits for the golden inputs in the Backup container contract, and so does backup-contract.ts', () => {
    const inputs = new URL('../golden/inputs/', import.meta.url);
    const flags = new Set(
      readdirSync(inputs)
        .map((file) => parse(readFileSync(new URL(file, inputs), 'utf8')) as AnyBackupSchedule)
        .flatMap((input) => buildCronJob(input).spec?.jobTemplate.spec?.template.spec?.containers[0]?.args ?? [])
        .filter((arg) => arg.startsWith('--'))
        // `--flag=` for a flag with a value, the bare flag for a boolean one (`--s3-force-path-style`).
        .map((arg) => (arg.includes('=') ? `${arg.split('=')[0]}=` : arg)),
    );
    expect([...flags]).toEqual(expect.arrayContaining(['--keep-last=', '--keep-daily=', '--keep-weekly=', '--keep-monthly=', '--s3-force-path-style']));
    const contract = README.slice(README.indexOf('### Backup container contract'), README.indexOf('### The backup runner'));
    const header = readFileSync(new URL('../../src/pure/backup-contract.ts', import.meta.url), 'utf8').split('*/')[0] ?? '';
    for (const flag of flags) {
      expect(contract, `README contract lacks ${flag}`).toContain(flag);
      expect(header, `backup-contract.ts header lacks ${flag}`).toContain(flag);
    }
  });

  it('links only to files and headings that exist, in the README and the docs/ files it links', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const documents = ['README.md', 'docs/api-reference.md', 'docs/performance.md', 'docs/chaos.md', 'docs/design.md', 'docs/testing.md'].map((d) => `${root}${d}`);
    const broken = documents
      .flatMap((document) => relativeLinks(document))
      .filter(({ file, anchor }) => !existsSync(file) || (anchor !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(file, 'utf8')).has(anchor)))
      .map(({ from, target }) => `${from.slice(root.length)}: ${target}`);
    expect(broken).toEqual([]);
  });

  it('documents every dependency of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;
    const names = [...Object.keys(pkg['dependencies'] ?? {}), ...Object.keys(pkg['devDependencies'] ?? {})].filter((n) => n !== '@types/node');
    for (const name of names) expect(README, `README does not explain ${name}`).toContain(`\`${name}\``);
  });
});
