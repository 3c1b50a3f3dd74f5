import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/runtime/clock.ts';
import { parseBindAddress } from '../../src/runtime/http-server.ts';
import { RuntimeMetrics } from '../../src/runtime/metrics.ts';
import { startMetricsServer } from '../../src/runtime/metrics-server.ts';
import { createRateLimitingQueue } from '../../src/runtime/rate-limiting-queue.ts';

describe('RuntimeMetrics', () => {
  it('initialises every controller label set to zero at start-up', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    metrics.controller('backupschedule');
    const text = await metrics.text();
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      expect(text).toContain(`controller_runtime_reconcile_total{controller="backupschedule",result="${result}"} 0`);
    }
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="backupschedule"} 0');
    expect(text).toContain('controller_runtime_terminal_reconcile_errors_total{controller="backupschedule"} 0');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="backupschedule"} 0');
    expect(text).toContain('controller_runtime_active_workers{controller="backupschedule"} 0');
  });

  it('records reconciles, errors and worker gauges under controller-runtime names', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const m = metrics.controller('c');
    m.setMaxConcurrentReconciles(4);
    m.setActiveWorkers(2);
    m.reconciled('error', 0.2);
    m.reconcileError(true);
    const text = await metrics.text();
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="c"} 4');
    expect(text).toContain('controller_runtime_active_workers{controller="c"} 2');
    expect(text).toContain('controller_runtime_reconcile_total{controller="c",result="error"} 1');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_bucket{le="0.2",controller="c"} 1');
    expect(text).toContain('controller_runtime_terminal_reconcile_errors_total{controller="c"} 1');
  });

  it('feeds the work queue workqueue_* metrics through its MetricsProvider', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    const queue = createRateLimitingQueue<string>({ name: 'c', clock: new FakeClock(), metrics: metrics.workQueue });
    queue.add('a');
    queue.add('b');
    queue.addRateLimited('c');
    const key = await queue.get();
    queue.done(key!);
    const text = await metrics.text();
    expect(text).toContain('workqueue_adds_total{name="c"} 2');
    expect(text).toContain('workqueue_depth{name="c"} 1');
    expect(text).toContain('workqueue_retries_total{name="c"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="c"} 1');
    expect(text).toContain('workqueue_work_duration_seconds_count{name="c"} 1');
    queue.shutDown();
  });

  it('counts REST requests by code, method and host, and the leader status by lease name', async () => {
    const metrics = new RuntimeMetrics({ processMetrics: false });
    metrics.restClientObserver({ method: 'GET', host: '10.0.0.1:443', code: '200', durationSeconds: 0.01 });
    metrics.restClientObserver({ method: 'PUT', host: '10.0.0.1:443', code: '409', durationSeconds: 0.02 });
    metrics.leaderElection('backupschedule-operator').setLeader(true);
    const text = await metrics.text();
    expect(text).toContain('rest_client_requests_total{code="200",method="GET",host="10.0.0.1:443"} 1');
    expect(text).toContain('rest_client_requests_total{code="409",method="PUT",host="10.0.0.1:443"} 1');
    expect(text).toContain('rest_client_request_duration_seconds_count{verb="PUT",host="10.0.0.1:443"} 1');
    expect(text).toContain('leader_election_master_status{name="backupschedule-operator"} 1');
  });

  it('keeps two instances apart (own registry, not the global one)', async () => {
    const a = new RuntimeMetrics({ processMetrics: false });
    const b = new RuntimeMetrics({ processMetrics: false });
    a.controller('only-in-a');
    expect(await b.text()).not.toContain('only-in-a');
  });

  it('serves the registry on /metrics', async () => {
    const metrics = new RuntimeMetrics();
    metrics.controller('served');
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0 }, metrics);
    try {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toContain('controller_runtime_reconcile_total{controller="served",result="success"} 0');
      expect(body).toContain('process_resident_memory_bytes');
      expect((await fetch(`${server.url}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('parseBindAddress', () => {
  it.each([
    [':8080', { host: '0.0.0.0', port: 8080 }],
    ['127.0.0.1:8081', { host: '127.0.0.1', port: 8081 }],
    ['[::1]:9090', { host: '::1', port: 9090 }],
    ['0', undefined],
  ])('parses %j', (value, expected) => {
    expect(parseBindAddress(value)).toEqual(expected);
  });

  it.each(['8080', 'host:', ':http'])('rejects %j naming the flag', (value) => {
    expect(() => parseBindAddress(value, '--metrics-bind-address')).toThrow(`--metrics-bind-address: "${value}" is not host:port, :port or 0`);
  });

  it.each([':65536', ':99999', '127.0.0.1:123456'])('rejects the port of %j as out of range, naming the flag', (value) => {
    const port = value.slice(value.lastIndexOf(':') + 1);
    expect(() => parseBindAddress(value, '--conversion-webhook-bind-address')).toThrow(`--conversion-webhook-bind-address: port ${port} of "${value}" is out of range; a port is 0 to 65535`);
  });

  it('accepts the last port', () => {
    expect(parseBindAddress(':65535')).toEqual({ host: '0.0.0.0', port: 65535 });
  });
});
