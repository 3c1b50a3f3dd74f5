import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderApiReference } from '../../src/api/api-reference.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README.md', () => {
  it('starts with the two set-up commands', () => {
    const block = README.split('```')[1] ?? '';
    expect(block).toContain('npm ci && npm run synth');
    expect(block).toContain('npm test');
  });

  it('holds the current API reference (run `npm run import` if not)', () => {
    expect(README.includes(renderApiReference()), 'README API reference is stale: run `npm run import`').toBe(true);
  });

  it('holds the current v1 API reference (run `npm run import` if not)', () => {
    expect(README.includes(renderApiReference('v1')), 'README v1 API reference is stale: run `npm run import`').toBe(true);
  });

  it('documents every dependency of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;
    const names = [...Object.keys(pkg['dependencies'] ?? {}), ...Object.keys(pkg['devDependencies'] ?? {})].filter((n) => n !== '@types/node');
    for (const name of names) expect(README, `README does not explain ${name}`).toContain(`\`${name}\``);
  });
});
