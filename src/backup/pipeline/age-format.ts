/**
 * The constants of age's file format (https://age-encryption.org/v1) that cheap checks need without
 * loading the age implementation: retention looks at every encrypted backup's shape on every run.
 */

/** Plaintext bytes per STREAM chunk (age's fixed size). */
export const AGE_CHUNK = 64 * 1024;
/** Poly1305 tag after every STREAM chunk. */
export const AGE_TAG = 16;
/** The payload nonce between the header and the first chunk. */
export const AGE_NONCE = 16;
/** The first line of every binary age file, as bytes. */
export const AGE_MAGIC: Buffer = Buffer.from('age-encryption.org/v1\n');
