import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CertificateManager, certificateLoadedCheck, type CertificateManagerOptions, type ServingCredentials } from '../../src/runtime/certificate-manager.ts';
import { CERTIFICATE_SECRET_KEYS as K, planCertificates, readCertificateState, renewCertificates } from '../../src/runtime/certificate-plan.ts';
import { FakeClock } from '../../src/runtime/clock.ts';
import { readCertificate, splitPemBundle } from '../../src/runtime/tls-certificates.ts';
import { goX509NameProblem } from '../../src/runtime/x509-names.ts';
import { WriteGateClosedError } from '../../src/runtime/write-gate.ts';
import { FakeSecretClient, FakeSecretServer } from './fake-secret-client.ts';

const DAY = 86_400_000;
const policy = { commonName: 'hook', dnsNames: ['hook.ns.svc'], caLifetimeMs: 300 * DAY, servingLifetimeMs: 30 * DAY, caOverlapMs: 3_600_000 };
const logger = pino({ level: 'silent' });
/** Generous: keys are generated while other suites share the 2 cores; the fake clock does not move meanwhile. */
const WAIT = { timeout: 10_000 };

interface Replica {
  readonly manager: CertificateManager;
  readonly client: FakeSecretClient;
  readonly served: ServingCredentials[];
  readonly bundles: string[];
  /** The mode of each publish: `exact` on the leader, `include` on a follower. */
  readonly modes: string[];
  leader: boolean;
}

function replica(server: FakeSecretServer, clock: FakeClock, leader: boolean, overrides: Partial<CertificateManagerOptions> = {}): Replica {
  const client = new FakeSecretClient(server, new Set(leader ? ['get', 'create', 'update'] : ['get']));
  const r: Replica = {
    client,
    served: [],
    bundles: [],
    modes: [],
    leader,
    manager: new CertificateManager({
      secrets: client,
      namespace: 'ns',
      secretName: 'hook-tls',
      policy,
      isLeader: () => r.leader,
      onCredentials: (c) => r.served.push(c),
      onCaBundle: async (b, mode) => {
        r.bundles.push(b);
        r.modes.push(mode);
      },
      resyncMs: 60_000,
      clock,
      logger,
      ...overrides,
    }),
  };
  return r;
}

const fingerprint = (c: ServingCredentials | undefined): string => readCertificate(c?.certPem ?? '').fingerprint256;

type Release020Manager = new (options: Omit<CertificateManagerOptions, 'clock'>) => { sync(): Promise<void> };

/**
 * The Secret release 0.2.0 writes, by its own CertificateManager from its recorded bundle
 * (test/fixtures/release-0.2.0), which knows a missing Secret by its own ApiStatusError class.
 */
async function secretWrittenBy020(server: FakeSecretServer): Promise<void> {
  const chunks = new URL('../fixtures/release-0.2.0/controller/chunks/', import.meta.url);
  const { CertificateManager: Release020 } = (await import(new URL('certificate-manager-CHDIAOZN.mjs', chunks).href)) as { CertificateManager: Release020Manager };
  const { a: ApiStatusError020 } = (await import(new URL('chunk-MSSMT2MP.mjs', chunks).href)) as { a: new (status: { code: number; reason: string }) => Error };
  const client = new FakeSecretClient(server, new Set(['get', 'create']));
  const secrets = { ...client, get: () => Promise.reject(new ApiStatusError020({ code: 404, reason: 'NotFound' })), create: client.create.bind(client), update: client.update.bind(client) };
  await new Release020({ secrets, namespace: 'ns', secretName: 'hook-tls', policy, isLeader: () => true, onCredentials: () => undefined, logger }).sync();
}

/** Steps the clock once the running manager's sync has finished and scheduled the next one (a sync ends by setting its timer). */
async function stepWhenScheduled(clock: FakeClock, ms: number): Promise<void> {
  await vi.waitFor(() => expect(clock.pendingTimers).toBe(1), WAIT);
  clock.step(ms);
}

