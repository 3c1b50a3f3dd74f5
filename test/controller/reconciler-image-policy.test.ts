/** The reconciler and the operator's image allow-list (`--allowed-backup-images`). */
import { describe, expect, it } from 'vitest';
import { asStored, schedule } from './fixtures.ts';
import { converged, desiredOf, harness, IMAGE, KEY, type CronJob } from './reconciler-harness.ts';

describe('spec.image and the operator\'s allow-list', () => {
  it('refuses an image outside the allow-list: Ready=False/ImageNotAllowed naming the flag, a Warning Event, no child', async () => {
    const h = harness({ schedule: schedule({ spec: { image: 'docker.io/evil/miner:latest' } }) }, {});
    await h.reconciler.reconcile(KEY);
    expect(h.childWrites()).toBe(0);
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ImageNotAllowed' });
    expect(h.ready()?.message).toContain('spec.image: "docker.io/evil/miner:latest" is not allowed');
    expect(h.ready()?.message).toContain('--allowed-backup-images');
    expect(h.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ImageNotAllowed' })]);
  });

  it.each([
    ['the controller\'s own --backup-image', IMAGE, []],
    ['an image matching an allowed pattern', 'registry.example.com/backup/etcd:3.5', ['registry.example.com/backup/*']],
  ])('creates the child for %s', async (_name, image, allowedImages) => {
    const h = harness({ schedule: schedule({ spec: { image } }) }, { create: (obj) => asStored(obj) }, { allowedImages });
    await h.reconciler.reconcile(KEY);
    expect((h.calls[0]?.obj as CronJob).spec.jobTemplate.spec.template.spec.containers[0].image).toBe(image);
  });

  it('leaves the existing child alone when a schedule is edited to a disallowed image', async () => {
    const s = converged(1);
    const child = asStored(desiredOf(s));
    const edited = converged(1, { image: 'evil:1' });
    edited.metadata.generation = 2;
    const h = harness({ schedule: edited, child }, {});
    await h.reconciler.reconcile(KEY);
    expect(h.childWrites()).toBe(0);
    expect(h.schedules.get(KEY)?.status).toMatchObject({ observedGeneration: 2, cronJobName: 'nightly-etcd', conditions: [{ status: 'False', reason: 'ImageNotAllowed' }] });
  });
});


describe('a child running an image the operator does not allow (any more)', () => {
  const running = (image: string): CronJob => {
    const c = asStored(desiredOf(converged(1)), '300') as CronJob;
    c.spec.jobTemplate.spec.template.spec.containers[0].image = image;
    return c;
  };

  it('is suspended first (one PUT, resourceVersion kept), with a Warning Event; then status says ImageNotAllowed', async () => {
    const edited = converged(1, { image: 'evil:1' });
    edited.metadata.generation = 2;
    const h = harness({ schedule: edited, child: running('evil:1') }, { update: (obj) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: '301' } }) });
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    const sent = h.calls[0]?.obj as CronJob;
    expect(h.calls.map((c) => c.name)).toEqual(['patchCronJob']);
    expect(sent.spec.suspend).toBe(true);
    expect(sent.metadata.resourceVersion).toBe('300');
    expect(sent.spec.jobTemplate.spec.template.spec.containers[0].image).toBe('evil:1');
    expect(h.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'Suspended' })]);

    h.cronJobs.set(KEY, sent);
    await h.reconciler.reconcile(KEY);
    expect(h.calls.map((c) => c.name)).toEqual(['patchCronJob', 'updateScheduleStatus']);
    expect(h.ready()).toMatchObject({ status: 'False', reason: 'ImageNotAllowed', observedGeneration: 2 });
    expect(h.ready()?.message).toContain('one already running a disallowed image is suspended');
  });

  it('is suspended also when it is outside the watch (its labels were removed): found with a GET', async () => {
    const edited = converged(1, { image: 'evil:1' });
    edited.metadata.generation = 2;
    const unlabelled = running('evil:1');
    delete unlabelled.metadata.labels;
    const h = harness({ schedule: edited, uncachedChild: unlabelled }, { update: (obj) => obj });
    await expect(h.reconciler.reconcileWithMove(KEY)).resolves.toEqual({ move: 'patchCronJob', result: {} });
    expect((h.calls[0]?.obj as CronJob).spec.suspend).toBe(true);
  });

  it('is resumed by the usual drift repair once the schedule names an allowed image again', async () => {
    const suspended = running(IMAGE);
    suspended.spec.suspend = true;
    const h = harness({ schedule: converged(3), child: suspended }, { update: (obj) => obj });
    await h.reconciler.reconcile(KEY);
    expect((h.calls[0]?.obj as CronJob).spec.suspend).toBe(false);
  });
});
