/** Test helper: a CRD `pattern` as both engines read it, the validator's (JavaScript) and kube-apiserver's (Go RE2). */
import { RE2JS } from 're2js';
import { expect } from 'vitest';

/**
 * A matcher for `pattern` that fails the test when JavaScript (ajv compiles with the u flag) and RE2
 * (re2js: Go regexp syntax and semantics, search like Go's MatchString) disagree on a text.
 */
export function crdPattern(pattern: string): (text: string) => boolean {
  const js = new RegExp(pattern, 'u');
  const re2 = RE2JS.compile(pattern);
  return (text) => {
    const matched = js.test(text);
    expect(re2.matcher(text).find(), `RE2 and JavaScript disagree on ${JSON.stringify(text)}`).toBe(matched);
    return matched;
  };
}
