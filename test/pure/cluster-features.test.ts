import { describe, expect, it } from 'vitest';
import { missingFeatures, notPersistedCause, parseKubeVersion, supportsPodFailurePolicy } from '../../src/pure/cluster-features.ts';

describe('parseKubeVersion', () => {
  it.each([
    [{ major: '1', minor: '32', gitVersion: 'v1.32.0' }, { major: 1, minor: 32, gitVersion: 'v1.32.0' }],
    [{ major: '1', minor: '24+', gitVersion: 'v1.24.17-eks-1' }, { major: 1, minor: 24, gitVersion: 'v1.24.17-eks-1' }],
    [{ major: '', minor: '', gitVersion: 'v1.23.4+k3s1' }, { major: 1, minor: 23, gitVersion: 'v1.23.4+k3s1' }],
    [{ gitVersion: 'unknown' }, undefined],
    ['nonsense', undefined],
  ])('%j → %j', (info, expected) => {
    expect(parseKubeVersion(info)).toEqual(expected);
  });
});

describe('missingFeatures', () => {
  const names = (minor: number) => missingFeatures({ major: 1, minor, gitVersion: '' }).map((f) => f.name);
  it('lists what each version lacks', () => {
    expect(names(20)).toEqual(['batch/v1 CronJob', 'CronJob spec.timeZone', 'CRD validation rules (CEL)', 'Job podFailurePolicy', 'fieldPath of CRD validation rules']);
    expect(names(24)).toEqual(['CronJob spec.timeZone', 'CRD validation rules (CEL)', 'Job podFailurePolicy', 'fieldPath of CRD validation rules']);
    expect(names(25)).toEqual(['Job podFailurePolicy', 'fieldPath of CRD validation rules']);
    expect(names(27)).toEqual(['fieldPath of CRD validation rules']);
    expect(names(28)).toEqual([]);
    expect(missingFeatures({ major: 2, minor: 0, gitVersion: '' })).toEqual([]);
  });
});

describe('supportsPodFailurePolicy', () => {
  it('is true from 1.26 and while the version is unknown, false before', () => {
    expect(supportsPodFailurePolicy({ major: 1, minor: 25, gitVersion: '' })).toBe(false);
    expect(supportsPodFailurePolicy({ major: 1, minor: 26, gitVersion: '' })).toBe(true);
    expect(supportsPodFailurePolicy(undefined)).toBe(true);
  });
  it('names the feature gate when the server dropped the podFailurePolicy', () => {
    expect(notPersistedCause(['spec.jobTemplate.spec.podFailurePolicy.rules'], { major: 1, minor: 30, gitVersion: 'v1.30.1' })).toContain('JobPodFailurePolicy feature gate');
  });
});

describe('notPersistedCause', () => {
  it('names the Kubernetes version for spec.timeZone on an old cluster', () => {
    expect(notPersistedCause(['spec.timeZone'], { major: 1, minor: 24, gitVersion: 'v1.24.3' })).toBe(
      'spec.timeZone needs Kubernetes 1.25 or later (the API server reports v1.24.3): remove spec.timeZone or upgrade the cluster',
    );
  });
  it('mentions the feature gate or a webhook on a new cluster or an unknown version', () => {
    expect(notPersistedCause(['spec.timeZone'], undefined)).toContain("the API server's version is unknown");
    expect(notPersistedCause(['spec.timeZone'], { major: 1, minor: 30, gitVersion: 'v1.30.1' })).toContain('CronJobTimeZone feature gate');
  });
  it('blames a mutating webhook for other fields', () => {
    expect(notPersistedCause(['spec.suspend'], undefined)).toMatch(/^most likely a mutating admission webhook/);
    expect(notPersistedCause(['spec.timeZone', 'spec.suspend'], { major: 1, minor: 24, gitVersion: 'v1.24.3' })).toContain('for the other fields, a mutating admission webhook');
  });
});
