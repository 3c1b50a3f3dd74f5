import { describe, expect, it } from 'vitest';
import { enumProblem, quantityHint, unknownFieldHint } from '../../src/api/error-hints.ts';
import { toEditorJsonSchema } from '../../src/api/json-schema.ts';
import { editDistance, nearestNames, quotedAlternatives } from '../../src/api/nearest-names.ts';

describe('editDistance (optimal string alignment)', () => {
  it.each([
    ['retention', 'retention', 0],
    ['retension', 'retention', 1],
    ['retnetion', 'retention', 1], // a swap of neighbours is one typo, not two
    ['keeplast', 'keepLast', 1],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('%s → %s is %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });

  it('gives up past the limit', () => {
    expect(editDistance('aaaaaaaa', 'bbbbbbbb', 2)).toBe(3);
  });
});

describe('nearestNames', () => {
  it('ignores case for the distance and then prefers the exact case', () => {
    expect(nearestNames('utc', ['Etc/UTC', 'UTC', 'utc2'])).toEqual(['UTC']);
  });

  it('returns nothing when nothing is near, and at most max names', () => {
    expect(nearestNames('zzzz', ['schedule', 'source'])).toEqual([]);
    expect(nearestNames('ab', ['aa', 'ac', 'ad', 'ae'], { max: 2 })).toEqual(['aa', 'ac']);
  });

  it('quotes alternatives for a sentence', () => {
    expect(quotedAlternatives(['a'])).toBe('"a"');
    expect(quotedAlternatives(['a', 'b', 'c'])).toBe('"a", "b" or "c"');
  });
});

describe('error hints', () => {
  it('names the version that has a field before guessing a spelling', () => {
    expect(unknownFieldHint('spec.source.type', ['etcd', 'persistentVolumeClaim'], 'kubelings.dev/v1alpha1')).toBe('; this is a v1 field: set apiVersion: kubelings.dev/v1');
    expect(unknownFieldHint('spec.retension', ['schedule', 'retention', 'resources'], 'kubelings.dev/v1')).toBe('; did you mean "retention"?');
    expect(unknownFieldHint('spec.frobnicate', ['schedule', 'retention'], 'kubelings.dev/v1')).toBe('');
  });

  it('keeps the editor schema\'s ~600-name time-zone enum out of the message', () => {
    const timeZone = ((toEditorJsonSchema().properties as Record<string, any>)['spec'].properties.timeZone) as { enum: string[] };
    expect(timeZone.enum.length).toBeGreaterThan(500);
    const message = enumProblem('Europe/Berln', timeZone.enum);
    expect(message).toBe(`must be one of ${timeZone.enum.length} allowed values, got "Europe/Berln"; did you mean "Europe/Berlin"?`);
    expect(enumProblem('S3', ['Etcd', 'PersistentVolumeClaim'])).toBe('must be one of "Etcd", "PersistentVolumeClaim"');
  });

  it.each([
    ['512MB', '; did you mean "512Mi" (2^20) or "512M" (10^6)?'],
    ['512mb', '; did you mean "512Mi" (2^20) or "512M" (10^6)?'],
    ['1GiB', '; did you mean "1Gi"?'],
    ['2 Gi', '; did you mean "2Gi"?'],
    ['100K', '; did you mean "100Ki" (2^10) or "100k" (10^3)?'],
    ['64 bytes', '; did you mean "64"?'],
    ['1e9999999999', ''],
    ['lots', '; write a number with an optional suffix, e.g. "512Mi", "1Gi" or "500m"'],
  ])('suggests the Kubernetes spelling of %s', (text, hint) => {
    expect(quantityHint(text)).toBe(hint);
  });
});
