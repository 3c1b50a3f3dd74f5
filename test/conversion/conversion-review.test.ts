import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handleConversionReview, RETENTION_ANNOTATION, RETENTION_REJECTED_ANNOTATION, toV1, toV1alpha1 } from '../../src/conversion/index.ts';
import { validateBackupScheduleV1, type BackupSchedule, type v1 } from '../../src/api/index.ts';
import { v1alpha1Schedule, v1Schedule } from './schema-arbitrary.ts';

type Json = Record<string, unknown>;
const review = (desiredAPIVersion: unknown, objects: unknown, uid: unknown = '705ab4f5-6393-11e8-b7cc-42010a800002', apiVersion = 'apiextensions.k8s.io/v1') => ({
  apiVersion,
  kind: 'ConversionReview',
  request: { uid, desiredAPIVersion, objects },
});
const schedule = (apiVersion: string, name: string): Json => ({
  apiVersion,
  kind: 'BackupSchedule',
  metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
  spec: apiVersion.endsWith('/v1')
    ? { schedule: '@daily', source: { type: 'Etcd', etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepDaily: 7 } }
    : { schedule: '@daily', source: { etcd: { endpoints: ['https://e:2379'] } }, destination: { persistentVolumeClaim: { claimName: 'b' } }, retention: { keepLast: 7 } },
});

