import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';

/** An authenticated user (kube's `user.Info`). */
export interface AuthenticatedUser {
  readonly name: string;
  readonly groups: readonly string[];
  /** Set for service-account tokens: the ServiceAccount the token is bound to. */
  readonly serviceAccount?: { readonly namespace: string; readonly name: string; readonly uid: string };
}

/** Claims of a service-account token (the subset of kube's bound token JWT that we check). */
interface ServiceAccountClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: readonly string[];
  readonly exp: number;
  readonly iat: number;
  readonly 'kubernetes.io': {
    readonly namespace: string;
    readonly serviceaccount: { readonly name: string; readonly uid: string };
    /** The Secret a bound token (`boundObjectRef`) lives and dies with. */
    readonly secret?: { readonly name: string; readonly uid: string };
  };
}

/** The audience of this API server (kube's `--api-audiences`, by default the issuer): a token must name it. */
export const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

/** Verified service-account tokens remembered: more than any test holds at once. */
const MAX_VERIFIED_TOKENS = 1_024;

/** Looks up the current uid of a ServiceAccount or Secret, undefined when it does not exist. */
export type UidLookup = (resource: 'serviceaccounts' | 'secrets', namespace: string, name: string) => string | undefined;

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * Bearer-token authentication: static tokens (the admin, named test users) and signed
 * service-account tokens whose ServiceAccount must still exist with the same uid, as kube's
 * service-account authenticator checks.
 */
export class TokenAuthenticator {
  readonly #secret = createSecretKey(randomBytes(32));
  readonly #static = new Map<string, AuthenticatedUser>();
  /**
   * Service-account tokens whose signature checked out, with their claims. A token's signature never
   * changes, so its HMAC is computed once, as kube-apiserver caches token authentication; expiry and
   * the ServiceAccount's uid are still checked on every request. Bounded: the oldest entry leaves first.
   */
  readonly #verified = new Map<string, ServiceAccountClaims>();

  /** Registers a static token for a user. */
  addStaticToken(token: string, user: AuthenticatedUser): void {
    this.#static.set(token, user);
  }

  /** Mints a new random static token for `name`. */
  mintUserToken(name: string, groups: readonly string[]): string {
    const token = `user-${randomBytes(18).toString('base64url')}`;
    this.addStaticToken(token, { name, groups: [...new Set([...groups, 'system:authenticated'])] });
    return token;
  }

  /** Issues a signed token for a ServiceAccount (TokenRequest), bound to `secret` when given. */
  issueServiceAccountToken(namespace: string, name: string, uid: string, nowMs: number, expirationSeconds: number, audiences: readonly string[], secret?: { readonly name: string; readonly uid: string }): string {
    const iat = Math.floor(nowMs / 1000);
    const claims: ServiceAccountClaims = {
      iss: API_AUDIENCE,
      sub: `system:serviceaccount:${namespace}:${name}`,
      aud: audiences,
      exp: iat + expirationSeconds,
      iat,
      'kubernetes.io': { namespace, serviceaccount: { name, uid }, ...(secret ? { secret } : {}) },
    };
    const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${head}.${createHmac('sha256', this.#secret).update(head).digest('base64url')}`;
  }

  /**
   * The user behind `Authorization: Bearer <token>`, or undefined (401). A service-account token must
   * name this server's audience, and its ServiceAccount (and bound Secret) must still exist with the
   * same uid, so deleted or recreated objects invalidate old tokens.
   */
  authenticate(header: string | undefined, nowMs: number, lookupUid: UidLookup): AuthenticatedUser | undefined {
    if (!header) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) return undefined;
    const token = m[1] as string;
    const user = this.#static.get(token);
    if (user) return user;
    const claims = this.#verified.get(token) ?? this.#verify(token);
    if (!claims) return undefined;
    if (claims.exp * 1000 <= nowMs || !claims.aud.includes(API_AUDIENCE)) return undefined;
    const { namespace, serviceaccount, secret } = claims['kubernetes.io'];
    if (lookupUid('serviceaccounts', namespace, serviceaccount.name) !== serviceaccount.uid) return undefined;
    if (secret && lookupUid('secrets', namespace, secret.name) !== secret.uid) return undefined;
    return {
      name: `system:serviceaccount:${namespace}:${serviceaccount.name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
      serviceAccount: { namespace, name: serviceaccount.name, uid: serviceaccount.uid },
    };
  }

  /** The claims of a token signed by this server (remembered), or undefined. */
  #verify(token: string): ServiceAccountClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const expected = createHmac('sha256', this.#secret).update(`${parts[0]}.${parts[1]}`).digest();
    const got = Buffer.from(parts[2] as string, 'base64url');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) return undefined;
    let claims: ServiceAccountClaims;
    try {
      claims = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as ServiceAccountClaims;
    } catch {
      return undefined;
    }
    if (this.#verified.size >= MAX_VERIFIED_TOKENS) this.#verified.delete(this.#verified.keys().next().value as string);
    this.#verified.set(token, claims);
    return claims;
  }
}
