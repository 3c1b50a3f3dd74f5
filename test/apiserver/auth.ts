import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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
  readonly 'kubernetes.io': { readonly namespace: string; readonly serviceaccount: { readonly name: string; readonly uid: string } };
}

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * Bearer-token authentication: static tokens (the admin, named test users) and signed
 * service-account tokens whose ServiceAccount must still exist with the same uid, as kube's
 * service-account authenticator checks.
 */
export class TokenAuthenticator {
  readonly #secret = randomBytes(32);
  readonly #static = new Map<string, AuthenticatedUser>();

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

  /** Issues a signed token for a ServiceAccount (TokenRequest). */
  issueServiceAccountToken(namespace: string, name: string, uid: string, nowMs: number, expirationSeconds: number, audiences: readonly string[]): string {
    const iat = Math.floor(nowMs / 1000);
    const claims: ServiceAccountClaims = {
      iss: 'https://kubernetes.default.svc.cluster.local',
      sub: `system:serviceaccount:${namespace}:${name}`,
      aud: audiences,
      exp: iat + expirationSeconds,
      iat,
      'kubernetes.io': { namespace, serviceaccount: { name, uid } },
    };
    const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${head}.${createHmac('sha256', this.#secret).update(head).digest('base64url')}`;
  }

  /**
   * The user behind `Authorization: Bearer <token>`, or undefined (401). `serviceAccountUid` looks up
   * the current uid of a ServiceAccount so deleted/recreated accounts invalidate old tokens.
   */
  authenticate(header: string | undefined, nowMs: number, serviceAccountUid: (namespace: string, name: string) => string | undefined): AuthenticatedUser | undefined {
    if (!header) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) return undefined;
    const token = m[1] as string;
    const user = this.#static.get(token);
    if (user) return user;
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
    if (claims.exp * 1000 <= nowMs) return undefined;
    const { namespace, serviceaccount } = claims['kubernetes.io'];
    if (serviceAccountUid(namespace, serviceaccount.name) !== serviceaccount.uid) return undefined;
    return {
      name: `system:serviceaccount:${namespace}:${serviceaccount.name}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
      serviceAccount: { namespace, name: serviceaccount.name, uid: serviceaccount.uid },
    };
  }
}