describe('handleConversionReview (apiextensions.k8s.io/v1 ConversionReview)', () => {
  it('echoes the uid and converts several objects in request order', () => {
    const objects = [schedule('kubelings.dev/v1alpha1', 'a'), schedule('kubelings.dev/v1alpha1', 'b'), schedule('kubelings.dev/v1alpha1', 'c')];
    const answer = handleConversionReview(review('kubelings.dev/v1', objects));
    expect(answer.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(answer.kind).toBe('ConversionReview');
    expect(answer.request).toBeUndefined();
    expect(answer.response?.uid).toBe('705ab4f5-6393-11e8-b7cc-42010a800002');
    expect(answer.response?.result).toEqual({ status: 'Success' });
    expect(answer.response?.convertedObjects).toEqual(objects.map((o) => toV1(o as unknown as BackupSchedule)));
    expect(answer.response?.convertedObjects.map((o) => (o['metadata'] as Json)['name'])).toEqual(['a', 'b', 'c']);
  });

  it('converts a batch mixing versions, each object to the desired one (the API server sends only those not there yet, but may mix)', () => {
    const objects = [schedule('kubelings.dev/v1', 'a'), schedule('kubelings.dev/v1alpha1', 'b')];
    const answer = handleConversionReview(review('kubelings.dev/v1alpha1', objects));
    expect(answer.response?.convertedObjects.map((o) => o['apiVersion'])).toEqual(['kubelings.dev/v1alpha1', 'kubelings.dev/v1alpha1']);
    expect(answer.response?.convertedObjects[0]).toEqual(toV1alpha1(objects[0] as unknown as v1.BackupSchedule));
    expect(answer.response?.convertedObjects[1]).toBe(objects[1]);
  });

  it('answers a v1beta1 review in v1beta1 (the version the API server asked in)', () => {
    const answer = handleConversionReview(review('kubelings.dev/v1', [schedule('kubelings.dev/v1alpha1', 'a')], 'u', 'apiextensions.k8s.io/v1beta1'));
    expect(answer.apiVersion).toBe('apiextensions.k8s.io/v1beta1');
    expect(answer.response?.result.status).toBe('Success');
  });

  it('succeeds with no objects', () => {
    expect(handleConversionReview(review('kubelings.dev/v1', []))).toEqual({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: '705ab4f5-6393-11e8-b7cc-42010a800002', convertedObjects: [], result: { status: 'Success' } } });
  });

  it.each([
    ['an unknown desiredAPIVersion', review('kubelings.dev/v2', [schedule('kubelings.dev/v1alpha1', 'a')]), 'unsupported desiredAPIVersion "kubelings.dev/v2"; expected one of kubelings.dev/v1alpha1, kubelings.dev/v1'],
    ['another group as desiredAPIVersion', review('apps/v1', []), 'unsupported desiredAPIVersion "apps/v1"'],
    ['an object of another kind', review('kubelings.dev/v1', [schedule('kubelings.dev/v1alpha1', 'a'), { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'x', namespace: 'ns' } }]), 'request.objects[1] (ns/x): expected kind BackupSchedule, got "CronJob"'],
    ['an object of an unknown version', review('kubelings.dev/v1', [{ ...schedule('kubelings.dev/v1alpha1', 'a'), apiVersion: 'kubelings.dev/v1beta7' }]), 'request.objects[0] (team-a/a): unsupported apiVersion "kubelings.dev/v1beta7" of BackupSchedule'],
    ['an object that is not an object', review('kubelings.dev/v1', ['text']), 'request.objects[0]: expected an object'],
    ['no desiredAPIVersion', review(undefined, []), 'request.desiredAPIVersion is required'],
    ['objects that are not a list', review('kubelings.dev/v1', {}), 'request.objects must be a list'],
  ])('fails the whole review for %s, with the uid echoed and a message naming the problem', (_name, request, message) => {
    const answer = handleConversionReview(request);
    expect(answer.response?.uid).toBe('705ab4f5-6393-11e8-b7cc-42010a800002');
    expect(answer.response?.result.status).toBe('Failure');
    expect(answer.response?.result.message).toContain(message);
    expect(answer.response?.convertedObjects).toEqual([]);
  });

  it.each([
    ['a body that is not a review', { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1' }, 'expected a ConversionReview of apiextensions.k8s.io/v1 or apiextensions.k8s.io/v1beta1, got admission.k8s.io/v1 AdmissionReview'],
    ['no request', { kind: 'ConversionReview', apiVersion: 'apiextensions.k8s.io/v1' }, 'ConversionReview has no request with a uid'],
    ['no uid', review('kubelings.dev/v1', [], null), 'ConversionReview has no request with a uid'],
    ['null', null, 'expected a ConversionReview'],
  ])('fails a malformed review (%s) without throwing', (_name, body, message) => {
    const answer = handleConversionReview(body);
    expect(answer.kind).toBe('ConversionReview');
    expect(answer.response?.result).toEqual({ status: 'Failure', message: expect.stringContaining(message) });
  });

  it('keeps what the API server checks of every converted object: count, order, apiVersion, kind, name, namespace, uid', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(v1alpha1Schedule, v1Schedule), { maxLength: 20 }), fc.constantFrom('kubelings.dev/v1', 'kubelings.dev/v1alpha1'), fc.uuid(), (objects, desired, uid) => {
        const answer = handleConversionReview(review(desired, objects, uid));
        expect(answer.response?.uid).toBe(uid);
        expect(answer.response?.result).toEqual({ status: 'Success' });
        const converted = answer.response?.convertedObjects ?? [];
        expect(converted).toHaveLength(objects.length);
        converted.forEach((out, i) => {
          const meta = (o: Json) => o['metadata'] as Json;
          expect(out['apiVersion']).toBe(desired);
          expect(out['kind']).toBe('BackupSchedule');
          expect([meta(out)['name'], meta(out)['namespace'], meta(out)['uid']]).toEqual([meta(objects[i]!)['name'], meta(objects[i]!)['namespace'], meta(objects[i]!)['uid']]);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('answers Success with a valid v1 object for a v1alpha1 object whose carried retention is invalid, dropped and reported (issue 30)', () => {
    const attacks = ['{"keepDaily":0,"keepWeekly":-5,"keepMonthly":99999999999}', '{"keepDaily":null}'];
    const objects = attacks.map((value, i) => {
      const object = schedule('kubelings.dev/v1alpha1', `t${i}`);
      return { ...object, metadata: { ...(object['metadata'] as Json), annotations: { [RETENTION_ANNOTATION]: value } }, spec: { ...(object['spec'] as Json), retention: { keepLast: 1000 } } };
    });
    const answer = handleConversionReview(review('kubelings.dev/v1', [...objects, schedule('kubelings.dev/v1alpha1', 'fine')]));
    expect(answer.response?.result).toEqual({ status: 'Success' });
    const converted = answer.response!.convertedObjects as unknown as v1.BackupSchedule[];
    expect(converted.map((o) => o.metadata?.name)).toEqual(['t0', 't1', 'fine']);
    for (const [i, object] of converted.slice(0, 2).entries()) {
      expect(validateBackupScheduleV1(object)).toEqual([]);
      expect(object.spec.retention).toEqual({ keepLast: 1000 });
      expect(object.metadata?.annotations?.[RETENTION_ANNOTATION]).toBeUndefined();
      expect(JSON.parse(object.metadata?.annotations?.[RETENTION_REJECTED_ANNOTATION] ?? '{}')).toMatchObject({ rejected: attacks[i] });
    }
    expect(converted[0]!.metadata?.annotations?.[RETENTION_REJECTED_ANNOTATION]).toMatch(/keepDaily: must be >= 1; keepWeekly: must be >= 1; keepMonthly: must be <= 1000/);
    expect(converted[1]!.metadata?.annotations?.[RETENTION_REJECTED_ANNOTATION]).toMatch(/keepDaily: must be integer/);
    expect(converted[2]!.metadata?.annotations).toBeUndefined();
  });
});