describe('CertificateManager', () => {
  it('the leader creates the Secret when it is missing, serves it, publishes the CA bundle, and only reads it at each resync', async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    const leader = replica(server, clock, true);
    leader.manager.start();
    await vi.waitFor(() => expect(leader.bundles).toHaveLength(1), WAIT);
    expect(leader.client.calls).toEqual(['get', 'create']);
    expect(Object.keys(server.secret?.data ?? {}).sort()).toEqual([K.caBundle, K.caCert, K.caKey, K.tlsCert, K.tlsKey].sort());
    expect(leader.served).toHaveLength(1);
    expect(leader.served[0]?.certPem).toBe(Buffer.from(server.secret!.data![K.tlsCert]!, 'base64').toString());
    expect(leader.bundles).toEqual([Buffer.from(server.secret!.data![K.caBundle]!, 'base64').toString()]);
    expect(leader.modes).toEqual(['exact']);
    await stepWhenScheduled(clock, 60_000);
    await vi.waitFor(() => expect(leader.client.calls).toEqual(['get', 'create', 'get']), WAIT);
    await leader.manager.stop();
    expect(leader.served).toHaveLength(1);
    expect(leader.client.unexpected).toEqual([]);
  });

  it("replaces a Secret kept by 0.2.0, whose CA name Go's x509 refuses (a PrintableString with '@'), with a new CA and serving certificate at the first sync", async () => {
    const server = new FakeSecretServer();
    await secretWrittenBy020(server);
    const old = structuredClone(server.secret!.data!);
    const oldCa = Buffer.from(old[K.caCert]!, 'base64').toString();
    expect(goX509NameProblem(oldCa)).toMatch(/^its issuer's commonName is a PrintableString holding "hook-ca@\d+", which Go's x509 \(kube-apiserver\) refuses$/);
    expect(readCertificateState(old).problem).toBe(`ca.crt: ${goX509NameProblem(oldCa)}`);

    const leader = replica(server, new FakeClock(Date.now()), true);
    leader.manager.start();
    await vi.waitFor(() => expect(leader.served).toHaveLength(1), WAIT);
    await leader.manager.stop();
    expect(leader.client.calls).toEqual(['get', 'update']);
    const data = server.secret!.data!;
    expect(data[K.caCert]).not.toBe(old[K.caCert]);
    const bundle = splitPemBundle(leader.bundles[0] ?? '');
    expect(bundle.map((pem) => readCertificate(pem).fingerprint256)).toEqual([readCertificate(Buffer.from(data[K.caCert]!, 'base64').toString()).fingerprint256]);
    expect([...bundle, leader.served[0]!.certPem].map(goX509NameProblem)).toEqual([undefined, undefined]);
    expect(leader.client.unexpected).toEqual([]);
  });

  it('a follower fills a Secret with nothing servable (the leader may be of a release without the webhook) and publishes the bundle, but never renews', async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    const follower = replica(server, clock, false, {});
    const writer = new FakeSecretClient(server, new Set(['get', 'create', 'update']));
    const bootstrapping = replica(server, clock, false, { secrets: writer });
    const ready = certificateLoadedCheck(bootstrapping.manager);
    expect(ready.check()).toEqual({ ok: false, reason: 'no serving certificate loaded from the Secret yet' });
    await bootstrapping.manager.sync();
    // It publishes what it wrote, adding to the CRD's caBundle only (`include`): never its leader's `exact`.
    expect(bootstrapping.modes).toEqual(['include']);
    expect(writer.calls).toEqual(['get', 'create']);
    expect(ready.check()).toEqual({ ok: true });
    // Another follower reads what is there and writes nothing.
    await follower.manager.sync();
    expect(follower.client.calls).toEqual(['get']);
    expect(fingerprint(follower.served[0])).toBe(fingerprint(bootstrapping.served[0]));
    // Past the renewal point (2/3 of 30 days) the certificate is still servable: renewing is the leader's.
    clock.step(21 * DAY);
    await bootstrapping.manager.sync();
    expect(writer.calls).toEqual(['get', 'create', 'get']);
    expect(bootstrapping.served).toHaveLength(1);
    // Once it has expired, a follower writes again rather than leave every replica without one.
    clock.step(10 * DAY);
    await bootstrapping.manager.sync();
    expect(writer.calls).toEqual(['get', 'create', 'get', 'get', 'update']);
    expect(bootstrapping.served).toHaveLength(2);
    // Every sync publishes (a failed publish is retried so); the injector patches only what is missing.
    expect(bootstrapping.modes).toEqual(['include', 'include', 'include']);
    await bootstrapping.manager.stop();
    expect([follower.client.unexpected, writer.unexpected]).toEqual([[], []]);
  });

  it('followers racing to fill the empty Secret: one creates, the other reads and serves that one', async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    const [a, b] = [0, 1].map(() => replica(server, clock, false, { secrets: new FakeSecretClient(server, new Set(['get', 'create', 'update'])) }));
    await Promise.all([a!.manager.sync(), b!.manager.sync()]);
    expect(fingerprint(a!.served.at(-1))).toBe(fingerprint(b!.served.at(-1)));
    expect(server.secret?.metadata.resourceVersion).toBe('1');
  });

  it('renews the serving certificate at 2/3 of its lifetime on a timer, without sleeping, and hands the new one to the server', async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    // A resync longer than the lifetime: only the planner's nextCheckAt can wake the manager in time.
    const leader = replica(server, clock, true, { resyncMs: 365 * DAY });
    leader.manager.start();
    await vi.waitFor(() => expect(leader.served).toHaveLength(1), WAIT);
    const info = readCertificate(leader.served[0]!.certPem);
    const dueIn = info.notBefore + (info.notAfter - info.notBefore) * (2 / 3) - clock.now();
    await stepWhenScheduled(clock, dueIn - 1);
    expect(leader.client.calls).toEqual(['get', 'create']);
    await stepWhenScheduled(clock, 1);
    await vi.waitFor(() => expect(leader.served).toHaveLength(2), WAIT);
    expect(leader.client.calls).toEqual(['get', 'create', 'get', 'update']);
    expect(readCertificate(leader.served[1]!.certPem).notBefore).toBeGreaterThan(info.notBefore);
    await leader.manager.stop();
  });

  it("two leaders racing to create the Secret: the one that gets AlreadyExists reads and serves the other's, writing nothing", async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    const theirs = await secretData(clock.now());
    const b = replica(server, clock, true);
    // Between b's GET (404) and its create, another replica's create lands.
    b.client.before = (verb) => {
      if (verb === 'create') server.create({ metadata: { name: 'hook-tls', namespace: 'ns' }, data: theirs });
    };
    await b.manager.sync();
    expect(b.client.calls).toEqual(['get', 'create', 'get']);
    expect(b.served.map((c) => c.certPem)).toEqual([Buffer.from(theirs[K.tlsCert]!, 'base64').toString()]);
    expect(b.client.unexpected).toEqual([]);
  });

  it('a Conflict on a renewal means another replica renewed: it reads theirs and plans again on it', async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    server.create({ metadata: { name: 'hook-tls', namespace: 'ns' }, data: await secretData(clock.now()) });
    clock.step(25 * DAY); // past 2/3 of the serving certificate's 30 days
    const renewed = await secretData(clock.now());
    const b = replica(server, clock, true);
    b.client.before = (verb) => {
      if (verb === 'update') server.update({ ...server.secret!, data: renewed });
    };
    await b.manager.sync();
    expect(b.client.calls).toEqual(['get', 'update', 'get']);
    expect(b.served.map((c) => c.certPem)).toEqual([Buffer.from(renewed[K.tlsCert]!, 'base64').toString()]);
  });

  it('a write refused by the closed write gate (leadership just lost) is retried after retryMs, and nothing is served meanwhile', async () => {
    const clock = new FakeClock();
    const server = new FakeSecretServer();
    const r = replica(server, clock, true, { retryMs: 5_000 });
    r.client.before = (verb) => {
      if (verb === 'create') throw new WriteGateClosedError('create secrets ns/hook-tls refused: not the leader');
    };
    r.manager.start();
    await vi.waitFor(() => expect(r.client.calls).toEqual(['get', 'create']), WAIT);
    expect(r.served).toEqual([]);
    r.client.before = undefined;
    await stepWhenScheduled(clock, 4_999);
    expect(r.client.calls).toHaveLength(2);
    await stepWhenScheduled(clock, 1);
    await vi.waitFor(() => expect(r.served).toHaveLength(1), WAIT);
    expect(r.client.calls).toEqual(['get', 'create', 'get', 'create']);
    await r.manager.stop();
  });
});

/** The data a replica would write at `now` into an empty Secret. */
async function secretData(now: number): Promise<Record<string, string>> {
  const state = readCertificateState(undefined);
  return renewCertificates(state, planCertificates(state, now, policy), now, policy);
}
