/**
 * What the schema's pattern cannot say about an age X25519 recipient: whether its bech32 checksum holds
 * and it carries exactly one 32-byte key. A typo that keeps the charset and the length (one swapped
 * character) passes the CRD, and would make every backup fail when the runner parses its recipients;
 * the validator reports it on the field instead. bech32 itself is @scure/base's (the library
 * age-encryption, the runner's age, decodes recipients with), not a second implementation.
 */
import { bech32 } from '@scure/base';

/** The human-readable part of an age X25519 recipient (`age1…`: "age", the separator "1", the data). */
const RECIPIENT_HRP = 'age';
/** Size of an X25519 public key. */
const KEY_BYTES = 32;

/**
 * Why `recipient` is not an age X25519 recipient, or undefined when it is one. Meant for strings that
 * already match AGE_RECIPIENT_PATTERN (the schema's check); anything else gets a general answer.
 */
export function ageRecipientProblem(recipient: string): string | undefined {
  if (recipient.startsWith('AGE-SECRET-KEY-')) {
    return 'is an age identity (a secret key), not a recipient: give its public key (age-keygen -y), and keep the identity off the cluster';
  }
  let decoded: { prefix: string; bytes: Uint8Array };
  try {
    decoded = bech32.decodeToBytes(recipient);
  } catch (err) {
    return `is not a valid age recipient (${(err as Error).message.replace(/^bech32\.decode: /, '')})`;
  }
  if (decoded.prefix !== RECIPIENT_HRP) return `is not an age X25519 recipient (prefix ${JSON.stringify(`${decoded.prefix}1`)}, expected "age1")`;
  if (decoded.bytes.length !== KEY_BYTES) return `is not an age X25519 recipient (${decoded.bytes.length}-byte key, expected ${KEY_BYTES})`;
  return undefined;
}
