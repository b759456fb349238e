/**
 * The sign-in flow's secrets between the start and the callback: `state` (the callback answers
 * the request this browser made), the PKCE `code_verifier` (only this server can redeem the
 * code) and the `nonce` (the ID token was minted for this request), plus where to go after and,
 * for a link, the signed-in account. They travel in one cookie, encrypted and authenticated
 * (JWE, `dir` + A256GCM, with a key derived from SESSION_SECRET), so no storage is needed and any
 * instance can read it; it expires in 10 minutes (`exp`, checked on reading, and the cookie's
 * Max-Age), is HttpOnly, and is sent only to its provider's callback path.
 *
 * SameSite=Lax, not Strict: the callback is a top-level navigation coming from the provider's
 * site, which a Strict cookie would not accompany.
 */
import { hkdfSync } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { EncryptJWT, jwtDecrypt } from 'jose';

export const FLOW_COOKIE = 'oauth-flow';
export const FLOW_TTL_SECONDS = 600;

export const callbackPath = (providerId: string) => `/api/auth/oauth/${providerId}/callback`;

export interface FlowState {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** a same-origin path to land on after signing in */
  returnTo: string;
  /** present for a link: the signed-in account and its session (refresh family) */
  link?: { accountId: string; sessionId: string };
}

export class FlowCookies {
  private readonly key: Uint8Array;

  /** `ttlSeconds`: how long a flow may take (tests make expired ones with a negative value) */
  constructor(
    secret: string,
    private readonly secure: boolean,
    private readonly ttlSeconds = FLOW_TTL_SECONDS,
  ) {
    this.key = new Uint8Array(hkdfSync('sha256', secret, 'saas-oauth-flow', 'flow-cookie', 32));
  }

  async seal(flow: FlowState): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new EncryptJWT({ flow })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .encrypt(this.key);
  }

  /** The flow, or undefined when the value is not one of ours, was altered, or has expired. */
  async open(value: string | undefined): Promise<FlowState | undefined> {
    if (!value || value.length > 4096) return undefined;
    try {
      const { payload } = await jwtDecrypt(value, this.key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
      const flow = payload.flow as FlowState | undefined;
      return flow && typeof flow.state === 'string' && typeof flow.provider === 'string' ? flow : undefined;
    } catch {
      return undefined;
    }
  }

  async set(reply: FastifyReply, flow: FlowState): Promise<void> {
    reply.setCookie(FLOW_COOKIE, await this.seal(flow), {
      path: callbackPath(flow.provider),
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      maxAge: Math.max(this.ttlSeconds, 0),
    });
  }

  clear(reply: FastifyReply, providerId: string): void {
    reply.clearCookie(FLOW_COOKIE, { path: callbackPath(providerId), httpOnly: true, sameSite: 'lax', secure: this.secure });
  }
}
