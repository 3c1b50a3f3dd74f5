/**
 * Metrics of the BackupSchedule controller itself, next to the controller-runtime ones of src/runtime
 * (registered on the same registry, so `/metrics` serves both).
 */
import { Counter, type Registry } from 'prom-client';
import type { EventDropReason } from './event-recorder.ts';

const DROP_REASONS: readonly EventDropReason[] = ['budget', 'backlog'];

/** `backupschedule_events_dropped_total{reason}`: Events not recorded (their namespace's share full, or the whole backlog). */
export function eventsDroppedCounter(registry: Registry): (why: EventDropReason) => void {
  const counter = new Counter({
    name: 'backupschedule_events_dropped_total',
    help: 'Kubernetes Events the controller did not record: budget, their namespace already had its share waiting; backlog, every namespace\'s together was full.',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Label sets exist from the start, so a dashboard sees 0 rather than no series.
  for (const reason of DROP_REASONS) counter.inc({ reason }, 0);
  return (why) => counter.inc({ reason: why });
}
