/**
 * The OCI image layout (image-spec v1.1 `image-layout.md`): `oci-layout`, `index.json` and
 * `blobs/sha256/<hex>`, holding one linux/amd64 image: its config, its manifest and its layers. JSON
 * is written from objects built in a fixed key order, so the same inputs give the same bytes, and the
 * manifest the same digest.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_ENTRYPOINT, IMAGE_ENV, IMAGE_PLATFORM, IMAGE_PORTS, IMAGE_USER, IMAGE_WORKDIR } from './image-spec.ts';
import type { WrittenLayer } from './tar-layer.ts';

/** The media types of the layout's documents and layers (gzip-compressed tars). */
export const MEDIA_TYPES = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** The annotation that names an image of a layout (the tag skopeo and umoci address it by). */
export const REF_NAME = 'org.opencontainers.image.ref.name';

/** A content descriptor. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

/** A layer with what the image's history says made it. */
export interface HistoryLayer extends WrittenLayer {
  readonly createdBy: string;
}

/** Where blobs go in a layout at `dir`. */
export function blobsDir(dir: string): string {
  return join(dir, 'blobs', 'sha256');
}

/** The path of the blob `digest` (`sha256:<hex>`) in the layout at `dir`. */
export function blobPath(dir: string, digest: string): string {
  return join(blobsDir(dir), digest.replace(/^sha256:/, ''));
}

/** Writes `value` as a JSON blob; returns its descriptor. */
function writeJsonBlob(dir: string, mediaType: string, value: unknown): Descriptor {
  const bytes = Buffer.from(JSON.stringify(value));
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  writeFileSync(blobPath(dir, digest), bytes);
  return { mediaType, digest, size: bytes.length };
}

/** The image config (image-spec `config.md`): the process to run, and the layers' uncompressed digests. */
export function imageConfig(layers: readonly HistoryLayer[], labels: Readonly<Record<string, string>>, created: string): object {
  return {
    created,
    architecture: IMAGE_PLATFORM.architecture,
    os: IMAGE_PLATFORM.os,
    config: {
      User: IMAGE_USER,
      ExposedPorts: Object.fromEntries(IMAGE_PORTS.map((p) => [`${p}/tcp`, {}])),
      Env: [...IMAGE_ENV],
      Entrypoint: [...IMAGE_ENTRYPOINT],
      WorkingDir: IMAGE_WORKDIR,
      Labels: { ...labels },
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((l) => ({ created, created_by: l.createdBy })),
  };
}

/**
 * Writes config, manifest, `index.json` and `oci-layout` into `dir` (whose blobs/sha256/ already holds
 * the layers); returns the manifest's descriptor. The index names the image `refName`.
 */
export function writeLayout(dir: string, layers: readonly HistoryLayer[], labels: Readonly<Record<string, string>>, created: string, refName: string): Descriptor {
  mkdirSync(blobsDir(dir), { recursive: true });
  const config = writeJsonBlob(dir, MEDIA_TYPES.config, imageConfig(layers, labels, created));
  const manifest = writeJsonBlob(dir, MEDIA_TYPES.manifest, {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.manifest,
    config,
    layers: layers.map((l): Descriptor => ({ mediaType: MEDIA_TYPES.layer, digest: l.digest, size: l.size })),
    annotations: { ...labels },
  });
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.index,
    manifests: [{ ...manifest, platform: { architecture: IMAGE_PLATFORM.architecture, os: IMAGE_PLATFORM.os }, annotations: { [REF_NAME]: refName } }],
  };
  writeFileSync(join(dir, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  return manifest;
}
