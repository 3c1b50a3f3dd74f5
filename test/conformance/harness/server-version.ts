/**
 * The Kubernetes release of the server under test, read from `GET /version` once per connection, so
 * the suite can tell a behaviour the server predates from a bug (see `../version-gates.ts`).
 */

/** A Kubernetes minor release, as the gates compare them. */
export interface KubeVersion {
  readonly major: number;
  readonly minor: number;
  /** What the server reported (`v1.20.2`, `v1.27.3-eks-a5565ad`), for messages. */
  readonly gitVersion: string;
}

const GIT_VERSION = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/;
const MINOR = /^(\d+)\+?$/;

/**
 * Reads a `/version` answer (`version.Info`). `gitVersion` decides; `major`/`minor` are the fallback for
 * servers that put something else there (managed clusters report `minor: "27+"`). Throws naming the
 * field when neither gives a release, since every version gate would otherwise guess.
 */
export function parseServerVersion(info: unknown): KubeVersion {
  const doc = (info ?? {}) as { major?: unknown; minor?: unknown; gitVersion?: unknown };
  const gitVersion = typeof doc.gitVersion === 'string' ? doc.gitVersion : '';
  const git = GIT_VERSION.exec(gitVersion);
  if (git) return { major: Number(git[1]), minor: Number(git[2]), gitVersion };
  const major = typeof doc.major === 'string' ? MINOR.exec(doc.major) : null;
  const minor = typeof doc.minor === 'string' ? MINOR.exec(doc.minor) : null;
  if (major && minor) return { major: Number(major[1]), minor: Number(minor[1]), gitVersion: gitVersion || `v${major[1]}.${minor[1]}` };
  throw new Error(`/version: gitVersion ${JSON.stringify(doc.gitVersion)} is not v<major>.<minor>[.<patch>] and major/minor (${JSON.stringify(doc.major)}, ${JSON.stringify(doc.minor)}) are not numbers`);
}

/** Parses a release written as `1.27` (the form the gate table uses). */
export function parseRelease(release: string): KubeVersion {
  const m = /^(\d+)\.(\d+)$/.exec(release);
  if (!m) throw new Error(`release ${JSON.stringify(release)}: expected <major>.<minor>, e.g. 1.27`);
  return { major: Number(m[1]), minor: Number(m[2]), gitVersion: `v${release}` };
}

/** True when `version` is `release` or newer (patch levels do not matter). */
export function atLeast(version: KubeVersion, release: KubeVersion): boolean {
  return version.major !== release.major ? version.major > release.major : version.minor >= release.minor;
}

/** `v1.20`: the release of `version`, as gate notes name it. */
export function releaseName(version: KubeVersion): string {
  return `v${version.major}.${version.minor}`;
}
