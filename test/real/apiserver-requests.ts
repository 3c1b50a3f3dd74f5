/**
 * What a real kube-apiserver was asked, from its own counter `apiserver_request_total` (all users): a
 * real server has no request log, so the real-cluster benchmark and the upgrade count writes this way.
 * Keys are `VERB resource[/subresource] code`, e.g. `PATCH cronjobs 200`, `PUT backupschedules/status 409`.
 */
import type { ApiClient } from '../conformance/harness.ts';

/** Requests for `resources` so far, by `VERB resource[/subresource] code`. */
export async function requestCounts(api: ApiClient, resources: readonly string[]): Promise<Map<string, number>> {
  const res = await api.get('/metrics', { accept: 'text/plain' });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} (the admin reads the API server's metrics)`);
  const counts = new Map<string, number>();
  for (const line of res.text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!resources.includes(labels['resource'] ?? '')) continue;
    const key = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''} ${labels['code']}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.split(' ').pop()));
  }
  return counts;
}

/** The requests counted in `after` and not yet in `before`, keys with none left out. */
export function countsSince(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, value] of after) if (value - (before.get(key) ?? 0) > 0) out.set(key, value - (before.get(key) ?? 0));
  return out;
}

/** Whether a key of {@link requestCounts} is a write (not a GET, LIST or WATCH). */
export const isWriteKey = (key: string): boolean => /^(POST|PUT|PATCH|DELETE|DELETECOLLECTION|APPLY) /.test(key);
